"""Each language's chapters and labs cover the English text: sections, numbers, links, code spans, formulas."""
import re

import pytest

from autograder.i18n import LANGS
from labbook import coverage
from labbook.notebooks import read_source, targets

OTHERS = [lang for lang in LANGS if lang != "en"]


@pytest.fixture(scope="module")
def found():
    """Every difference of every language, computed once (sources and built notebooks read once)."""
    return coverage.differences()


NAMES = sorted({f"{t.part}/{t.name}" for t in targets()})


@pytest.mark.parametrize("lang", OTHERS)
@pytest.mark.parametrize("name", NAMES)
def test_every_language_covers_the_english_text(found, name, lang):
    mine = [d for d in found if (d.startswith(f"{lang} {name}:") if isinstance(d, str) else (d.lang, d.name) == (lang, name))]
    left, _ = coverage.unexcused(mine, coverage.exceptions())
    assert not left, "\n".join(map(str, left))


def test_every_exception_has_a_reason_and_still_matches_a_difference(found):
    entries = coverage.exceptions()
    assert all(entry.reason.strip() for entry in entries)
    _, unused = coverage.unexcused(found, entries)
    assert not unused, "these exceptions match no difference any more: remove them\n" + "\n".join(map(str, unused))


# ---------------------------------------------------------------- planted: what a dropped sentence leaves behind
def _markdown(name: str, lang: str) -> list[str]:
    target = next(t for t in targets() if t.name == name and t.lang == lang)
    return [cell.source for cell in read_source(target).cells if cell.cell_type == "markdown"]


def _compare(english: list[str], translated: list[str], lang: str = "de") -> list:
    return coverage.compare("course/x", lang, coverage.sections(english, "en"), coverage.sections(translated, lang))


def _drop(cells: list[str], sentence: str) -> list[str]:
    assert sum(cell.count(sentence) for cell in cells) == 1, f"not found once: {sentence!r}"
    return [cell.replace(sentence, "") for cell in cells]


def test_the_real_german_chapter_05_covers_english():
    assert _compare(_markdown("05_padding", "en"), _markdown("05_padding", "de")) == []


SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=:)\n")


def _sentences(cell: str) -> list[str]:
    """The prose sentences of a markdown cell: no headings, tables, lists of cards or code blocks."""
    if "```" in cell or "<details>" in cell:
        return []
    paragraphs = [p for p in cell.split("\n\n") if p.strip() and not re.match(r"\s*(#|\||>|<)", p)]
    return [s for p in paragraphs for s in SENTENCE_END.split(p) if s.strip()]


@pytest.mark.parametrize("lang", OTHERS)
def test_dropping_any_sentence_with_a_number_link_code_or_formula_is_caught(lang):
    """Planted: take out of the real chapter 05 each sentence that holds something checkable, one at a time."""
    english, translated = _markdown("05_padding", "en"), _markdown("05_padding", lang)
    assert _compare(english, translated, lang) == []
    planted = 0
    for index, cell in enumerate(translated):
        for sentence in _sentences(cell):
            alone = coverage.Section(0, "", "")
            coverage.scan(sentence, lang, alone)
            if not any(alone.content.values()) or cell.count(sentence) != 1:
                continue
            trimmed = translated[:index] + [cell.replace(sentence, "")] + translated[index + 1:]
            found = _compare(english, trimmed, lang)
            assert found, f"{lang}: dropping this sentence went unnoticed: {sentence!r}"
            assert all(d.item in alone.content[d.kind] for d in found), (sentence, found)
            planted += 1
    assert planted >= 20, f"only {planted} sentences planted"


@pytest.mark.parametrize("lang", OTHERS)
def test_a_trim_of_sentences_with_nothing_checkable_is_caught_by_length(lang):
    """Planted: out of one of chapter 05's sections, drop every sentence without a number, link, code or formula.

    The trim is planted per section, not per cell, because the length check is per section: a cell that spans
    a heading spreads its trim over two sections (chapter 05's cell ending §3 and opening §4 does), and once
    those sections grew, neither half fell below the floor though half the cell's prose was gone.
    """
    english, translated = _markdown("05_padding", "en"), _markdown("05_padding", lang)

    def pairs(cells):
        return [("course/05_padding", lang, mine, theirs)
                for mine, theirs in zip(coverage.sections(english, "en"), coverage.sections(cells, lang))]

    def without_plain_sentences(text):
        for sentence in _sentences(text):
            alone = coverage.Section(0, "", "")
            coverage.scan(sentence, lang, alone)
            if not any(alone.content.values()):
                text = text.replace(sentence, "")
        return text

    def trimmed_section(cells, chosen):
        """The cells with the plain sentences of section number `chosen` (0: before the first heading) dropped."""
        result, section = [], 0
        for cell in cells:
            pieces, start = [], 0
            for heading in coverage.HEADING.finditer(cell):  # chapter 05's markdown has no heading inside a fence
                pieces.append((section, cell[start:heading.start()]))
                section, start = section + 1, heading.start()
            pieces.append((section, cell[start:]))
            result.append("".join(without_plain_sentences(text) if at == chosen else text for at, text in pieces))
        return result

    assert coverage.short_sections(pairs(translated)) == []
    count = len(coverage.sections(translated, lang))
    most = max(range(count), key=lambda i: sum(map(len, map(str.split, translated)))
               - sum(map(len, map(str.split, trimmed_section(translated, i)))))
    trimmed = trimmed_section(translated, most)
    assert trimmed != translated
    assert _compare(english, trimmed, lang) == []  # nothing checkable went: only the length can tell
    assert [(d.kind, d.section) for d in coverage.short_sections(pairs(trimmed))] == [
        ("length", coverage.sections(english, "en")[most].title)]


