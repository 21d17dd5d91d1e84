"""Which pairs in the candidates' top-k carry a label (judged@k), the pool of the others, how far they could move a
verdict (exact bounds), the decisive order to judge them in, the judgments still needed, the random question sample."""
