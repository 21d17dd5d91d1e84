"""Exported / quantised copies of a sentence-transformers model (ONNX Runtime, OpenVINO), built once per content.

sentence-transformers' own `backend="onnx"` needs optimum, whose ONNX exporter pins transformers < 4.58 (this
project runs transformers 5.x), so the transformer module is exported here with `torch.onnx.export` and run with
onnxruntime / openvino directly (backend_runtime.py); tokenisation, pooling and normalisation stay the model's own
sentence-transformers modules. What each (backend, precision) is built from:

* onnx fp32: the transformer's `last_hidden_state` as ONNX (opset 17, dynamic batch and sequence axes);
* onnx int8: that model through onnxruntime's dynamic quantisation (int8 weights per output channel, uint8
  activations scaled per batch: MatMulInteger, AVX-512 VNNI kernels where the CPU has them);
* openvino fp32 / bf16: the ONNX model converted to OpenVINO IR (fp32 weights); bf16 is an inference hint
  (the CPU plugin computes in bf16 where the CPU has AVX-512 BF16 / AMX) on the same IR;
* openvino int8: the IR quantised by NNCF post-training quantisation (`ModelType.TRANSFORMER`): weights and
  activations int8, so the CPU plugin's matrix products run on int8 (VNNI) units; the activation ranges come from
  a fixed set of generic English texts (calibration_texts.py, never the user's data: a copy is keyed by the source
  weights), tokenised by the model's own tokenizer and fed as backend_runtime feeds the IR.

Built copies live under `PRIVATE_MTEB_EXPORT_CACHE` (default `~/.cache/private-mteb/exported`), one folder per
content hash of the source files + backend + precision + the versions of the packages that build them + the build
method where it is more than a conversion (identity.build_method: int8 names its calibration set). A copy is
built in a temporary folder and renamed into place (a folder appears complete or not at all), under a flock, so
two concurrent runs build it once: the second waits, then finds it. `build.json` holds the sha256 of every file
of the copy, checked before each use: a damaged or edited copy (a truncated `model.onnx` or `model.bin`), or one
built before the hashes were kept, is set aside and rebuilt under the same lock (one warning line says so); where
it cannot be removed, one line names the folder to delete (exit 2). A runtime that still cannot load a verified
copy gets the same line (backend_runtime.load_runner), never an empty results table.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...results.locks import FileLock
from ...results.store import env_faults, file_digest
from ...results.fingerprints import canonical_hash, weights_fingerprint
from .backend_facts import BACKEND_RUNTIMES, backend_identity, build_method

EXPORT_CACHE_ENV = "PRIVATE_MTEB_EXPORT_CACHE"
FORMAT = 1  # bump when what is built changes (for all; one method: identity.BUILD_METHODS)
ONNX_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: backend -> (module that must import, pip extra that installs it)
REQUIRES = {"onnx": (("onnxruntime", "onnx"), "onnx"), "openvino": (("openvino", "onnx"), "openvino")}
MANIFEST = "build.json"
logger = logging.getLogger(__name__)


def require(backend: str, precision: str) -> None:
    """ConfigError (one line, exit 2) when this machine lacks what the backend needs."""
    import importlib.util

    if backend == "torch":
        return
    modules, extra = REQUIRES[backend]
    if backend == "openvino" and precision == "int8":
        modules = (*modules, "nncf")
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(None, f"encode backend {backend}/{precision} needs {', '.join(missing)}, which is not "
                                f"installed: pip install 'private-mteb[{extra}]' (or use backend: torch)")


def export_root() -> Path:
    given = os.environ.get(EXPORT_CACHE_ENV)
    if given:
        return Path(given).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "private-mteb" / "exported"


def artefact_name(source: Path, backend: str, precision: str, model_kwargs: dict[str, Any] | None = None,
                  label: str = "") -> str:
    """`<label or folder name>-<backend>-<precision>-<hash>`: the hash covers the source files' contents, the settings that
    change the exported graph and the builders' versions. It is a build cache key of the export's inputs, not a
    candidate identity part: `source` is the folder resolved at load time (for a hub model, a download that is not in
    the candidate's weight_paths), so it hashes that folder itself; the run identity records the backend's facts."""
    built_as = "fp32" if (backend, precision) == ("openvino", "bf16") else precision  # bf16 is a runtime hint
    key = canonical_hash({"format": FORMAT, "weights": weights_fingerprint([str(source)]), "backend": backend,
                          "precision": built_as, "model_kwargs": model_kwargs or {},
                          "runtime": backend_identity(backend, built_as).get("runtime"),
                          **({"build": method} if (method := build_method(backend, built_as)) else {})}, 20)
    readable = "".join(c if c.isalnum() or c in "-_." else "_" for c in (label or Path(source).name))[-40:]
    return f"{readable}-{backend}-{built_as}-{key}"


def exported_model(source: str | Path, backend: str, precision: str, model_kwargs: dict[str, Any] | None = None,
                   root: Path | None = None, st: Any = None, label: str = "") -> Path:
    """The folder of the built copy (built now if missing: once, atomically, under a lock). `st`: the loaded
    SentenceTransformer of `source` when the caller has it (saves loading it again for the export)."""
    require(backend, precision)
    root = Path(root) if root is not None else export_root()
    final = root / artefact_name(Path(source), backend, precision, model_kwargs, label)
    if (final / MANIFEST).exists() and not damage(final):
        return final
    with env_faults(root):
        root.mkdir(parents=True, exist_ok=True)
        with FileLock(root / f"{final.name}.lock"):
            problem = damage(final) if final.exists() else "missing"
            if not problem:  # built (or repaired) by a concurrent run while we waited
                return final
            if problem != "missing":
                logger.warning("exported model %s: %s; rebuilding it", final, problem)
                _discard(final)
            tmp = root / f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                t0 = time.perf_counter()
                tmp.mkdir()
                _build(Path(source), backend, precision, tmp, model_kwargs or {}, st)
                manifest = {"source": str(source), "backend": backend, "precision": precision,
                            "runtime": backend_identity(backend, precision).get("runtime"),
                            "build": build_method(backend, precision), "pid": os.getpid(),
                            "seconds": round(time.perf_counter() - t0, 2), "files": content_hashes(tmp)}
                (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
                os.rename(tmp, final)  # complete, or not there at all
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return final


def content_hashes(folder: Path) -> dict[str, str | None]:
    """sha256 of every file of a built copy but its manifest (model.onnx; model.xml + model.bin; ...)."""
    return {p.name: file_digest(p) for p in sorted(Path(folder).iterdir()) if p.is_file() and p.name != MANIFEST}


def damage(folder: Path) -> str:
    """Why a built copy cannot be used as it is ('' when every file is the one its build.json vouches for)."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text())
    except FileNotFoundError:
        return f"no {MANIFEST} (an interrupted or foreign folder)"
    except (OSError, ValueError) as e:
        return f"{MANIFEST} unreadable ({type(e).__name__})"
    want = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(want, dict) or not want:
        return f"{MANIFEST} holds no content hashes (built by an older private-mteb)"
    have = content_hashes(folder)
    bad = sorted(name for name in set(want) | set(have) if want.get(name) != have.get(name))
    if bad:
        return f"{', '.join(bad)} not the file{'s' if len(bad) > 1 else ''} {MANIFEST} vouches for (damaged or edited)"
    return ""


def _discard(folder: Path) -> None:
    """Set a damaged copy aside (one rename: the final name is free at once) and delete it."""
    aside = folder.with_name(f".{folder.name}.damaged-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, aside)
    except OSError as e:
        raise ConfigError(folder, f"this exported model is damaged and cannot be removed ({e.strerror}): delete the "
                                  "folder, it is rebuilt on the next run") from None
    shutil.rmtree(aside, ignore_errors=True)


def _build(source: Path, backend: str, precision: str, out: Path, model_kwargs: dict[str, Any], st: Any) -> None:
    if st is None:
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(source), device="cpu", **model_kwargs)
    onnx_path = _export_onnx(st, out / "model.onnx")
    if backend == "onnx" and precision == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # weights int8 per output channel (per-tensor scales drift ~8x further on MiniLM: max cosine 0.15 vs 0.02),
        # only the MatMuls with constant weights (the attention products and the embeddings stay fp32)
        quantize_dynamic(onnx_path, out / "model.int8.onnx", weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], extra_options={"MatMulConstBOnly": True})
        onnx_path.unlink()
    elif backend == "openvino":
        from .telemetry_off import block_vendor_telemetry

        block_vendor_telemetry()  # ovc and nncf report usage by default
        import openvino as ov

        model = ov.convert_model(str(onnx_path))
        if precision == "int8":
            model = _quantise(model, st)
        ov.save_model(model, str(out / "model.xml"), compress_to_fp16=False)
        onnx_path.unlink()


