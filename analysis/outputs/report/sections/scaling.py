"""Report section: speedup and efficiency plots with the Amdahl fits."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded, plot_blocks
from analysis.stats.models import MIN_POINTS


def section(result, plots) -> list[Block]:
    b = [
        Block(
            "p",
            "One panel per variant family, shared axes. Points and bands: the best estimate of each "
            "speedup and its 95 % CI (paired within trials where the case ran in trials, else the ratio "
            "of median times; the title counts each). Dashed: ideal (speedup = "
            "workers); dotted vertical line: the node's cores, shaded beyond. Crosses mark implausible "
            "speedups (above min(workers, cores)).",
        )
    ]
    weak = _weak_series(getattr(result, "speedup", None))
    if weak:
        b.append(
            Block(
                "p",
                f"Weak scaling ({', '.join(f'`{name}`' for name in weak)}): the problem grows with the "
                "workers (the params named in the sweep's weak_scaling, given per worker), so the speedup "
                "is the scaled speedup p × T(1)/T(p) and the efficiency T(1)/T(p), ideal 1; every other "
                "series is strong scaling (one problem, more workers).",
            )
        )
    b += plot_blocks(plots, "scaling")
    models = result.models
    fits = (
        [Block("table", models.drop(columns=["problem"]))]
        if len(models)
        else [Block("p", f"No series has >= {MIN_POINTS} worker counts within the cores: no fit.")]
    )
    count = (
        f"{len(models)} series"
        if len(models)
        else f"none: no series has {MIN_POINTS} worker counts within the cores"
    )
    b.append(folded(f"Amdahl fits ({count}; 1/f bounds the speedup)", fits))
    return b


def _weak_series(speedup) -> list[str]:
    """The binaries with a weak-scaling series (a user's program with weak_scaling params)."""
    if speedup is None or speedup.empty or "scaling" not in speedup:
        return []
    return sorted(set(speedup.loc[speedup["scaling"] == "weak", "binary"]))
