"""Encode with an exported copy (backend_build.py) behind the model's own sentence-transformers pipeline.

Only the transformer module's forward changes: sentence-transformers still tokenises each text once, sorts a
call's texts longest first and batches them (the same batches as with torch), and applies the model's own pooling
and normalisation modules (as its `modules.json` and pooling config say). The exported network gets the batch's
token ids and returns `token_embeddings`, exactly where the torch module puts them.

CPU settings: ONNX Runtime / OpenVINO use one intra-op thread per physical core this process may run on (hyper-
threads share a core's vector units: a second thread per core only adds contention), and each batch is cut into
length buckets, each padded only to its own longest text (`bucketed`): a batch's rows then cost what their own
lengths cost, not the longest row's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.errors import ConfigError

from .backend_build import built_files, exported_model

BUCKET_RATIO = 0.8  # a new bucket starts where a row is shorter than this share of its bucket's longest row
BUCKET_TOKENS = 8192  # at most this many (padded) tokens per call into the runtime
BF16_HINT = ("bf16", "int8")  # openvino precisions whose non-quantised ops run in bf16 (where the CPU has it)


def physical_cores() -> int:
    """Distinct physical cores among the CPUs this process may use (sysfs topology; each CPU if unknown)."""
    cores = set()
    for cpu in os.sched_getaffinity(0):
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((topo / "physical_package_id").read_text().strip() + ":" + (topo / "core_id").read_text().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


class OnnxRunner:
    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # no busy-waiting between ops: on CPUs shared with other work a spinning thread steals their time and ours
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        return self.session.run(["last_hidden_state"], feeds)[0]


class OpenVinoRunner:
    def __init__(self, path: Path, precision: str, threads: int) -> None:
        from .telemetry_off import block_vendor_telemetry

        block_vendor_telemetry()
        import openvino as ov

        # int8: the quantised products run on int8 units either way; the hint sets the precision of the rest
        # (softmax, layer norms, GELU, residual adds): bf16 there costs no accuracy int8 has not already spent
        # (SciFact subset: max |cos diff| 0.0133 vs 0.0136 with f32) and saves ~20% of the network's time
        config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                  "INFERENCE_PRECISION_HINT": "bf16" if precision in BF16_HINT else "f32"}
        self.compiled = ov.Core().compile_model(str(path), "CPU", config)
        self.request = self.compiled.create_infer_request()
        self.inputs = [i.get_any_name() for i in self.compiled.inputs]

    def __call__(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        result = self.request.infer(feeds)
        return np.array(result[self.compiled.output(0)], dtype=np.float32)  # a copy: the request reuses its buffer


def load_runner(folder: Path, precision: str, threads: int) -> OnnxRunner | OpenVinoRunner:
    """The runtime session of a built copy; a copy the runtime cannot load is one line naming the folder to delete
    (backend_build verified its files, so this is a runtime that reads them differently, not a truncated file)."""
    kind, path = next(iter(built_files(folder).items()))
    try:
        return OnnxRunner(path, threads) if kind == "onnx" else OpenVinoRunner(path, precision, threads)
    except (ImportError, MemoryError):
        raise
    except Exception as e:  # noqa: BLE001 - onnxruntime / openvino raise their own exception types
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise ConfigError(folder, f"{kind} cannot load this exported model ({type(e).__name__}: {first}): delete the "
                                  "folder, it is rebuilt on the next run") from None


def bucketed(run: Any, feeds: dict[str, np.ndarray], ratio: float = BUCKET_RATIO,
             max_tokens: int = BUCKET_TOKENS) -> np.ndarray:
    """`run(feeds)` on length buckets of a right-padded batch, each cut to its own longest row; the result has the
    batch's shape (zeros past each row's length, where the attention mask is 0 and pooling never looks)."""
    mask = feeds["attention_mask"]
    lengths = mask.sum(axis=1)
    order = np.argsort(-lengths, kind="stable")
    out: np.ndarray | None = None
    start = 0
    while start < len(order):
        width = max(int(lengths[order[start]]), 1)
        stop = start + 1
        while (stop < len(order) and lengths[order[stop]] >= ratio * width
               and (stop - start + 1) * width <= max_tokens):
            stop += 1
        rows = np.sort(order[start:stop])
        hidden = run({name: value[rows, :width] for name, value in feeds.items()})
        if out is None:
            out = np.zeros((mask.shape[0], mask.shape[1], hidden.shape[-1]), dtype=np.float32)
        out[rows, :width] = hidden
        start = stop
    return out if out is not None else np.zeros((0, mask.shape[1], 0), np.float32)


def source_folder(where: str) -> Path:
    """The local folder of a model given as a folder or a hub name already in the Hugging Face cache."""
    if Path(where).is_dir():
        return Path(where)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(where, local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure means: no local files
        raise ConfigError(None, f"model '{where}': an exported backend needs the model's files on this machine; "
                                "give `path:` (a local folder)") from None


def use_backend(st: Any, spec: Any, where: str) -> None:
    """Swap the transformer module of a loaded SentenceTransformer for the built copy of spec.backend/precision."""
    import torch

    folder = exported_model(source_folder(where), spec.backend, spec.precision, spec.model_kwargs, st=st,
                            label=spec.name.replace("/", "__"))
    threads = physical_cores()
    runner = load_runner(folder, spec.precision, threads)
    module = st[0]
    output = getattr(module, "module_output_name", "token_embeddings")
    right_padded = getattr(getattr(st, "tokenizer", None), "padding_side", "right") == "right"

    def forward(features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        feeds = {name: features[name].numpy().astype(np.int64, copy=False) for name in runner.inputs}
        hidden = bucketed(runner, feeds) if right_padded else runner(feeds)
        features[output] = torch.from_numpy(hidden)
        return features

    module.forward = forward  # nn.Module.__call__ finds the instance attribute first
    st.private_mteb_backend = {"backend": spec.backend, "precision": spec.precision, "files": str(folder),
                               "threads": threads}
