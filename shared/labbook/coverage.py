"""Each language's chapter and lab text covers the English one: `python -m labbook.coverage [NAME ...]`.

A translation, or a later trim, can drop a sentence without anyone noticing: the
code cells stay identical (tests/test_parity.py) and the prose still reads well.
What a dropped sentence takes with it is usually checkable: a number, a link, a
code span, a formula. So every text source (`sources/{course,solutions}/<lang>/`)
is cut into its sections (the headings: level and number, "## 3 · ..."), and in
each section these must be the same multiset as in English:

- numbers in the prose, as values: 0,67 in Spanish and German is 0.67, 1.938 or
  1 938 is 1938, 1,938 in English is 1938; "−16" is 16 (the sign is prose);
- link targets, the language folder read as any language (`labs/de/` = `labs/en/`);
- inline code spans (`` `is_causal=True` ``, and `<code>` in HTML);
- formulas (`$...$`, `$$...$$`), with `{,}` read as a decimal point and spaces ignored;
- code blocks inside markdown (```` ```bash ````), their comments left out (they are prose);
- how many list items and table rows it has (a translation may have more, never fewer).

And a section must not be much shorter than the language usually writes against English
(`short_sections`): that catches a trim of sentences holding none of the above.

A difference that is right (a language's own example) is listed in
`shared/labbook/coverage_exceptions.toml`, each with its reason; an exception that no
longer matches a difference is itself reported, so the list cannot rot.
"""
from __future__ import annotations

import html
import re
import statistics
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import i18n
from labbook.notebooks import ROOT, Target, output_text, read_built, read_source, targets

EXCEPTIONS_FILE = Path(__file__).with_name("coverage_exceptions.toml")
KINDS = ("number", "link", "code", "math", "code block", "list item", "table row")  # and "length" of a section
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+\.)[ \t]+\S", re.M)
TABLE_ROW = re.compile(r"^[ \t]*\|", re.M)

COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^(`{3,})([\w-]*)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
INLINE_CODE = re.compile(r"(`+)(.+?)\1|<code>(.*?)</code>", re.S)
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<![\s\\])\$(?!\d)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
TAG = re.compile(r"</?[A-Za-z][^>]*>")
LANG_FOLDER = re.compile(r"(?<=/)(?:" + "|".join(re.escape(code) for code in i18n.ALL_LANGS) + r")(?=/)")
MATH_NUMBER = re.compile(r"\d+(?:\.\d+)?")
PLACEHOLDER = re.compile(r"<[^<>\s/]+>")  # `labs/<language>/` is `labs/<idioma>/`
# Section numbers ("## 3 · Title", "# 05 · Title") are the structure, not a number of the prose.
SECTION_NUMBER = re.compile(r"^\s*(\d+|[A-Z])\s*·\s*")
# One number: digits, optional groups and one decimal part; read by `value` in the language's convention.
NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,\u00a0\u202f\u2009 ]\d+)*(?!\w)")


@dataclass
class Section:
    """One heading and the checkable content of the text under it (to the next heading)."""
    level: int
    number: str  # "3" for "## 3 · Title", "" for an unnumbered heading; the text before the first heading is level 0
    title: str
    content: dict[str, Counter] = field(default_factory=lambda: {kind: Counter() for kind in KINDS})
    words: int = 0  # of prose, formulas and code spans included, code blocks not

    @property
    def key(self) -> tuple[int, str]:
        return self.level, self.number


@dataclass(frozen=True)
class Difference:
    name: str  # e.g. "course/05_padding"
    lang: str
    section: str  # the English heading
    kind: str
    item: str
    english: int  # how often English has it in that section
    translated: int

    def __str__(self) -> str:
        if self.kind == "length":
            return (f"{self.lang} {self.name} [{self.section}]: {self.translated} words of prose against "
                    f"English's {self.english}, far below the language's usual length: a trim?")
        return (f"{self.lang} {self.name} [{self.section}]: {self.kind} {self.item!r} missing "
                f"(en {self.english}, {self.lang} {self.translated})")


SPACE = "\u00a0\u202f\u2009 "  # no-break, narrow no-break, thin and plain space
SPACE_GROUPS = re.compile(rf"\d{{1,3}}(?:[{SPACE}]\d{{3}})+(?:[.,]\d+)?")  # 12 345 or 1 234,5