def test_a_section_is_short_against_the_language_s_usual_length():
    def section(words):
        found = coverage.Section(2, "1", "1 · A")
        found.words = words
        return found

    usual = [("course/x", "es", section(100), section(110)) for _ in range(5)]  # Spanish runs 10 % longer
    assert coverage.short_sections(usual + [("course/y", "es", section(100), section(95))]) == []
    short = coverage.short_sections(usual + [("course/y", "es", section(100), section(90))])
    assert [(d.name, d.english, d.translated) for d in short] == [("course/y", 100, 90)]
    assert coverage.short_sections(usual + [("course/y", "es", section(39), section(10))]) == []


def test_a_dropped_link_code_span_formula_and_section_are_caught():
    english = ["# 05 · Padding\n\n## 1 · Masks\n\nSee [chapter 04](./04_implementing_masks.ipynb) and "
               "`key_valid`, shaped $(B, T)$, with 0.5 of the rows.\n\n## 2 · More\n\nText."]
    german = ["# 05 · Padding\n\n## 1 · Masken\n\nSiehe [Kapitel 04](./04_implementing_masks.ipynb) und "
              "`key_valid`, Form $(B, T)$, mit 0,5 der Zeilen.\n\n## 2 · Mehr\n\nText."]
    assert _compare(english, german) == []
    dropped = [german[0].replace("[Kapitel 04](./04_implementing_masks.ipynb) und ", "")]
    assert [(d.kind, d.item) for d in _compare(english, dropped)] == [
        ("number", "04"), ("link", "./04_implementing_masks.ipynb")]
    assert [d.item for d in _compare(english, [german[0].replace("`key_valid`, ", "")])] == ["key_valid"]
    assert [(d.kind, d.item) for d in _compare(english, [german[0].replace("Form $(B, T)$, ", "")])] == [
        ("math", "(B,T)")]
    merged = _compare(english, [german[0].replace("\n\n## 2 · Mehr\n\n", " ")])
    assert isinstance(merged[0], str) and "sections differ" in merged[0]


def test_a_dropped_bullet_or_table_row_is_caught():
    english = ["## 1 · Traps\n\n- left padding\n- packed documents\n\n| a | b |\n|---|---|\n| x | y |\n"]
    german = ["## 1 · Fallen\n\n- links aufgefüllt\n- gepackte Dokumente\n\n| a | b |\n|---|---|\n| x | y |\n"]
    assert _compare(english, german) == []
    assert [(d.kind, d.english, d.translated) for d in _compare(english, [german[0].replace("- gepackte Dokumente\n", "")])] \
        == [("list item", 2, 1)]
    assert [(d.kind, d.english, d.translated) for d in _compare(english, [german[0].replace("| x | y |\n", "")])] \
        == [("table row", 3, 2)]


def test_a_wrong_number_is_caught():
    english = ["For labs 01 to 05 it adds randomised cases."]
    assert [d.item for d in _compare(english, ["Für die Labs 01 bis 04 kommen zufällige Fälle hinzu."])] == ["05"]


def test_numbers_are_read_in_each_language_s_convention():
    assert coverage.numbers("0,67 und 1.938 und 12 345 und torch 2.5 und 5.24.0", "de") == [
        "0.67", "1938", "12345", "2.5", "5.24.0"]
    assert coverage.numbers("0.67 and 1,938 and torch 2.5", "en") == ["0.67", "1938", "2.5"]
    assert coverage.numbers("0.67 aur 1,938", "hi-Latn") == ["0.67", "1938"]
    assert coverage.numbers("filas 1 y 2, columnas 3 4", "es") == ["1", "2", "3", "4"]


def test_formulas_and_code_spans_are_compared_as_written_in_each_language():
    english = ["$(0.33, 0.84)$ and `course/es/...` and `labs/<language>/lab00.ipynb`, $\\text{(allowed)}$"]
    german = ["$(0{,}33;\\ 0{,}84)$ und `course/de/...` und `labs/<sprache>/lab00.ipynb`, $\\text{(erlaubt)}$"]
    assert _compare(english, german) == []


def test_a_number_printed_at_the_same_place_is_the_same_number():
    """Chapter 01 trains on each language's own text: 12.9 in English is 13.5 in German, printed by the same cell."""
    english, german = coverage.sections(["a loss 12.9 times lower"], "en"), coverage.sections(["13,5-mal kleiner"], "de")
    assert [d.item for d in coverage.compare("course/x", "de", english, german)] == ["12.9"]
    printed = ([["0.08", "12.9"]], [["0.08", "13.5"]])
    assert coverage.compare("course/x", "de", english, german, printed) == []
    elsewhere = ([["0.08", "12.9"]], [["13.5", "0.08"]])  # a different place: another number
    assert [d.item for d in coverage.compare("course/x", "de", english, german, elsewhere)] == ["12.9"]


def test_an_exception_needs_a_reason(tmp_path):
    path = tmp_path / "exceptions.toml"
    path.write_text('[[exception]]\nlang = "de"\nname = "course/x"\nkind = "number"\nitem = "2"\nreason = " "\n')
    with pytest.raises(ValueError, match="without a reason"):
        coverage.exceptions(path)


def test_an_exception_covers_only_its_difference():
    difference = coverage.Difference("course/x", "de", "1 · A", "number", "2", 1, 0)
    entry = coverage.Allowed("de", "course/x", "number", "2", "a reason", "1 · A")
    assert coverage.unexcused([difference], [entry]) == ([], [])
    other = coverage.Allowed("de", "course/x", "number", "3", "a reason")
    assert coverage.unexcused([difference], [other]) == ([difference], [other])
