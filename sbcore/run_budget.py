"""The whole run's budget as a campaign keeps it: `run_budget_s` in campaign.toml's [campaign] table,
written by the planner from the experiment key (jobs/campaign.py) and read back by the runner
(jobs/run_deadline.py) and the analysis (analysis/stats/wide_comparisons.py). campaign.toml is
untrusted input: this one rule says which values are a budget."""

from __future__ import annotations

import math

KEY = "run_budget_s"


def stored_run_budget(config: dict) -> tuple[float | None, str | None]:
    """(the budget in seconds or None, the problem with the stored value or None) of campaign.toml's
    parsed text: no [campaign] table or no key is no budget; a value that is not a finite number > 0
    is a problem (the runner refuses it, the analysis reads no budget)."""
    table = config.get("campaign")
    value = table.get(KEY) if isinstance(table, dict) else None
    if value is None:
        return None, None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value > 0)
    ):
        return None, f"[campaign] {KEY} = {value!r}: must be a finite number > 0"
    return float(value), None
