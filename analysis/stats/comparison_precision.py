"""How precise the campaign's paired comparisons are: the acceptance counts of a trial campaign, one
line of `analyze` and one object of its --json document (`comparison_precision`).

Counted over the paired comparisons (speedups and variant ratios from stats/paired.py, language and
inner-loop ratios from stats/paired_cross.py) at up to one worker per core; oversubscribed points are
reported but not counted. A comparison is precise when its 95 % CI half-width is within PRECISE of
its ratio. Besides: speedups whose CI lies wholly above CODE_MARGIN x min(workers, cores) (a defect to
find: nothing can be faster than its cores), speedups at one worker whose CI lies wholly above
CODE_MARGIN, and per node type and kernel whether the headline's CI lies inside HEADLINE_BAND times the
core count ([1.90, 2.02] on two cores). The headline is the one the findings, the report and the
console lead with (analysis/checks.py's `headline`, passed in): one case per kernel, judged once.
"""

from __future__ import annotations

import pandas as pd

from sbcore.case_shape import oversubscribed, usable_cores
from sbcore.case_shape import workers as case_workers

PRECISE = 0.02  # the CI half-width (relative) a comparison must reach
PRECISE_SHARE = 0.90  # the share of comparisons that must reach it
# How much faster than the serial kernel another variant's code may be at one worker: their loops are
# not the same instructions (measured quiet, per CPU second: pi's 1-worker OpenMP and pthreads loops
# 0.3-0.5 % faster than the serial one, quartiles spanning 1). Paired CIs of +-0.5 % see that.
CODE_MARGIN = 1.01
HEADLINE_BAND = (0.95, CODE_MARGIN)  # a perfectly parallel headline: its CI inside these times the cores
# The paired estimate counted: every trial whose members were measured together (stats/paired.py's
# `paired_together_*`), disturbed ones too. A slow phase of the host slows both members of a trial, so
# it is paired within, not left out: with one repetition per process, leaving out every trial with a
# disturbed member leaves too few trials on a host disturbed most of the time. Trials with a member
# measured in a slow cache-line transfer are not in it: that phase slows one member only.
PAIRED_ESTIMATE = "paired_together_"

VARIANT_KIND = "variant ratio"  # schedule or sync (stats/paired.py)
CROSS_KIND = "lang/inner ratio"  # language or inner loop, across a trial group (stats/paired_cross.py)

# One row per paired comparison; the columns this module reads.
COMPARISON_COLUMNS = [
    "kind",
    "node_type",
    "kernel",
    "case_id",
    "workers",
    "cores",
    "ratio",
    "ci_low",
    "ci_high",
]


def speedup_comparisons(
    paired: pd.DataFrame, speedup: pd.DataFrame, cores: dict[str, int | None], prefix: str = PAIRED_ESTIMATE
) -> pd.DataFrame:
    """The paired speedups as comparison rows (kind "speedup"); cores: per node type (None: unknown)."""
    if paired.empty:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    rows = paired.merge(
        speedup[["case_id", "baseline_case_id", "node_type", "kernel", "workers"]],
        on=["case_id", "baseline_case_id"],
        how="left",
    )
    return pd.DataFrame(
        {
            "kind": "speedup",
            "node_type": rows["node_type"],
            "kernel": rows["kernel"],
            "case_id": rows["case_id"],
            "workers": rows["workers"].astype(float),
            "cores": rows["node_type"].map(lambda nt: cores.get(nt)).astype(float),
            "ratio": rows[f"{prefix}speedup"].astype(float),
            "ci_low": rows[f"{prefix}ci_low"].astype(float),
            "ci_high": rows[f"{prefix}ci_high"].astype(float),
        }
    )


def variant_comparisons(
    paired: pd.DataFrame,
    cores: dict[str, int | None],
    prefix: str = PAIRED_ESTIMATE,
    kind: str = VARIANT_KIND,
) -> pd.DataFrame:
    """The paired variant ratios (stats/paired.py's paired_variant_ratios) as comparison rows; with
    kind CROSS_KIND the ratios across a trial group (stats/paired_cross.py), whose columns match."""
    if paired.empty:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    return pd.DataFrame(
        {
            "kind": kind,
            "node_type": paired["node_type"],
            "kernel": None,  # (headlines are speedups)
            "case_id": paired["case_b"],
            "workers": case_workers(paired["threads"], paired["ranks"]).astype(float),
            "cores": paired["node_type"].map(lambda nt: cores.get(nt)).astype(float),
            "ratio": paired[f"{prefix}ratio_b_over_a"].astype(float),
            "ci_low": paired[f"{prefix}ci_low"].astype(float),
            "ci_high": paired[f"{prefix}ci_high"].astype(float),
        }
    )


