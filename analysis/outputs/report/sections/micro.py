"""The report's microbenchmark section: OS overhead, timing precision and SMT figures beside the
seeds' published ones, and ours beside the standard tools (tables from analysis/stats/micro.py)."""

from __future__ import annotations

import pandas as pd

from analysis.outputs.report.blocks import Block

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
    """Blocks of the section (its heading comes from sections/__init__.py); none without microbenchmarks."""
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
    b.extend(tool_blocks(tables.get("micro_tools.csv")))
    return b


TOOLS_HEADING = "Beside the standard tools (perf bench sched pipe, stress-ng --switch, cyclictest)"
TOOLS_INTRO = (
    "The tools ran as cases of this campaign, in the same shuffled order and pinned to the same CPUs as "
    "ours. Each figure is the median over a case's repetitions, in our definition of one operation (one "
    "context switch; one wake-up); 'their op' says how many of ours one operation of the tool is, and for "
    "the switch benchmarks the context switches counted per tool operation confirm it. Where both measure "
    "the same thing, ours / theirs is expected in [0.75, 1.33]; where the tool's operation leaves out part "
    "of ours, the list below the table says which range the definitions predict and why. Under SCHED_OTHER "
    "any other runnable task on the CPU can take a turn at every switch, which disturbs means of the "
    "context-switch benchmarks (perf bench and stress-ng report only a mean); the SCHED_FIFO pairs are "
    "immune to that."
)


def tool_blocks(tools) -> list[Block]:
    b = [Block("h3", TOOLS_HEADING)]
    if tools is None or not len(tools):
        b.append(
            Block(
                "skip",
                "No standard-tool cases in this campaign: add a [[sweep]] with perfbench-tool-pipe, "
                "stressng-tool-switch or cyclictest-tool-nanosleep (as config/experiments/seed-001-*.toml).",
            )
        )
        return b
    counts = tools["verdict"].value_counts()
    tally = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("agrees", "differs", "inconclusive"))
    rule = "the 90 % CI of ours / theirs wholly inside the expected range agrees, wholly outside differs"
    b.append(Block("p", f"{TOOLS_INTRO} Of {len(tools)} pairs: {tally} ({rule}: docs/verdict-rule.md)."))
    switches = tools["switches_per_their_op"]
    shown = pd.DataFrame(
        {
            "ours": tools["ours"],
            "theirs": tools["theirs"],
            "CPUs": tools["cpus"],
            "statistic": tools["stat"],
            "ours (µs)": tools["ours_us"].map(lambda v: f"{v:.3g}"),
            "theirs (µs)": tools["theirs_us"].map(lambda v: f"{v:.3g}"),
            "ours / theirs": tools["ratio"].map(lambda v: f"{v:.2f}"),
            "expected": tools["expected_low"].map(lambda v: f"{v:.2f}")
            + "–"
            + tools["expected_high"].map(lambda v: f"{v:.2f}"),
            "verdict": tools["verdict"],
            "n ours / theirs": tools["reps_ours"].astype(str) + " / " + tools["reps_theirs"].astype(str),
            "their op = our ops": tools["our_ops_per_their_op"].map(lambda v: f"{v:g}"),
            "switches counted per their op": switches.map(lambda v: "" if pd.isna(v) else f"{v:.2f}"),
        }
    )
    b.append(Block("table", shown))
    # the definitions differ per tool (and perf bench's per mode): each once
    b.append(Block("ul", list(dict.fromkeys(tools["definition"]))))
    return b


STUDY_KERNEL = {"001": "osbench", "003": "timing", "004": "smt"}
OURS_ONLY = {
    "003": "Our miss time (lateness of each wake-up after its deadline) per case, in µs: the study's result "
    "at the gaps of its charts (7 and 10 µs, 18-byte UDP datagram) has no published value to compare with.",
    "004": "What runs here: the SMT microkernels (their times, without an SMT verdict) and the detection of "
    "siblings by timing against likwid's topology; on a node with real SMT the same tables give verdicts.",
}


