"""Report section: speedups paired within trials of a comparison family (analysis/stats/paired.py)
beside the unpaired ones (ratio of medians measured at any time)."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text, variant_text
from analysis.stats.paired import MAX_APART_S

PRECISE = 0.02  # the half-width the report counts speedups against


def paired_table(speedup: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    rows = paired.merge(speedup, on=["case_id", "baseline_case_id"], how="left")
    return pd.DataFrame(
        {
            "variant": [variant_text(r) for _, r in rows.iterrows()],
            "workers": rows["workers"],
            "baseline": rows["baseline_binary"],
            "unpaired": [ci_text(r.speedup, r.speedup_ci_low, r.speedup_ci_high) for r in rows.itertuples()],
            "paired": [
                ci_text(r.paired_speedup, r.paired_ci_low, r.paired_ci_high) for r in rows.itertuples()
            ],
            "trials": rows["trials"],
            "paired, disturbed trials too": [
                ci_text(r.paired_together_speedup, r.paired_together_ci_low, r.paired_together_ci_high)
                for r in rows.itertuples()
            ],
            "left out (disturbed / apart)": rows["left_out_disturbed"].astype(str)
            + " / "
            + rows["left_out_apart"].astype(str),
        }
    ).sort_values(["variant", "workers"])


def section(result, plots=()) -> list[Block]:
    paired = getattr(result, "paired_speedup", None)
    if paired is None or paired.empty:
        return []
    precise = int((paired["paired_halfwidth_rel"] <= PRECISE).sum())
    unpaired = result.speedup.set_index("case_id").loc[paired["case_id"]]
    unpaired_hw = (unpaired["speedup_ci_high"] - unpaired["speedup_ci_low"]) / 2 / unpaired["speedup"]
    together = int((paired["paired_together_halfwidth_rel"] <= PRECISE).sum())
    disturbed, apart = int(paired["left_out_disturbed"].sum()), int(paired["left_out_apart"].sum())
    text = (
        f'The campaign ran its cases in trials of their comparison family (`interleave = "family"`): '
        "one kernel process of each member back to back in a random order, so a slow phase of the host "
        "slows a case and its baseline alike. Each paired speedup is the median over trials of the "
        "baseline's time over the case's within a trial, with a bootstrap 95 % CI over trials "
        f"(paired_speedup.csv). {precise} of {len(paired)} paired speedups have a CI half-width within "
        f"±{100 * PRECISE:g} % (unpaired, from the same records: {int((unpaired_hw <= PRECISE).sum())}). "
        f"Left out: {disturbed} trials with a member whose every repetition was disturbed (machine-state "
        f"probe; otherwise a process counts its clean repetitions only) and {apart} whose "
        f"members started more than {MAX_APART_S:g} s apart (resumed, or run as separate Slurm tasks). "
        "The column beside pairs every trial measured together, disturbed ones too: on a host disturbed "
        f"all the time it is the one to read ({together} of {len(paired)} within ±{100 * PRECISE:g} %)."
    )
    return [Block("p", text), Block("table", paired_table(result.speedup, paired))]
