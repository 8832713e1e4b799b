"""`scalebench analyze` and `scalebench compare` (registered by the ./scalebench entry point)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from analysis.fail_on import DEFAULT_FAIL_ON, FAIL_ON_KINDS, finding_cases, finding_counts, parse_fail_on
from sbcore import campaign_access, layout
from sbcore.argtypes import int_at_least
from sbcore.atomic import write_atomic
from sbcore.campaign_files import check_manifest, nothing_measured, read_cases
from sbcore.errors import EXIT_FINDING, EXIT_OK, UsageError
from sbcore.layout import RESULTS_ENV, resolve_campaign, trusted_campaign
from sbcore.output_json import document, print_document

FORMATS = ("md", "html", "csv", "records-csv")
RESULTS_HELP = f"where campaigns live (default: ${RESULTS_ENV}, else results/)"


def register(sub) -> None:
    analyze = sub.add_parser(
        "analyze",
        help="tables, plots and report of one campaign",
        description=(
            "Analyse a campaign: validity checks (checksums, placement, failed/missing, noise, bimodal, "
            "implausible speedups above min(workers, cores), counters), "
            "per-case median with bootstrap CI, speedup/efficiency against a named baseline, Amdahl fits, "
            "variant comparisons (Mann-Whitney, Holm). Writes results/<campaign>/analysis/ (records.parquet "
            "counters.parquet summary.csv speedup.csv models.csv comparisons.csv, plots/, report.md, "
            "report.html) and prints "
            "a short summary (best speedup per kernel by its CI lower bound at up to one worker per core, "
            "never an implausible one, a noisy or bimodal one only when all are) "
            "and the path of report.html."
        ),
    )
    analyze.add_argument(
        "campaign", metavar="CAMPAIGN", help="campaign directory, name under results/, or 'latest'"
    )
    analyze.add_argument(
        "--baseline",
        default="serial",
        help="serial (best serial time of the same kernel, problem, language, node type; default), self (the "
        "same variant at one worker), a case_id, or a binary name (its best one-worker time)",
    )
    analyze.add_argument(
        "--format",
        default="md,html,csv",
        help="comma-separated subset of md,html,csv,records-csv (csv: the tables, records and counters "
        "in Parquet; records-csv: those two also as CSV)",
    )
    analyze.add_argument(
        "--noise-threshold",
        type=float,
        default=0.05,
        metavar="F",
        help="flag a case as noisy when its CI of the median is wider than F x median (default 0.05)",
    )
    analyze.add_argument(
        "--fail-on",
        default=",".join(DEFAULT_FAIL_ON),
        metavar="KINDS",
        help="exit status 1 when the analysis finds any of these (comma-separated subset of "
        f"{','.join(FAIL_ON_KINDS)}, or 'none'; default {','.join(DEFAULT_FAIL_ON)}): the report is "
        "written either way (docs/exit-codes.md)",
    )
    json_option(analyze, " (also written as analysis/summary.json)")
    analyze.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    analyze.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the bootstrap (default 0)")
    analyze.add_argument(
        "--jobs", type=int_at_least(1), default=None, help="processes that parse records (default: all CPUs)"
    )
    analyze.add_argument("--results-dir", type=Path, help=RESULTS_HELP)
    analyze.add_argument(
        "--seed-doc",
        type=Path,
        metavar="FILE.md",
        help="also write the published-reference comparison into FILE.md between its generated-section "
        "markers for the experiment's reference (e.g. docs/seed-reproductions.md)",
    )
    analyze.set_defaults(func=run_analyze)

    compare = sub.add_parser(
        "compare",
        help="compare two campaigns case by case (before/after, or two clusters / node types)",
        description=(
            "Cases are matched by content (binary, parameters, pinning, counter group, threads, ranks): "
            "first with the same node type, then, for what is left, across node types where the match is "
            "unambiguous, so campaigns of one experiment on different clusters compare. Per matched case: "
            "ratio of medians B/A with bootstrap 95 %% CI, the Mann-Whitney p-value (Holm-corrected; a "
            "warning when the repetitions are too few for it ever to be significant) and the verdict of "
            "the CI against --tolerance. The table names each case by the parameters that differ between "
            "cases. Cases without a match are listed on stderr. Prints a table and writes "
            "compare-<A>-vs-<B>.csv into B's analysis/."
        ),
    )
    compare.add_argument("a", metavar="A", help="reference campaign (path, name under results/, or 'latest')")
    compare.add_argument("b", metavar="B", help="campaign compared with A")
    compare.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    compare.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    repetitions_option(compare)
    tolerance_option(compare, "B/A")
    json_option(compare)
    compare.add_argument("--results-dir", type=Path, help=RESULTS_HELP)
    compare.set_defaults(func=run_compare)


def tolerance_option(parser, ratio: str) -> None:
    parser.add_argument(
        "--tolerance",
        default="0.1",
        metavar="F|LOWER,UPPER",
        help=f"the band {ratio} may lie in: 0.1 (default) = [0.9, 1.1]; 0.05,0.1 = 5 %% faster to 10 %% "
        "slower. A case is regressed only when the whole 95 %% CI of the ratio lies above the band, improved "
        "when below, within when inside, else inconclusive (docs/performance-gate.md)",
    )


def repetitions_option(parser) -> None:
    from analysis.stats.undisturbed import BASES, MIN_UNDISTURBED

    parser.add_argument(
        "--repetitions",
        choices=BASES,
        default=BASES[0],
        help="what each case is judged on: its repetitions the machine-state probe did not flag as "
        f"disturbed (default; a case with fewer than {MIN_UNDISTURBED} of them is inconclusive, "
        "'host disturbed') or all of them",
    )


def json_option(parser, more: str = "") -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one versioned JSON document on stdout, the text lines going to stderr "
        f"(docs/json-output.md){more}",
    )


def parse_formats(text: str) -> tuple[str, ...]:
    formats = tuple(f.strip() for f in text.split(",") if f.strip())
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise UsageError(f"--format {text!r}: expected a comma-separated subset of {','.join(FORMATS)}")
    return formats


def check_resamples(value: int) -> None:
    if value < 100:
        raise UsageError(f"--resamples {value}: need at least 100 for a 95 % bootstrap interval")


def run_analyze(args: argparse.Namespace) -> int:
    from analysis.outputs.json_documents import analyze_document, write_summary_json
    from analysis.pipeline import Options, analyze

    formats = parse_formats(args.format)
    fail_on = parse_fail_on(args.fail_on)
    if not 0 < args.noise_threshold < 10:
        raise UsageError(f"--noise-threshold {args.noise_threshold}: expected a fraction such as 0.05")
    check_resamples(args.resamples)
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: must be >= 1")
    campaign_dir = trusted_campaign(args.campaign, args.results_dir)
    # No link followed out of the campaign: its raw/ and the analysis directories are real ones of this user.
    if (campaign_dir / layout.RAW_DIR).exists():
        campaign_access.check_trusted(campaign_dir / layout.RAW_DIR, "campaign's raw directory")
    campaign_access.make_dir(campaign_dir, layout.ANALYSIS_DIR)
    for sub in ("plots", ".cache"):
        if os.path.lexists(layout.analysis_dir(campaign_dir) / sub):
            campaign_access.make_dir(campaign_dir, f"{layout.ANALYSIS_DIR}/{sub}")
    check_manifest(campaign_dir)  # guard: a usable manifest.json and cases.jsonl, and records
    cases = read_cases(campaign_dir)
    why = nothing_measured(campaign_dir, cases)
    if why:  # an empty or all-failed campaign: a report that says so instead of tables of nothing
        for case in cases:  # what was not read or not counted, named as when something counts
            for problem in layout.case_lines(campaign_dir, case["case_id"], case)[1]:
                print(f"skipped: {campaign_dir / problem}", file=sys.stderr)
        report = layout.analysis_dir(campaign_dir) / "report.md"
        write_atomic(report, f"# {campaign_dir.name}\n\n{why}\n", make_parents=True)
        print(f"{why}\nreport: {report}", file=sys.stderr if args.json else sys.stdout)
        if args.json:
            print_document(document("analyze", campaign=str(campaign_dir), nothing_measured=why))
        return 0
    options = Options(args.baseline, formats, args.noise_threshold, args.resamples, args.seed, args.jobs)
    result = analyze(campaign_dir, options)
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        best, counts = _report(args, result, formats)
    doc = analyze_document(result, best, counts, fail_on)
    print(f"summary: {write_summary_json(result, doc)}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print_document(doc)
    return gate(counts, fail_on, finding_cases(result))


def _report(args, result, formats):
    """Writes the tables, plots and report and prints the summary: (headline table, finding counts)."""
    from analysis.outputs.plots import all_plots
    from analysis.outputs.report.render import write_report
    from analysis.pipeline import write_tables

    campaign_dir = result.campaign.path
    for note in result.loaded.notes:
        print(f"note: {note}", file=sys.stderr)
    for file, reason in result.campaign.problems:
        print(f"warning: {campaign_dir / file}: {reason}", file=sys.stderr)
    for file, reason in result.loaded.problems.itertuples(index=False):
        print(f"skipped: {campaign_dir / file}: {reason}", file=sys.stderr)
    if {"csv", "records-csv"} & set(formats):
        write_tables(result, big_csv="records-csv" in formats)
    plots = all_plots(result) if {"md", "html"} & set(formats) else []
    written = write_report(result, plots, formats)
    if args.seed_doc is not None:
        from analysis.outputs.reference_doc import update_doc

        print(f"seed doc: {args.seed_doc} ({update_doc(args.seed_doc, result)})")
    best = result.headline
    print_summary(result, best, plots)
    for kind in ("md", "html"):
        if kind in written:
            print(f"report: {written[kind]}")
    if "csv" in formats and not written:
        print(f"tables: {result.out_dir}")
    return best, finding_counts(result)


def gate(counts: dict[str, int], fail_on: tuple[str, ...], cases: dict[str, str] | None = None) -> int:
    """Exit status of `analyze`: 1 (a finding) when a kind of --fail-on was found, each named on stderr
    in one line (with the first cases it concerns, where the kind names cases)."""
    found = [kind for kind in fail_on if counts[kind]]
    for kind in found:
        named = (cases or {}).get(kind)
        print(
            f"fail-on {kind}: {counts[kind]} {FAIL_ON_KINDS[kind]}{': ' + named if named else ''}",
            file=sys.stderr,
        )
    return EXIT_FINDING if found else EXIT_OK


def print_summary(result, best, plots) -> None:
    from analysis.checks import no_baseline_text
    from analysis.outputs.report.blocks import variant_text
    from analysis.stats.best_speedup import estimate_text
    from analysis.stats.comparison_precision import precision_line

    """The console summary applies the report's rules: headline by CI lower bound, never implausible."""
    s, done, sp = result.summary, result.completeness, result.speedup
    print(
        f"campaign {result.campaign.name}: {len(s)} cases with records, {len(result.stats.records)} records"
    )
    states = done["state"].value_counts()
    print(
        f"validity: {int((~s['valid']).sum())} checksum mismatches, "
        f"{len(result.violations)} cases with placement violations, "
        f"{states.get('failed', 0)} failed, {states.get('partial', 0)} partial, "
        f"{states.get('missing', 0)} missing, {len(result.loaded.problems)} unreadable files or lines, "
        f"{int(s['noisy'].sum())} noisy, {int(s['bimodal'].sum())} bimodal, "
        f"{int((sp['plausibility'] == 'implausible').sum())} implausible speedups, "
        f"{int((sp['plausibility'] == 'superlinear').sum())} superlinear"
    )
    if result.comparison_precision:
        print(precision_line(result.comparison_precision))
    if best.empty:
        print(f"speedup: {no_baseline_text(result.options.baseline)}")
    for row in best.itertuples(index=False):
        skipped = int(row.implausible_left_out) if row.implausible_left_out == row.implausible_left_out else 0
        left_out = f" ({skipped} implausible left out)" if skipped else ""
        if not isinstance(row.binary, str):
            print(f"best {row.kernel} on {row.node_type}: no plausible speedup{left_out}")
            continue
        variant = variant_text(row._asdict()).removeprefix(row.binary).strip()
        caveat = f" — {row.caveats}" if row.caveats else ""
        print(
            f"best {row.kernel} on {row.node_type} (by CI lower bound): {row.binary} {variant} x{row.threads}"
            f"{f' x{row.ranks} ranks' if row.ranks > 1 else ''}: speedup {row.speedup:.2f} "
            f"[95% CI {row.speedup_ci_low:.2f}-{row.speedup_ci_high:.2f}] ({estimate_text(row)}) "
            f"vs {row.baseline_binary} "
            f"({row.baseline_median_s:.4g} s){caveat}{left_out}"
        )
    skipped = [p for p in plots if p.skipped]
    if skipped:
        print("plots skipped: " + "; ".join(f"{p.name} ({p.skipped})" for p in skipped))