def value(number: str, lang: str) -> str:
    """A written number as a canonical decimal string: no group separators, '.' before the decimals.

    English and Hinglish group with ',' and write decimals with '.'; Spanish and German group with
    '.' or a (thin, no-break) space and write decimals with ','. A dot followed by other than exactly
    three digits, or several dots, is a version or an English-style decimal and stays as written.
    """
    compact = re.sub(f"[{SPACE}]", "", number)
    if i18n.decimal_comma(lang):
        if re.fullmatch(r"\d{1,3}(?:\.\d{3})+(?:,\d+)?", compact):
            compact = compact.replace(".", "")
        if re.fullmatch(r"\d+,\d+", compact):
            compact = compact.replace(",", ".")
    elif re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", compact):
        compact = compact.replace(",", "")
    return compact


def numbers(prose: str, lang: str) -> list[str]:
    """The numbers of a text, as values (`value`), in order."""
    found = []
    for match in NUMBER.finditer(prose):
        written = match.group(0)
        if re.search(f"[{SPACE}]", written) and not SPACE_GROUPS.fullmatch(written):
            # "1 200" is one number only as groups of three; "filas 3 4" are two
            found += [value(part, lang) for part in re.split(f"[{SPACE}]+", written) if part]
        else:
            found.append(value(written, lang))
    return found


def _math(formula: str) -> str:
    """A formula without spaces; {,} is a decimal point, ';' (where a decimal comma forbids ',') a ','
    and \\text{...} holds words of the language."""
    formula = re.sub(r"\\text\{[^{}]*\}", r"\\text{}", formula.replace("{,}", "."))
    formula = re.sub(r";(?:\\[ ,;]|\s)*", ",", formula)
    return re.sub(r"\s+|\\[,;!]", "", formula)


def _code_span(span: str) -> str:
    """A code span with its language folder and its <placeholder> words read as any."""
    return PLACEHOLDER.sub("<…>", LANG_FOLDER.sub("<lang>", span.strip()))


def _code_block(code: str) -> str:
    """A code block without its comments (prose, translated) and trailing spaces."""
    lines = [re.sub(r"\s+#(?![!{\[]).*$", "", line).rstrip() for line in code.splitlines()]
    return "\n".join(line for line in lines if line and not line.lstrip().startswith("#"))


def scan(markdown: str, lang: str, section: Section) -> None:
    """Add the checkable content of one piece of markdown (no headings in it) to `section`."""
    content = section.content
    text = COMMENT.sub(" ", markdown)

    def fenced(match: re.Match) -> str:
        if match.group(2) == "mermaid":  # a diagram's labels are prose
            return " " + match.group(3) + " "
        content["code block"][_code_block(match.group(3))] += 1
        return " "

    text = FENCE.sub(fenced, text)
    section.words += len(text.split())
    # a dropped bullet or table row holds no number as often as not: count them
    for kind, item, found in (("list item", "items", LIST_ITEM.findall(text)), ("table row", "rows", TABLE_ROW.findall(text))):
        if found:
            content[kind][item] += len(found)

    def code(match: re.Match) -> str:
        span = match.group(2) if match.group(2) is not None else html.unescape(match.group(3))
        content["code"][_code_span(span)] += 1
        return " "

    text = INLINE_CODE.sub(code, text)

    def link(match: re.Match) -> str:
        content["link"][LANG_FOLDER.sub("<lang>", match.group(1))] += 1
        return " " + match.group(0)[match.group(0).index("[") + 1:match.group(0).rindex("](")] + " "

    text = LINK.sub(link, text)
    text = AUTOLINK.sub(lambda m: content["link"].update([m.group(1)]) or " ", text)

    def math(match: re.Match) -> str:
        formula = _math(match.group(1))
        content["math"][formula] += 1
        # its numbers count with the prose's: "0.1636 + 0.1636" says the same in a formula or in words
        content["number"].update(MATH_NUMBER.findall(re.sub(r"[_^]\{?\w", " ", formula)))
        return " "

    text = DISPLAY_MATH.sub(math, text)
    text = INLINE_MATH.sub(math, text)
    text = html.unescape(TAG.sub(" ", text))
    content["number"].update(numbers(text, lang))


