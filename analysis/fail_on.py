"""Which validity findings of an analysis end `analyze --fail-on` with exit status 1 (a finding,
sbcore/errors.py): the kinds, what each counts, and the default set. No file I/O."""

from __future__ import annotations

from sbcore.errors import UsageError

# kind -> what it counts, in the order the console lists them.
FAIL_ON_KINDS = {
    "checksum": "cases whose checksum disagrees with the serial reference or between repetitions",
    "placement": "cases with records whose workers ran elsewhere than planned",
    "failed": "planned cases that are failed, partial or missing",
    "implausible": "speedups above min(workers, cores) (analysis/checks.py, plausibility)",
    "noisy": "cases whose CI of the median is wider than --noise-threshold x median",
}
# Noisy machines (a laptop, `make bench`, the Slurm analysis job) still pass by default.
DEFAULT_FAIL_ON = ("checksum", "placement")


def parse_fail_on(text: str) -> tuple[str, ...]:
    """The kinds of a --fail-on value ('none': no finding fails the command)."""
    if text.strip() == "none":
        return ()
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in FAIL_ON_KINDS]
    if unknown:
        raise UsageError(
            f"--fail-on {text!r}: unknown {', '.join(unknown)}; expected a comma-separated subset of "
            f"{','.join(FAIL_ON_KINDS)} (or 'none')"
        )
    return kinds


def finding_counts(result) -> dict[str, int]:
    """kind -> how many of it the analysis found (every kind, whether failed on or not)."""
    done = result.completeness
    sp = result.speedup
    return {
        "checksum": int((~result.summary["valid"]).sum()),
        "placement": len(result.violations),
        "failed": int(done["state"].isin(["failed", "partial", "missing"]).sum()),
        "implausible": int((sp["plausibility"] == "implausible").sum()) if "plausibility" in sp else 0,
        "noisy": int(result.summary["noisy"].sum()),
    }


NAMED = 3  # cases named in a finding's line


def finding_cases(result) -> dict[str, str]:
    """kind -> the first cases of it, as 'binary xW (case <id>: <status>)', for the kinds that concern
    cases of the summary (a checksum that disagrees)."""
    s = result.summary
    bad = s[~s["valid"]]
    if bad.empty:
        return {}
    named = [
        f"{row.binary} x{row.workers} (case {row.case_id}: {row.checksum_status})"
        for row in bad.head(NAMED).itertuples()
    ]
    more = f" and {len(bad) - NAMED} more" if len(bad) > NAMED else ""
    return {"checksum": ", ".join(named) + more}
