"""The campaign directory layout (docs/formats.md): where campaigns live, how a command names one, the
files inside it, and when a case counts as done. Every command (run, run-case, status, submit, resume,
analyze, compare) finds campaign files through this module only.

    --results-dir / $SCALEBENCH_RESULTS_DIR (default ./results of the current directory)
      latest -> <campaign>                       symlink to the newest campaign
      <campaign>/cases.jsonl                     one planned case per line
      <campaign>/experiment.toml                 the experiment file as planned (its bytes)
      <campaign>/raw/<case_id>/facts.jsonl       the case's records (scalebench.run/2, appended, never
      <campaign>/raw/<case_id>/reps.csv          rewritten; sbcore/record_store.py): a line per process, a
                                                 row per repetition (reps-<n>.csv: another header),
                                                 their long tables facts.<table>.csv, reps.<table>.csv
      <campaign>/raw/<case_id>/records.jsonl     the records of campaigns before scalebench.run/2, a line
                                                 each (still read; sbcore/stored_records.py)
      <campaign>/raw/<case_id>/probes.jsonl      per-CPU probe times of its records, one line per record
                                                 (appended with them; jobs/probe_detail.py)
      <campaign>/raw/<case_id>/rep-<k>.json      the record of repetition k, as campaigns before records.jsonl
                                                 kept them (still read, no longer written)
      <campaign>/raw/<case_id>/rep-<k>.failed-<utc>-<pid>.json   a failed attempt at repetition k
      <campaign>/raw/<case_id>/rep-<k>.pgm       the image repetition k dumped (dump_image cases)
      <campaign>/hosts/<hostname>.json           what the runner probed on that host (jobs/hostinfo.py)
      <campaign>/hosts/bounds/<hostname>.json    the SIMD bounds measured on that host (sbcore/simd_bounds.py)
      <campaign>/analysis/                       everything `analyze` derives
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sbcore import campaign_access, sampling, stored_records
from sbcore.clock import utc_stamp
from sbcore.errors import UsageError

RESULTS_ENV = "SCALEBENCH_RESULTS_DIR"
LATEST = "latest"
CASES_FILE = "cases.jsonl"
EXPERIMENT_FILE = "experiment.toml"  # the experiment file as planned: a resume re-plans it (docs/trust.md)
RAW_DIR = "raw"
ANALYSIS_DIR = "analysis"

RECORDS_FILE = "records.jsonl"
PROBES_FILE = "probes.jsonl"
# every file a run appends a case's records to (records.jsonl: older campaigns, still read)
STORED_FILES = (RECORDS_FILE, *stored_records.WRITER_FILES, PROBES_FILE)
QUIET_GATE_FILE = "quiet_gate.json"  # what the quiet gate saw before a seed study, and the load after
REP_FILE = re.compile(r"^rep-(\d+)\.json$")
FAILED_FILE = re.compile(r"^rep-(\d+)\.failed-(.+)\.json$")  # group 2: <utc>-<pid>, sorts by time
IMAGE_FILE = re.compile(r"^rep-(\d+)\.pgm$")
CASE_ID = re.compile(r"[0-9a-f]{12}")  # what the planner writes: sha256 of the case, 12 hex digits
CASE_DIR_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # the least any raw/<case_id> must be

CASE_STATES = ("done", "failed", "partial", "missing")


# ---- where campaigns live ---------------------------------------------------------------------------


def results_root() -> Path:
    """The directory holding the campaigns: $SCALEBENCH_RESULTS_DIR (the global --results-dir sets it),
    else results/ of the current directory (a clone's results/ when run from the clone, as `make bench`
    does)."""
    return Path(os.environ.get(RESULTS_ENV) or Path.cwd() / "results")


def resolve_campaign(spec: str | os.PathLike, results_dir: Path | None = None) -> Path:
    """A CAMPAIGN argument (a directory, a campaign name under the results directory, or 'latest') ->
    the campaign's absolute directory. A campaign directory has cases.jsonl or raw/. 'latest' is read
    once: a link to a campaign's plain name in the same results directory, itself a directory (not a
    link)."""
    results = Path(results_dir) if results_dir is not None else results_root()
    text = str(spec)
    if text == LATEST:
        path = _latest_target(results)
        if _is_campaign(path):
            return path
        raise UsageError(f"campaign 'latest': {path} is not a campaign directory")
    for path in (Path(text), results / text):
        if _is_campaign(path):
            return path.resolve()
    raise UsageError(
        f"campaign {text!r}: not a campaign directory (no {CASES_FILE} nor {RAW_DIR}/) "
        f"nor a campaign name under {results}"
    )


def trusted_campaign(spec: str | os.PathLike, results_dir: Path | None = None) -> Path:
    """resolve_campaign, refusing (exit 3) a campaign directory another user can write to, or one in a
    directory another user can write to without the sticky bit (sbcore/campaign_access.py)."""
    campaign = resolve_campaign(spec, results_dir)
    campaign_access.check_trusted(campaign.parent, "results directory", sticky_ok=True)
    campaign_access.check_trusted(campaign, "campaign directory")
    return campaign


def _is_campaign(path: Path) -> bool:
    return path.is_dir() and ((path / CASES_FILE).is_file() or (path / RAW_DIR).is_dir())


def _latest_target(results: Path) -> Path:
    link = results / LATEST
    try:
        target = os.readlink(link)
    except FileNotFoundError:
        raise UsageError(f"campaign 'latest': {link} does not exist (no campaign run yet?)") from None
    except OSError as err:
        raise UsageError(f"campaign 'latest': {link} is not a link to a campaign ({err.strerror})") from None
    if "/" in target or target in ("", ".", ".."):
        raise UsageError(f"campaign 'latest': {link} points to {target!r}, not to a campaign name beside it")
    path = results.resolve() / target
    if path.is_symlink():
        raise UsageError(f"campaign 'latest': {path} is a symbolic link, not a campaign directory")
    return path


def update_latest(results: Path, campaign: str) -> None:
    """Point <results>/latest at `campaign`, atomically (a reader sees the old or the new target)."""
    tmp = Path(results) / f".{LATEST}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(campaign)
    os.replace(tmp, Path(results) / LATEST)


# ---- files of one campaign --------------------------------------------------------------------------


def cases_path(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / CASES_FILE


def quiet_gate_path(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / QUIET_GATE_FILE


def analysis_dir(campaign_dir: Path) -> Path:
    return Path(campaign_dir) / ANALYSIS_DIR


def case_dir(campaign_dir: Path, case_id: str) -> Path:
    """raw/<case_id>: a case id is one plain path component (CASE_DIR_NAME), never a path."""
    if not isinstance(case_id, str) or not CASE_DIR_NAME.fullmatch(case_id):
        raise UsageError(
            f"case_id {str(case_id)[:40]!r}: not a case id (a plain name of letters, digits, '-_.')"
        )
    return Path(campaign_dir) / RAW_DIR / case_id


def records_path(campaign_dir: Path, case_id: str) -> Path:
    """The case's record file (one record per line, appended)."""
    return case_dir(campaign_dir, case_id) / RECORDS_FILE


