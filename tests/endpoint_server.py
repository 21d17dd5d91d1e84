"""A real OpenAI-compatible embeddings server for tests and benchmarks: Infinity (`infinity-emb`, from PyPI) serving
a local sentence-transformers folder on 127.0.0.1, started from its own virtual environment.

Infinity pins an older sentence-transformers than private-mteb, so it lives in `.venv-infinity/` of the checkout
(git-ignored), made by `scripts/infinity-venv.sh` (CI runs it; CPU torch first, so no CUDA build is pulled).
`PRIVATE_MTEB_INFINITY_VENV` points elsewhere. Offline: HF_HUB_OFFLINE, and Infinity's anonymous usage statistics
off (DO_NOT_TRACK=1, INFINITY_ANONYMOUS_USAGE_STATS=0).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def infinity_venv() -> Path:
    return Path(os.environ.get("PRIVATE_MTEB_INFINITY_VENV") or REPO / ".venv-infinity")


def infinity_bin() -> Path | None:
    exe = infinity_venv() / "bin" / "infinity_emb"
    return exe if exe.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Infinity:
    """One Infinity process on 127.0.0.1:`port`, serving `model_dir` as `served_name` under /v1."""

    def __init__(self, port: int | None = None, log_dir: Path | None = None) -> None:
        self.port = port or free_port()
        self.log_dir = log_dir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, model_dir: str | Path, served_name: str, batch_size: int = 32, timeout_s: float = 180.0) -> str:
        exe = infinity_bin()
        if exe is None:
            raise RuntimeError(f"no Infinity in {infinity_venv()}: run scripts/infinity-venv.sh")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1",
               "INFINITY_ANONYMOUS_USAGE_STATS": "0", "PYTHONPATH": ""}
        log = open(self.log_dir / f"infinity-{self.port}.log", "ab") if self.log_dir else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [str(exe), "v2", "--model-id", str(model_dir), "--served-model-name", served_name, "--host", "127.0.0.1",
             "--port", str(self.port), "--engine", "torch", "--device", "cpu", "--no-bettertransformer",
             "--no-model-warmup", "--batch-size", str(batch_size), "--url-prefix", "/v1"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"Infinity exited with {self.proc.returncode} (log: {self.log_dir})")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as r:
                    if json.loads(r.read()).get("data"):
                        return self.url
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"Infinity did not answer on {self.url} within {timeout_s:.0f} s")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)  # its own session: the server and nothing else
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