def _tokenize(st: Any, texts: list[str]) -> dict[str, Any]:
    tokenize = getattr(st, "preprocess", None) or st.tokenize  # sentence-transformers 6 renamed tokenize
    return tokenize(texts)


def _quantise(model: Any, st: Any, batch: int = 8) -> Any:
    """NNCF post-training quantisation of the IR (int8 weights and activations) calibrated on calibration_texts:
    batches of similar lengths, right-padded token ids under the IR's input names (as backend_runtime feeds it)."""
    import nncf
    import numpy as np

    from .calibration_texts import calibration_texts
    from .library_output import quiet_nncf

    names = [i.get_any_name() for i in model.inputs]
    texts = sorted(calibration_texts(), key=len)
    feeds = []
    for i in range(0, len(texts), batch):
        tokens = _tokenize(st, texts[i:i + batch])
        feeds.append({n: tokens[n].numpy().astype(np.int64) for n in names})
    with quiet_nncf():  # its bars and INFO lines: only with --verbose
        return nncf.quantize(model, nncf.Dataset(feeds), model_type=nncf.ModelType.TRANSFORMER,
                             subset_size=len(feeds))


def _export_onnx(st: Any, path: Path) -> Path:
    """The transformer module of the model as ONNX: named inputs in, `last_hidden_state` out."""
    import torch

    inner = st[0].model
    example = _tokenize(st, ["an example sentence to trace", "a second, longer example sentence to trace here"])
    names = [n for n in ONNX_INPUTS if n in example]

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, args)), return_dict=True).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]}
    import warnings

    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on Python control flow of the attention mask
        torch.onnx.export(LastHidden().eval(), tuple(example[n] for n in names), str(path), dynamo=False,
                          input_names=names, output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=17, do_constant_folding=True)
    return path


def built_files(folder: Path) -> dict[str, Path]:
    """What a built copy holds: {'onnx': model(.int8).onnx} or {'openvino': model.xml}."""
    for name, kind in (("model.int8.onnx", "onnx"), ("model.onnx", "onnx"), ("model.xml", "openvino")):
        if (folder / name).exists():
            return {kind: folder / name}
    raise ConfigError(folder, f"no exported model in {folder}: delete the folder, it is rebuilt on the next run")


__all__ = ["BACKEND_RUNTIMES", "EXPORT_CACHE_ENV", "built_files", "content_hashes", "damage", "export_root",
           "exported_model", "require"]
