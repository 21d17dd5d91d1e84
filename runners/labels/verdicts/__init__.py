"""How each verdict stands on the labels so far: how likely it is to hold (the calibrated LLM grade and its own
uncertainty), when judging can stop, and `labels status` (bounds, judgments to settle, questions to resolve)."""
