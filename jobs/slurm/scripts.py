"""sbatch scripts for a campaign, rendered from jobs/slurm/templates/*.sbatch.

Plain bash a person can read and resubmit: every value that comes from configuration or a path reaches
the script through sbcore.names.script_value (shell quoting that refuses control characters; sbatch
reads single-quoted #SBATCH values the same way). Campaign and node type are names (sbcore/names.py).
"""

import string
from dataclasses import dataclass
from pathlib import Path

from jobs.config import NodeType
from jobs.slurm.site import site_lines
from sbcore.atomic import write_atomic
from sbcore.errors import ScalebenchError
from sbcore.install import entry_command
from sbcore.names import check_name, script_value

TEMPLATES = Path(__file__).resolve().parent / "templates"
# the clone's script, or python -m jobs.entry of a pip install
SCALEBENCH = " ".join(script_value(word, "scalebench's command") for word in entry_command())


@dataclass(frozen=True)
class ArrayJob:
    """One sbatch --array for one node type: the campaign indices it runs and the resources per task."""

    node_type: NodeType
    indices: tuple[int, ...]
    ntasks: int
    script: Path
    offset: int = 0  # case index = array task id + offset
    time_limit: str | None = None

    @property
    def task_ids(self) -> list[int]:
        return [index - self.offset for index in self.indices]


def job_name_prefix(campaign: str) -> str:
    """Every job of a campaign is named sb-<campaign>-<node type | analysis>."""
    return f"sb-{campaign}-"


def placement_lines(node: NodeType) -> list[str]:
    """The #SBATCH options that send a job to this node type (partition and/or feature constraint)."""
    lines = []
    if node.partition:
        lines.append(f"--partition={script_value(node.partition)}")
    if node.constraint:
        lines.append(f"--constraint={script_value(node.constraint)}")
    return lines


def _render(template: str, values: dict) -> str:
    return string.Template((TEMPLATES / template).read_text()).substitute(values)


def _common(
    campaign_dir: Path, node: NodeType, script: Path, command: str, created: str, time_limit: str | None
) -> dict:
    check_name("campaign", campaign_dir.name)
    check_name("node type", node.name)
    lines = placement_lines(node) + site_lines(node.site, time_limit)
    return {
        "campaign": campaign_dir.name,
        "command": command,
        "created": created,
        "script_q": script_value(str(script)),
        "placement": "".join(f"#SBATCH {line}\n" for line in lines),
        "scalebench": SCALEBENCH,
        "campaign_dir": script_value(str(campaign_dir)),
    }


_PLAIN_NOTE = """\
# Array task id = campaign case index (line of cases.jsonl), so the --array list below is exactly the
# cases this job runs; it need not be contiguous."""
_OFFSET_NOTE = """\
# Campaign case index (line of cases.jsonl) = array task id + {offset}: Slurm refuses task ids of
# MaxArraySize and above, so the campaign is cut into several arrays, each with its own offset
# (jobs/submissions.jsonl lists each array's cases). The --array list need not be contiguous."""


def render_array_script(
    campaign_dir: Path, job: ArrayJob, array_spec: str, command: str, created: str
) -> str:
    values = _common(campaign_dir, job.node_type, job.script, command, created, job.time_limit)
    values |= {
        "index_note": _OFFSET_NOTE.format(offset=job.offset) if job.offset else _PLAIN_NOTE,
        "case_index": (
            f'"$((SLURM_ARRAY_TASK_ID + {job.offset}))"' if job.offset else '"${SLURM_ARRAY_TASK_ID}"'
        ),
        "node_type": job.node_type.name,
        "count": len(job.indices),
        "job_name": script_value(job_name_prefix(campaign_dir.name) + job.node_type.name),
        "ntasks": job.ntasks,
        "log_pattern": script_value(str(campaign_dir / "logs" / "%A_%a.out")),
        "array": array_spec,
    }
    return _render("array.sbatch", values)


def render_analysis_script(
    campaign_dir: Path, node: NodeType, script: Path, command: str, created: str
) -> str:
    values = _common(campaign_dir, node, script, command, created, node.site.time_limit)
    values |= {
        "job_name": script_value(job_name_prefix(campaign_dir.name) + "analysis"),
        "log_pattern": script_value(str(campaign_dir / "logs" / "analysis-%j.out")),
    }
    return _render("analysis.sbatch", values)


def write_script(path: Path, text: str) -> None:
    """Scripts are never overwritten: each submission round gets its own file names."""
    if path.exists():
        raise ScalebenchError(f"{path}: already exists; refusing to overwrite a submitted script")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    path.chmod(0o755)
