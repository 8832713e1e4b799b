"""`scalebench check` (registered by the ./scalebench entry point): a campaign as a performance gate."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from analysis.cli import (
    RESULTS_HELP,
    check_resamples,
    json_option,
    repetitions_option,
    tolerance_band,
    tolerance_option,
)
from sbcore.errors import EXIT_FINDING, EXIT_OK, UsageError
from sbcore.layout import resolve_campaign
from sbcore.output_json import print_document


def register(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    check = sub.add_parser(
        "check",
        help="judge a campaign against a baseline campaign or a reference file (exit 1 on a regression)",
        description="Give each case of CAMPAIGN a verdict from the 95 % CI of its median time relative to\n"
        "the expected one: regressed (the whole CI above the tolerance band), improved (below it),\n"
        "within (inside it) or inconclusive (straddling an edge; with the repetitions it would take).\n"
        "Expected is the matching case of --against CAMPAIGN (matched by content as `compare` does)\n"
        "or the case's entry in --references FILE (per node type; docs/performance-gate.md).\n"
        "An entry may expect a speedup instead (judged from the campaign's analysis: `analyze` first).\n"
        "--write-references FILE turns CAMPAIGN into such a file. Unmatched cases are listed.\n"
        "Times are judged on the repetitions the machine-state probe did not flag as disturbed; a case\n"
        "with too few of them is inconclusive ('host disturbed'), never regressed.\n"
        "Exit status 1 when a case regressed, else 0 (docs/exit-codes.md).",
        epilog="examples:\n  ./scalebench check latest --against smoke-20261120T080000Z --junit check.xml\n"
        "  ./scalebench check ref-run --write-references config/performance-references/mycluster.toml\n"
        "  ./scalebench check latest --references config/performance-references/mycluster.toml --json",
        formatter_class=fmt,
    )
    check.add_argument("campaign", metavar="CAMPAIGN", help="campaign path, name under results/, or 'latest'")
    what = check.add_mutually_exclusive_group(required=True)
    what.add_argument("--against", metavar="BASELINE", help="baseline campaign: the expected medians")
    what.add_argument("--references", metavar="FILE", type=Path, help="performance-reference file (TOML)")
    what.add_argument(
        "--write-references",
        metavar="FILE",
        type=Path,
        help="write CAMPAIGN's medians as a new performance-reference file with --tolerance as each band",
    )
    check.add_argument(
        "--metric",
        choices=("median_s", "speedup"),
        default="median_s",
        help="what --write-references expects of each case: its median time (default) or its speedup "
        "against the analysis's baseline (read from analysis/speedup.csv: run `analyze` first)",
    )
    tolerance_option(check, "campaign / expected (with --references: each entry's own lower and upper)")
    check.add_argument("--junit", metavar="FILE", type=Path, help="also write the verdicts as JUnit XML")
    json_option(check)
    check.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    check.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    repetitions_option(check)
    check.add_argument("--results-dir", type=Path, help=RESULTS_HELP)
    check.set_defaults(func=run_check, tolerance=None)
    register_history(sub)


def run_check(args: argparse.Namespace) -> int:
    from analysis import check as gate
    from analysis.performance_references import read_references, write_references

    check_resamples(args.resamples)
    if args.write_references is None and args.metric != "median_s":
        raise UsageError(
            "check --metric: applies to --write-references (a reference file's entries say theirs)"
        )
    if args.references is not None and args.tolerance is not None:
        raise UsageError(
            "check --references: the bands are each entry's lower and upper; --tolerance does not apply"
        )
    band = tolerance_band(args.tolerance or "0.1")
    campaign_dir = resolve_campaign(args.campaign, args.results_dir)
    if args.write_references is not None:
        if args.junit or args.json:
            raise UsageError("check --write-references: writes a file; --junit and --json need a check")
        speedups = args.metric == "speedup"
        cases, notes = gate.measured_cases(
            campaign_dir, args.resamples, args.seed, speedups, args.repetitions
        )
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        n = write_references(
            args.write_references, cases, campaign_dir.name, 1 - band.low, band.high - 1, args.metric
        )
        print(
            f"references: {args.write_references} ({n} cases of {campaign_dir.name}, "
            f"band [{band.low:g}, {band.high:g}])"
        )
        return EXIT_OK
    if args.against is not None:
        baseline = resolve_campaign(args.against, args.results_dir)
        result = gate.against_campaign(
            campaign_dir, baseline, band, args.resamples, args.seed, args.repetitions
        )
        against = {"campaign": str(baseline)}
    else:
        references = read_references(args.references)
        result = gate.against_references(
            campaign_dir, references, args.resamples, args.seed, args.repetitions
        )
        against = {"references": str(args.references)}
    out = sys.stderr if args.json else sys.stdout
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for line in result.unmatched:
        print(f"unmatched: {line}", file=sys.stderr)
    for row in result.table[result.table["reason"] != ""].itertuples():
        print(f"inconclusive: {row.case_id}: {row.reason}", file=sys.stderr)
    print_verdicts(result.table, out)
    if args.junit is not None:
        from analysis.outputs.junit import write_junit

        write_junit(args.junit, f"scalebench check {campaign_dir.name}", result.table, result.unmatched)
        print(f"junit: {args.junit}", file=out)
    if args.json:
        from analysis.outputs.json_documents import check_document

        print_document(check_document(campaign_dir, against, result))
    return EXIT_FINDING if result.regressed else EXIT_OK


def print_verdicts(table, out) -> None:
    import pandas as pd

    from analysis.outputs import console_table as ct

    shown = pd.concat(
        [
            table[["node_type", "binary"]],
            ct.varying_params(table["params_json"]),
            table[["threads", "ranks", "reps", "reps_disturbed", "reference", "measured"]],
            pd.DataFrame(
                {
                    "ratio [95% CI]": ct.ratio_text(
                        table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"]
                    ),
                    "band": [
                        f"[{lo:g}, {hi:g}]"
                        for lo, hi in zip(table["band_low"], table["band_high"], strict=True)
                    ],
                    "verdict": table["verdict"],
                    "reps to decide": ct.reps_needed_text(table["reps_needed"]),
                }
            ),
        ],
        axis=1,
    )
    if len(table):
        print(ct.show(shown), file=out)
    counts = table["verdict"].value_counts()
    print(
        "check: "
        + (", ".join(f"{counts.get(v, 0)} {v}" for v in ("regressed", "improved", "within", "inconclusive")))
        + (" -> exit 1 (a regression)" if counts.get("regressed", 0) else ""),
        file=out,
    )


def register_history(sub) -> None:
    history = sub.add_parser(
        "history",
        help="one case across every campaign of the results directory: a table and a plot over time",
        description="Gather the cases the filters select from every analysed campaign of the results\n"
        "directory (their analysis tables, not raw records; run `analyze` first), one series per case\n"
        "key, ordered by the campaign's date, with its git commit and node type: median time (or\n"
        "speedup) with its 95 % CI, and the verdict `check --against` the previous campaign would give\n"
        "(the ratio's CI approximated from the two CIs). Writes a plot (PNG and SVG).",
        epilog="example:\n  ./scalebench history --binary mcpi-c-omp --threads 4 --param samples=100000000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for option in ("kernel", "binary", "node-type", "threads", "ranks", "schedule", "sync", "inner", "pin"):
        history.add_argument(f"--{option}", metavar="VALUE", help=f"only cases of this {option}")
    history.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="only cases with this problem parameter",
    )
    history.add_argument(
        "--metric",
        choices=("median_s", "median_undisturbed_s", "speedup"),
        default="median_s",
        help="(default median_s; median_undisturbed_s: over the repetitions the machine-state probe did "
        "not flag, as `check` judges)",
    )
    tolerance_option(history, "a campaign's value / the previous one's")
    history.add_argument(
        "--plot", metavar="FILE.png", type=Path, help="where the plot goes (default: RESULTS/history.png)"
    )
    json_option(history)
    history.add_argument("--results-dir", type=Path, help=RESULTS_HELP)
    history.set_defaults(func=run_history)


def history_filters(args: argparse.Namespace) -> dict[str, str]:
    filters = {}
    for option in ("kernel", "binary", "node_type", "threads", "ranks", "schedule", "sync", "inner", "pin"):
        if getattr(args, option) is not None:
            filters[option] = getattr(args, option)
    for item in args.param:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise UsageError(f"--param {item!r}: expected KEY=VALUE, e.g. samples=1000000")
        filters[key] = value
    return filters


def run_history(args: argparse.Namespace) -> int:
    from analysis.history import METRICS, gather
    from analysis.outputs import console_table as ct
    from analysis.outputs.plots.history import history_plot
    from analysis.stats.history_trend import trend
    from sbcore.layout import results_root

    band = tolerance_band(args.tolerance or "0.1")
    results = Path(args.results_dir) if args.results_dir else results_root()
    if not results.is_dir():
        raise UsageError(f"--results-dir {results}: not a directory")
    found = gather(results, args.metric, history_filters(args))
    out = sys.stderr if args.json else sys.stdout
    for name in found.not_analysed:
        print(
            f"note: {name}: not analysed (no analysis tables): "
            f"run `scalebench analyze {shlex.quote(str(name))}`",
            file=sys.stderr,
        )
    for line in found.unreadable:
        print(f"warning: {line}", file=sys.stderr)
    if found.points.empty:
        raise UsageError(f"history: no analysed campaign in {results} holds a case the filters select")
    points = trend(found.points, band, METRICS[args.metric][3])
    for key, rows in points.groupby("series", sort=False):
        print(f"{key}:", file=out)
        to_previous = ct.ratio_text(rows["ratio_to_previous"], rows["ratio_ci_low"], rows["ratio_ci_high"])
        shown = rows[["date", "campaign", "commit", "n"]].assign(
            value=ct.ratio_text(rows["value"], rows["ci_low"], rows["ci_high"]),
            vs_previous=[
                "" if r != r else t for r, t in zip(rows["ratio_to_previous"], to_previous, strict=True)
            ],
            verdict=rows["verdict"].fillna(""),
        )
        print(ct.show(shown.rename(columns={"value": f"{args.metric} [95% CI]"})), file=out)
    plot = history_plot(points, args.metric, args.plot or results / "history.png")
    print(f"plot: {plot.png}" if plot.png else f"plot skipped: {plot.skipped}", file=out)
    print(
        f"verdicts against the previous campaign (band [{band.low:g}, {band.high:g}], CI of the ratio "
        "approximated from the two CIs): "
        + ", ".join(f"{n} {v}" for v, n in points["verdict"].dropna().value_counts().items()),
        file=out,
    )
    if args.json:
        from analysis.outputs.json_documents import history_document

        print_document(history_document(args.metric, band, points, found.not_analysed))
    return EXIT_OK