def sections(markdown_cells: list[str], lang: str) -> list[Section]:
    """The sections of a source's markdown cells, in order; the text before the first heading is its own."""
    found = [Section(0, "", "(before the title)")]
    for cell in markdown_cells:
        # headings inside a fenced block are code: split on headings outside fences only
        fences = [m.span() for m in FENCE.finditer(cell)]
        position = 0
        for match in HEADING.finditer(cell):
            if any(start <= match.start() < end for start, end in fences):
                continue
            scan(cell[position:match.start()], lang, found[-1])
            title = match.group(2)
            number = SECTION_NUMBER.match(title)
            found.append(Section(len(match.group(1)), number.group(1) if number else "", title))
            scan(title[number.end():] if number else title, lang, found[-1])
            position = match.end()
        scan(cell[position:], lang, found[-1])
    return found


def source_sections(target: Target) -> list[Section]:
    notebook = read_source(target)
    return sections([cell.source for cell in notebook.cells if cell.cell_type == "markdown"], target.lang)


OUTPUT_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def printed(target: Target) -> list[list[str]]:
    """The numbers each code cell of the built notebook printed, cell by cell ([] without a built notebook)."""
    if not target.built.exists():
        return []
    found = []
    for cell in read_built(target.built).cells:
        if cell.cell_type == "code":
            found.append(OUTPUT_NUMBER.findall(output_text(cell.get("outputs", []))))
    return found


def printed_at(number: str, outputs: list[list[str]]) -> set[tuple[int, int]]:
    """Where (code cell, n-th number of its output) the notebook printed `number` at its written precision.

    Code cells are the same in every language, so the same place holds "the same number" even where the
    language changes it: chapter 01 trains its models on each language's own text.
    """
    if "." not in number:
        return {(cell, n) for cell, found in enumerate(outputs) for n, x in enumerate(found) if x == number}
    decimals = len(number.split(".")[1])
    return {(cell, n) for cell, found in enumerate(outputs) for n, x in enumerate(found)
            if abs(round(float(x), decimals) - float(number)) < 1e-9}


def compare(name: str, lang: str, english: list[Section], translated: list[Section],
            outputs: tuple[list[list[str]], list[list[str]]] = ([], [])) -> list[Difference | str]:
    """What the translation lacks against English, section by section (a str for a different outline).

    A number is there if the translation writes it, or writes another one printed at the same place of the
    outputs (`printed_at`) that no other number of the section accounts for."""
    structure = [s.key for s in english], [s.key for s in translated]
    if structure[0] != structure[1]:
        # another outline (the structure tests name it too): compare the whole texts, so content still counts
        problems: list[Difference | str] = [
            f"{lang} {name}: sections differ from English: en {_outline(english)}, {lang} {_outline(translated)}"]
        english, translated = [_whole(english)], [_whole(translated)]
    else:
        problems = []
    for mine, theirs in zip(english, translated):
        for kind in KINDS:
            wanted, have = mine.content[kind], theirs.content[kind]
            missing = {item: wanted[item] - have[item] for item in wanted if wanted[item] > have[item]}
            if kind == "number" and missing:
                spare = Counter({item: have[item] - wanted[item] for item in have if have[item] > wanted[item]})
                for item in sorted(missing):
                    places = printed_at(item, outputs[0])
                    for other in sorted(spare):
                        while missing[item] and spare[other] and places & printed_at(other, outputs[1]):
                            missing[item] -= 1
                            spare[other] -= 1
            if kind == "code" and missing:
                # `is_causal` is there in `is_causal=True`: a span may say more than the English one
                spare = Counter({item: have[item] - wanted[item] for item in have if have[item] > wanted[item]})
                for item in sorted(missing):
                    for other in sorted(spare):
                        while missing[item] and spare[other] and item in other:
                            missing[item] -= 1
                            spare[other] -= 1
            for item, count in sorted(missing.items()):
                if count:
                    problems.append(Difference(name, lang, mine.title, kind, item, wanted[item], wanted[item] - count))
    return problems


