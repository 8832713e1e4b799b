"""Scaled-down copies of the seed experiments for end-to-end tests: same sweeps and axes, tiny
operation counts, one value per long list, so a whole family runs in seconds."""

import tomllib
from pathlib import Path

from jobs.toml_write import dumps

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"ops": 200, "loops": 2000, "count": 50, "repeat": 20000, "buffer_kib": 256}
FEWER = {"period_us": [1000, 0], "bytes": [1, 1048576], "load": [32, 4]}


def scaled_experiment(name: str, out_dir: Path, repetitions: int = 1) -> Path:
    data = tomllib.loads((ROOT / "config" / "experiments" / name).read_text())
    data["repetitions"] = repetitions
    data["warmup"] = 0
    for sweep in data["sweep"]:
        params = sweep.get("params", {})
        for key, value in SMALL.items():
            if key in params:
                params[key] = [value]
        for key, keep in FEWER.items():
            if key in params:
                params[key] = [v for v in params[key] if v in keep] or params[key][:1]
        if params.get("op") == ["malloc"] or params.get("op") == ["timer"]:
            params["batch"] = [10]
        if params.get("period_us") == [0]:
            params["count"] = [200]
        if "batch" in params and "ops" in params:  # a batch must divide the operations
            params["batch"] = [b for b in params["batch"] if params["ops"][0] % b == 0]
    # the sweeps at the report's larger batches (n = 1000, 10000) have no batch left: left out
    data["sweep"] = [s for s in data["sweep"] if s.get("params", {}).get("batch", [1]) != []]
    path = out_dir / name
    path.write_text(dumps(data))
    return path
