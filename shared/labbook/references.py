"""References that resolve: `python -m labbook.references [--root DIR] [--html DIR]`.

Prints every dangling reference as `file: reference → why` and exits 1, or
prints what it checked in one line and exits 0. It follows

* links: every Markdown link and image in the markdown cells of the notebooks
  (course, labs, solutions, index.ipynb) and in the glossaries, to a local file
  and, when the link names one, to a heading anchor in it. Anchors follow
  JupyterLab's rule (the heading's text with each space turned into "-"; the
  HTML edition's ids are the same text, URL-quoted), so a fragment is compared
  after URL-unquoting;
* chapter and section references: "chapter 03 §2", "Kapitel 03 §2", "capítulo 03",
  "cap. 08, §4", "ch09 §1", "Kap. 01 §1, §2, §5", "chapters 08 and 09", a bare
  "03 §2", and a bare "§2", "section 2" or "Abschnitte 1 und 2" (sections of the
  notebook it stands in), in prose and in the texts readers get from the code
  (`message_texts`). Chapter NN section K exists when
  course/<lang>/NN_*.ipynb has a heading "## K · ..." in the text's language;
  "lab 03 §2" is looked up in labs/<lang>/lab03_*.ipynb the same way;
* exercise attributes: every `section`, `sections`, `chapter_sections` (a chapter
  section, "03 §4") and `lab_section` (a section of the exercise's own lab, "2"),
  in every language;
* the HTML edition, when one is built (`make html` writes build/html): its links
  between pages, with html_edition's own check, and their fragments to ids.
"""
from __future__ import annotations

import argparse
import posixpath
import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import unquote

import mistune
from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat

from autograder import i18n
# The patterns of chapter references are the grader's too: its feedback links them.
from autograder.book_links import (
    CHAIN, CHAIN_ITEM, CHAPTER_REFERENCE, CHAPTER_WORDS, JOIN, JOINERS, LAB_WORD, NUMBER, NUMBERED_HEADING, SECTION,
    anchor, words_pattern as _words,
)
from labbook.notebooks import ROOT

LANGS = i18n.LANGS
# "section 4", "Abschnitte 1 und 2", "secciones 1 y 2": a section of the notebook the text stands in.
SECTION_WORDS = {
    "en": ("sections", "section"),
    "es": ("secciones", "sección", "seccion"),
    "de": ("Abschnitten", "Abschnitte", "Abschnitts", "Abschnitt"),
    "hi-Latn": ("sections", "section"),
}
LAB_REFERENCE = re.compile(rf"(?<![\w.]){LAB_WORD}\s*(?P<chain>{CHAIN})", re.I)
BARE_CHAPTER_SECTION = re.compile(rf"(?<![\w§.]){NUMBER}\s?(?={SECTION})(?P<chain>(?:{JOIN}?{SECTION})+)")
SECTION_NUMBER = r"\d+(?!\w|\s?%|[.,]\w)"
# Only commas and words join these: in "section 3 4 heads" the 4 is no section.
WORDED_SECTION_REFERENCE = re.compile(
    rf"(?<![\w.])(?:{_words(w for ws in SECTION_WORDS.values() for w in ws)})\s+"
    rf"(?P<chain>{SECTION_NUMBER}(?:(?:\s*,\s*|\s+(?:{'|'.join(JOINERS)})\s+){SECTION_NUMBER})*)", re.I)
BARE_SECTION = re.compile(rf"(?<![\w])(?P<chain>{SECTION}(?:{JOIN}{SECTION})*)")
ATTRIBUTE_SECTION = re.compile(r"^(?P<chapter>\d\d) §(?P<section>\d+)$")
MARKDOWN_LINK = re.compile(r"!?\[(?P<text>[^\]]*)\]\([^)]*\)")
EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")

_MARKDOWN = mistune.create_markdown(renderer=None)


@dataclass(frozen=True)
class Problem:
    where: str
    reference: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reference} → {self.why}"


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    links: int = 0
    chapter_references: int = 0
    attributes: int = 0
    html_links: int = 0
    skipped_langs: list[str] = field(default_factory=list)

    def summary(self) -> str:
        html = f", {self.html_links} links of the HTML edition" if self.html_links else ", no HTML edition built"
        skipped = f" (not checked, no chapters: {', '.join(self.skipped_langs)})" if self.skipped_langs else ""
        return (f"references: {self.links} links, {self.chapter_references} chapter and section references, "
                f"{self.attributes} exercise section attributes{html}: all resolve{skipped}")


