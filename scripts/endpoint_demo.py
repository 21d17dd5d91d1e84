"""The endpoint demo: all-MiniLM-L6-v2 served by Infinity on 127.0.0.1:7997 (scripts/infinity-venv.sh makes its
venv), scored by `private-mteb run -c configs/benchmarks/endpoint-demo.yaml` next to the same model in process,
then `stats`; the server is stopped at the end. Its output is shown in docs/candidates.md (scripts/docs_outputs.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
CONFIG = "configs/benchmarks/endpoint-demo.yaml"


def main() -> int:
    from endpoint_server import Infinity

    from runners.execution.encoding.offline_packages import offline_model_path

    subprocess.run([str(ROOT / "scripts" / "infinity-venv.sh")], check=True)
    server = Infinity(port=7997)
    server.start(offline_model_path("sentence-transformers/all-MiniLM-L6-v2"), "minilm")
    exe = str(Path(sys.executable).with_name("private-mteb"))
    try:
        for cmd in (["run", "-c", CONFIG], ["stats", "-c", CONFIG, "-m", "ndcg_at_10"]):
            print("$ private-mteb " + " ".join(cmd), flush=True)
            done = subprocess.run([exe, *cmd], cwd=ROOT)
            if done.returncode:
                return done.returncode
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