def comparison_precision(*tables: pd.DataFrame, leads: pd.DataFrame, cores: dict[str, int | None]) -> dict:
    """The acceptance counts (see the module's docstring) of comparison rows (COMPARISON_COLUMNS);
    leads: the headline per node type and kernel (analysis/checks.py's HEADLINE_COLUMNS), cores: per
    node type. {} without any comparison (a campaign not run in trials)."""
    filled = [t for t in tables if not t.empty]
    if not filled:
        return {}
    c = pd.concat(filled, ignore_index=True)
    c[["workers", "cores", "ratio", "ci_low", "ci_high"]] = c[
        ["workers", "cores", "ratio", "ci_low", "ci_high"]
    ].astype(float)
    halfwidth = (c["ci_high"] - c["ci_low"]) / 2 / c["ratio"]
    counted = ~oversubscribed(c["workers"], c["cores"])
    precise = counted & (halfwidth <= PRECISE)
    speedups = c[c["kind"] == "speedup"]
    bound = usable_cores(speedups["workers"], speedups["cores"])
    above_bound = speedups[speedups["ci_low"] > CODE_MARGIN * bound]
    above_one = speedups[(speedups["workers"] == 1) & (speedups["ci_low"] > CODE_MARGIN)]
    n = int(counted.sum())
    share = int(precise.sum()) / n if n else None
    result = {
        "precise_halfwidth": PRECISE,
        "counted": n,
        "precise": int(precise.sum()),
        "precise_share": share,
        "by_kind": {
            kind: {
                "counted": int(counted[c["kind"] == kind].sum()),
                "precise": int(precise[c["kind"] == kind].sum()),
            }
            for kind in sorted(set(c["kind"]))
        },
        "oversubscribed": int((~counted).sum()),
        "no_interval": int((counted & halfwidth.isna()).sum()),
        "above_bound": sorted(above_bound["case_id"].astype(str)),
        "above_one_at_one_worker": sorted(above_one["case_id"].astype(str)),
        "headlines": headlines(leads, cores),
    }
    result["met"] = bool(
        share is not None
        and share >= PRECISE_SHARE
        and not result["above_bound"]
        and not result["above_one_at_one_worker"]
        and result["headlines"]
        and all(h["inside"] for h in result["headlines"])
    )
    return result


def headlines(leads: pd.DataFrame, cores: dict[str, int | None]) -> list[dict]:
    """Per node type and kernel: the headline's speedup and CI (None where no speedup was plausible),
    which estimate it is, and whether the CI lies inside HEADLINE_BAND x cores."""
    out = []
    for lead in leads.to_dict("records"):
        n = cores.get(lead["node_type"])
        low, high = (HEADLINE_BAND[0] * n, HEADLINE_BAND[1] * n) if n else (None, None)
        ci = lead.get("speedup_ci_low"), lead.get("speedup_ci_high")
        has_ci = isinstance(lead.get("binary"), str) and all(v == v and v is not None for v in ci)
        out.append(
            {
                "node_type": str(lead["node_type"]),
                "kernel": str(lead["kernel"]),
                "case_id": str(lead["case_id"]) if has_ci else None,
                "workers": int(lead["workers"]) if has_ci else None,
                "estimate": lead.get("estimate") if has_ci else None,
                "speedup": float(lead["speedup"]) if has_ci else None,
                "ci_low": float(ci[0]) if has_ci else None,
                "ci_high": float(ci[1]) if has_ci else None,
                "band_low": low,
                "band_high": high,
                "inside": bool(has_ci and low is not None and low <= ci[0] and ci[1] <= high),
            }
        )
    return out


def precision_line(p: dict) -> str:
    """The console's one line: the counts a reader checks the campaign's comparisons against."""
    if not p["counted"]:
        return "paired comparisons: none at up to one worker per core"
    heads = "; ".join(_headline_text(h) for h in p["headlines"])
    kinds = ", ".join(f"{v['precise']}/{v['counted']} {k}s" for k, v in p["by_kind"].items())
    return (
        f"paired comparisons: {p['precise']} of {p['counted']} ({100 * p['precise_share']:.0f} %) at up to "
        f"one worker per core within ±{100 * PRECISE:g} % ({kinds}; {p['oversubscribed']} oversubscribed "
        f"not counted, {p['no_interval']} without an interval); {len(p['above_bound'])} speedups wholly "
        f"above {CODE_MARGIN:g} x min(workers, cores), {len(p['above_one_at_one_worker'])} at one worker "
        f"wholly above {CODE_MARGIN:g}; "
        f"headlines: {heads or 'none'}; target {'met' if p['met'] else 'NOT met'}"
    )


def _headline_text(h: dict) -> str:
    if h["speedup"] is None:
        return f"{h['kernel']} no plausible speedup with an interval"
    text = f"{h['kernel']} x{h['workers']} {h['speedup']:.3f} [{h['ci_low']:.3f}-{h['ci_high']:.3f}]"
    if h["band_low"] is None:
        return f"{text} (cores unknown)"
    return f"{text} {'inside' if h['inside'] else 'outside'} [{h['band_low']:.2f}, {h['band_high']:.2f}]"
