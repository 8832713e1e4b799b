"""The parser against real `likwid-perfctr -O` outputs (likwid 4.3 to 5.0, 9 CPU architectures) kept
outside the repository in ../shared/likwid-real/ (read at test time, never copied in).

Every expected value here is extracted independently of jobs.likwid_csv: the csv module reads the rows,
a regular expression finds the tables, and the first run ends where a region's raw table appears again.
"""

import csv
import io
import re
from pathlib import Path

import pytest

from jobs.likwid_csv import parse_perfctr_csv, parse_perfctr_file

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "likwid-real"
FILES = sorted(p.name for p in REAL.glob("*") if p.suffix != ".md") if REAL.is_dir() else []
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"real likwid outputs not present ({REAL})")
TABLE = re.compile(
    r"^TABLE,(?:Region (?P<region>[^,]*),)?Group \d+ (?P<kind>Raw STAT|Raw|Metric STAT|Metric),"
)


def value(text: str):
    return None if text.strip() in ("-", "nan", "") else float(text)


def first_run(text: str) -> dict:
    """{region: {kind: (header, rows, region_info)}} for the tables of the first run."""
    rows = [[c for c in r] for r in csv.reader(io.StringIO(text))]
    lines = text.splitlines()
    run: dict = {}
    i = 0
    while i < len(lines):
        m = TABLE.match(lines[i])
        if not m:
            i += 1
            continue
        region, kind = m["region"], m["kind"]
        if kind == "Raw" and region in run:
            break
        count = int([c for c in rows[i] if c][-1])
        info = []
        if kind == "Raw" and region is not None:
            info, i = rows[i + 1 : i + 4], i + 3
        header = [c for c in rows[i + 1] if c]
        body = [r[: len(header)] for r in rows[i + 2 : i + 2 + count]]
        run.setdefault(region, {})[kind] = (header, body, info)
        i += 2 + count
    return run


def thread_ids(header: list[str]) -> list[str]:
    return [h.split()[-1] for h in header if h.startswith(("Core ", "HWThread "))]


@pytest.fixture(scope="module", params=FILES)
def real(request):
    text = (REAL / request.param).read_text(errors="replace")
    return request.param, parse_perfctr_file(REAL / request.param), first_run(text), text


def test_regions_threads_and_label_style(real):
    name, parsed, expected, _ = real
    assert list(parsed) == list(expected)
    for region, tables in expected.items():
        threads = [int(t) for t in thread_ids(tables["Raw"][0])]
        assert parsed[region]["hwthreads"] == threads
        assert parsed[region]["label_style"] == "Core" and parsed[region]["likwid_versions"] == "4.3-5.0"
    m = re.search(r"_(\d+)t\.", name)
    if m:  # the file name says how many hardware threads were measured
        assert len(next(iter(parsed.values()))["hwthreads"]) == int(m[1])


def test_every_event_counter_and_per_thread_value(real):
    _, parsed, expected, _ = real
    for region, tables in expected.items():
        header, body, info = tables["Raw"]
        ids = thread_ids(header)
        events = parsed[region]["events"]
        assert sum(len(e["counters"]) for e in events.values()) == len(body)  # nothing dropped
        for row in body:
            got = events[row[0]]["counters"][row[1]]["per_hwthread"]
            assert got == dict(zip(ids, map(value, row[2:]), strict=True)), (region, row[:2])
        runtime = dict(zip(thread_ids(info[0]), map(value, info[1][1:]), strict=False))
        assert parsed[region]["region_info"]["runtime_s"] == runtime


def test_event_totals_over_counters(real):
    _, parsed, expected, _ = real
    for region, tables in expected.items():
        header, body, _ = tables["Raw"]
        totals: dict = {}
        for row in body:
            numbers = [v for v in map(value, row[2:]) if v is not None]
            totals.setdefault(row[0], []).extend(numbers)
        for event, numbers in totals.items():
            assert parsed[region]["events"][event]["sum"] == (
                pytest.approx(sum(numbers)) if numbers else None
            )


