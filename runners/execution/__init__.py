"""The execution layer: candidates x tasks -> stored MTEB results; the runner (run.py, tasks.py) sits on top.

Rooms, lowest first (each imports only rooms before it; tests/test_layout.py ROOMS):
  remote/       HTTP to OpenAI-compatible servers: one bounded JSON POST (no proxy, no redirect), failures sorted
                for retry, shared by the LLM judge (runners/labels/judge/) and the embedding endpoint
  backends/     ONNX Runtime / OpenVINO copies of a model: build, runtime, calibration set, backend identity
  encoding/     finding and loading a model offline, the encode progress and the measured encode rate
  cache/        the embedding cache, its vector store and index, block-wise search over stored vectors
  candidates/   one file per candidate kind (model/BM25, run file, retriever, rerank, experiments wiring)
  distributed/  Ray: connecting to a cluster and encoding on it into the cache
  run.py        the runner (run_benchmark), tasks.py: loading the config's tasks
  measure/      passes around the runner: latency and serving, growth and distractors, backend drift
"""
