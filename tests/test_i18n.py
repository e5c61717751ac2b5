"""Every message and every output text exists in all four languages with the same placeholders."""
import pytest

import autograder  # noqa: F401  (registers the common catalogues)
from autograder import i18n
from autograder.labs import LAB_IDS, get_lab
from labbook.texts import TEXTS

for _lab in LAB_IDS:
    get_lab(_lab)  # registers each lab's messages

CATALOGUE = i18n.catalogue()


def test_catalogue_is_not_empty():
    assert len(CATALOGUE) > 20


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_message_in_every_language(key):
    templates = CATALOGUE[key]
    assert sorted(templates) == sorted(i18n.LANGS), f"{key}: has {sorted(templates)}"
    names = {lang: i18n.placeholders(text) for lang, text in templates.items()}
    assert all(n == names["en"] for n in names.values()), f"{key}: placeholders differ {names}"
    assert all(text.strip() for text in templates.values())


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_output_text_in_every_language(key):
    assert sorted(TEXTS[key]) == sorted(i18n.LANGS), f"{key}: has {sorted(TEXTS[key])}"


def test_every_named_diagnosis_has_a_message():
    for lab_id in LAB_IDS:
        for exercise in get_lab(lab_id).exercises:
            assert exercise.diagnosis_names(), f"{lab_id}.{exercise.id} names no diagnosis"
            for name in exercise.diagnosis_names():
                assert i18n.has(f"{lab_id}.{name}") or i18n.has(f"diagnosis.{name}"), (
                    f"{lab_id}.{exercise.id}: diagnosis {name!r} has no message"
                )


def test_a_missing_language_is_caught():
    broken = {"x.y": {"en": "a", "es": "b", "de": "c"}}
    assert sorted(broken["x.y"]) != sorted(i18n.LANGS)


def test_lang_from_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(i18n.LANG_ENV, raising=False)
    for lang in i18n.LANGS:
        folder = tmp_path / lang
        folder.mkdir()
        assert i18n.current_lang(folder) == lang
    assert i18n.current_lang(tmp_path) == "en"
    monkeypatch.setenv(i18n.LANG_ENV, "de")
    assert i18n.current_lang(tmp_path / "es") == "de"
