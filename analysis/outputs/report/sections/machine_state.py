"""Report section: repetitions measured while the machine was disturbed (analysis.stats.disturbance)."""

from __future__ import annotations

import pandas as pd

from analysis.stats.disturbance import (
    ALU_SLOW_RATIO,
    SLOW_RATIO,
    TRANSFER_MATTERS,
    TRANSFER_SLOW_RATIO,
    WAIT_SHARE,
)
from analysis.stats.warmup_effect import SLOWER, slower_cases


def disturbance_section(result) -> list[tuple[str, object]]:
    """(kind, value) blocks: h2, a paragraph, the affected cases with and without their flagged reps."""
    r, s = result.stats.records, result.summary
    out: list[tuple[str, object]] = [("h2", "Machine state during the measurements")]
    if "disturbed" not in r or r["probe_slowdown"].isna().all():
        out.append(("p", "The records carry no machine-state probe (kernels built before it existed)."))
        return out
    n, bad = len(r), int(r["disturbed"].sum())
    out.append(
        (
            "p",
            f"{bad} of {n} repetitions ({100 * bad / max(n, 1):.0f} %) were measured while the machine was "
            f"disturbed: a probe chain around them took more than {SLOW_RATIO:g}x the node's normal time "
            '(only the FP-throughput block: "shared FP pipes", another hardware thread used the core\'s '
            "vector pipes, which slows vector kernels and barely the scalar loops; only the integer-ALU "
            f'block, over {ALU_SLOW_RATIO:g}x: "shared integer ALUs", another hardware thread took '
            "slots of the core's integer ALUs, which slows the scalar π loop), the cache-line "
            f"round trip between the case's CPUs took more than {TRANSFER_SLOW_RATIO:g}x the case's normal "
            'one ("slow cache-line transfer": the host placed the vCPUs further apart, which slows '
            f"contended locks and atomics; flagged only in cases it slowed by more than "
            f"{100 * TRANSFER_MATTERS:g} %), or "
            f"their threads waited for a CPU {100 * WAIT_SHARE:.0f} % of the time more than is normal on "
            "that node, without being oversubscribed. They stay in every result above; the table shows "
            "what the affected cases give without them (records.parquet has the flag and reason per "
            "repetition).",
        )
    )
    # A node shared all the time has a busy normal state: nothing stands out, everything is slower.
    busy = r.groupby("hostname")["normal_runq_share"].max() if "hostname" in r else pd.Series(dtype=float)
    busy = busy[busy > WAIT_SHARE]
    if len(busy):
        hosts = ", ".join(f"{h} ({100 * v:.0f} %)" for h, v in busy.items())
        out.append(
            (
                "p",
                f"**The node was shared throughout**: even in its normal state the threads waited for a CPU "
                f"for a large share of the run ({hosts}). Flags only mark what came on top of that; all "
                "times, and the speedups from them, include the competition and are not the machine's own.",
            )
        )
    effect = getattr(result, "disturbance_effect", None)
    if effect is not None and len(effect):
        out.append(
            (
                "p",
                "What each flag cost, in this campaign: within every case with flagged and clean "
                "repetitions, the median time of the flagged ones against the clean ones (median, smallest "
                "and largest change over those cases; disturbance_effect.csv). A flag whose change is "
                "near zero for a kernel marks another machine state that did not slow that kernel down.",
            )
        )
        out.append(("table", effect_table(effect)))
    out += warmup_blocks(getattr(result, "warmup_effect", None))
    hit = s[s["n_disturbed"].fillna(0) > 0]
    if len(hit):
        table = hit[["case_id", "binary", "threads", "n", "n_disturbed", "median_s", "median_clean_s"]]
        table = table.assign(
            change=(hit["median_clean_s"] / hit["median_s"] - 1).map(
                lambda v: "" if pd.isna(v) else f"{100 * v:+.1f} %"
            )
        )
        out.append(("table", table.sort_values("n_disturbed", ascending=False)))
    return out


def warmup_blocks(warm: pd.DataFrame | None) -> list[tuple[str, object]]:
    """The cases whose repetition right after the warm-up ran slower than the warm-up
    (analysis/stats/warmup_effect.py), as a paragraph and a table; nothing when there are none."""
    slower = slower_cases(warm)
    if not len(slower):
        return []
    text = (
        f"**Slower after the warm-up** ({len(slower)} of {len(warm)} cases with warm-ups; "
        "warmup_effect.csv): the repetition measured right after a process's warm-up took longer than "
        "that warm-up, a second earlier in the same process, with the 95 % interval of the median ratio "
        f"over the case's processes above {1 + SLOWER:g}. A warm-up should take first-run costs away, not "
        "add; here the host ran a process's later regions slower than its first (seen with "
        "OMP_WAIT_POLICY=passive on a Zen 5 guest: docs/own-programs.md). These cases' times, and the "
        "speedups from them, describe later regions."
    )
    ratio = slower[["case_id", "kernel", "model", "schedule", "threads", "processes"]].assign(
        ratio=[
            f"{m:.3f} [{lo:.3f}-{hi:.3f}]"
            for m, lo, hi in slower[["ratio_median", "ratio_ci_low", "ratio_ci_high"]].itertuples(index=False)
        ]
    )
    return [("p", text), ("table", ratio.sort_values("ratio", ascending=False))]


def effect_table(effect: pd.DataFrame) -> pd.DataFrame:
    """disturbance_effect.csv for reading: the changes in per cent."""

    def percent(values: pd.Series) -> pd.Series:
        return values.map(lambda v: "" if pd.isna(v) else f"{100 * v:+.1f} %")

    return pd.DataFrame(
        {
            "kernel": effect["kernel"],
            "inner loop": effect["inner_path"],
            "flag": effect["reason"],
            "cases": effect["cases"],
            "flagged reps": effect["reps_flagged"],
            "clean reps": effect["reps_clean"],
            "change (median)": percent(effect["change_median"]),
            "smallest": percent(effect["change_min"]),
            "largest": percent(effect["change_max"]),
        }
    )


def section(result, plots) -> list:
    """The registered report section (its heading comes from sections/__init__.py)."""
    from analysis.outputs.report.blocks import Block

    return [Block(kind, value) for kind, value in disturbance_section(result) if kind != "h2"]
