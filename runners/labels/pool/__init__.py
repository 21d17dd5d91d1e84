"""The pool: which (question, document) pairs in the candidates' top-k carry a label (judged@k), the pool of
unjudged pairs `labels pool` writes, the exact bounds of how far those pairs could move a verdict, the decisive
order to judge them in (and its live re-planning), the estimate of judgments still needed, and `labels status`."""
