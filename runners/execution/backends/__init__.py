"""Encode backends: ONNX Runtime / OpenVINO copies of a sentence-transformers model, built once per content,
run in place of torch, with the calibration set and the backend part of a candidate's identity."""