# ---------------------------------------------------------------- documents and their headings
def _text_of(tokens: list[dict]) -> str:
    """A heading's text as a browser shows it (its DOM textContent): markup gone, code kept."""
    parts = []
    for token in tokens:
        if token["type"] in ("text", "codespan"):
            parts.append(token["raw"])
        elif token["type"] in ("softbreak", "linebreak"):
            parts.append(" ")
        parts.append(_text_of(token.get("children", [])))
    return "".join(parts)


def _walk(tokens: list[dict]) -> Iterator[dict]:
    for token in tokens:
        yield token
        yield from _walk(token.get("children", []))


@dataclass
class Document:
    path: Path
    markdown: list[str]  # markdown cells, or the whole file for .md

    @cached_property
    def tokens(self) -> list[list[dict]]:
        return [_MARKDOWN(text) for text in self.markdown]

    @cached_property
    def headings(self) -> list[tuple[int, str]]:
        return [(token["attrs"]["level"], _text_of(token.get("children", [])).strip())
                for cell in self.tokens for token in _walk(cell) if token["type"] == "heading"]

    @cached_property
    def anchors(self) -> set[str]:
        return {anchor(text) for _, text in self.headings}

    @cached_property
    def sections(self) -> set[str]:
        """The numbers K of its "## K · ..." headings."""
        return {match.group("number") for level, text in self.headings if level == 2
                for match in [NUMBERED_HEADING.match(text)] if match}

    def links(self) -> Iterator[str]:
        """Every link and image URL, unquoted: mistune quotes them; "#3-·-..." reads better than "#3-%C2%B7-..."."""
        for cell in self.tokens:
            for token in _walk(cell):
                if token["type"] in ("link", "image"):
                    yield unquote(token["attrs"]["url"])


def read_document(path: Path) -> Document:
    if path.suffix == ".ipynb":
        notebook = nbformat.read(path, as_version=4)
        return Document(path, [cell.source for cell in notebook.cells if cell.cell_type == "markdown"])
    return Document(path, [path.read_text(encoding="utf-8")])


class Book:
    """The notebooks and glossaries under `root`, read once."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self._documents: dict[Path, Document | None] = {}

    def document(self, path: Path) -> Document | None:
        path = path.resolve()
        if path not in self._documents:
            self._documents[path] = read_document(path) if path.is_file() else None
        return self._documents[path]

    @cached_property
    def langs(self) -> tuple[str, ...]:
        """The languages with chapters here: a language only named in LANGS (scaffolded, not built) is left out."""
        return tuple(lang for lang in LANGS if any((self.root / "course" / lang).glob("[0-9][0-9]_*.ipynb")))

    def sources(self) -> list[Path]:
        """Every file whose prose the checker reads."""
        found = [path for part in ("course", "labs", "solutions") for lang in self.langs
                 for path in sorted((self.root / part / lang).glob("*.ipynb"))]
        found += [glossary for lang in self.langs
                  for glossary in [self.root / "course" / lang / "glossary.md"] if glossary.is_file()]
        index = self.root / "index.ipynb"
        return found + ([index] if index.is_file() else [])

    def chapter(self, lang: str, number: str) -> Path | None:
        found = sorted((self.root / "course" / lang).glob(f"{number}_*.ipynb"))
        return found[0] if found else None

    def lab(self, lang: str, number: str) -> Path | None:
        found = sorted((self.root / "labs" / lang).glob(f"lab{number}_*.ipynb"))
        return found[0] if found else None

    def relative(self, path: Path) -> str:
        path = path.resolve()
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    def lang_of(self, path: Path) -> tuple[str, ...]:
        """The language of a file: its folder's (course/de/...), else every language (index.ipynb)."""
        parts = path.resolve().relative_to(self.root).parts
        return (parts[1],) if len(parts) > 2 and parts[1] in LANGS else self.langs


# ---------------------------------------------------------------- links
def check_link(book: Book, source: Path, url: str) -> str | None:
    """Why the link from `source` to `url` dangles, or None."""
    if EXTERNAL.match(url) or url.startswith("attachment:"):
        return None
    path, _, fragment = url.partition("#")
    target = (source.parent / path).resolve() if path else source.resolve()
    if not target.exists():
        return f"no file {book.relative(target)}"
    if fragment and target.suffix in (".ipynb", ".md"):
        document = book.document(target)
        if fragment not in document.anchors:
            return f"no heading with anchor #{fragment} in {book.relative(target)}"
    return None


