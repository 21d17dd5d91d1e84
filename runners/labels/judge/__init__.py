"""The LLM judge: a chat client over execution/remote/ (no model, cache or candidate), the `labels judge` run and
its cached grades file, the writer client of `questions generate`, and the judge's agreement with human raters."""
