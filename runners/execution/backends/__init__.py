"""Encode backends: ONNX Runtime / OpenVINO copies of a sentence-transformers model, built once per content,
run in place of torch, with the calibration set and the backend part of a candidate's identity; and the libraries'
own output turned off unless --verbose (library_output: tqdm / NNCF bars, the lowest room both users reach)."""
