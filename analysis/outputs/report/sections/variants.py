"""Report section: the variant comparisons (schedules, sync, languages, MPI) with their tests and plots."""

from __future__ import annotations

from analysis.outputs.report.blocks import Block, folded, plot_blocks


def section(result, plots) -> list[Block]:
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