def check_links(book: Book, report: Report) -> None:
    for source in book.sources():
        for url in book.document(source).links():
            report.links += 1
            why = check_link(book, source, url)
            if why:
                report.problems.append(Problem(book.relative(source), url, why))


# ---------------------------------------------------------------- chapter and section references
@dataclass(frozen=True)
class SectionReference:
    text: str  # as written
    kind: str  # "chapter", "lab" or "here" (a bare §K: the document it stands in)
    number: str | None  # NN, None for "here"
    section: str | None  # K, None for a whole chapter


def _chain(text: str, kind: str) -> Iterator[SectionReference]:
    """The references of one chain: "Kap. 01 §1, §2, 05" is 01 §1, 01 §2 and 05."""
    number = None
    items = list(CHAIN_ITEM.finditer(text))
    for index, item in enumerate(items):
        if item.group("number"):
            number = item.group("number")
            followed_by_section = index + 1 < len(items) and items[index + 1].group("section")
            if not followed_by_section:
                yield SectionReference(text, kind, number, None)
        else:
            yield SectionReference(text, kind, number, item.group("section"))


def section_references(text: str) -> list[SectionReference]:
    """Every chapter, lab and section reference in a text, in the order of the patterns that find them."""
    text = MARKDOWN_LINK.sub(lambda link: link.group("text"), text)
    found: list[SectionReference] = []
    for pattern, kind in ((LAB_REFERENCE, "lab"), (CHAPTER_REFERENCE, "chapter"), (BARE_CHAPTER_SECTION, "chapter"),
                          (WORDED_SECTION_REFERENCE, "here"), (BARE_SECTION, "here")):
        def take(match: re.Match) -> str:
            written = " ".join(match.group(0).split())
            if pattern is WORDED_SECTION_REFERENCE:
                found.extend(SectionReference(written, "here", None, number)
                             for number in re.findall(r"\d+", match.group("chain")))
            else:
                found.extend(_chain(written, kind))
            return " " * len(match.group(0))  # so that a later pattern does not read it again

        text = pattern.sub(take, text)
    return found


def resolve(book: Book, reference: SectionReference, lang: str, here: Path | None) -> str | None:
    """Why `reference` (in a text of language `lang`, standing in `here`) dangles, or None."""
    if reference.kind == "here":
        target = here
        if target is None:
            return "a bare § with no chapter, in a text that is not in a notebook"
    else:
        target = (book.chapter if reference.kind == "chapter" else book.lab)(lang, reference.number)
        if target is None:
            folder = "course" if reference.kind == "chapter" else "labs"
            prefix = "" if reference.kind == "chapter" else "lab"
            return f"no {reference.kind} {folder}/{lang}/{prefix}{reference.number}_*.ipynb"
    if reference.section is not None and reference.section not in book.document(target).sections:
        return f"no heading \"## {reference.section} · ...\" in {book.relative(target)}"
    return None


def _describe(reference: SectionReference) -> str:
    if reference.kind == "here":
        return f"§{reference.section}"
    word = "lab " if reference.kind == "lab" else ""
    return f"{word}{reference.number}" + (f" §{reference.section}" if reference.section else "")


def check_text(book: Book, report: Report, where: str, lang: str, text: str, here: Path | None) -> None:
    for reference in section_references(text):
        report.chapter_references += 1
        why = resolve(book, reference, lang, here)
        if why:
            report.problems.append(Problem(where, f"“{reference.text}” ({_describe(reference)}) [{lang}]", why))


def check_prose(book: Book, report: Report) -> None:
    for source in book.sources():
        for lang in book.lang_of(source):
            for text in book.document(source).markdown:
                check_text(book, report, book.relative(source), lang, text, source)


def message_texts() -> Iterator[tuple[str, str, str]]:
    """(where, lang, text) of every text readers get from the code: the message catalogues of both domains.

    The one place that knows where those texts live; everything else asks it.
    """
    from labbook import catalogs, texts  # noqa: F401  (texts adds the labbook domain)

    for key, templates in sorted(i18n.catalogue().items()):
        where = "book text" if catalogs.domain_of(key) == "labbook" else "message"
        for lang in LANGS:
            if templates.get(lang):
                yield f"{where} {key}", lang, templates[lang]


