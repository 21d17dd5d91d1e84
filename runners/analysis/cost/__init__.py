"""What a candidate costs and how it holds up as settings change: latency intervals and cost, backend
drift, corpus-growth curves, and the experiments table (candidates vs their plain dense model)."""