def _outline(found: list[Section]) -> str:
    return " ".join("#" * s.level + (s.number or "-") for s in found[1:])


def _whole(found: list[Section]) -> Section:
    whole = Section(0, "", "(whole text)")
    for section in found:
        for kind in KINDS:
            whole.content[kind].update(section.content[kind])
    return whole


@dataclass(frozen=True)
class Allowed:
    """A reviewed difference: the translation says the same thing another way (coverage_exceptions.toml)."""
    lang: str
    name: str
    kind: str
    item: str
    reason: str
    section: str = ""  # the English heading; empty: any section

    def covers(self, difference: Difference) -> bool:
        return (difference.lang, difference.name, difference.kind, difference.item) == (
            self.lang, self.name, self.kind, self.item) and self.section in ("", difference.section)


def exceptions(path: Path = EXCEPTIONS_FILE) -> list[Allowed]:
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get("exception", []) if path.exists() else []
    found = []
    for entry in entries:
        if not str(entry.get("reason", "")).strip():
            raise ValueError(f"{path.name}: an exception without a reason: {entry}")
        found.append(Allowed(entry["lang"], entry["name"], entry["kind"], str(entry["item"]), entry["reason"],
                                entry.get("section", "")))
    return found


def differences(names: list[str] | None = None, root: Path = ROOT) -> list[Difference | str]:
    """Every difference of every complete language against English, before exceptions."""
    by_name: dict[str, dict[str, Target]] = {}
    for target in targets(root):
        by_name.setdefault(f"{target.part}/{target.name}", {})[target.lang] = target
    found: list[Difference | str] = []
    lengths: list[tuple[str, str, Section, Section]] = []
    for name, versions in sorted(by_name.items()):
        if "en" not in versions:
            continue
        english = source_sections(versions["en"])
        for lang, target in versions.items():
            if lang == "en":
                continue
            translated = source_sections(target)
            if [s.key for s in english] == [s.key for s in translated]:
                lengths += [(name, lang, mine, theirs) for mine, theirs in zip(english, translated)]
            if not names or any(n in name for n in names):
                found += compare(name, lang, english, translated, (printed(versions["en"]), printed(target)))
    return found + short_sections(lengths, names)


LENGTH_FLOOR = 0.85  # of the language's usual length against English, section by section
LENGTH_FROM = 40  # English words: shorter sections vary too much to say


def short_sections(pairs: list[tuple[str, str, Section, Section]], names: list[str] | None = None) -> list[Difference]:
    """Sections much shorter than the language usually writes against English: a trim that took sentences
    without numbers, links, code or formulas. Each language has its own usual length (the median ratio of
    its sections of 40 English words or more, over the whole book: Spanish and Hinglish run about 10 %
    longer than English, German about as long); a section below 0.85 of it is reported."""
    ratios: dict[str, list[float]] = {}
    for _, lang, mine, theirs in pairs:
        if mine.words >= LENGTH_FROM:
            ratios.setdefault(lang, []).append(theirs.words / mine.words)
    usual = {lang: statistics.median(found) for lang, found in ratios.items()}
    return [Difference(name, lang, mine.title, "length", "prose words", mine.words, theirs.words)
            for name, lang, mine, theirs in pairs
            if (not names or any(n in name for n in names)) and mine.words >= LENGTH_FROM
            and theirs.words < LENGTH_FLOOR * usual[lang] * mine.words]


def unexcused(found: list[Difference | str], allowed: list[Allowed]) -> tuple[list[Difference | str], list[Allowed]]:
    """(differences no exception covers, exceptions that cover no difference)."""
    left = [d for d in found if isinstance(d, str) or not any(e.covers(d) for e in allowed)]
    unused = [e for e in allowed if not any(isinstance(d, Difference) and e.covers(d) for d in found)]
    return left, unused


def main(argv: list[str]) -> int:
    allowed = [entry for entry in exceptions() if not argv or any(n in entry.name for n in argv)]
    left, unused = unexcused(differences(argv or None), allowed)
    for problem in left:
        print(problem)
    for entry in unused:
        print(f"unused exception: {entry}")
    if not left and not unused:
        print("every language covers the English text")
    return 1 if left or unused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