def check_messages(book: Book, report: Report) -> None:
    for where, lang, text in message_texts():
        if lang in book.langs:
            check_text(book, report, where, lang, text, None)


# ---------------------------------------------------------------- exercise attributes
def _load_labs() -> list:
    from autograder.labs import LAB_IDS, get_lab

    return [get_lab(lab_id) for lab_id in LAB_IDS]


def exercise_sections(exercise) -> Iterator[tuple[str, str]]:
    """(attribute, value) for every section an exercise points to: section, sections[...], lab_section..."""
    for name in sorted(dir(exercise)):
        if not (name.endswith("section") or name.endswith("sections")) or name.startswith("_"):
            continue
        value = getattr(exercise, name)
        if isinstance(value, str) and value:
            yield name, value
        elif isinstance(value, dict):
            for key, item in sorted(value.items()):
                if isinstance(item, str) and item:
                    yield f"{name}[{key!r}]", item


def check_attribute(book: Book, lab_id: str, attribute: str, value: str, lang: str) -> str | None:
    if attribute.startswith("lab_"):
        lab = book.lab(lang, lab_id.removeprefix("lab"))
        if lab is None:
            return f"no lab labs/{lang}/{lab_id}_*.ipynb"
        reference = SectionReference(value, "here", None, value)
        return resolve(book, reference, lang, lab)
    match = ATTRIBUTE_SECTION.match(value)
    if not match:
        return "not of the form \"NN §K\""
    return resolve(book, SectionReference(value, "chapter", match["chapter"], match["section"]), lang, None)


def check_exercises(book: Book, report: Report) -> None:
    for lab in _load_labs():
        for exercise in lab.exercises:
            for attribute, value in exercise_sections(exercise):
                for lang in book.langs:
                    report.attributes += 1
                    why = check_attribute(book, lab.id, attribute, value, lang)
                    if why:
                        report.problems.append(Problem(
                            f"exercise {lab.id}.{exercise.id}", f"{attribute} = {value!r} [{lang}]", why))


# ---------------------------------------------------------------- the HTML edition
HTML_ID = re.compile(r"""\bid=["']([^"']+)["']""")
HTML_HREF = re.compile(r"""\bhref=["']([^"']*)["']""")
DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]+")


def check_html(site: Path, report: Report) -> None:
    """Links between the pages of a built edition (html_edition's own check), and their fragments to ids."""
    from labbook.html_edition import rewrite_links

    pages = {page.relative_to(site).as_posix(): DATA_URI.sub("data:", page.read_text(encoding="utf-8"))
             for page in sorted(site.rglob("*.html"))}
    ids = {name: {unquote(found) for found in HTML_ID.findall(text)} for name, text in pages.items()}
    for name, text in pages.items():
        broken: list[str] = []
        rewrite_links(text, name, set(pages), broken)  # run for the links it reports; the edition is already written
        for entry in broken:
            url = entry.split(": ", 1)[1]
            report.problems.append(Problem(f"{site.name}/{name}", url, "no such page in the edition"))
        for url in HTML_HREF.findall(text):
            report.html_links += 1
            path, _, fragment = url.partition("#")
            if not fragment or EXTERNAL.match(url):
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), path)) if path else name
            if target in ids and unquote(fragment) not in ids[target]:
                report.problems.append(Problem(f"{site.name}/{name}", url, f"no id {unquote(fragment)!r} in {target}"))


# ---------------------------------------------------------------- all of it
def check(root: Path = ROOT, html: Path | None = None) -> Report:
    """Every check; `html` is a built edition to check too (None: build/html under root, if built)."""
    book = Book(root)
    report = Report(skipped_langs=[lang for lang in LANGS if lang not in book.langs])
    check_links(book, report)
    check_prose(book, report)
    check_messages(book, report)
    check_exercises(book, report)
    site = html if html is not None else book.root / "build" / "html"
    if (site / "index.html").is_file():
        check_html(site, report)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's root (default: this checkout)")
    parser.add_argument("--html", type=Path, default=None,
                        help="a built HTML edition to check too (default: ROOT/build/html, when built)")
    args = parser.parse_args(argv)
    report = check(args.root, args.html)
    for problem in report.problems:
        print(problem)
    if report.problems:
        print(f"{len(report.problems)} dangling references", file=sys.stderr)
        return 1
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
