"""What a rendered report.html must show: every block's Markdown rendered (no raw `**`, backticks or
`_emphasis_` left in its visible text), and which report sections it has (by their anchors)."""

import re
from html.parser import HTMLParser
from pathlib import Path


class _Visible(HTMLParser):
    """The text a reader sees (not inside <script> or <style>), and the ids of the h2 headings."""

    def __init__(self):
        super().__init__()
        self.text: list[str] = []
        self.sections: list[str] = []
        self.tags: set[str] = set()
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag in ("script", "style"):
            self._hidden += 1
        if tag == "h2":
            self.sections.append(dict(attrs).get("id", ""))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._hidden -= 1

    def handle_data(self, data):
        if not self._hidden:
            self.text.append(data)


def visible(html: str) -> _Visible:
    parser = _Visible()
    parser.feed(html)
    return parser


# Markdown a renderer would have turned into markup: strong, code, emphasis of a whole phrase.
RAW_MARKDOWN = re.compile(r"\*\*|`|(?<!\w)_[^_\s][^_]*[^_\s]_(?!\w)")


def rendered_sections(html_file: Path) -> list[str]:
    """The section anchors of report.html, after checking that no raw Markdown is left in its text."""
    page = visible(html_file.read_text())
    for piece in page.text:
        assert not RAW_MARKDOWN.search(piece), f"{html_file}: raw Markdown in {piece[:200]!r}"
    return page.sections