def reps_path(campaign_dir: Path, case_id: str) -> Path:
    """The case's rows of repetitions (scalebench.run/2, appended: sbcore/record_store.py's store)."""
    return case_dir(campaign_dir, case_id) / stored_records.REPS_FILE


def probes_path(campaign_dir: Path, case_id: str) -> Path:
    """The per-CPU probe times of the case's records (one line per record, appended with them)."""
    return case_dir(campaign_dir, case_id) / PROBES_FILE


def rep_name(k: int) -> str:
    """A record file of the per-repetition layout of older campaigns."""
    return f"rep-{k}.json"


def is_record_file(name: str) -> bool:
    """records.jsonl, rep-<k>.json or a failed attempt rep-<k>.failed-<utc>-<pid>.json."""
    return name == RECORDS_FILE or (name.startswith("rep-") and name.endswith(".json"))


def case_records(campaign_dir: Path, case_id: str) -> dict[int, dict]:
    """Repetition -> its counted record: the lines of the case's records.jsonl and the rep-<k>.json
    files of older campaigns (where both hold a repetition, the older file wins)."""
    return case_lines(campaign_dir, case_id)[0]


def case_lines(
    campaign_dir: Path, case_id: str, case: Mapping | None = None
) -> tuple[dict[int, dict], list[str]]:
    """(repetition -> counted record, problems as '<file>:<line>: <why>' relative to the campaign), by
    the one rule of sbcore/record_lines.py; with the planned `case`, records that do not belong to its
    plan or to this campaign are problems too."""
    campaign = campaign_name(campaign_dir) if case is not None else None
    planned = dict(case) if case is not None else None
    read = stored_records.read(case_dir(campaign_dir, case_id), case_id, planned, campaign)
    problems = [f"{RAW_DIR}/{case_id}/{name}{f':{n}' if n else ''}: {why}" for name, n, why in read.problems]
    return read.records, problems


