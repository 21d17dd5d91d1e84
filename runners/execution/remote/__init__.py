"""HTTP to OpenAI-compatible servers (the LLM judge's chat completions, the embedding endpoint's /v1/embeddings):
one bounded POST with its failures sorted into "ask again" and "stop" (openai_http.py). No model, no other room."""
