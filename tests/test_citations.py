"""Every citation of a docs file resolves: the file exists, and so does the section it names.

Code and docs cite a docs file by a section's title (`docs/model.md, "Tick semantics"`, a
title's trailing parenthesis may be left out), by its number (`docs/model.md §5.4`,
`§5.3 c` for a lettered subsection, `§2 and §3` for two), or by a numbered case
(`docs/outside.md, case 8`, `cases 5, 6 and 8`). A quotation after a numbered or titled
citation (`§5.4: "reconcile first"`) must be found in that section. Inside docs/model.md a
bare `§5.3 c` names its own section; a markdown link `sweep.md#anchor` names the heading
whose GitHub anchor that is. Every dotted name `sim.x.y` the docs or the README mention is
importable (a module, or an attribute of one).

The text is read as prose: a citation may run over a line break, in a comment (`#`) or a
docstring.
"""

from __future__ import annotations

import importlib
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def sources() -> list[Path]:
    """Where citations are read: not this file, whose samples are wrong on purpose."""
    found = [p for folder in ("sim", "tests", "benchmarks") for p in sorted((ROOT / folder).rglob("*.py"))
             if p != Path(__file__).resolve()]  # fmt: skip
    return found + sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]


# -- the docs' sections ------------------------------------------------------------------------
@dataclass(frozen=True)
class Section:
    level: int
    title: str  # without its number: "Tick semantics", "Assessment"
    number: str  # "5", "5.3", "a" (the lettered subsections of model.md), "" if none
    body: str  # its text up to the next heading of the same or a higher level
    anchor: str  # the anchor GitHub gives the heading


HEADING = re.compile(r"^(#{1,6}) +(.*?) *$")
NUMBERED = re.compile(r"(?P<number>\d+(?:\.\d+)*|[a-z])\.? +(?P<title>.*)")


def anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@cache
def sections(doc: str) -> tuple[Section, ...]:
    """The headings of docs/`doc`.md outside code blocks, with their sections' text."""
    lines = (DOCS / f"{doc}.md").read_text(encoding="utf-8").splitlines()
    heads: list[tuple[int, int, str]] = []  # (line index, level, heading)
    fenced = False
    for i, line in enumerate(lines):
        fenced ^= line.startswith("```")
        match = HEADING.match(line)
        if match and not fenced:
            heads.append((i, len(match[1]), match[2]))
    found = []
    for k, (i, level, text) in enumerate(heads):
        end = next((j for j, lv, _ in heads[k + 1 :] if lv <= level), len(lines))
        numbered = NUMBERED.fullmatch(text)
        number, title = (numbered["number"], numbered["title"]) if numbered else ("", text)
        found.append(Section(level, title, number, "\n".join(lines[i:end]), anchor(text)))
    return tuple(found)


def plain(text: str) -> str:
    return re.sub(r"[\s*`]+", " ", text).strip().lower()


def titled(doc: str, title: str) -> Section | None:
    """The section of that title (its trailing parenthesis may be left out)."""
    for s in sections(doc):
        if title in (s.title, re.sub(r" \(.*\)$", "", s.title)):
            return s
    return None


def numbered(doc: str, number: str, letter: str | None) -> Section | None:
    """§5.3, or with a letter §5.3 c: the subsection `c.` inside §5.3."""
    found = next((s for s in sections(doc) if s.number == number), None)
    if found is None or letter is None:
        return found
    inside = [s for s in sections(doc) if s.level > found.level and s.body in found.body]
    return next((s for s in inside if s.number == letter), None)


# -- the citations -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prose:
    """A file's text with its line breaks (and a comment's `#`) read as spaces."""

    path: Path
    text: str
    starts: tuple[int, ...]  # where each line starts in `text`

    @classmethod
    def of(cls, path: Path) -> Prose:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
        if path.suffix == ".py":
            lines = [line.lstrip("#").lstrip() if line.startswith("#") else line for line in lines]
        starts, at = [], 0
        for line in lines:
            starts.append(at)
            at += len(line) + 1
        return cls(path, " ".join(lines), tuple(starts))

    def where(self, offset: int) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path.name
        return f"{shown}:{bisect_right(self.starts, offset)}"


