"""`check --junit FILE`: the verdicts as JUnit XML, as GitLab and Jenkins read test reports.

The structure is Jenkins' junit-10 (testsuites > testsuite > testcase with failure, skipped and
system-out): one testcase per judged case (classname `scalebench.<node type>.<binary>`), a `failure`
with the numbers for `regressed`, `skipped` with the repetitions it would take for `inconclusive`, and
one skipped testcase per unmatched case or reference. tests/analysis/test_check.py validates it against
tests/fixtures/junit-10.xsd and reads it back with junitparser."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pandas as pd

from sbcore.atomic import write_atomic


def case_name(row) -> str:
    params = " ".join(f"{k}={v}" for k, v in json.loads(row.params_json).items())
    return f"{row.binary} threads={row.threads} ranks={row.ranks} {params} [{row.case_id}]"


def numbers(row) -> str:
    return (
        f"median {row.measured:.6g} s against {row.reference:.6g} s: ratio {row.ratio:.4f} "
        f"[95% CI {row.ratio_ci_low:.4f}-{row.ratio_ci_high:.4f}], "
        f"band [{row.band_low:g}, {row.band_high:g}], "
        f"{int(row.reps)} repetitions"
    )


def junit_xml(suite: str, table: pd.DataFrame, unmatched: list[str]) -> bytes:
    failures = int((table["verdict"] == "regressed").sum())
    skipped = int((table["verdict"] == "inconclusive").sum()) + len(unmatched)
    total = len(table) + len(unmatched)
    root = ET.Element("testsuites", name="scalebench check", tests=str(total), failures=str(failures))
    root.set("errors", "0")
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(total), failures=str(failures))
    node.set("errors", "0")
    node.set("skipped", str(skipped))
    for row in table.itertuples(index=False):
        case = ET.SubElement(
            node, "testcase", name=case_name(row), classname=f"scalebench.{row.node_type}.{row.binary}"
        )
        case.set("time", f"{row.measured:.6g}" if row.measured == row.measured else "0")
        text = f"{row.verdict}: {numbers(row)}"
        if row.verdict == "regressed":
            failure = ET.SubElement(case, "failure", message=f"regressed: {numbers(row)}", type="regressed")
            failure.text = text
        elif row.verdict == "inconclusive":
            more = (
                f"; {row.reason}"
                if row.reason
                else ""
                if row.reps_needed != row.reps_needed
                else f"; about {int(row.reps_needed)} repetitions would decide"
            )
            ET.SubElement(case, "skipped", message=f"inconclusive: {numbers(row)}{more}")
        ET.SubElement(case, "system-out").text = text
    for line in unmatched:
        case = ET.SubElement(node, "testcase", name=line, classname="scalebench.unmatched")
        ET.SubElement(case, "skipped", message=f"unmatched: {line}")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path, suite: str, table: pd.DataFrame, unmatched: list[str]) -> None:
    write_atomic(path, junit_xml(suite, table, unmatched), make_parents=True)
