"""docs/architecture.md's "where to add" paths, followed: every file it names exists, every module of
jobs/ is named, a new report section takes one line in SECTIONS and shows in both reports, a new plot
saved through figure.save shows in a section."""

import re
from pathlib import Path

import matplotlib.pyplot as plt

from analysis.outputs.plots.figure import Plot, save
from analysis.outputs.report.blocks import Block
from analysis.outputs.report.html import render_html
from analysis.outputs.report.markdown import render_md
from analysis.outputs.report.render import build_blocks
from analysis.outputs.report.sections import SECTIONS, Section

ROOT = Path(__file__).resolve().parent.parent.parent
PAGE = ROOT / "docs" / "architecture.md"


ROOMS = ("analysis/", "kernels/", "config/", "docs/", "tests/", "jobs/", "sbcore/", "perf/")
FILE = re.compile(r"\.(py|md|c|h|mk|json|csv|toml)$")


def named_paths(text: str) -> set[str]:
    """Paths in backticks (a slash or a file suffix; templates with <...> left out)."""
    names = set(re.findall(r"`([^`\s]+)`", text))
    return {n for n in names if ("/" in n or FILE.search(n)) and "<" not in n}


def missing_paths(text: str, campaign_files: str) -> list[str]:
    """Named paths that are not there. A path from the top of the repository must exist; a shorter
    one (`figure.py` in the row of `analysis/outputs/plots/`) must exist in a folder named on its line,
    or be a file of a campaign directory (docs/formats.md names them)."""
    missing = []
    for line in text.splitlines():
        paths = named_paths(line)
        full = {p for p in paths if p.startswith(ROOMS)}
        folders = [ROOT / p if p.endswith("/") else (ROOT / p).parent for p in full]
        missing += [p for p in full if not (ROOT / p).exists()]
        for name in paths - full:
            if not any((folder / name).exists() for folder in folders) and name not in campaign_files:
                missing.append(name)
    return missing


def test_every_path_the_page_names_exists():
    text = PAGE.read_text()
    assert {"analysis/pipeline.py", "analysis/outputs/report/sections/__init__.py"} <= named_paths(text)
    assert missing_paths(text, (ROOT / "docs" / "formats.md").read_text()) == []


def test_the_check_finds_a_missing_path():
    text = (
        "`analysis/stats/` has `per_case.py` and `nowhere.py`; `results/<campaign>/x`, `--flag`\n`gone/x.py`"
    )
    assert missing_paths(text, "") == ["nowhere.py", "gone/x.py"]


def unnamed_modules(text: str, package: Path) -> list[str]:
    """The modules of a package the page does not name by their path from the top of the repository
    (a package by its folder: `jobs/programs/` names jobs/programs/__init__.py)."""
    named = named_paths(text)
    unnamed = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent).as_posix()
        if path.name == "__init__.py":
            folder = relative.removesuffix("__init__.py")
            if folder not in named and relative not in named:
                unnamed.append(relative)
        elif relative not in named:
            unnamed.append(relative)
    return unnamed


def test_every_module_of_the_campaign_engine_is_named():
    """docs/architecture.md covers jobs/ room by room: a module added without its row fails here."""
    assert len(list((ROOT / "jobs").rglob("*.py"))) > 40
    assert unnamed_modules(PAGE.read_text(), ROOT / "jobs") == []


def test_the_module_check_finds_an_unnamed_module(tmp_path):
    (tmp_path / "jobs" / "slurm").mkdir(parents=True)
    for name in ("__init__.py", "runner.py", "slurm/__init__.py", "slurm/client.py"):
        (tmp_path / "jobs" / name).write_text("")
    text = "`jobs/__init__.py`, `jobs/runner.py`; `jobs/slurm/` with `client.py`"
    assert unnamed_modules(text, tmp_path / "jobs") == ["jobs/slurm/client.py"]


def new_section(result, plots) -> list[Block]:
    return [Block("p", f"**{len(result.summary)} cases** in `{result.campaign.name}`")]


def test_a_new_section_takes_one_line_in_sections(standard):
    _, result = standard
    SECTIONS.insert(1, Section("new-room", "A new room", new_section))
    try:
        blocks = build_blocks(result, [])
    finally:
        SECTIONS.pop(1)
    markdown, html = render_md(blocks, result.out_dir), render_html(blocks)
    assert markdown.index("## A new room") < markdown.index("## Scaling")
    assert f"`{result.campaign.name}`" in markdown
    assert '<h2 id="new-room">A new room</h2>' in html and f"<code>{result.campaign.name}</code>" in html
    assert "<strong>" in html.split('id="new-room"')[1].split("<h2")[0]


def test_a_new_plot_saved_through_figure_shows_in_a_section(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2, 4], [1.0, 1.9, 3.5])
    plot = save(fig, tmp_path / "plots", "new-plot", "A new plot", "new-room")
    assert isinstance(plot, Plot) and plot.png.stat().st_size > 0 and plot.svg.is_file()
    html = render_html([Block("h1", "r"), Block("h2", ("new-room", "New")), Block("img", plot)])
    assert '<figure><img alt="A new plot" src="data:image/png;base64,' in html
    assert "![A new plot](plots/new-plot.png)" in render_md([Block("img", plot)], tmp_path)
