"""What a node can do, decided once per host and cached in the campaign (hosts/<hostname>.json):
its topology (for the pin lists) and whether likwid-perfctr works there (and if not, why)."""

import datetime
import json
import os
import subprocess
from pathlib import Path

from jobs.counter_groups import node_groups
from jobs.pinning import find_pin_library
from jobs.topology import Topology, detect_topology
from sbcore import campaign_access
from sbcore.atomic import dump_json, write_new
from sbcore.errors import UsageError

PERFCTR_PROBE = ["likwid-perfctr", "-C", "0", "-g", "CLOCK", "true"]


def hostname() -> str:
    """socket.gethostname() without importing socket (run-case start-up): both are uname's nodename."""
    return os.uname().nodename


def probe_counters(timeout_s: float = 30) -> dict:
    """{"available": bool, "reason": str}: runs `likwid-perfctr -C 0 -g CLOCK true` once."""
    command = " ".join(PERFCTR_PROBE)
    try:
        out = subprocess.run(PERFCTR_PROBE, capture_output=True, text=True, timeout=timeout_s, check=False)
    except OSError as err:  # not found, or not executable (a disabled tool)
        why = "not found" if isinstance(err, FileNotFoundError) else f"cannot run ({err.strerror})"
        return {"available": False, "reason": f"likwid-perfctr {why}: likwid not installed or not loaded"}
    except subprocess.TimeoutExpired:
        return {"available": False, "reason": f"{command} did not finish within {timeout_s} s"}
    if out.returncode == 0:
        return {"available": True, "reason": f"{command} succeeded"}
    lines = [line.strip() for line in (out.stderr or out.stdout).splitlines() if line.strip()]
    # The last line is the verdict ("Cannot get access to MSRs..."); the first ERROR line says why.
    why = list(dict.fromkeys([lines[-1], *[line for line in lines if "ERROR" in line][:1]])) if lines else []
    detail = " | ".join(why) or "no message"
    return {"available": False, "reason": f"{command}: exit status {out.returncode}: {detail}"[:500]}


def probe_host() -> dict:
    return {
        "hostname": hostname(),
        "probed": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "topology": detect_topology().to_json(),
        "counters": probe_counters(),
        "counter_groups": node_groups(),  # None when likwid-perfctr cannot list them
        "pin_library": find_pin_library(),
    }


def host_info(campaign_dir: Path) -> dict:
    """This host's cached verdict in the campaign, probing (and caching) on first use."""
    hosts = Path(campaign_dir) / "hosts"
    path = hosts / f"{hostname()}.json"
    if not path.exists():
        hosts.mkdir(exist_ok=True)
        write_new(path, dump_json(probe_host()))  # first writer wins when array tasks race
    try:
        return json.loads(campaign_access.read_bytes(Path(campaign_dir), f"hosts/{path.name}"))
    except (OSError, ValueError) as err:
        raise UsageError(f"{path}: unreadable host probe ({err}); delete it to probe again") from None


def host_topology(info: dict) -> Topology:
    return Topology.from_json(info["topology"])
