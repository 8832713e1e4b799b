"""report.html is rendered from the same Markdown as report.md (markdown-it-py): every section shows
its emphasis, code and tables as such, with no raw `**` or backticks, and raw HTML in a text is escaped."""

from pathlib import Path

from analysis.outputs.report.blocks import Block
from analysis.outputs.report.html import block_html, render_html
from analysis.outputs.report.sections import SECTIONS
from tests.report_html import RAW_MARKDOWN, rendered_sections, visible

ROOT = Path(__file__).resolve().parent.parent.parent
# Sections the standard synthetic campaign has no data for, and the test that renders each of them
# through the CLI (a real run of the kernels) and checks its report.html with rendered_sections.
RENDERED_ELSEWHERE = {
    "scenario": "tests/seeds/test_seed_end_to_end.py",
    "reference": "tests/seeds/test_seed_end_to_end.py",
    "micro": "tests/micro/test_experiments_e2e.py",
    "paired": "tests/analysis/test_paired_speedup.py",  # a campaign planned in families
    "duets": "tests/analysis/test_paired_speedup.py",  # a campaign planned in duets
}


def test_every_section_is_rendered_without_raw_markdown(rendered):
    _, _, _, written = rendered
    shown = rendered_sections(written["html"])
    assert set(shown) == {s.key for s in SECTIONS} - set(RENDERED_ELSEWHERE)
    for key, test_file in RENDERED_ELSEWHERE.items():
        source = (ROOT / test_file).read_text()
        assert "rendered_sections(" in source and f'"{key}"' in source, f"{test_file} does not check {key}"


def test_the_markdown_of_the_report_is_markup_in_html(rendered):
    _, _, _, written = rendered
    markdown, html = written["md"].read_text(), written["html"].read_text()
    assert "**" in markdown and "`" in markdown  # so the test below has something to show
    tags = visible(html).tags
    assert {"code", "table", "details", "summary", "nav", "figure"} <= tags


def test_blocks_render_their_markdown_and_escape_html():
    paragraph = block_html(
        Block("p", "**The node was shared** with `--baseline self` <script>x</script> & _all_")
    )
    assert "<strong>The node was shared</strong>" in paragraph
    assert "<code>--baseline self</code>" in paragraph and "<em>all</em>" in paragraph
    assert "<script>" not in paragraph and "&lt;script&gt;" in paragraph and "&amp;" in paragraph
    folded = block_html(Block("details", ("**why**", [Block("ul", ["`a` b", "c"])])))
    assert folded.startswith("<details><summary><strong>why</strong></summary>")
    assert '<ul class="findings">' in folded and "<li><code>a</code> b</li>" in folded
    assert '<p class="skip"><em>no data</em></p>' in block_html(Block("skip", "no data"))
    kv = block_html(Block("kv", {"a|b": "`x`"}))
    assert '<table class="kv">' in kv and "<thead hidden>" in kv and "<code>x</code>" in kv and "a|b" in kv
    page = render_html([Block("h1", "r"), Block("h2", ("k", "The `k` section")), Block("p", "t")])
    assert '<h2 id="k">The <code>k</code> section</h2>' in page and '<a href="#k">' in page


def test_the_check_finds_raw_markdown():
    for raw in ("**bold**", "a `flag`", "an _emphasised phrase_"):
        assert RAW_MARKDOWN.search(raw)
    for fine in ("snake_case_name", "2 * 3", "a_b and c_d", "ci_low_s"):
        assert not RAW_MARKDOWN.search(fine)
