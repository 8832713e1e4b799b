"""Share of `make bench`'s runner time spent in the kernels, and how many cases came out noisy or
disturbed, from the newest workstation campaign in the results directory (run `make bench` first; or pass
a campaign directory).

Kernel time = wall_s of every measured repetition plus the warm-ups of each invocation; runner time =
the span of the run's log (first to last line) and, separately, the sum of the invocations' own
runner_wall_s. Noisy / disturbed come from the campaign's analysis/summary.csv. Asserts nothing.
"""

import json
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sbcore import layout  # noqa: E402


def newest_campaign() -> Path | None:
    found = sorted(
        layout.results_root().glob(f"workstation-*/{layout.CASES_FILE}"), key=lambda p: p.stat().st_mtime
    )
    return found[-1].parent if found else None


def log_span(campaign: Path) -> float | None:
    stamps = []
    for log in (campaign / "logs").glob("run-*.log"):
        for line in log.read_text().splitlines():
            try:
                stamps.append(datetime.strptime(line.split()[0], "%Y%m%dT%H%M%S.%fZ"))
            except (ValueError, IndexError):
                continue
    return (max(stamps) - min(stamps)).total_seconds() if len(stamps) > 1 else None


def main() -> None:
    campaign = Path(sys.argv[1]) if len(sys.argv) > 1 else newest_campaign()
    if campaign is None or not (campaign / layout.RAW_DIR).is_dir():
        print("no workstation campaign in results/: run `make bench` first")
        return
    kernel = runner = 0.0
    reps = 0
    invocations = set()
    records = [
        record
        for case_dir in sorted((campaign / layout.RAW_DIR).iterdir())
        for record in layout.case_records(campaign, case_dir.name).values()
    ]
    if not records:
        print(f"campaign {campaign}: no measured repetition yet")
        return
    for record in records:
        reps += 1
        kernel += record["wall_s"] + sum(w or 0 for w in record.get("warmup_wall_s") or [])
        key = (record["case_id"], record.get("invocation", record["rep"]))
        if key not in invocations:
            invocations.add(key)
            runner += record.get("runner_wall_s") or 0.0
    span = log_span(campaign)
    print(f"campaign {campaign}: {reps} measured repetitions in {len(invocations)} kernel processes")
    print(
        f"  kernel time {kernel:8.1f} s; sum of runner_wall_s {runner:8.1f} s "
        f"-> {100 * kernel / runner:5.1f} %"
    )
    if span:
        print(
            f"  run log span {span:7.1f} s -> kernels computing {100 * kernel / span:5.1f} % "
            "of the runner's wall time"
        )
    summary = layout.analysis_dir(campaign) / "summary.csv"
    if summary.exists():
        s = pd.read_csv(summary)
        print(
            f"  cases {len(s)}, median repetitions per case {s['n'].median():.0f} "
            f"(min {s['n'].min()}, max {s['n'].max()})"
        )
        print(f"  noisy cases (bootstrap CI width > 5 %): {int(s['noisy'].sum())} of {len(s)}")
        if "n_disturbed" in s:
            hit = int((s["n_disturbed"] > 0).sum())
            print(
                f"  cases with disturbed repetitions: {hit} of {len(s)}; "
                f"disturbed repetitions {int(s['n_disturbed'].sum())} of {int(s['n'].sum())}"
            )
    else:
        print("  (no analysis/summary.csv: run `scalebench analyze` for the noisy-case figures)")
    stops = {}
    for line in layout.cases_path(campaign).read_text().splitlines():
        case = json.loads(line)
        if "sampling" in case:
            stops[case["case_id"]] = None
    if stops:
        from jobs.status import case_states

        states = [s for s in case_states(campaign) if s["case_id"] in stops]
        counts = pd.Series([s["stop"] or "unfinished" for s in states]).value_counts().to_dict()
        print(f"  precision target: {counts}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