def ok_records(campaign_dir: Path, case: Mapping) -> dict[int, dict]:
    """Repetition -> its ok record, for the case's planned repetitions."""
    required = required_reps(case)
    return {k: r for k, r in case_lines(campaign_dir, case["case_id"], case)[0].items() if k in required}


def campaign_name(campaign_dir: Path) -> str | None:
    """The name campaign.toml gives the campaign (its records carry it), None when it has none."""
    import tomllib

    path = Path(campaign_dir) / "campaign.toml"
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    if key not in _NAMES:
        try:
            data = campaign_access.read_bytes(Path(campaign_dir), "campaign.toml")
            name = tomllib.loads(data.decode()).get("campaign", {}).get("name")
        except (OSError, ValueError, AttributeError, campaign_access.UnsafeFile):
            name = None
        _NAMES[key] = name if isinstance(name, str) else None
    return _NAMES[key]


_NAMES: dict[tuple, str | None] = {}  # campaign.toml (path, inode, mtime, size) -> its campaign name


def failed_name(k: int) -> str:
    """A new failed-attempt file name for repetition k: unique per process and moment, sorts by time."""
    return f"rep-{k}.failed-{utc_stamp()}-{os.getpid()}.json"


def image_name(k: int) -> str:
    """The PGM repetition k of a dump_image case writes, in its case directory (the kernel's working
    directory)."""
    return f"rep-{k}.pgm"


def is_reserved_name(name: str) -> bool:
    """Whether scalebench keeps a file of this name in a case directory (a kernel output may not take it)."""
    return (
        is_record_file(name)
        or stored_records.is_v2_file(name)
        or name in (PROBES_FILE, QUIET_GATE_FILE, CASES_FILE)
        or IMAGE_FILE.match(name) is not None
        or name.startswith(".")
    )


def image_relpath(case_id: str, k: int) -> Path:
    """Where repetition k of a dump_image case writes its PGM, relative to the campaign directory (the
    kernels' working directory)."""
    return Path(RAW_DIR) / case_id / f"rep-{k}.pgm"


def raw_files(campaign_dir: Path) -> dict[str, None]:
    """Every record and failed-attempt file as relative paths 'raw/<case_id>/<name>', in case order
    (case_record_files). Listed with os.scandir, a stat only for each records.jsonl."""
    found: dict[str, None] = {}
    raw = Path(campaign_dir) / RAW_DIR
    if not raw.is_dir():
        return found
    with os.scandir(raw) as entries:
        case_ids = sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    for case_id in case_ids:
        found.update(dict.fromkeys(case_record_files(raw / case_id, case_id)))
    return found


def case_record_files(directory: str | Path, case_id: str) -> list[str]:
    """The record-bearing files of one case directory as 'raw/<case_id>/<name>': records.jsonl as
    'raw/<case_id>/records.jsonl#<bytes>' (its size when listed: it grows, and the analysis reads and
    caches that many bytes), then facts.jsonl and reps*.csv with their sizes (a case's files changed
    when a size did), then rep-<k>.json and failed attempts by repetition."""
    names, size, stored = [], None, []
    with os.scandir(directory) as files:
        for entry in files:
            if entry.name == RECORDS_FILE:
                size = entry.stat(follow_symlinks=False).st_size
            elif stored_records.is_v2_file(entry.name):
                stored.append(f"{RAW_DIR}/{case_id}/{entry.name}#{entry.stat(follow_symlinks=False).st_size}")
            elif is_record_file(entry.name):
                names.append(entry.name)
    names.sort(key=_rep_order)
    listed = [records_key(case_id, size)] if size is not None else []
    listed += sorted(stored)
    return listed + [f"{RAW_DIR}/{case_id}/{name}" for name in names]


def records_key(case_id: str, size: int) -> str:
    """How a listing names a case's records.jsonl: with the size it had when listed."""
    return f"{RAW_DIR}/{case_id}/{RECORDS_FILE}#{size}"


def _rep_order(name: str) -> tuple[int, str]:
    """rep-<k>[...].json by repetition number, then by name."""
    number = name[4:].split(".", 1)[0]
    return (int(number), name) if number.isdigit() and number.isascii() else (1 << 62, name)


def key_case(key: str) -> str:
    """The case id of a listed file or of a problem's location ('raw/<case_id>/...')."""
    return key.split("/", 2)[1]


def key_is_failed_attempt(key: str) -> bool:
    """Whether a listed file ('raw/<case_id>/<name>', records.jsonl with '#<size>') is a failed
    attempt's."""
    return FAILED_FILE.match(key.partition("#")[0].rpartition("/")[2]) is not None


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
