"""The site options of a node type (jobs/site_options.py) as #SBATCH lines, every value through
sbcore.names.script_value."""

from jobs.site_options import SiteOptions
from sbcore.names import script_value


def site_lines(site: SiteOptions, time_limit: str | None) -> list[str]:
    """The #SBATCH options for these site options, values shell-quoted."""
    lines = []
    for key, flag in (("account", "account"), ("qos", "qos"), ("reservation", "reservation"), ("mem", "mem")):
        value = getattr(site, key)
        if value:
            lines.append(f"--{flag}={script_value(value)}")
    if time_limit:
        lines.append(f"--time={script_value(time_limit)}")
    for option in site.sbatch_options:
        name, sep, value = option.partition("=")
        lines.append(name + (sep + script_value(value) if sep else ""))
    return lines
