"""The statistics core, below labels and analysis: per-query score tables, resampling, intervals, paired tests,
power, confidence sequences, the candidates a command compares, and the error type of every analysis command."""
