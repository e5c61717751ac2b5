"""Each language's glossary is a contract: `python -m labbook.glossary [LANG...]` lists every avoided term in use.

`course/<lang>/glossary.md` holds a section `## Contract` with one table:

    | concept | use | avoid | elsewhere |
    |---|---|---|---|
    | query | query (f.) | consulta, pregunta | consulta (libros en español) |

`use` is the one term the book uses for the concept in that language; `avoid`
lists, comma-separated, terms that must not appear in that language's prose
(chapter and lab sources), printed texts (the labbook catalogue) or messages
(the autograder catalogue); `elsewhere` names what a student meets in other
books, for information. Matching is whole-word and case-insensitive; code
(fenced blocks, `inline code`), link targets and the glossary itself are not scanned.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import i18n
from labbook import catalogs

ROOT = catalogs.ROOT
HEADER = ["concept", "use", "avoid", "elsewhere"]
NOT_PROSE = [re.compile(r"^(`{3,}).*?^\1", re.S | re.M), re.compile(r"`[^`\n]*`"), re.compile(r"\]\([^)]*\)"),
             re.compile(r"<!--.*?-->", re.S)]


@dataclass(frozen=True)
class Term:
    concept: str
    use: str
    avoid: tuple[str, ...]
    elsewhere: str


@dataclass(frozen=True)
class Violation:
    where: str
    term: str
    concept: str
    use: str

    def __str__(self) -> str:
        return f"{self.where}: '{self.term}' is avoided for {self.concept}; this book says '{self.use}'"


def contract(lang: str, root: Path = ROOT) -> list[Term]:
    """The rows of the glossary's `## Contract` table (ValueError if it has none)."""
    path = root / "course" / lang / "glossary.md"
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^## Contract\s*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not match:
        raise ValueError(f"{path.relative_to(root)} has no '## Contract' section")
    rows = [line for line in match.group(1).splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    if not cells or [c.lower() for c in cells[0]] != HEADER:
        raise ValueError(f"{path.relative_to(root)}: the contract table's header must be | {' | '.join(HEADER)} |")
    terms = []
    for row in cells[2:]:
        if len(row) != len(HEADER):
            raise ValueError(f"{path.relative_to(root)}: contract row {row} has {len(row)} cells, not 4")
        avoid = tuple(term.strip() for term in row[2].split(",") if term.strip() and term.strip() != "—")
        terms.append(Term(row[0], row[1], avoid, row[3]))
    return terms


def prose(text: str) -> str:
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


def texts(lang: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, text) of everything a reader of `lang` reads: prose of the sources, then the catalogues."""
    found = []
    for part in ("course", "solutions"):
        for source in sorted((root / "sources" / part / lang).glob("*.md")):
            found.append((source.relative_to(root).as_posix(), prose(source.read_text(encoding="utf-8"))))
    for domain in catalogs.DOMAIN_DIRS:
        catalog = catalogs.read_catalog(catalogs.po_path(domain, lang))
        for message in catalog or []:
            if message.id and message.string:
                found.append((f"{domain}.po {catalogs.key_of(message)}", prose("\n".join(catalogs.strings_of(message)))))
    return found


def violations(terms: list[Term], found: list[tuple[str, str]]) -> list[Violation]:
    result = []
    for term in terms:
        for avoided in term.avoid:
            pattern = re.compile(r"(?<![\w-])" + re.escape(avoided) + r"(?![\w-])", re.I)
            result += [Violation(where, avoided, term.concept, term.use) for where, text in found if pattern.search(text)]
    return result


def main(argv: list[str]) -> int:
    problems = []
    for lang in argv or i18n.LANGS:
        problems += violations(contract(lang), texts(lang))
    print("\n".join(map(str, problems)) or "no avoided term in use")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
