"""The campaign directory layout (docs/formats.md): where campaigns live, how a command names one, the
files inside it, and when a case counts as done. Every command (run, run-case, status, submit, resume,
analyze, compare) finds campaign files through this module only.

    $SCALEBENCH_RESULTS_DIR (default results/)
      latest -> <campaign>                       symlink to the newest campaign
      <campaign>/cases.jsonl                     one planned case per line
      <campaign>/raw/<case_id>/rep-<k>.json      the record of repetition k (written once, never rewritten)
      <campaign>/raw/<case_id>/rep-<k>.failed-<utc>-<pid>.json   a failed attempt at repetition k
      <campaign>/raw/<case_id>/rep-<k>.pgm       the image repetition k dumped (dump_image cases)
      <campaign>/analysis/                       everything `analyze` derives
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sbcore import sampling
from sbcore.clock import utc_stamp
from sbcore.errors import UsageError

RESULTS_ENV = "SCALEBENCH_RESULTS_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent
LATEST = "latest"
CASES_FILE = "cases.jsonl"
RAW_DIR = "raw"
ANALYSIS_DIR = "analysis"

REP_FILE = re.compile(r"^rep-(\d+)\.json$")
FAILED_FILE = re.compile(r"^rep-(\d+)\.failed-(.+)\.json$")  # group 2: <utc>-<pid>, sorts by time
IMAGE_FILE = re.compile(r"^rep-(\d+)\.pgm$")

CASE_STATES = ("done", "failed", "partial", "missing")


# ---- where campaigns live ---------------------------------------------------------------------------


def results_root() -> Path:
    """The directory holding the campaigns: $SCALEBENCH_RESULTS_DIR, else results/ in the repository."""
    return Path(os.environ.get(RESULTS_ENV) or REPO_ROOT / "results")


def resolve_campaign(spec: str | os.PathLike, results_dir: Path | None = None) -> Path:
    """A CAMPAIGN argument (a directory, a campaign name under the results directory, or 'latest') ->
    the campaign's absolute directory. A campaign directory has cases.jsonl or raw/."""
    results = Path(results_dir) if results_dir is not None else results_root()
    text = str(spec)
    candidates = [Path(text)] if text != LATEST else []
    candidates.append(results / text)
    for path in candidates:
        if path.is_dir() and ((path / CASES_FILE).is_file() or (path / RAW_DIR).is_dir()):
            return path.resolve()
    if text == LATEST:
        raise UsageError(f"campaign 'latest': {results / LATEST} does not exist (no campaign run yet?)")
    raise UsageError(
        f"campaign {text!r}: not a campaign directory (no {CASES_FILE} nor {RAW_DIR}/) "
        f"nor a campaign name under {results}"
    )


def update_latest(results: Path, campaign: str) -> None:
    """Point <results>/latest at `campaign`, atomically (a reader sees the old or the new target)."""
    tmp = Path(results) / f".{LATEST}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(campaign)
    os.replace(tmp, Path(results) / LATEST)


# ---- files of one campaign --------------------------------------------------------------------------


