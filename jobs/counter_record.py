"""The `counters` object of a counted record: the likwid-perfctr CSV of one run, parsed and checked
against what was asked for (the group, and the hardware threads likwid-perfctr was told to measure)."""

from pathlib import Path

from jobs.counter_groups import missing_group
from jobs.pinning import format_cpulist
from sbcore.errors import ScalebenchError

REGION = "compute"  # the kernels' marker region around the measured repetition


def group_problem(group: str, host: dict, hostname: str) -> str | None:
    """Run time: the reason this node cannot measure `group`, if its probe listed the groups it has."""
    groups = host.get("counter_groups")
    return missing_group(group, groups, f"on host {hostname}") if groups else None


def counters_from_csv(csv_path: Path, pending: dict) -> dict:
    """{"status": ok | invalid | unavailable, ...} from the CSV; the CSV file is removed afterwards."""
    from jobs.likwid_csv import parse_perfctr_file  # only counted runs need it (start-up cost)

    group, cpus = pending["group"], pending.get("cpus")
    base = {"group": group, "cpus": cpus}
    try:
        regions = parse_perfctr_file(csv_path)
    except ScalebenchError as err:
        # The measurement stands; only the counters are lost, and the record says why.
        return {"status": "unavailable", **base, "reason": f"unreadable likwid-perfctr CSV: {err}"}
    finally:
        Path(csv_path).unlink(missing_ok=True)
    region = regions.get(REGION) or regions.get(None)
    if region is None:
        names = ", ".join(str(r) for r in regions)
        return {"status": "unavailable", **base, "reason": f"no region '{REGION}' in CSV ({names})"}
    counters = {
        "status": "ok",
        **base,
        "region": REGION if REGION in regions else None,
        "hwthreads": region["hwthreads"],
        "likwid": {
            "label_style": region["label_style"],
            "versions": region["likwid_versions"],
            "cpu_type": region["cpu"].get("CPU type"),
        },
        "metrics": region["metrics"],
        "events": region["events"],
        "region_info": region["region_info"],
    }
    reason = _invalid(region, group, cpus)
    if reason:
        counters |= {"status": "invalid", "reason": reason}
    return counters


def _invalid(region: dict, group: str, cpus: list[int] | None) -> str | None:
    if region["group"] != group:
        return f"CSV measured group {region['group']}, the case asked for {group}"
    if cpus is not None and sorted(region["hwthreads"]) != sorted(cpus):
        return (
            f"CSV covers hardware threads {format_cpulist(sorted(region['hwthreads']))}, "
            f"the case measured CPUs {format_cpulist(sorted(cpus))}"
        )
    return None
