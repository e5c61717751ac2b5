"""Each language's glossary is a contract: one term per concept, and no avoided term in its prose, texts or messages."""
import pytest

from autograder import i18n
from labbook import glossary


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_the_glossary_has_a_contract(lang):
    terms = glossary.contract(lang)
    assert len(terms) >= 10, f"{lang}: the contract names only {len(terms)} concepts"
    assert all(term.use for term in terms), f"{lang}: a concept without the term this book uses"
    concepts = [term.concept.lower() for term in terms]
    assert len(concepts) == len(set(concepts)), f"{lang}: a concept is listed twice"


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_no_avoided_term_is_used(lang):
    found = glossary.violations(glossary.contract(lang), glossary.texts(lang))
    assert not found, "\n".join(map(str, found))


def test_the_glossary_sections_of_editorial_variants_are_gone():
    for lang in i18n.LANGS:
        text = (glossary.ROOT / "course" / lang / "glossary.md").read_text(encoding="utf-8")
        assert "Variants seen in the chapters" not in text, f"{lang}: resolve the variants in the chapters"


def _glossary(tmp_path, text):
    (tmp_path / "course" / "xx").mkdir(parents=True)
    (tmp_path / "course" / "xx" / "glossary.md").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_contract_may_be_named_in_its_own_language(tmp_path):
    table = "| concepto | usa | evita | en otros textos |\n|---|---|---|---|\n| key | key (f.) | clave | clave |\n"
    root = _glossary(tmp_path, "# Glosario\n\n## Términos del libro <!-- contract -->\n\n" + table)
    assert glossary.contract("xx", root) == [glossary.Term("key", "key (f.)", ("clave",), "clave")]


def test_a_translated_heading_without_the_marker_is_no_contract(tmp_path):
    table = "| concepto | usa | evita | en otros textos |\n|---|---|---|---|\n| key | key (f.) | clave | clave |\n"
    with pytest.raises(ValueError, match="no '## Contract' section"):
        glossary.contract("xx", _glossary(tmp_path, "## Términos del libro\n\n" + table))


def test_the_english_heading_still_needs_the_english_columns(tmp_path):
    table = "| concepto | usa | evita | en otros textos |\n|---|---|---|---|\n| key | key (f.) | clave | clave |\n"
    with pytest.raises(ValueError, match="header must be"):
        glossary.contract("xx", _glossary(tmp_path, "## Contract\n\n" + table))


def test_a_translated_contract_keeps_four_columns(tmp_path):
    table = "| concepto | usa | evita |\n|---|---|---|\n| key | key (f.) | clave |\n"
    with pytest.raises(ValueError, match="header must be"):
        glossary.contract("xx", _glossary(tmp_path, "## Términos <!-- contract -->\n\n" + table))


# ---------------------------------------------------------------- the scanner itself
TERMS = [glossary.Term("query", "query (f.)", ("consulta", "la pregunta"), "consulta")]


def test_an_avoided_term_in_prose_is_caught():
    found = glossary.violations(TERMS, [("es/05.md", "Cada Consulta lee las keys anteriores.")])
    assert [(v.where, v.term) for v in found] == [("es/05.md", "consulta")]


def test_a_phrase_is_matched_whole():
    assert glossary.violations(TERMS, [("x", "una pregunta")]) == []
    assert [v.term for v in glossary.violations(TERMS, [("x", "La pregunta es otra.")])] == ["la pregunta"]


def test_code_and_links_are_not_prose():
    text = glossary.prose("Usa `consulta = q` y [mira](consulta.ipynb).\n```python\nconsulta = 1\n```\n")
    assert glossary.violations(TERMS, [("x", text)]) == []


def test_a_word_inside_another_is_not_matched():
    assert glossary.violations(TERMS, [("x", "las consultas")]) == []
