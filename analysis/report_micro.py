"""The report's microbenchmark section: OS overhead, timing precision and SMT figures beside the
seeds' published ones, and ours beside the standard tools (tables from analysis/micro.py)."""

from __future__ import annotations

from analysis.report_blocks import Block

SMT_CAVEAT = (
    "SMT cases planned for the test cluster's node type tc-smt run on an emulated SMT node: its two "
    "'sibling' hardware threads are two vCPUs of a KVM guest without SMT, so the gains measured there "
    "are not SMT gains. Only the placement checks (each worker on the planned logical CPU) hold there."
)
NOISE_CAVEAT = (
    "Means of OS operations are dominated by rare long stalls on a shared machine; the median column of "
    "micro.csv is the typical cost. Published figures come from other machines and OS versions: compare "
    "orders of magnitude and ratios, not absolute values."
)


def micro_blocks(result, plots=()) -> list[Block]:
    """Blocks of the section (its heading comes from analysis/sections); none without microbenchmarks."""
    tables = getattr(result, "micro", None) or {}
    if not tables:
        return []
    b = []
    cases = tables.get("micro.csv")
    if cases is not None and len(cases):
        b.append(
            Block("p", "Per case, median over repetitions of each record's per-operation statistics (s):")
        )
        keep = [
            c
            for c in ("kernel", "threads", "op", "reps", "median_s", "mean_s", "p99_s", "max_s")
            if c in cases
        ]
        params = [c for c in cases.columns if c.startswith("param_")]
        b.append(Block("table", cases[keep[:3] + params + keep[3:]]))
        if (cases["kernel"] == "smt").any():
            b.append(Block("p", SMT_CAVEAT))
    siblings = tables.get("micro_siblings.csv")
    if siblings is not None and len(siblings):
        b.append(Block("h3", "SMT siblings found by timing vs likwid's topology"))
        b.append(Block("table", siblings))
    ref = tables.get("micro_reference.csv")
    if ref is not None and len(ref):
        b.append(Block("h3", "Beside the seeds' published figures"))
        b.append(Block("p", NOISE_CAVEAT))
        b.append(Block("table", ref))
    tools = tables.get("micro_tools.csv")
    b.append(Block("h3", "Beside the standard tools (perf bench sched pipe, stress-ng --switch, cyclictest)"))
    if tools is not None and len(tools):
        agree = int(tools["within_25pct"].sum())
        b.append(
            Block(
                "p",
                f"{agree} of {len(tools)} pairs agree within ±25 %; the definition column says where the "
                "tools count a different operation (perf bench: one op = round trip = 2 switches, halved).",
            )
        )
        b.append(Block("table", tools))
    else:
        b.append(
            Block(
                "skip",
                "No tools.jsonl in the campaign: run `python -m jobs.tools --out <campaign>/tools.jsonl`.",
            )
        )
    return b
