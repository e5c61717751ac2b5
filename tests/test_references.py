"""References that resolve (labbook.references): the book passes, and breaking it is noticed.

The breaking tests work on a copy of the built tree, delete a chapter or rename
a heading, and check that the checker names what a plain grep of the copy (or
of the lab modules' source) finds pointing there: the expectations come from
the files, not from the checker.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder import i18n
from labbook import references

ROOT = Path(__file__).resolve().parents[1]
LAB_MODULES = sorted((ROOT / "shared" / "autograder" / "labs").glob("lab[0-9][0-9].py"))


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A copy of the built book (notebooks, glossaries, index) to break."""
    for part in ("course", "labs", "solutions"):
        shutil.copytree(ROOT / part, tmp_path / part)
    shutil.copy(ROOT / "index.ipynb", tmp_path / "index.ipynb")
    return tmp_path


def run(root: Path, capsys) -> tuple[int, list[str]]:
    code = references.main(["--root", str(root)])
    return code, capsys.readouterr().out.splitlines()


def markdown_sources(root: Path) -> dict[str, str]:
    """relative path -> all its markdown text (cells of a notebook, or the glossary), for the book's parts only."""
    found = {}
    paths = [path for part in ("course", "labs", "solutions") for path in sorted(root.glob(f"{part}/*/*.ipynb"))]
    for path in paths + sorted(root.glob("course/*/glossary.md")) + [root / "index.ipynb"]:
        if path.suffix == ".md":
            found[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
        else:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            found[path.relative_to(root).as_posix()] = "\n".join(
                "".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    return found


def attribute_values(pattern: str) -> set[str]:
    """Section strings ("08 §3") written in the lab modules' source."""
    return {value for module in LAB_MODULES
            for value in re.findall(rf'"({pattern})"', module.read_text(encoding="utf-8"))}


def rename_heading(path: Path, old_start: str, new_start: str) -> None:
    notebook = nbformat.read(path, as_version=4)
    cells = [cell for cell in notebook.cells if cell.cell_type == "markdown" and old_start in cell.source]
    assert len(cells) == 1, f"{path}: {len(cells)} cells with {old_start!r}"
    cells[0].source = cells[0].source.replace(old_start, new_start, 1)
    nbformat.write(notebook, path)


# ---------------------------------------------------------------- the real book
def test_every_reference_of_the_book_resolves_and_none_was_skipped(capsys):
    code, out = run(ROOT, capsys)
    assert code == 0, "\n".join(out)
    assert len(out) == 1 and out[0].endswith("all resolve"), out  # and no language left out
    counted = re.match(r"references: (\d+) links, (\d+) chapter and section references, "
                       r"(\d+) exercise section attributes", out[0])
    links, sections, attributes = map(int, counted.groups())
    prose = markdown_sources(ROOT).values()
    assert links == sum(len(re.findall(r"\]\([^)\s]+\)", text)) for text in prose)  # every "](...)" is followed
    assert sections >= sum(len(re.findall(r"§\s?\d|(?i:section|abschnitt|secci[oó]n)\w* \d", text)) for text in prose)
    assert attributes >= len(attribute_values(r"\d\d §\d+")) * len(i18n.LANGS)


def test_a_language_without_chapters_yet_is_named_and_not_checked(monkeypatch, capsys):
    monkeypatch.setattr(references, "LANGS", (*i18n.LANGS, "fr"))
    code, out = run(ROOT, capsys)
    assert code == 0, "\n".join(out)
    assert out[0].endswith("all resolve (not checked, no chapters: fr)")


def test_message_texts_are_the_catalogue_in_every_language():
    texts = {(where, lang): text for where, lang, text in references.message_texts()}
    for lang in i18n.LANGS:
        assert texts[("message common.see_section", lang)] == i18n.t("common.see_section", lang, section="{section}")


# ---------------------------------------------------------------- the grammar of a reference
@pytest.mark.parametrize("text, expected", [
    ("See chapter 03 §2.", [("chapter", "03", "2")]),
    ("siehe Kapitel 08 und 09", [("chapter", "08", None), ("chapter", "09", None)]),
    ("(Kap. 01 §1, §2, §5)", [("chapter", "01", "1"), ("chapter", "01", "2"), ("chapter", "01", "5")]),
    ("(caps. 08 §7, 09 §1)", [("chapter", "08", "7"), ("chapter", "09", "1")]),
    ("(cap. 08, §4 y tabla)", [("chapter", "08", "4")]),
    ("(ch08 §2 and summary table, ch09 §2)", [("chapter", "08", "2"), ("chapter", "09", "2")]),
    ("[Chapter 09](../../course/en/09_beyond_the_triangle.ipynb) §1 explains", [("chapter", "09", "1")]),
    ("«03 §3» es la sección", [("chapter", "03", "3")]),
    ("(§1 and chapter 08, §7)", [("chapter", "08", "7"), ("here", None, "1")]),
    ("(sections 1 and 2), Abschnitt 4. Ein Loss", [("here", None, "1"), ("here", None, "2"), ("here", None, "4")]),
    ("(secciones 1 y 2) in section 1 um 0,05", [("here", None, "1"), ("here", None, "2"), ("here", None, "1")]),
    ("Lab 03 §2 aur chapter 05", [("lab", "03", "2"), ("chapter", "05", None)]),
    ("a 32-bit float in chapter 10, 99 % of rows, lab01_masks.ipynb, `ch10.title`", [("chapter", "10", None)]),
])
def test_section_references_are_read_as_written(text, expected):
    found = [(r.kind, r.number, r.section) for r in references.section_references(text)]
    assert sorted(found, key=str) == sorted(expected, key=str)


# ---------------------------------------------------------------- breaking the book
def test_deleting_a_chapter_names_each_reference_to_it(book, capsys):
    for path in book.glob("course/*/08_common_mistakes.ipynb"):
        path.unlink()
    code, out = run(book, capsys)
    assert code == 1

    for source, text in markdown_sources(book).items():
        for url in re.findall(r"\]\(([^)]*08_common_mistakes\.ipynb[^)]*)\)", text):
            assert any(line.startswith(f"{source}: {url} → ") for line in out), (source, url)
        if re.search(r"(?i)\b(chapters?|kapitel|capítulos?|kap\.|caps?\.)\s*08\b|\bch08\b", text):
            assert any(line.startswith(f"{source}: “") and "(08" in line for line in out), source
    for value in attribute_values(r"08 §\d+"):
        for lang in i18n.LANGS:
            assert any(f"= '{value}' [{lang}] → no chapter course/{lang}/08_" in line for line in out), (value, lang)
    unrelated = [line for line in out if "08" not in line]
    assert unrelated == []


def test_renaming_a_chapter_file_names_the_links_but_not_the_chapter_references(book, capsys):
    for path in book.glob("course/*/06_multi_head.ipynb"):
        path.rename(path.with_name("06_heads.ipynb"))
    code, out = run(book, capsys)
    assert code == 1
    linking = [(source, url) for source, text in markdown_sources(book).items()
               for url in re.findall(r"\]\(([^)]*06_multi_head\.ipynb)\)", text)]
    assert linking
    for source, url in linking:
        assert any(line.startswith(f"{source}: {url} → no file ") for line in out), (source, url)
    assert all("06_multi_head.ipynb" in line for line in out), out


def test_renumbering_a_heading_names_the_section_references_in_that_language(book, capsys):
    rename_heading(book / "course" / "de" / "03_worked_example.ipynb", "## 3 · ", "## ")
    code, out = run(book, capsys)
    assert code == 1
    prose = [source for source, text in markdown_sources(book).items()
             if source.split("/")[1:2] == ["de"] and re.search(r"(Kapitel|Kap\.) 03 §3\b|[„«\"]03 §3", text)]
    assert prose
    for source in prose:
        assert any(line.startswith(f"{source}: “") and "(03 §3) [de]" in line for line in out), source
    for value in attribute_values(r"03 §3"):
        assert any(f"= '{value}' [de] → no heading \"## 3 · ...\" in course/de/03_worked_example.ipynb" in line
                   for line in out)
    assert all("[de] → " in line and line.endswith('"## 3 · ..." in course/de/03_worked_example.ipynb')
               for line in out), out


def test_an_anchor_link_resolves_by_jupyterlab_rule_and_dangles_when_the_heading_changes(book, capsys):
    chapter = book / "course" / "en" / "00_start_here.ipynb"
    notebook = nbformat.read(chapter, as_version=4)
    # JupyterLab's id of "## 3 · Adding the causal mask" is its text with spaces as "-"; browsers percent-encode it
    notebook.cells.append(nbformat.v4.new_markdown_cell(
        "[plain](./03_worked_example.ipynb#3-·-Adding-the-causal-mask) and "
        "[encoded](./03_worked_example.ipynb#3-%C2%B7-Adding-the-causal-mask) and "
        "[here](#0-·-What-you-need,-and-what-you-will-get)"))
    nbformat.write(notebook, chapter)
    code, out = run(book, capsys)
    assert code == 0, "\n".join(out)

    rename_heading(book / "course" / "en" / "03_worked_example.ipynb", "## 3 · Adding the causal mask",
                   "## 3 · Adding the mask")
    code, out = run(book, capsys)
    assert code == 1
    # both spellings of the one link, each named (as the reader sees it, unquoted)
    assert [line.split(" → ")[0] for line in out] == [
        "course/en/00_start_here.ipynb: ./03_worked_example.ipynb#3-·-Adding-the-causal-mask"] * 2


def test_a_message_pointing_nowhere_is_named(monkeypatch, capsys):
    real = references.message_texts

    def with_bad_ones():
        yield from real()
        yield "message test.missing_chapter", "en", "See chapter 42 §1."
        yield "message test.missing_section", "de", "(Siehe Kapitel 03 §9.)"

    monkeypatch.setattr(references, "message_texts", with_bad_ones)
    code, out = run(ROOT, capsys)
    assert code == 1
    assert len(out) == 2
    assert out[0].startswith("message test.missing_chapter: “chapter 42 §1”") and "course/en/42_" in out[0]
    assert out[1].startswith("message test.missing_section: “Kapitel 03 §9”")
    assert "course/de/03_worked_example" in out[1]


def test_links_of_a_built_html_edition_are_followed_to_pages_and_ids(tmp_path):
    site = tmp_path / "html"
    (site / "course" / "en").mkdir(parents=True)
    (site / "index.html").write_text(
        '<a href="course/en/a.html#kept">ok</a> <a href="course/en/a.html#gone">bad id</a> '
        '<a href="course/en/missing.html">no page</a> <a href="https://example.org/#x">outside</a>', encoding="utf-8")
    (site / "course" / "en" / "a.html").write_text('<h2 id="kept">Kept</h2><a href="../../index.html">home</a>',
                                                   encoding="utf-8")
    report = references.Report()
    references.check_html(site, report)
    named = sorted(f"{p.where}: {p.reference}" for p in report.problems)
    assert named == ["html/index.html: course/en/a.html#gone", "html/index.html: course/en/missing.html"]
    assert report.html_links == 5
