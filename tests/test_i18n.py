"""The message catalogues: every complete language has every message the code uses, with its placeholders.

The catalogues are gettext .po files (labbook.catalogs); these tests fail on a
missing, fuzzy or placeholder-mismatched message, on a key the code uses that no
catalogue has, and on a message no code uses any more.
"""
import shutil

import pytest
from babel.messages.pofile import read_po, write_po

from autograder import i18n
from autograder.labs import LAB_IDS, get_lab
from labbook import catalogs
from labbook.texts import tr

TEMPLATES = catalogs.templates()


@pytest.mark.parametrize("lang", i18n.LANGS)
@pytest.mark.parametrize("domain", sorted(catalogs.DOMAIN_DIRS))
def test_every_complete_language_has_every_message(domain, lang):
    problems = catalogs.problems(lang, domain, TEMPLATES[domain])
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("domain", sorted(catalogs.DOMAIN_DIRS))
def test_the_committed_template_is_what_the_code_uses(domain):
    """`make catalogs` was run: the .pot lists exactly the keys extracted from the code now."""
    committed = catalogs.read_catalog(catalogs.DOMAIN_DIRS[domain] / f"{domain}.pot")
    assert {m.id for m in committed if m.id} == {m.id for m in TEMPLATES[domain] if m.id}


def test_the_catalogues_are_not_empty():
    assert len(i18n.keys("autograder")) > 100 and len(i18n.keys("labbook")) > 300


def test_every_named_diagnosis_has_a_message():
    for lab_id in LAB_IDS:
        for exercise in get_lab(lab_id).exercises:
            assert exercise.diagnosis_names(), f"{lab_id}.{exercise.id} names no diagnosis"
            for name in exercise.diagnosis_names():
                assert i18n.has(f"{lab_id}.{name}") or i18n.has(f"diagnosis.{name}"), (
                    f"{lab_id}.{exercise.id}: diagnosis {name!r} has no message"
                )


# ---------------------------------------------------------------- broken catalogues are caught
@pytest.fixture
def spanish_copy(tmp_path):
    """A copy of the autograder catalogues, and a way to edit one Spanish message in it."""
    locale = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE, locale)
    path = catalogs.po_path("autograder", "es", locale)

    def edit(key, string=None, fuzzy=False, drop=False, add=None):
        with open(path, "rb") as handle:
            catalog = read_po(handle)
        if drop:
            del catalog[key]
        elif add:
            catalog.add(add, string="huérfano")
        else:
            message = catalog[key]
            if string is not None:
                message.string = string
            if fuzzy:
                message.flags.add("fuzzy")
        with open(path, "wb") as handle:
            write_po(handle, catalog)
        return catalogs.problems("es", "autograder", TEMPLATES["autograder"], locale)

    return edit


def test_the_copy_itself_is_clean(spanish_copy):
    assert spanish_copy("common.passed") == []


def test_a_missing_message_is_caught(spanish_copy):
    assert [(p.key, p.what) for p in spanish_copy("common.passed", drop=True)] == [("common.passed", "missing")]


def test_an_empty_message_is_caught(spanish_copy):
    assert [(p.key, p.what) for p in spanish_copy("lab02.no_evidence", string="")] == [("lab02.no_evidence", "missing")]


def test_a_fuzzy_message_is_caught(spanish_copy):
    assert [(p.key, p.what) for p in spanish_copy("common.passed", fuzzy=True)] == [("common.passed", "fuzzy")]


def test_a_placeholder_mismatch_is_caught(spanish_copy):
    # English: "✅ {name}: correct."; a translator typed {nombre}
    found = spanish_copy("common.passed", string="✅ {nombre}: correcto.")
    assert [p.key for p in found] == ["common.passed"] and "placeholders ['nombre']" in found[0].what


def test_a_message_no_code_uses_is_caught(spanish_copy):
    found = spanish_copy("common.passed", add="lab02.forgotten")
    assert [(p.key, p.what.split(" (")[0]) for p in found] == [("lab02.forgotten", "not used by the code")]


def test_a_key_the_code_uses_without_a_message_is_caught(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "new_exercise.py").write_text('Feedback("lab02.brand_new_hint")\n')
    template = catalogs.templates(tmp_path)["autograder"]
    found = catalogs.problems("de", "autograder", template)
    assert ("lab02.brand_new_hint", "missing") in [(p.key, p.what) for p in found]


# ---------------------------------------------------------------- extraction
def test_extraction_reads_literals_f_string_calls_and_markers_but_no_file_names():
    code = '\n'.join([
        'print(tr("ch03.scores"))',
        "label = f\"{tr('ch09.full_word')} x{n}\"",
        'key = f"ch00.c{n:02d}"',
        'N_("lab02.impl.no_mask", "lab02.impl.off_by_one")',
        'css = "explorer.css"',
        'dtype = "torch.float32"',
        'soup = BeautifulSoup(page, "html.parser")',
    ])
    assert [key for _, key in catalogs.keys_in(code)] == [
        "ch03.scores", "ch09.full_word", "lab02.impl.no_mask", "lab02.impl.off_by_one"]


def test_extraction_reads_the_code_cells_of_a_myst_source():
    source = 'Text with "ch01.not_code" in prose.\n\n```{code-cell} ipython3\nprint(tr("ch01.prompt"))\n```\n'
    assert catalogs.keys_in(source, markdown=True) == [(4, "ch01.prompt")]


def test_update_is_idempotent(tmp_path):
    """Aligning a catalogue that is up to date rewrites it byte for byte (on a copy: a failing run must not
    rewrite the repository's file)."""
    english = catalogs.read_catalog(catalogs.po_path("labbook", "en"))
    spanish_path = catalogs.po_path("labbook", "es")
    copy = tmp_path / "labbook.po"
    copy.write_bytes(spanish_path.read_bytes())
    aligned = catalogs.aligned(TEMPLATES["labbook"], "labbook", "es", catalogs.read_catalog(spanish_path), english)
    assert not catalogs.write_catalog(copy, aligned), "make catalogs would change labbook's es.po"


# ---------------------------------------------------------------- lookup
def test_a_language_without_a_message_falls_back_to_english(monkeypatch):
    monkeypatch.setitem(i18n._LOADED, ("autograder", "fr"), {})
    assert i18n.t("common.passed", "fr", name="x") == i18n.t("common.passed", "en", name="x")
    assert tr("ch03.scores", "de") != tr("ch03.scores", "en")


def test_an_unknown_key_names_itself():
    with pytest.raises(KeyError, match="lab02.no_such_message"):
        i18n.t("lab02.no_such_message", "es")


def test_lang_from_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(i18n.LANG_ENV, raising=False)
    for lang in i18n.LANGS:
        folder = tmp_path / lang
        folder.mkdir()
        assert i18n.current_lang(folder) == lang
    assert i18n.current_lang(tmp_path) == "en"
    monkeypatch.setenv(i18n.LANG_ENV, "de")
    assert i18n.current_lang(tmp_path / "es") == "de"


def test_the_languages_come_from_the_one_list():
    assert i18n.LANGS == tuple(language.code for language in i18n.read_languages() if language.complete)
    assert set(i18n.LANGS) == {"en", "es", "de", "hi-Latn"}
