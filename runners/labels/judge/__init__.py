"""The LLM judge: an OpenAI-compatible chat client (judge_client.py, over execution/remote/), the `labels judge`
run with its cached grades file (judge_run.py), the writer client of `questions generate`, and the judge's
agreement with human raters (judge_agreement.py, rank_agreement.py). It loads no model, cache or candidate."""
