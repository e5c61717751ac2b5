"""Each language's glossary is a contract: one term per concept, and no avoided term, in any of its forms, in its
prose, catalogue texts and messages, or what its built notebooks print."""
import nbformat
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
    found = glossary.violations(glossary.contract(lang), glossary.texts(lang), lang)
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
    assert glossary.violations(TERMS, [("x", "inconsultas y reconsulta")], "es") == []


# ---------------------------------------------------------------- forms: what slipped through before
def _found(avoided: str, lang: str, text: str) -> list[str]:
    term = glossary.Term("c", "use", (avoided,), "")
    return [v.found for v in glossary.violations([term], [("x", text)], lang)]


def test_the_singular_of_an_avoided_plural_is_caught():
    """German avoided "Labels"; chapter 11 and the explorer wrote "Sein Label ist −100"."""
    assert _found("Labels", "de", "Sein Label ist −100.") == ["Label"]


def test_german_case_endings_are_caught():
    assert _found("verankert", "de", "die verankerten Masken") == ["verankerten"]
    assert _found("Forward", "de", "eines Forwards") == ["Forwards"]
    assert _found("rollender Cache", "de", "im rollenden Cache") == ["rollenden Cache"]


def test_a_spanish_plural_is_caught_but_not_the_other_gender():
    """lab05.positions_off_by_one said "desfasadas en uno"; "sus propias componentes" is the book's feminine."""
    assert _found("desfasada en uno", "es", "tus posiciones están desfasadas en uno") == ["desfasadas en uno"]
    assert _found("sus propios componentes", "es", "sobre sus propias componentes") == []


def test_hinglish_verb_forms_are_caught():
    assert _found("attend karti", "hi-Latn", "query key ko attend kiya") == ["attend kiya"]
    assert _found("attend karti", "hi-Latn", "query key ko attend karna") == ["attend karna"]
    assert _found("failta", "hi-Latn", "NaN aage failte hain") == ["failte"]
    assert _found("empty row", "hi-Latn", "empty rows sambhalta ho") == ["empty rows"]


def test_a_phrase_is_caught_across_a_line_break_an_inserted_word_and_emphasis():
    """Lab 01 wrote "auf die\nskalierten Scores *addiert*", which the contract avoided as "auf die Scores addiert"."""
    text = glossary.prose("Die Maske wird vor dem Softmax auf die\nskalierten Scores *addiert*; ein")
    assert _found("auf die Scores addiert", "de", text) == ["auf die\nskalierten Scores addiert"]
    assert _found("full forward", "hi-Latn", "mask wala full\nforward") == ["full\nforward"]
    assert _found("full forward", "hi-Latn", "full causal forward") == []  # two words: no word between


def test_a_form_of_the_term_to_use_is_never_a_violation():
    """Spanish may avoid the singular "máscara de documento" for the book's "máscara de documentos"."""
    term = glossary.Term("document mask", "máscara de documentos (f.)", ("máscara de documento",), "")
    assert glossary.violations([term], [("x", "las máscaras de documentos")], "es") == []
    found = glossary.violations([term], [("x", "una máscara de documento")], "es")
    assert [v.found for v in found] == ["máscara de documento"]
    assert _found("máscara de documento", "es", "la máscara de cada documento") == []  # no inserted word
    mask = glossary.Term("mask", "die Attention-Maske", ("Attention-Mask",), "")
    assert glossary.violations([mask], [("x", "zwei Attention-Masken")], "de") == []


def test_a_misspelling_avoids_its_own_forms_not_the_word_it_misspells():
    term = glossary.Term("slip", "classic galti (pl. galtiyaan)", ("galtiyan",), "")
    assert glossary.violations([term], [("x", "ek galti, do galtiyaan")], "hi-Latn") == []
    assert [v.found for v in glossary.violations([term], [("x", "teen galtiyan")], "hi-Latn")] == ["galtiyan"]
    grader = glossary.Term("grader", "der Autograder", ("Grader",), "")
    assert glossary.violations([grader], [("x", "der grad von x; der Autograder")], "de") == []


def test_code_written_in_a_message_is_not_a_term():
    assert _found("Shapes", "de", "nimm T = Q.shape[-2] und shape(x)") == []


def test_a_quoted_mention_of_a_term_named_elsewhere_is_not_a_use():
    term = glossary.Term("read", "padhna", ("attend karti",), 'attend karna, attention dena')
    text = 'Is book mein "padhna" ka matlab wahi hai jo papers mein "attend karna" hai.'
    assert glossary.violations([term], [("x", text)], "hi-Latn") == []
    used = "query key ko attend karti hai"
    assert [v.found for v in glossary.violations([term], [("x", used)], "hi-Latn")] == ["attend karti"]


def test_another_edition_s_title_in_a_link_is_not_this_language_s_prose():
    text = "| 07 | [probar la causalidad](../es/07_testing_causality.ipynb) | [causality test karna](../hi-Latn/07.ipynb) |"
    assert _found("tests", "es", glossary.prose(text, "es")) == []
    assert _found("tests", "es", glossary.prose("los tests [de aquí](./07_testing_causality.ipynb)", "es")) == ["tests"]


def test_a_message_placeholder_is_not_a_term():
    """German avoids "Labels"; the figure descriptions' {label} is a name the code fills in."""
    catalog = glossary.catalogs.read_catalog(glossary.catalogs.po_path("labbook", "de"))
    with_label = [m.id for m in catalog if m.id and isinstance(m.string, str) and "{label}" in m.string]
    assert with_label, "no German message has a {label} placeholder any more: plant another"
    found = dict(glossary.texts("de"))
    assert all("label" not in found[f"labbook.po {key}"] for key in with_label)


# ---------------------------------------------------------------- printed outputs
def _built(root, lang, name, printed, html=""):
    cell = nbformat.v4.new_code_cell('print(tr("ch09.full_word"))', id="c000")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    if html:
        cell.outputs.append(nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": "<HTML>"}))
    path = root / "course" / lang / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)


def test_what_a_notebook_prints_is_read(tmp_path):
    """Planted: chapter 09's stale timing labels, as the German and Spanish notebooks printed them."""
    _built(tmp_path, "en", "09_x", "growth: full forward x38.4\n")
    _built(tmp_path, "de", "09_x", "Wachstum: voller Forward x30.2\n",
           '<figure><img alt="Ein Label pro Zeile"><figcaption>voller <b>Durchlauf</b></figcaption>'
           "<script>var Forward = 1;</script></figure>")
    found = glossary.outputs("de", tmp_path)
    assert [where for where, _ in found] == ["course/de/09_x.ipynb cell c000"]
    terms = glossary.contract("de")
    assert sorted({v.term for v in glossary.violations(terms, found, "de")}) == ["Forward", "Labels"]


def test_a_line_english_prints_in_the_same_cell_is_code_not_the_language_s_words(tmp_path):
    printed = "        labels: [[-100, 12, 13]]\nRuntimeError: output with shape [2, 1] doesn't match\n"
    _built(tmp_path, "en", "11_x", printed)
    _built(tmp_path, "de", "11_x", printed + "aus position_ids gewonnene Dokumente: [[0, 0]]\n")
    assert [text.strip() for _, text in glossary.outputs("de", tmp_path)] == [
        "aus position_ids gewonnene Dokumente: [[0, 0]]"]