def cases_path(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / CASES_FILE


def analysis_dir(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / ANALYSIS_DIR


def case_dir(campaign_dir: Path, case_id: str) -> Path:
    return Path(campaign_dir) / RAW_DIR / case_id


def rep_name(k: int) -> str:
    return f"rep-{k}.json"


def rep_path(campaign_dir: Path, case_id: str, k: int) -> Path:
    return case_dir(campaign_dir, case_id) / rep_name(k)


def record_relpath(case_id: str, k: int) -> str:
    """The record's path relative to the campaign directory (how the analysis names files)."""
    return f"{RAW_DIR}/{case_id}/{rep_name(k)}"


def failed_name(k: int) -> str:
    """A new failed-attempt file name for repetition k: unique per process and moment, sorts by time."""
    return f"rep-{k}.failed-{utc_stamp()}-{os.getpid()}.json"


def image_relpath(case_id: str, k: int) -> Path:
    """Where repetition k of a dump_image case writes its PGM, relative to the campaign directory (the
    kernels' working directory)."""
    return Path(RAW_DIR) / case_id / f"rep-{k}.pgm"


def raw_files(campaign_dir: Path) -> dict[str, None]:
    """Every record and failed-attempt file as relative paths 'raw/<case_id>/rep-<k>[...].json', in case
    order. Listed with os.scandir and no stat per file: a million files list in about a second."""
    found: dict[str, None] = {}
    raw = Path(campaign_dir) / RAW_DIR
    if not raw.is_dir():
        return found
    with os.scandir(raw) as entries:
        case_ids = sorted(entry.name for entry in entries if entry.is_dir())
    for case_id in case_ids:
        with os.scandir(raw / case_id) as files:
            for entry in files:
                if entry.name.startswith("rep-") and entry.name.endswith(".json"):
                    found[f"{RAW_DIR}/{case_id}/{entry.name}"] = None
    return found


def failed_attempts(campaign_dir: Path, case_id: str) -> dict[int, Path]:
    """rep -> its newest failed-attempt file, for one case."""
    directory = case_dir(campaign_dir, case_id)
    newest: dict[int, tuple[str, Path]] = {}
    if directory.is_dir():
        for path in directory.iterdir():
            match = FAILED_FILE.match(path.name)
            if match:
                k, stamp = int(match.group(1)), match.group(2)
                if k not in newest or stamp > newest[k][0]:
                    newest[k] = (stamp, path)
    return {k: path for k, (_, path) in sorted(newest.items())}


def newest_failure(paths: Mapping[int, Path]) -> tuple[int, Path] | None:
    """The (rep, file) of the most recent failed attempt among `paths` (names sort by UTC time)."""
    if not paths:
        return None
    return max(paths.items(), key=lambda item: FAILED_FILE.match(item[1].name).group(2))


# ---- when a case is done ----------------------------------------------------------------------------


def required_reps(case: Mapping) -> range:
    """The repetitions a case asks for: rep-0 .. rep-<reps-1>."""
    return range(int(case.get("reps", 0)))


def requirement_met(case: Mapping, records: Mapping[int, Mapping] | Iterable[int]) -> bool:
    """True when the case's sampling rule (a fixed count, or a precision target) is satisfied by its
    records (repetition number -> ok record). The one definition of a done case."""
    return case_progress(case, records, ()).state == "done"


@dataclass(frozen=True)
class CaseProgress:
    state: str  # done | failed | partial | missing (CASE_STATES)
    reps_required: int  # the fixed count, or max_reps under a precision target
    reps_done: int  # repetitions with an ok record
    reps_failed: int  # repetitions without a record whose last attempt failed
    stop: str | None = None  # why sampling stopped (sbcore.sampling.STOPS), None while it goes on
    ci_rel: float | None = None  # relative half-width of the median's CI now

    @property
    def reps_missing(self) -> int:
        if self.state == "done":
            return 0
        # Under a precision target at least one more process is due unless a failure explains it.
        return max(self.reps_required - self.reps_done - self.reps_failed, 0 if self.reps_failed else 1)


def case_progress(
    case: Mapping,
    records: Mapping[int, Mapping],
    failed_reps: Iterable[int],
    rule: sampling.Rule | None = None,
) -> CaseProgress:
    """The state of one case from its ok records (repetition number -> record; for a fixed count the
    records' contents do not matter) and failed attempts (rep numbers): done when its sampling rule is
    satisfied; else failed when a repetition without a record has a failed attempt; else partial when
    some repetitions are done; else missing."""
    if not isinstance(records, Mapping):  # only which repetitions exist: enough for a fixed count
        records = dict.fromkeys(records, {})
    rule = rule or sampling.case_rule(case)
    required = range(rule.reps)
    done = {k: r for k, r in records.items() if k in required}
    failed = {k for k in failed_reps if k in required and k not in done}
    progress = sampling.progress(rule, done)
    if progress.done:
        state = "done"
    elif failed:
        state = "failed"
    elif done:
        state = "partial"
    else:
        state = "missing"
    return CaseProgress(state, rule.reps, len(done), len(failed), progress.stop, progress.ci_rel)
