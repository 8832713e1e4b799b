"""Analysis of campaign records: statistics, speedup, scaling models, plots and report."""

import pandas as pd

# pyarrow is installed for writing CSV (analysis/outputs/tables.py); with it pandas would back string columns
# by Arrow, whose comparisons with numpy arrays behave differently. Strings stay Python-backed.
pd.set_option("mode.string_storage", "python")
