r"""Every table of two analyses compared: byte for byte, or value for value where only ignored columns differ.

A change that must not move a result (a new record store, a faster reader) is checked by analysing the
same campaigns before and after it and comparing every table file the two analyses wrote: CSV (bytes; if
they differ, the cells, ignored columns left out), Parquet (pyarrow table equality, ignored columns left
out) and JSON (bytes; if they differ, the values). Prints one line per file: `identical`, `identical but
for <columns>` or `differs` with the first differing row and column (or JSON key), and the files only one
side has. Exit status 0 when every table is identical (ignored columns apart), 1 when one differs or is
missing on one side, 2 for bad input.

    .venv/bin/python perf/compare_tables.py A B
    .venv/bin/python perf/compare_tables.py CAMPAIGN_A CAMPAIGN_B --analyze-with CHECKOUT \
        [--analyze-with CHECKOUT_B]

A and B are analysis directories, or campaign directories (their analysis/ is compared). With
--analyze-with, each campaign is copied to the same path in a temporary directory (its analysis/ left
out), one after the other, and analysed there by `CHECKOUT/scalebench analyze` (with CHECKOUT/.venv's
Python when it has one; a second --analyze-with for B), with every table format and a fixed seed; the
copies are removed afterwards.
By default the columns that name where a record is stored are ignored (records table: `file`,
`record_line`); --ignore TABLE:COLUMN adds one, --no-default-ignore drops the defaults.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

TABLE_SUFFIXES = (".csv", ".parquet", ".json")
SKIPPED_DIRS = (".cache", "plots")  # derived data and images: not tables
DEFAULT_IGNORE = ("records:file", "records:record_line")  # the stored file's name and line of a record
ANALYZE_FORMATS = "csv,records-csv,md,html"


def table_files(directory: Path) -> dict[str, Path]:
    """Relative path -> file, for every table file under the analysis directory."""
    return {
        str(p.relative_to(directory)): p
        for p in sorted(directory.rglob("*"))
        if p.suffix in TABLE_SUFFIXES
        and p.is_file()
        and not set(p.relative_to(directory).parts[:-1]) & set(SKIPPED_DIRS)
    }


def ignored_for(relpath: str, ignore: list[str]) -> list[str]:
    """The columns ignored in this file (TABLE:COLUMN, TABLE the file's name without its suffix)."""
    stem = Path(relpath).stem
    return [spec.split(":", 1)[1] for spec in ignore if spec.split(":", 1)[0] == stem]


def compare_csv(a: Path, b: Path, ignore: list[str]) -> str:
    if a.read_bytes() == b.read_bytes():
        return "identical"
    left, right = (pd.read_csv(p, dtype=str, keep_default_na=False) for p in (a, b))
    return _compare_frames(left, right, ignore, "bytes differ")


def compare_parquet(a: Path, b: Path, ignore: list[str]) -> str:
    left, right = pq.read_table(a), pq.read_table(b)
    if left.equals(right):
        return "identical"
    return _compare_frames(
        left.to_pandas(),
        right.to_pandas(),
        ignore,
        "tables differ",
        _drop(left, ignore),
        _drop(right, ignore),
    )


def _drop(table: pa.Table, ignore: list[str]) -> pa.Table:
    return table.drop_columns([c for c in ignore if c in table.column_names])


def _compare_frames(
    left: pd.DataFrame,
    right: pd.DataFrame,
    ignore: list[str],
    what: str,
    arrow_left: pa.Table | None = None,
    arrow_right: pa.Table | None = None,
) -> str:
    if list(left.columns) != list(right.columns):
        only_a = [c for c in left.columns if c not in right.columns]
        only_b = [c for c in right.columns if c not in left.columns]
        return f"differs: columns (only in A: {only_a}, only in B: {only_b}, or another order)"
    if len(left) != len(right):
        return f"differs: {len(left)} rows in A, {len(right)} in B"
    kept = [c for c in left.columns if c not in ignore]
    same = (
        arrow_left.equals(arrow_right)
        if arrow_left is not None
        else left[kept].equals(right[kept])  # text cells: equal exactly
    )
    if same:
        differing = [c for c in ignore if c in left.columns and not left[c].equals(right[c])]
        return f"identical but for {', '.join(differing)} ({what} only there)" if differing else "identical"
    for column in kept:
        a, b = left[column], right[column]
        unequal = ~((a == b) | (a.isna() & b.isna()))
        if unequal.any():
            row = int(unequal.to_numpy().nonzero()[0][0])
            was, now = _plain(a.iloc[row]), _plain(b.iloc[row])
            return (
                f"differs: row {row + 1} column {column!r}: A {was!r}, B {now!r}"
                f" ({int(unequal.sum())} rows differ in it)"
            )
    return "differs: in types or metadata only"


def _plain(value):
    """A numpy scalar as the Python value it holds (printed as 0.25, not np.float64(0.25))."""
    return value.item() if hasattr(value, "item") else value


def compare_json(a: Path, b: Path) -> str:
    if a.read_bytes() == b.read_bytes():
        return "identical"
    try:
        left, right = (json.loads(p.read_bytes()) for p in (a, b))
    except ValueError as err:
        return f"differs: bytes, and not both JSON ({err})"
    if left == right:
        return "identical in values (bytes differ: layout or key order)"
    return f"differs: {_first_difference(left, right, '')}"


def _first_difference(a, b, path: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'A' if key in a else 'B'}"
            if a[key] != b[key]:
                return _first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or '(top)'}: A {_short(a)}, B {_short(b)}"


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def compare(a: Path, b: Path, ignore: list[str], out=sys.stdout) -> bool:
    """Prints a line per table file; whether every one is identical (ignored columns apart)."""
    left, right = table_files(a), table_files(b)
    all_same = True
    for relpath in sorted(set(left) | set(right)):
        if relpath not in right or relpath not in left:
            print(f"{relpath}: only in {'A' if relpath in left else 'B'}", file=out)
            all_same = False
            continue
        suffix = Path(relpath).suffix
        if suffix == ".csv":
            verdict = compare_csv(left[relpath], right[relpath], ignored_for(relpath, ignore))
        elif suffix == ".parquet":
            verdict = compare_parquet(left[relpath], right[relpath], ignored_for(relpath, ignore))
        else:
            verdict = compare_json(left[relpath], right[relpath])
        all_same &= verdict.startswith("identical")
        print(f"{relpath}: {verdict}", file=out)
    print(
        f"{len(set(left) | set(right))} table files: {'all identical' if all_same else 'NOT identical'}",
        file=out,
    )
    return all_same