DOC = r"docs/(?P<doc>[a-z0-9_-]+)\.md"
NUMBER = r"§(?P<number>\d+(?:\.\d+)*)(?: (?P<letter>[a-z])(?![\w'-]))?"
QUOTE = r'(?:[:,]? "(?P<quote>[^"]{1,80})")?'
TITLE_CITE = re.compile(DOC + r',? "(?P<title>[^"]{1,80})"(?: \("(?P<quote>[^"]{1,80})"\))?')
NUMBER_CITE = re.compile(DOC + r",? " + NUMBER + QUOTE)
MORE_NUMBERS = re.compile(r"(?:,| and|;) " + NUMBER)
CASE_CITE = re.compile(DOC + r",? cases? (?P<cases>\d+(?:(?:,| and) \d+)*)")
SELF_NUMBER = re.compile(r"(?<!companion )" + NUMBER)
LINK = re.compile(r"\]\((?P<doc>[a-z0-9_-]+)\.md#(?P<anchor>[\w-]+)\)")
ANY_DOC = re.compile(DOC)


def quoted(section: Section, quote: str | None) -> bool:
    return quote is None or plain(quote) in plain(section.body)


def bad_citations(prose: Prose) -> list[str]:
    """Each citation in `prose` that does not resolve, with where it is."""
    text, bad = prose.text, []

    def check(offset: int, cited: str, ok: bool) -> None:
        if not ok:
            bad.append(f"{prose.where(offset)}: {cited}")

    for m in ANY_DOC.finditer(text):
        check(m.start(), m[0], (DOCS / f"{m['doc']}.md").exists())
    for m in TITLE_CITE.finditer(text):
        if (DOCS / f"{m['doc']}.md").exists():
            section = titled(m["doc"], m["title"])
            check(m.start(), m[0], section is not None and quoted(section, m["quote"]))
    for m in NUMBER_CITE.finditer(text):
        if (DOCS / f"{m['doc']}.md").exists():
            section = numbered(m["doc"], m["number"], m["letter"])
            check(m.start(), m[0], section is not None and quoted(section, m["quote"]))
            at = m.end()
            while more := MORE_NUMBERS.match(text, at):  # a list: §2 and §3
                check(more.start(), m[0] + more[0], numbered(m["doc"], more["number"], more["letter"]) is not None)
                at = more.end()
    for m in CASE_CITE.finditer(text):
        for case in re.findall(r"\d+", m["cases"]):
            check(m.start(), m[0], (DOCS / f"{m['doc']}.md").exists() and numbered(m["doc"], case, None) is not None)
    if prose.path.parent == DOCS:
        for m in LINK.finditer(text):
            check(m.start(), m[0], any(s.anchor == m["anchor"] for s in sections(m["doc"])))
    if prose.path == DOCS / "model.md":
        for m in SELF_NUMBER.finditer(text):
            check(m.start(), m[0], numbered("model", m["number"], m["letter"]) is not None)
    return bad


def test_every_citation_of_a_docs_file_resolves() -> None:
    assert [line for path in sources() for line in bad_citations(Prose.of(path))] == []


def test_the_citations_are_found(tmp_path: Path) -> None:
    """The reader finds each form, over a line break and in a comment; a bad one fails."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        '# the rules (docs/model.md, "Tick semantics"), docs/model.md §5.3 c and §5.4: "reconcile\n'
        "# first\" and docs/outside.md, cases 5, 6 and 8, docs/check.md,\n"
        '# "How much work, said up front"; docs/conform.md, "Temporal" ("A finding: a stopped worker\n'
        '# is still handed tasks")\n'
        '# bad: docs/model.md, "Time and order", docs/model.md §5.9, docs/model.md §5.3 e, docs/nothing.md,\n'
        '# docs/model.md §5.4, "reconcile last", docs/outside.md case 11, docs/model.md §2 and §10\n',
        encoding="utf-8",
    )
    found = [line.split(": ", 1)[1] for line in bad_citations(Prose.of(sample))]
    assert found == [
        "docs/nothing.md",
        'docs/model.md, "Time and order"',
        "docs/model.md §5.9",
        "docs/model.md §5.3 e",
        'docs/model.md §5.4, "reconcile last"',
        "docs/model.md §2 and §10",
        "docs/outside.md case 11",
    ]


# -- dotted names in the docs ----------------------------------------------------------------------
DOTTED = re.compile(r"(?<![\w/.-])sim(?:\.[A-Za-z_]\w*)+")


def resolves(name: str) -> bool:
    """`sim.a.b.c`: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def dotted_names() -> list[tuple[str, str]]:
    found = []
    for path in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
        prose = Prose.of(path)
        found += [(prose.where(m.start()), m[0]) for m in DOTTED.finditer(prose.text)]
    return found


def test_the_docs_mention_dotted_names() -> None:
    assert len(dotted_names()) > 20


@pytest.mark.parametrize("where, name", dotted_names())
def test_every_dotted_name_in_the_docs_resolves(where: str, name: str) -> None:
    assert resolves(name), f"{where}: {name}"