def run_compare(args: argparse.Namespace) -> int:
    import pandas as pd

    from analysis.campaign_diff import compare_campaigns, write_comparison
    from analysis.outputs import console_table as ct
    from analysis.outputs.json_documents import compare_document

    check_resamples(args.resamples)
    band = tolerance_band(args.tolerance)
    dir_a = resolve_campaign(args.a, args.results_dir)
    dir_b = resolve_campaign(args.b, args.results_dir)
    table, notes, unmatched = compare_campaigns(
        dir_a, dir_b, args.resamples, args.seed, band, args.repetitions
    )
    text = sys.stderr if args.json else sys.stdout
    warning = ct.rank_test_warning(table["n_a"], table["n_b"])
    for note in notes + ([warning] if warning else []):
        print(f"{'warning' if note is warning else 'note'}: {note}", file=sys.stderr)
    for row in table[table["reason"] != ""].itertuples():
        print(f"inconclusive: {row.case_a} / {row.case_b}: {row.reason}", file=sys.stderr)
    nodes = table["node_type_a"].where(
        table["node_type_a"] == table["node_type_b"], table["node_type_a"] + "->" + table["node_type_b"]
    )
    shown = pd.concat(
        [
            pd.DataFrame({"node_type": nodes, "binary": table["binary"]}),
            ct.varying_params(table["params_json"]),
            table[["threads", "ranks", "n_a", "n_b", "median_a_s", "median_b_s"]],
            pd.DataFrame(
                {
                    "B/A [95% CI]": ct.ratio_text(
                        table["ratio_b_over_a"], table["ratio_ci_low"], table["ratio_ci_high"]
                    ),
                    "p_holm": table["p_holm"],
                    "verdict": table["verdict"],
                    "reps to decide": ct.reps_needed_text(table["reps_needed"]),
                    "case_a": table["case_a"],
                }
            ),
        ],
        axis=1,
    )
    print(ct.show(shown), file=text)
    print(
        f"verdict: B/A's CI against [{band.low:g}, {band.high:g}] (--tolerance): "
        + ", ".join(f"{n} {v}" for v, n in table["verdict"].value_counts().items()),
        file=text,
    )
    print(f"comparison: {write_comparison(table, dir_a, dir_b)}", file=text)
    if args.json:
        print_document(compare_document(dir_a, dir_b, band, table, unmatched, [warning] if warning else []))
    return 0


def tolerance_band(text: str):
    """--tolerance F or LOWER,UPPER (fractions) -> the band of ratios [1 - LOWER, 1 + UPPER]."""
    from analysis.stats.verdicts import Band

    try:
        parts = [float(x) for x in text.split(",")]
        if len(parts) not in (1, 2):
            raise ValueError
        return Band.around_one(parts[0], parts[-1])
    except ValueError:
        raise UsageError(
            f"--tolerance {text!r}: expected a fraction (0.1 = 10 % either way) or LOWER,UPPER with "
            "0 <= LOWER < 1 <= ... e.g. 0.05,0.10"
        ) from None