def test_stat_rows(real):
    _, parsed, expected, _ = real
    for region, tables in expected.items():
        for kind, key in (("Raw STAT", "events"), ("Metric STAT", "metrics")):
            if kind not in tables:
                continue
            for row in tables[kind][1]:
                name = row[0][: -len(" STAT")]
                item = parsed[region][key][name]
                if key == "events":
                    item, numbers = item["counters"][row[1]], row[2:6]
                else:
                    numbers = row[1:5]
                got = [item[s] for s in ("sum", "min", "max", "avg")]
                want = [None if v is None or v == float("inf") else v for v in map(value, numbers)]
                assert got == want, (region, row[:2])


def test_metrics_per_thread(real):
    _, parsed, expected, _ = real
    for region, tables in expected.items():
        header, body, _ = tables["Metric"]
        ids = thread_ids(header)
        assert list(parsed[region]["metrics"]) == [row[0] for row in body]
        for row in body:
            assert parsed[region]["metrics"][row[0]]["per_hwthread"] == dict(
                zip(ids, map(value, row[1:]), strict=True)
            )


# (instructions, core cycles) per vendor: Intel, AMD Zen, ARM ThunderX2 (POWER9's MEM group has neither).
CPI_EVENTS = [
    ("INSTR_RETIRED_ANY", "CPU_CLK_UNHALTED_CORE"),
    ("RETIRED_INSTRUCTIONS", "CPU_CLOCKS_UNHALTED"),
    ("INST_RETIRED", "CPU_CYCLES"),
]
# Memory read events of the MEM groups; each count is one 64-byte cache line.
READ_EVENTS = ("CAS_COUNT_RD", "DATA_FROM_LOCAL_DRAM_CHANNEL", "MEMORY_READS", "PM_MBA_READ_BYTES")


def test_derived_metrics_recomputed_from_the_parsed_events(real):
    """likwid's CPI and memory read bandwidth follow from the parsed events (memory events summed over
    all their counters): proves events are keyed and totalled right."""
    name, parsed, _, _ = real
    checked = set()
    for entry in parsed.values():
        events, metrics = entry["events"], entry["metrics"]

        def per(event, t, events=events):
            return events.get(event, {}).get("per_hwthread", {}).get(t)

        for t in map(str, entry["hwthreads"]):
            cpi = metrics.get("CPI", {}).get("per_hwthread", {}).get(t)
            for instr, cycles in CPI_EVENTS:
                if per(instr, t) and per(cycles, t) and cpi is not None:
                    assert per(cycles, t) / per(instr, t) == pytest.approx(cpi, abs=6e-5), (name, t)
                    checked.add("CPI")
        read = [e for e in READ_EVENTS if e in events]
        if entry["group"] == "MEM" and read:
            runtime = metrics["Runtime (RDTSC) [s]"]["per_hwthread"]
            for t in map(str, entry["hwthreads"]):  # uncore: counted on each socket's first thread
                want = metrics["Memory read bandwidth [MBytes/s]"]["per_hwthread"][t]
                lines = per(read[0], t)
                if lines is not None and want is not None:
                    assert 1e-6 * lines * 64 / runtime[t] == pytest.approx(want, rel=1e-3, abs=1e-3), (
                        name,
                        t,
                    )
                    checked.add("bandwidth")
    assert "CPI" in checked or name.startswith("sc19_power9")
    assert "bandwidth" in checked or "_MEM" not in name


def test_cascade_lake_cas_count_rd_over_six_channels():
    if "sc19_casclakesp_MEM_20t.raw" not in FILES:
        pytest.skip("file absent")
    event = parse_perfctr_file(REAL / "sc19_casclakesp_MEM_20t.raw")["bench"]["events"]["CAS_COUNT_RD"]
    assert sorted(event["counters"]) == [f"MBOX{i}C0" for i in range(6)]
    assert event["sum"] == 3_997_447_300 and "counter" not in event


@pytest.mark.parametrize("name", FILES)
def test_likwid_51_labels_give_the_same_values(name):
    text = (REAL / name).read_text(errors="replace")
    relabelled = re.sub(r",Core (\d+)", r",HWThread \1", text)
    old, new = parse_perfctr_csv(text, name), parse_perfctr_csv(relabelled, name)
    for region in old:
        assert new[region]["label_style"] == "HWThread" and new[region]["likwid_versions"] == "5.1+"
        for key in ("hwthreads", "events", "metrics", "region_info"):
            assert new[region][key] == old[region][key]
