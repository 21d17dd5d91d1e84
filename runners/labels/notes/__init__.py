"""The notes `stats`, `check`, `run` and the report print about the ground truth under their figures: judged@10,
the unjudged mark under a verdict, the questions by source and the traffic-weighted mean, the generator guard."""
