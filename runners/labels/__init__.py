"""The ground truth: everything about questions and grades, in rooms (issue 37).

Rooms, lowest first: `raters/` (the raters' files, agreement, import, merge) and `pool/` (which pairs are judged,
the pool, the verdict bounds of the unjudged pairs, the decisive order, `labels status`) need no other room;
`notes/` (what stats/check/report say about labels and questions) builds on `pool/`; `judge/` (the LLM judge and
writer clients, the judge's agreement with raters) on `pool/` and `raters/`; `lint/` (`tasks lint`) on `pool/`;
`questions/` (`questions sample|generate`) on `lint/`, `judge/` and `notes/`; `judging/` (the web app of
`labels serve`) on top. Labels stands on the statistics core (runners/statistics/: per-query scores, intervals,
errors) and below analysis (gate, report, best, inspect), which reads the facts of `pool/`, `notes/`, `raters/` and
`judge/`; analysis never imports `judging/`, `questions/` or `lint/` (checked: tests/test_layout.py).
"""
