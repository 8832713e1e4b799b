"""Analysis of campaign records: statistics, speedup, scaling models, plots and report."""
