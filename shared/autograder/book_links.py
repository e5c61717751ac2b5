"""Chapter references in feedback become links: "chapter 03 §4", "Kapitel 05 §3", "capítulo 02".

A reference points at the chapter notebook `course/<lang>/NN_*.ipynb` and, when it names a
section, at the heading "## K · ..." there. Two readers follow them:

* `check` in a lab notebook links to the chapter notebook, relative to the lab's folder
  (labs/<lang>/ beside course/<lang>/, in the repository and in the student release), so
  JupyterLab opens the chapter where the section starts;
* the grader's feedback files link to the HTML edition when the instructor says where it is
  published (`grade --book-url URL`): URL/course/<lang>/NN_name.html#section.

The patterns are the book's own: labbook.references checks with them that every reference in
prose and messages resolves, and the HTML edition links its prose with them.
"""
from __future__ import annotations

import html
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import quote

# The word for "chapter" in each language, as the book and the grader write it.
CHAPTER_WORDS = {
    "en": ("chapters", "chapter", "ch."),
    "es": ("capítulos", "capítulo", "caps.", "cap."),
    "de": ("Kapitel", "Kap."),
    "hi-Latn": ("chapters", "chapter", "ch."),
}
LAB_WORD = "lab"
# What joins the items of one reference: "01 §1, §2 und §5", "08 y 09", "08 §7 / 09 §1".
JOINERS = ("and", "und", "y", "e", "aur", "or", "oder", "o")
# Two digits, not the start of "32-bit", "99 %", "0.25" or the key "ch10.title".
NUMBER = r"\d\d(?!\w|\s?%|[.,]\w)"
SECTION = r"§\s?\d+(?!\w)"
JOIN = rf"(?:\s*[,/]\s*|\s+(?:{'|'.join(JOINERS)})\s+|\s+)"
CHAIN = rf"{NUMBER}(?:{JOIN}(?:{NUMBER}|{SECTION}))*"
CHAIN_ITEM = re.compile(rf"(?P<number>{NUMBER})|§\s?(?P<section>\d+)")
NUMBERED_HEADING = re.compile(r"^(?P<number>\d+) ·")


def words_pattern(words: Iterable[str]) -> str:
    """An alternation of the words, longest first; an abbreviation's dot is optional ("ch08", "Kap 03")."""
    return "|".join(re.escape(word).replace(r"\.", r"\.?") for word in sorted(set(words), key=len, reverse=True))


CHAPTER_REFERENCE = re.compile(
    rf"(?<![\w.])(?:{words_pattern(w for ws in CHAPTER_WORDS.values() for w in ws)})\s*(?P<chain>{CHAIN})", re.I)

# (chapter "NN", section "K" or None) -> an href, or None where that chapter or section is not found
Resolver = Callable[[str, "str | None"], "str | None"]


def anchor(heading_text: str) -> str:
    """JupyterLab's id for a heading (rendermime's createHeaderId): spaces become '-'."""
    return heading_text.strip().replace(" ", "-")


def heading_anchor(markdown_heading: str) -> str:
    """The id of a heading as written in Markdown: a browser's id is made from the rendered text,
    without code ticks or emphasis marks."""
    return anchor(re.sub(r"[`*]", "", markdown_heading))


def section_anchors(markdown_cells: Iterable[str]) -> dict[str, str]:
    """{"4": "4-·-The-fused-kernel"} for the "## K · ..." headings of a chapter, outside code fences."""
    found: dict[str, str] = {}
    for source in markdown_cells:
        in_fence = False
        for line in source.splitlines():
            if line.startswith("```"):
                in_fence = not in_fence
            if not in_fence and line.startswith("## "):
                heading = line[3:].strip()
                number = NUMBERED_HEADING.match(heading)
                if number:
                    found.setdefault(number.group("number"), heading_anchor(heading))
    return found


def first_reference(written: str) -> tuple[str, str | None] | None:
    """The first chapter (and its section, if the chapter is followed by one) a reference names."""
    items = list(CHAIN_ITEM.finditer(written))
    for index, item in enumerate(items):
        if item.group("number"):
            follows = items[index + 1].group("section") if index + 1 < len(items) else None
            return item.group("number"), follows
    return None