def micro_study_markdown(result, seed: str) -> str:
    """One microbenchmark study's section of docs/seed-reproductions.md: the conditions, its published
    figures beside ours (interval and its coverage, ours / published, margin, verdict, how each is
    bound), and what only we measured."""
    from analysis.outputs.report.markdown import md_table
    from analysis.outputs.report.sections.reference import conditions_text

    tables = result.micro
    ref = tables.get("micro_reference.csv", pd.DataFrame())
    ref = ref[ref["seed"].astype(str) == seed] if len(ref) else ref
    lines = [f"Campaign `{result.campaign.name}`. {conditions_text(result, disturbed_left_out=False)}", ""]
    if len(ref):
        lines += [md_table(figure_display(ref)), "", verdict_counts(ref["verdict"]), ""]
    kernel = STUDY_KERNEL[seed]
    cases = tables.get("micro.csv", pd.DataFrame())
    cases = cases[cases["kernel"] == kernel] if len(cases) else cases
    if seed in OURS_ONLY and len(cases):
        params = [c for c in cases.columns if c.startswith("param_") and cases[c].notna().any()]
        cases = cases.loc[sort_keys(cases, params).sort_values(params).index]
        stats = [c for c in ("median_s", "mean_s", "p99_s", "max_s") if c in cases]
        shown = cases[["threads", *params, "reps"]].rename(columns=lambda c: c.removeprefix("param_"))
        for column in stats:
            shown[column.removesuffix("_s") + " µs"] = (cases[column] * 1e6).map(lambda v: f"{v:.3g}")
        lines += [OURS_ONLY[seed], "", md_table(shown), ""]
    siblings = tables.get("micro_siblings.csv")
    if seed == "004" and siblings is not None and len(siblings):
        lines += [md_table(siblings), ""]
    return "\n".join(lines).rstrip("\n")


def sort_keys(cases: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The columns as numbers where every value is one (so that 7 sorts before 10), else as text."""
    keys = {}
    for c in columns:
        numbers = pd.to_numeric(cases[c], errors="coerce")
        keys[c] = numbers if numbers.notna().all() else cases[c].astype(str)
    return pd.DataFrame(keys, index=cases.index)


def figure_display(ref: pd.DataFrame) -> pd.DataFrame:
    def ours(r) -> str:
        if pd.isna(r["ours"]):
            return "n/a"
        ci = "" if pd.isna(r["ci_low"]) else f" [{r['ci_low']:.3g}–{r['ci_high']:.3g}]"
        coverage = r.get("coverage")
        how = "" if not ci else (f" ({coverage:.1%})" if pd.notna(coverage) else " (bootstrap)")
        return f"{r['ours']:.3g}{ci}{how}"

    def verdict(r) -> str:
        v = r["verdict"]
        return (
            f"{v} (n ≈ {int(r['needed_n'])} would decide)"
            if v == "inconclusive" and pd.notna(r["needed_n"])
            else v
        )

    return pd.DataFrame(
        {
            "figure": ref["what"],
            "published": ref["published"].map(lambda v: f"{v:g}") + " " + ref["unit"],
            "ours [interval] (coverage)": ref.apply(ours, axis=1),
            "ours / published": ref["ratio"].map(lambda v: "" if pd.isna(v) else f"{v:.3g}"),
            "margin": ref["margin"]
            .map(lambda m: f"±{m:.0%}")
            .where(~ref["verdict"].isin(["not reproducible here", "not comparable"]), ""),
            "verdict": ref.apply(verdict, axis=1),
            "how": (ref["how"] + ("; " + ref["binding"]).where(ref["binding"] != "", "")),
        }
    )


def verdict_counts(verdicts: pd.Series) -> str:
    counts = verdicts.value_counts()
    return "Verdicts (docs/verdict-rule.md): " + ", ".join(f"{n} {v}" for v, n in counts.items()) + "."
