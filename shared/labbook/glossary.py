"""Each language's glossary is a contract: `python -m labbook.glossary [LANG...]` lists every avoided term in use.

`course/<lang>/glossary.md` holds a section `## Contract` with one table:

    | concept | use | avoid | elsewhere |
    |---|---|---|---|
    | query | query (f.) | consulta, pregunta | consulta (libros en español) |

A glossary may name that section and the four columns in its own language instead: a heading
that ends in `<!-- contract -->` (`## Términos <!-- contract -->`), whose table has the same four
columns in the same order.

`use` is the one term the book uses for the concept in that language; `avoid`
lists, comma-separated, terms that must not appear in that language's prose
(chapter and lab sources), printed texts (the labbook catalogue, and what the
built chapters and solutions print: stdout, text, markdown and HTML outputs) or
messages (the autograder catalogue); `elsewhere` names what a student meets in
other books, for information. Matching is whole-word and case-insensitive, and
takes each avoided word in its inflected forms (`forms`): "Labels" avoids
"Label", "desfasada en uno" avoids "desfasadas en uno", "attend karti" avoids
"attend karna" (never into a form of the term to use); the words of a phrase
may be split by a line break, and in a German phrase of three or more words one
more word may stand between two of them ("auf die skalierten Scores addiert").
A quoted term that the `elsewhere` column names is a mention, not a use. Code (fenced blocks, `inline code`),
link targets and the glossary itself are not scanned.
"""
from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from autograder import i18n
from labbook import catalogs
from labbook.notebooks import read_built

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
    found: str = ""  # the form found, when it is not the term as listed ("Label" for "Labels")

    def __str__(self) -> str:
        form = f" (as '{' '.join(self.found.split())}')" if self.found and self.found != self.term else ""
        return f"{self.where}: '{self.term}'{form} is avoided for {self.concept}; this book says '{self.use}'"


def contract(lang: str, root: Path = ROOT) -> list[Term]:
    """The rows of the glossary's `## Contract` table (ValueError if it has none)."""
    path = root / "course" / lang / "glossary.md"
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^## (Contract|[^\n]*<!-- contract -->)[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not match:
        raise ValueError(f"{path.relative_to(root)} has no '## Contract' section")
    rows = [line for line in match.group(2).splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in rows]
    english_heading = match.group(1) == "Contract"
    if not cells or len(cells[0]) != len(HEADER) or (english_heading and [c.lower() for c in cells[0]] != HEADER):
        raise ValueError(f"{path.relative_to(root)}: the contract table's header must be | {' | '.join(HEADER)} |")
    terms = []
    for row in cells[2:]:
        if len(row) != len(HEADER):
            raise ValueError(f"{path.relative_to(root)}: contract row {row} has {len(row)} cells, not 4")
        avoid = tuple(term.strip() for term in row[2].split(",") if term.strip() and term.strip() != "—")
        terms.append(Term(row[0], row[1], avoid, row[3]))
    return terms


# A link to another language's notebook (chapter 00's table of the four editions) shows that language's title.
OTHER_EDITION = {lang: re.compile(r"\[[^\[\]]*\]\([^)]*/(?:" + "|".join(re.escape(o) for o in i18n.ALL_LANGS if o != lang)
                                  + r")/[^)]*\)") for lang in i18n.ALL_LANGS}
PLACEHOLDER = re.compile(r"\{[^{}\s]*\}")  # {target} in a message is a name the code fills in


def prose(text: str, lang: str | None = None) -> str:
    if lang is not None:
        text = OTHER_EDITION[lang].sub(" ", text)
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return text.replace("*", "")  # emphasis: "Scores *addiert*" reads "Scores addiert"