def pieces(text: str, resolve: Resolver | None) -> list[tuple[str, str | None]]:
    """`text` cut into (piece, href) pairs: href is None for plain text and for a reference that does not resolve."""
    if resolve is None:
        return [(text, None)] if text else []
    out: list[tuple[str, str | None]] = []
    last = 0
    for match in CHAPTER_REFERENCE.finditer(text):
        named = first_reference(match.group(0))
        href = resolve(*named) if named else None
        if href is None:
            continue
        if match.start() > last:
            out.append((text[last:match.start()], None))
        out.append((match.group(0), href))
        last = match.end()
    if last < len(text):
        out.append((text[last:], None))
    return out


def to_html(text: str, resolve: Resolver | None) -> str:
    """`text` escaped for HTML, its resolvable chapter references as links."""
    return "".join(f'<a class="book-ref" href="{html.escape(href)}">{html.escape(piece)}</a>' if href
                   else html.escape(piece) for piece, href in pieces(text, resolve))


def to_markdown(text: str, resolve: Resolver | None, literal: Callable[[str, bool], str]) -> str:
    """`text` as Markdown: each plain piece through `literal(piece, at_line_start)` (which makes untrusted
    text inert), each resolvable reference a link."""
    out = []
    for index, (piece, href) in enumerate(pieces(" ".join(text.split()), resolve)):
        # `literal` may trim a piece; the spaces between a reference and its neighbours stay
        lead, trail = (" " if piece[:1] == " " else ""), (" " if piece[-1:] == " " else "")
        shown = literal(piece.strip(), index == 0 and not lead)
        out.append(lead + (f"[{shown}](<{href.replace('>', '%3E')}>)" if href else shown) + trail)
    return "".join(out)


# ---------------------------------------------------------------- where the chapters are
# The repository this package runs from (as labbook.notebooks.ROOT); in an installed release it has no course/.
REPOSITORY = Path(os.environ.get("LABBOOK_ROOT") or Path(__file__).resolve().parents[2]).resolve()


@lru_cache(maxsize=32)
def chapters(course_lang_dir: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """{"03": ("03_worked_example", {"4": anchor, ...})} for the chapter notebooks in course/<lang>/."""
    found = {}
    for path in sorted(course_lang_dir.glob("[0-9][0-9]_*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        markdown = ["".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
                    for c in cells if isinstance(c, dict) and c.get("cell_type") == "markdown"]
        found[path.name[:2]] = (path.stem, section_anchors(markdown))
    return found


def resolver(course_lang_dir: Path, href_of: Callable[[str, str | None], str]) -> Resolver | None:
    """A resolver over the chapters in `course_lang_dir`; `href_of(stem, anchor)` writes the link.
    None when the folder holds no chapters, so that references stay plain text."""
    found = chapters(course_lang_dir.resolve()) if course_lang_dir.is_dir() else {}
    if not found:
        return None

    def resolve(number: str, section: str | None) -> str | None:
        if number not in found:
            return None
        stem, sections = found[number]
        return href_of(stem, sections.get(section) if section else None)

    return resolve


def notebook_resolver(lang: str, roots: Iterable[Path], here: Path | None = None) -> Resolver | None:
    """Links from a lab notebook running in `here` (the kernel's folder, labs/<lang>/) to the chapter
    notebooks under the first of `roots` that has course/<lang>/."""
    here = (here or Path.cwd()).resolve()
    for root in roots:
        folder = root / "course" / lang
        if folder.is_dir():
            relative = Path(os.path.relpath(folder.resolve(), here)).as_posix()
            # JupyterLab compares the fragment as written with a heading's data-jupyter-id: no %-quoting
            return resolver(folder, lambda stem, fragment: f"{relative}/{stem}.ipynb"
                            + (f"#{fragment}" if fragment else ""))
    return None


def site_resolver(lang: str, book_url: str | None, root: Path = REPOSITORY) -> Resolver | None:
    """Links to the HTML edition published at `book_url` (its pages: course/<lang>/NN_name.html); None without one."""
    if not book_url:
        return None
    base = book_url.rstrip("/")
    return resolver(root / "course" / lang, lambda stem, fragment: f"{base}/course/{quote(lang)}/{stem}.html"
                    + (f"#{quote(fragment)}" if fragment else ""))
