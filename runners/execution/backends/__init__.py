"""Encode backends (ONNX Runtime / OpenVINO copies of a model, built once per content, with the facts that enter an
identity) and the libraries' own output turned off unless --verbose (library_output: the lowest room both reach)."""
