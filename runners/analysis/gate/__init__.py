"""The regression gate and the run history: `check` (fixed-sample and anytime looks, against a baseline
folder or history:last), the history records and timelines, `baseline save`, and the best candidate."""
