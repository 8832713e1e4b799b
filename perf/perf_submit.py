"""Planning plus dry-run submission of a 10,000-case campaign on 2 node types (prints, asserts nothing).

With Slurm's default MaxArraySize=1001 (what a dry run assumes without a controller) each node type's
5,000 cases become 5 arrays, every task id <= 1000. Target: <= 5 s end to end; sbatch calls = arrays + 1.
The experiment is generated in a temporary directory; nothing is written under results/.
"""

import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobs.campaign import plan_experiment  # noqa: E402
from jobs.slurm.arrayspec import parse_array_spec  # noqa: E402
from jobs.slurm.limits import DEFAULT_MAX_ARRAY_SIZE  # noqa: E402
from jobs.slurm.submit import submit_experiment  # noqa: E402

NODE_TYPES = ["tc-core", "tc-smt"]
SAMPLE_COUNTS = 2500  # x 2 thread counts x 2 node types = 10,000 cases
RUNS = 3


def experiment_toml() -> str:
    samples = ", ".join(str(100_000 + i) for i in range(SAMPLE_COUNTS))
    return (
        'description = "perf_submit: 10,000 tiny π cases to time planning and script generation"\n'
        f"node_types = {NODE_TYPES!r}\n"
        "repetitions = 1\nwarmup = 0\n"
        "[[sweep]]\n"
        'binary = ["mcpi-c-omp"]\nthreads = [1, 2]\n'
        f"params = {{ samples = [{samples}], seed = [1] }}\n"
    ).replace("'", '"')


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="perf-submit-") as tmp:
        exp = Path(tmp) / "big.toml"
        exp.write_text(experiment_toml())
        plan_s, total_s, commands, cases, top = [], [], 0, 0, 0
        for run in range(RUNS):
            start = time.perf_counter()
            _, planned = plan_experiment(exp, NODE_TYPES)
            plan_s.append(time.perf_counter() - start)
            cases = len(planned)
            out = io.StringIO()
            start = time.perf_counter()
            submit_experiment(
                exp, NODE_TYPES, 8, True, name=f"big-{run}", results_dir=Path(tmp) / "results", out=out
            )
            total_s.append(time.perf_counter() - start)
            sbatch = [line for line in out.getvalue().splitlines() if line.startswith("sbatch ")]
            commands = len(sbatch)
            args = [arg for line in sbatch for arg in line.split()]
            specs = [arg.removeprefix("--array=") for arg in args if arg.startswith("--array=")]
            top = max(max(parse_array_spec(spec)) for spec in specs)
        scripts = sorted((Path(tmp) / "results" / "big-0" / "jobs").glob("*.sbatch"))
        print(f"cases planned:                    {cases} on {len(NODE_TYPES)} node types")
        print(f"plan only, median of {RUNS}:           {statistics.median(plan_s):.2f} s")
        median_total = statistics.median(total_s)
        print(f"plan + campaign files + scripts:  {median_total:.2f} s (median of {RUNS}; target <= 5 s)")
        per_node = -(-cases // len(NODE_TYPES) // DEFAULT_MAX_ARRAY_SIZE)
        target = len(NODE_TYPES) * per_node + 1
        print(
            f"sbatch commands:                  {commands} (expected {target}: {per_node} arrays per node "
            f"type at MaxArraySize={DEFAULT_MAX_ARRAY_SIZE}, + analysis)"
        )
        print(f"largest array task id:            {top} (must be < {DEFAULT_MAX_ARRAY_SIZE})")
        for script in scripts:
            array = next(
                (ln for ln in script.read_text().splitlines() if ln.startswith("#SBATCH --array")), "-"
            )
            print(f"  {script.name:<24} {script.stat().st_size:>6} bytes  {array}")


if __name__ == "__main__":
    main()
