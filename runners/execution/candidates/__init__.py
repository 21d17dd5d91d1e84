"""What is scored: one file per candidate kind (candidates.py: model and BM25; run_file, retriever, rerank and
its pair cache), and experiments.py, which wires experiment entries (hybrid, chunking, ANN) onto the base model."""