def analysis_dir(path: Path) -> Path:
    """The analysis directory of `path` (itself, or a campaign's analysis/)."""
    if (path / "cases.jsonl").is_file():
        return path / "analysis"
    return path


def analyzed(campaign: Path, checkout: Path, workdir: Path, seed: int, keep: Path) -> Path:
    """A copy of the campaign (no analysis/) analysed by the checkout's scalebench, its analysis
    directory moved to `keep`. Both sides are analysed at the same path (workdir/<name>), so that paths
    in the tables are the same."""
    copy = workdir / campaign.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(campaign, copy, symlinks=True, ignore=shutil.ignore_patterns("analysis"))
    venv = checkout / ".venv" / "bin" / "python"
    python = str(venv) if venv.exists() else sys.executable
    command = [python, str(checkout / "scalebench"), "analyze", str(copy), "--format", ANALYZE_FORMATS]
    done = subprocess.run([*command, "--seed", str(seed)], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: a finding (--fail-on), the tables are written
        raise SystemExit(f"{' '.join(command)}: exit status {done.returncode}: {done.stderr.strip()[-500:]}")
    shutil.move(copy / "analysis", keep)
    shutil.rmtree(copy)
    return keep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="perf/compare_tables.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("a", type=Path, help="analysis directory or campaign directory (A)")
    parser.add_argument("b", type=Path, help="analysis directory or campaign directory (B)")
    parser.add_argument(
        "--analyze-with",
        type=Path,
        action="append",
        metavar="CHECKOUT",
        help="analyse copies of both campaigns with this checkout first (twice: A's, then B's)",
    )
    parser.add_argument("--seed", type=int, default=1, help="analysis seed with --analyze-with (default 1)")
    parser.add_argument(
        "--ignore", action="append", default=[], metavar="TABLE:COLUMN", help="a column to ignore"
    )
    parser.add_argument(
        "--no-default-ignore", action="store_true", help=f"compare {', '.join(DEFAULT_IGNORE)} too"
    )
    args = parser.parse_args(argv)
    ignore = [*([] if args.no_default_ignore else DEFAULT_IGNORE), *args.ignore]
    bad = [spec for spec in ignore if ":" not in spec]
    if bad:
        parser.error(f"--ignore {bad[0]!r}: expected TABLE:COLUMN (e.g. records:file)")
    for path in (args.a, args.b):
        if not path.is_dir():
            parser.error(f"{path}: not a directory")
    if not args.analyze_with:
        return 0 if compare(analysis_dir(args.a), analysis_dir(args.b), ignore) else 1
    if len(args.analyze_with) > 2:
        parser.error("--analyze-with: at most twice (A's checkout, then B's)")
    checkout_a, checkout_b = args.analyze_with[0], args.analyze_with[-1]
    if args.a.resolve().name != args.b.resolve().name:
        print("note: the campaigns' names differ: tables naming the campaign differ too", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="compare-tables-") as work:
        a = analyzed(args.a.resolve(), checkout_a, Path(work), args.seed, Path(work, "analysis-a"))
        b = analyzed(args.b.resolve(), checkout_b, Path(work), args.seed, Path(work, "analysis-b"))
        return 0 if compare(a, b, ignore) else 1


if __name__ == "__main__":
    sys.exit(main())
