"""The LLM judge: prompting an OpenAI-compatible chat-completions endpoint for relevance grades of pooled pairs
(judge_client.py: bounded concurrency, retries, strict answers), caching them by judge and text hashes and storing
them apart from human grades (judge.py). Imports only remote/ (its HTTP): it needs no model, cache or candidate."""