def texts(lang: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, text) of everything a reader of `lang` reads: prose of the sources, the catalogues, then
    what the built notebooks print."""
    found = []
    for part in ("course", "solutions"):
        for source in sorted((root / "sources" / part / lang).glob("*.md")):
            found.append((source.relative_to(root).as_posix(), prose(source.read_text(encoding="utf-8"), lang)))
    for domain in catalogs.DOMAIN_DIRS:
        catalog = catalogs.read_catalog(catalogs.po_path(domain, lang))
        for message in catalog or []:
            if message.id and message.string:
                found += [(f"{domain}.po {catalogs.key_of(message)}", prose(PLACEHOLDER.sub(" ", string)))
                          for string in catalogs.strings_of(message) if string]
    return found + outputs(lang, root)


def outputs(lang: str, root: Path = ROOT) -> list[tuple[str, str]]:
    """(where, text) of what each code cell of the built chapters and solutions of `lang` shows: stdout,
    text/plain, text/markdown, and the text of text/html (with its alt, title and aria-label attributes).

    Code cells are the same in every language, so a line the English notebook prints in the same cell is
    the code's or a library's (a printed name such as `labels:`, a PyTorch error, a docstring), not the
    language's: only the other lines are read. Not stderr or tracebacks: Python's and the libraries' English.
    """
    found = []
    for part in ("course", "solutions"):
        for path in sorted((root / part / lang).glob("*.ipynb")):
            english = root / part / "en" / path.name
            english_cells = _printed_lines(english) if lang != "en" and english.exists() else []
            for index, (cell_id, lines) in enumerate(_printed_lines(path)):
                if index < len(english_cells):
                    common = set(english_cells[index][1])
                    lines = [line for line in lines if line not in common]
                text = prose("\n".join(lines))
                if text.strip():
                    found.append((f"{path.relative_to(root).as_posix()} cell {cell_id}", text))
    return found


@functools.lru_cache(maxsize=None)
def _printed_lines(path: Path) -> list[tuple[str, list[str]]]:
    """(cell id, the lines it shows) for each code cell of a built notebook, in order."""
    cells = []
    for index, cell in enumerate(read_built(path).cells):
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", "") if output.get("name") == "stdout" else "")
                continue
            data = output.get("data", {})
            parts += [data.get("text/plain", ""), data.get("text/markdown", ""), html_text(data.get("text/html", ""))]
        lines = [line.strip() for part in parts for line in ("".join(part) if isinstance(part, list) else part).splitlines()]
        cells.append((cell.get("id", str(index)), [line for line in lines if line]))
    return cells


class _HTMLText(HTMLParser):
    READ_ATTRIBUTES = ("alt", "title", "aria-label", "placeholder")
    SKIPPED = ("script", "style")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping += 1
        self.parts += [value for name, value in attrs if name in self.READ_ATTRIBUTES and value]

    def handle_endtag(self, tag):
        if tag in self.SKIPPED and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def html_text(markup: str | list) -> str:
    """What a reader reads of an HTML output: its text and its alt, title and aria-label attributes
    (not scripts, styles, or data held for scripts: the explorer's texts are catalogue messages)."""
    markup = "".join(markup) if isinstance(markup, list) else markup
    if not markup:
        return ""
    parser = _HTMLText()
    parser.feed(markup)
    parser.close()
    return "\n".join(parser.parts)


# Inflected forms of an avoided word (of three letters or more), per language: the endings it may take,
# after one of them is taken off ("Labels" -> "Label" -> Label, Labels, Labeln, ...).
ENDINGS = {
    "en": ("s", "es"),
    "es": ("s", "es"),
    "de": ("e", "en", "n", "s", "es", "er", "em", "ern"),
    "hi-Latn": ("s", "es", "on", "ein", "yan", "iyan", "iyaan", "iyon"),
}
# Hinglish participles agree with their subject in gender and number (failta, failti, failte; lautaaya,
# lautaaye). Not nouns' or adjectives' gender, nor Spanish gender: a contract may avoid exactly one gender
# ("los componentes": componente is feminine here).
PARTICIPLES = {"hi-Latn": (("ta", "ti", "te"), ("ya", "yi", "ye"))}
# Hinglish builds verbs with "karna": any of its forms stands for the others ("attend karti" = "attend kiya").
KARNA = ("karna", "karta", "karti", "karte", "karo", "karoge", "karein", "kariye", "kiya", "kiye", "kii",
         "karke", "karega", "karegi", "karenge", "kar")


def word_forms(word: str, lang: str, stems: bool = True, keep: tuple[str, ...] = ()) -> set[str]:
    """`word` and its inflected forms in `lang` (lower case); without `stems`, only `word` with an ending
    added (the forms of a term to use: "documentos" must not become "documento"). A stem inside a word of
    `keep` (the terms to use) is not taken: "galtiyan" avoided for "galtiyaan" must not avoid "galti"."""
    word = word.lower()
    if lang == "hi-Latn" and word in KARNA:
        return set(KARNA)
    if len(word) < 3:
        return {word}
    endings = ENDINGS.get(lang, ())
    bases = {word} | ({word[:-len(e)] for e in endings if word.endswith(e) and len(word) - len(e) >= 4
                       and not any(word[:-len(e)] in kept for kept in keep)} if stems else set())
    forms = {base + ending for base in bases for ending in ("",) + endings}
    for group in PARTICIPLES.get(lang, ()):
        ending = next((e for e in group if word.endswith(e)), None)
        if ending and len(word) >= 5:
            forms |= {word[:-len(ending)] + other for other in group}
    return forms


@functools.lru_cache(maxsize=None)
def pattern(avoided: str, lang: str, stems: bool = True, keep: tuple[str, ...] = ()) -> re.Pattern:
    """The avoided term in its inflected forms, whole words, split by any white space (a line break)."""
    words = avoided.split()
    alternatives = ["(?:" + "|".join(re.escape(f) for f in sorted(word_forms(w, lang, stems, keep), key=len,
                                                                  reverse=True)) + ")" for w in words]
    # German puts adjectives between article and noun ("auf die skalierten Scores addiert"): in a German
    # phrase of three words or more, one more word may stand between two of them
    gap = r"\s+(?:[^\W\d_][\w-]*\s+)?" if lang == "de" and len(words) >= 3 else r"\s+"
    # `Q.shape[-2]` written in a message is code: a word after a dot or before ( or [ is a name
    return re.compile(r"(?<![\w.-])" + gap.join(alternatives) + r"(?![\w(\[-])", re.I)


# Quoted text, within a paragraph: "…", “…”, «…», „…“
QUOTED = re.compile(r'"[^"\n]*(?:\n[^"\n]*)?"|“[^”]*”|«[^»]*»|„[^“]*“')


def elsewhere_terms(term: Term) -> list[str]:
    """The terms of the `elsewhere` column, without their parenthesised notes."""
    plain = re.sub(r"\([^()]*\)", " ", term.elsewhere)
    return [name.strip() for name in plain.split(",") if name.strip() and name.strip() != "—"]


def is_mention(text: str, match: re.Match, term: Term, lang: str) -> bool:
    """A quoted form of a term the `elsewhere` column names: the book introducing what other books say
    ("'padhna' ka matlab wahi hai jo papers mein "attend karna" hai"), not using it."""
    if not any(q.start() <= match.start() and match.end() <= q.end() for q in QUOTED.finditer(text)):
        return False
    return any(pattern(name, lang).fullmatch(match.group(0)) for name in elsewhere_terms(term))


ARTICLE = re.compile(r"^(?:der|die|das|den|dem|des|ein|eine|el|la|los|las|un|una|the|a|an)\s+", re.I)


def use_terms(term: Term) -> list[str]:
    """The terms of the `use` column, without their parenthesised notes, quoted examples and articles."""
    plain = re.sub(r"\([^()]*\)|\"[^\"]*\"", " ", term.use)
    return [ARTICLE.sub("", name.strip()) for name in re.split(r"[,;]", plain) if name.strip()]


def kept_words(term: Term) -> tuple[str, ...]:
    return tuple(sorted({word.lower() for name in use_terms(term) for word in name.split()}))


def is_use(match: re.Match, term: Term, lang: str) -> bool:
    """A form of an avoided term that is also a form of the term to use: "máscara de documento" avoided for
    "máscara de documentos" must not make its plural, the right term, a violation."""
    return any(pattern(name, lang, stems=False).fullmatch(match.group(0)) for name in use_terms(term))


def violations(terms: list[Term], found: list[tuple[str, str]], lang: str = "en") -> list[Violation]:
    result = []
    for term in terms:
        for where, text in found:
            seen = set()  # "Forward" is a form of both "Forward" and "Forwards": one finding
            for avoided in term.avoid:
                used = [m for m in pattern(avoided, lang, keep=kept_words(term)).finditer(text) if m.span() not in seen
                        and not is_mention(text, m, term, lang) and not is_use(m, term, lang)]
                if used:
                    result.append(Violation(where, avoided, term.concept, term.use, used[0].group(0)))
                seen.update(m.span() for m in used)
    return result


def main(argv: list[str]) -> int:
    problems = []
    for lang in argv or i18n.LANGS:
        problems += violations(contract(lang), texts(lang), lang)
    print("\n".join(map(str, problems)) or "no avoided term in use")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
