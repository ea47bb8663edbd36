"""The documentation stays navigable: every relative link in README.md, CONTRIBUTING.md and docs/*.md reaches
a file (and, for `#anchor`, a heading in it), the README stays a front page, and the index and the benchmark
history name every page and every result file."""

from __future__ import annotations

import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
FRONT_PAGE_LIMIT = 12 * 1024  # about 10 kB of front page; more belongs in docs/

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _prose(text: str) -> str:
    """Markdown without fenced blocks and inline code: links are only links outside them."""
    return re.sub(r"`[^`\n]*`", "", _without_fences(text))


@functools.cache
def _anchors(path: pathlib.Path) -> frozenset[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    # a heading keeps its inline code's text (GitHub drops only the backticks); a fenced `# comment` is no heading
    for line in _without_fences(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def _relative_links(page: pathlib.Path) -> list[str]:
    return [
        t for t in LINK.findall(_prose(page.read_text(encoding="utf-8"))) if not re.match(r"[a-z][a-z0-9+.-]*:", t)
    ]  # http:, https:, mailto: are not files here


def test_the_pages_exist():
    for page in PAGES:
        assert page.is_file(), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_sees_links_and_headings(tmp_path):
    """The checks above would catch a broken link: a page with one is reported, code is not a link."""
    (tmp_path / "a.md").write_text(
        "# A `cmd`: here\n\n[x](b.md) [y](#a-cmd-here) `[z](nowhere.md)`\n```\n[w](gone.md)\n```\n[v](#missing)\n",
        encoding="utf-8",
    )
    assert _relative_links(tmp_path / "a.md") == ["b.md", "#a-cmd-here", "#missing"]
    assert _anchors(tmp_path / "a.md") == {"a-cmd-here"}


def test_readme_is_a_front_page():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= FRONT_PAGE_LIMIT, f"README.md is {size} bytes: move detail into docs/ (limit {FRONT_PAGE_LIMIT})"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for section in ("## Two commands", "## Where to go next", "## Dependencies, and why each is there"):
        assert section in text


def test_docs_index_names_every_page():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    named = set(_relative_links(ROOT / "docs" / "README.md"))
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md" and p.name not in named]
    assert not missing, f"docs/README.md does not list {missing}"
    assert "../CONTRIBUTING.md" in named and "generated" in index


def test_benchmark_history_names_every_result_file():
    history = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    missing = [
        p.name
        for p in (ROOT / "benchmarks" / "results").glob("*.json")
        if f"(../benchmarks/results/{p.name})" not in history
    ]
    assert not missing, f"add a row for each to docs/benchmarks.md's history: {missing}"
