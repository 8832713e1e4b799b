"""Report text for the paired ratios across a trial group (analysis/stats/paired_cross.py): one
sentence per language or inner-loop comparison and a table; part of the paired section."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block, ci_text

SHOWN = {"c": "C", "f": "Fortran", "scalar": "scalar", "simd": "SIMD"}  # a variant as the text names it
ESTIMATE = "paired_together_"  # the estimate the precision count uses (stats/comparison_precision.py)


def shown(value: str) -> str:
    return SHOWN.get(value, value)


def measurement(row, label: dict) -> str:
    """What both cases are: 'mandelbrot-c-omp dynamic,1 on 2 threads' (an inner-loop pair) or
    'mcpi omp static reduction on 2 threads' (a language pair: the binary without its language)."""
    name = row.binary_a if row.dimension == "inner" else f"{row.kernel} {row.model}"
    options = label.get(row.case_a, "")
    workers, unit = (row.ranks, "rank") if row.ranks > 1 else (row.threads, "thread")
    return f"{' '.join(p for p in (name, options) if p)} on {workers} {unit}{'s' if workers != 1 else ''}"


def factor_text(ratio: float, low: float, high: float) -> tuple[str, str]:
    """('6.10x [5.90–6.30]', 'faster') from b's time over a's (blocks.ci_text); a ratio above 1 reads
    'slower'."""
    factor, low, high, how = (
        (1 / ratio, 1 / high, 1 / low, "faster") if ratio < 1 else (ratio, low, high, "slower")
    )
    if pd.isna(low):
        return f"{factor:#.3g}x (no interval: too few trials)", how
    return ci_text(factor, low, high, "x"), how


def sentence(row, label: dict) -> str:
    """'SIMD is 6.10x [5.90–6.30] faster than scalar for mandelbrot-c-omp dynamic,1 on 2 threads, paired
    over 24 trials (unpaired: 5.80x faster).' When the interval holds 1: 'Fortran is as fast as C
    (time ratio 0.996 [0.991–1.01]) for ...' (neither is faster as far as the trials can tell)."""
    ratio = getattr(row, f"{ESTIMATE}ratio_b_over_a")
    if pd.isna(ratio):
        return ""
    low, high = getattr(row, f"{ESTIMATE}ci_low"), getattr(row, f"{ESTIMATE}ci_high")
    unpaired = row.unpaired_ratio_b_over_a
    b, a = shown(row.variant_b), shown(row.variant_a)
    if low <= 1 <= high:
        compared = f"{b} is as fast as {a} (time ratio {ci_text(ratio, low, high)})"
        unpaired_text = f"{unpaired:#.3g}"
    else:
        factor, how = factor_text(ratio, low, high)
        compared = f"{b} is {factor} {how} than {a}"
        unpaired_text = f"{1 / unpaired:#.3g}x faster" if unpaired < 1 else f"{unpaired:#.3g}x slower"
    return (
        f"{compared} for {measurement(row, label)}, paired over {row.trials_together} trials "
        f"(unpaired: {unpaired_text})."
    )


def blocks(cross: pd.DataFrame, summary: pd.DataFrame) -> list[Block]:
    if cross is None or cross.empty:
        return []
    options = summary.set_index("case_id")[["schedule", "sync"]].astype(object)
    label = {
        case_id: " ".join(str(v) for v in values if isinstance(v, str) and v not in ("", "none"))
        for case_id, values in options.iterrows()
    }
    rows = list(cross.sort_values(["dimension", "kernel", "model", "threads", "ranks"]).itertuples())
    lines = [s for s in (sentence(r, label) for r in rows) if s]
    intro = (
        "Language and inner loop, paired: the families of one kernel and problem that differ in language "
        "or inner loop run in the same trials (their trial group), so two cases that are the same "
        "measurement but for one of them are paired like the variants above: the median over trials of "
        "b's time over a's, with a bootstrap 95 % CI over trials (paired_cross_ratio.csv); the unpaired "
        "ratio is that of their median times over all repetitions."
    )
    table = pd.DataFrame(
        {
            "compared": [f"{shown(r.variant_b)} / {shown(r.variant_a)}" for r in rows],
            "measurement": [measurement(r, label) for r in rows],
            "b / a, paired": [
                ci_text(
                    getattr(r, f"{ESTIMATE}ratio_b_over_a"),
                    getattr(r, f"{ESTIMATE}ci_low"),
                    getattr(r, f"{ESTIMATE}ci_high"),
                )
                for r in rows
            ],
            "trials": [r.trials_together for r in rows],
            "b / a, unpaired": [f"{r.unpaired_ratio_b_over_a:#.3g}" for r in rows],
        }
    )
    return [Block("p", intro), *(Block("p", line) for line in lines), Block("table", table)]
