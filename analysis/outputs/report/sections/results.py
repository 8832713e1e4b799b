"""The result sections after the findings: scaling plots with the Amdahl fits, then the variant
comparisons (schedules, sync, languages, MPI), counters and the Mandelbrot image."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded
from analysis.outputs.report.sections.counters import counter_blocks


def plot_blocks(plots, key: str) -> list[Block]:
    return [
        Block("skip", f"Plot skipped: {p.skipped}") if p.skipped else Block("img", p)
        for p in plots
        if p.section == key
    ]


def scaling(result, plots) -> list[Block]:
    b = [
        Block(
            "p",
            "One panel per variant family, shared axes. Bands: 95 % CIs. Dashed: ideal (speedup = "
            "workers); dotted vertical line: the node's cores, shaded beyond. Crosses mark implausible "
            "speedups (above min(workers, cores)).",
        )
    ]
    b += plot_blocks(plots, "scaling")
    models = result.models
    fits = (
        [Block("table", models.drop(columns=["problem"]))]
        if len(models)
        else [Block("p", "No series has >= 3 worker counts within the cores: no fit.")]
    )
    b.append(folded(f"Amdahl fits ({len(models)} series; 1/f bounds the speedup)", fits))
    return b


def variants(result, plots) -> list[Block]:
    b = []
    comp = result.comparisons
    for key, title, dimension in (
        ("schedules", "Schedules", "schedule"),
        ("sync", "Synchronisation variants", "sync"),
        ("languages", "C vs Fortran", None),
        ("mpi", "MPI ranks vs threads", None),
    ):
        b.append(Block("h3", title))
        if dimension and len(comp):
            part = comp[comp["dimension"] == dimension]
            if len(part):
                sig = part[part["significant"]].drop(columns=["case_a", "case_b"])
                b.append(
                    folded(
                        f"{len(part)} pairwise comparisons at equal thread counts, {len(sig)} significant "
                        "(Mann–Whitney U, Holm p < 0.05)",
                        [Block("table", sig) if len(sig) else Block("p", "none")],
                    )
                )
        b += plot_blocks(plots, key)
    return b


def counters(result, plots) -> list[Block]:
    return [*counter_blocks(result), *plot_blocks(plots, "counters")]


def image(result, plots) -> list[Block]:
    return plot_blocks(plots, "image")
