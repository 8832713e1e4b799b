"""Report section: duets (`duet = true`, jobs/duets.py), two single-worker alternatives measured at the
same time on two CPUs, paired per duet (analysis/stats/paired.py, paired_duet_ratio.csv)."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block
from analysis.outputs.report.sections.paired import ci_column


def section(result, plots=()) -> list[Block]:
    duets = getattr(result, "paired_duet_ratio", None)
    if duets is None or duets.empty:
        return []
    summary = result.summary.set_index("case_id")
    inner = summary["inner"].astype(str) if "inner" in summary else pd.Series("", index=summary.index)
    label = summary["binary"].astype(str) + " " + inner
    table = pd.DataFrame(
        {
            "a": duets["case_a"].map(label).fillna(duets["case_a"]),
            "b": duets["case_b"].map(label).fillna(duets["case_b"]),
            "b / a, paired": ci_column(duets, "paired_together_", "ratio_b_over_a"),
            "duets": duets["trials_together"],
            "b / a, clean duets only": ci_column(duets, "paired_", "ratio_b_over_a"),
        }
    ).sort_values(["a", "b"])
    text = (
        "The campaign ran its single-worker alternatives as duets (`duet = true`): both at the same time, "
        "one on each of two CPUs (swapped from duet to duet), so that whatever slows the host in that "
        "instant slows both. Each ratio is the median over duets of b's time over a's in one duet, with "
        "a bootstrap 95 % CI over duets (paired_duet_ratio.csv). The two share the host's caches, memory "
        "and clock: a duet also measures their contention with each other."
    )
    return [Block("p", text), Block("table", table)]
