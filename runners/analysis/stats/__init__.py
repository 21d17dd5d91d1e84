"""The statistics core: per-query score tables, resampling, intervals, paired tests, power, and the
candidates a command compares; plain arrays and dicts (pandas only in stats_frames), no other room."""
