"""likwid-perfctr -O CSV parsing against fixtures in the likwid 5.2 layout (likwid.lua)."""

from pathlib import Path

import pytest

from jobs.likwid_csv import parse_perfctr_csv, parse_perfctr_file
from sbcore.errors import ScalebenchError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "likwid"


def parse(name: str) -> dict:
    return parse_perfctr_file(FIXTURES / name)


def test_plain_one_hwthread_without_stat_tables():
    regions = parse("perfctr-plain-1thread-L2CACHE.csv")
    assert list(regions) == [None]
    r = regions[None]
    assert (r["group"], r["hwthreads"]) == ("L2CACHE", [3])
    assert r["events"]["INSTR_RETIRED_ANY"]["per_hwthread"] == {"3": 4000000000}
    assert r["events"]["INSTR_RETIRED_ANY"]["counter"] == "FIXC0"
    assert r["events"]["L2_TRANS_ALL_REQUESTS"]["per_hwthread"] == {"3": None}  # "-"
    assert r["metrics"]["CPI"]["per_hwthread"] == {"3": 0.5}
    assert r["metrics"]["L2 request rate"]["per_hwthread"] == {"3": None}  # "nan"
    assert r["metrics"]["L2 miss rate"]["per_hwthread"] == {"3": 7.5e-04}
    # No STAT table for one thread: the summary is computed from the one value.
    assert r["metrics"]["CPI"]["sum"] == 0.5 and r["metrics"]["CPI"]["max"] == 0.5
    assert r["metrics"]["L2 miss ratio"]["sum"] is None
    assert len(r["metrics"]) == 7 and len(r["events"]) == 5


def test_plain_two_hwthreads_with_stat_tables():
    r = parse("perfctr-plain-2threads-L2CACHE.csv")[None]
    assert r["hwthreads"] == [0, 1]
    cpi = r["metrics"]["CPI"]
    assert cpi["per_hwthread"] == {"0": 0.5, "1": 1.5}
    assert (cpi["sum"], cpi["min"], cpi["max"], cpi["avg"]) == (2, 0.5, 1.5, 1)
    assert r["metrics"]["L2 miss ratio"]["avg"] == 0.15
    assert r["events"]["L2_RQSTS_MISS"]["sum"] == 6000000
    assert "CPI STAT" not in r["metrics"]


def test_marker_two_hwthreads_several_regions():
    regions = parse("perfctr-marker-2threads-FLOPS_DP.csv")
    assert list(regions) == ["init", "compute"]
    compute = regions["compute"]
    assert compute["group"] == "FLOPS_DP"
    assert compute["region_info"]["runtime_s"] == {"0": 0.512345, "1": 0.509876}
    assert compute["region_info"]["call_count"] == {"0": 3, "1": 3}
    assert compute["metrics"]["DP [MFLOP/s]"]["per_hwthread"] == {"0": 999.3266, "1": 980.6124}
    assert compute["metrics"]["DP [MFLOP/s]"]["sum"] == 1979.939
    assert compute["metrics"]["AVX DP [MFLOP/s]"]["per_hwthread"] == {"0": None, "1": 0}
    assert compute["metrics"]["Vectorization ratio"]["per_hwthread"] == {"0": 0, "1": None}
    assert compute["events"]["FP_ARITH_INST_RETIRED_128B_PACKED_DOUBLE"]["per_hwthread"] == {
        "0": 0,
        "1": None,
    }
    # A STAT row over only "-" values: likwid prints min = inf, which is no measurement.
    assert compute["events"]["FP_ARITH_INST_RETIRED_512B_PACKED_DOUBLE"]["min"] is None
    assert regions["init"]["metrics"]["CPI"]["per_hwthread"] == {"0": 2, "1": 2}
    assert regions["init"]["region_info"]["call_count"] == {"0": 1, "1": 1}


def test_marker_one_hwthread_without_stat_tables():
    compute = parse("perfctr-marker-1thread-CLOCK.csv")["compute"]
    assert compute["hwthreads"] == [2]
    assert compute["region_info"]["runtime_s"] == {"2": 0.25}
    assert compute["events"]["UNCORE_CLOCK"]["per_hwthread"] == {"2": None}
    assert compute["metrics"]["Power [W]"] == {
        "per_hwthread": {"2": 50},
        "sum": 50,
        "min": 50,
        "max": 50,
        "avg": 50,
    }
    assert compute["metrics"]["Uncore Clock [MHz]"]["per_hwthread"] == {"2": None}


def test_truncated_file_is_a_clear_error():
    path = FIXTURES / "perfctr-marker-2threads-truncated.csv"
    with pytest.raises(ScalebenchError, match=r"truncated.*row 3 of 7 of the Raw table") as err:
        parse_perfctr_file(path)
    assert str(path) in str(err.value)


R1, R2 = "TABLE,Group 1 Raw,CPI,1\nEvent,Counter,", "TABLE,Group 1 Raw,CPI,2\nEvent,Counter,"
MSTAT = "TABLE,Group 1 Metric STAT,CPI,1\nMetric,Sum,Min,Max,Avg\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no TABLE found"),
        ("TABLE,Group 1 Raw,CPI,x\n", "bad row count"),
        ("TABLE,Group 1 Cooked,CPI,1\n", "unknown table kind"),
        (R1 + "CPU 0\nX,FIXC0,1\n", "expected 'HWThread <n>'"),
        (
            R1 + "HWThread 0,HWThread 1\nX,FIXC0,1\n",
            "x.csv:3: row .* 1 values for 2",
        ),
        (R1 + "Core 0,HWThread 1\nX,FIXC0,1,2\n", "x.csv:2: .*mixes label"),
        (
            R1 + "Core 0\nX,FIXC0,1\nY,FIXC1,2\n",
            "x.csv:4: .*beyond the table",
        ),
        (
            R2 + "Core 0\nX,FIXC0,1\nX,FIXC0,2\n",
            "x.csv:4: event X on counter FIXC0 twice",
        ),
        (R1 + "Core 0\nX,,1\n", "x.csv:3: event row without"),
        ("TABLE,Group 1 Metric,CPI,1\nName,Core 0\nCPI,1\n", "x.csv:2: expected 'Metric"),
        (
            MSTAT + "CPI STAT,1,1,1,1\n",
            "x.csv:3: .*no per-thread row",
        ),
    ],
)
def test_malformed_csv(text, message):
    with pytest.raises(ScalebenchError, match=message):
        parse_perfctr_csv(text, "x.csv")
