"""The grader's messages read like the diagnoses: plural forms, cases described, Python's text quoted, no false claim.

- gettext plural entries (i18n.NP_, i18n.tn, Feedback.count): "1 point", "2 points", never "point(s)";
- a case whose name is no code the student wrote is described in the reader's language (Case.label);
- an exception's English text is quoted after a sentence that names it, so the next message does not run on;
- lab01.padding_missing says what the causal mask alone lets through with right padding: the padded queries
  read padding keys, the real tokens do not (the causal mask keeps them off), as chapter 05 §2 shows.
"""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from babel.messages.pofile import read_po, write_po

from autograder import i18n
from autograder.exercise import Feedback, Result
from autograder.labs import LAB_IDS, get_lab
from autograder.labs.lab01 import allowed, key_padding
from labbook import catalogs

# "point(s)", "punto(s)", "la(s) posición(es)", "Punkt(e)", "Datei(en)", "weitere(n)": a plural left to the reader
PLURAL_HACK = re.compile(r"\w\((?:s|es|e|en|n)\)")


def plural_hacks(texts: dict[str, dict[str, str]]) -> list[tuple[str, str, str]]:
    return [(key, lang, text) for key, by_lang in texts.items() for lang, text in by_lang.items()
            if lang in i18n.LANGS and PLURAL_HACK.search(text)]


def autograder_texts() -> dict[str, dict[str, str]]:
    keys = set(i18n.keys("autograder"))
    return {key: by_lang for key, by_lang in i18n.catalogue().items() if key in keys}


def test_no_grader_message_leaves_the_plural_to_the_reader():
    assert plural_hacks(autograder_texts()) == []


def test_a_plural_left_to_the_reader_is_caught():
    planted = {"grader.hidden_more": {"es": "restan {lost} punto(s) más"}, "term.note.superseded":
               {"de": "Du hast vor dieser {count} Datei(en) abgegeben"}, "lab03.x": {"es": "en la(s) posición(es) 1"}}
    assert [key for key, _, _ in plural_hacks(planted)] == list(planted)


PLURAL_KEYS = ["common.points", "common.total", "grader.fb.score", "grader.hidden_more", "grader.cells_more",
               "lab02.impl.position_leaks",
               "lab03.missed.positions", "term.note.late", "term.note.superseded"]
PARAMS = dict(points=1, max_points=1, lab="lab01", lost="1", name="causal_mask", positions="3", count=1, days=1,
              percent=10, raw=4, score=3.6)


@pytest.mark.parametrize("key", PLURAL_KEYS)
def test_a_plural_message_has_a_form_for_one_and_for_many(key):
    """Each is a plural entry of the catalogue (NP_); English, Spanish and German say one and many differently
    (Hinglish may not: "1 din", "2 din")."""
    for lang in i18n.LANGS:
        assert i18n.plural_forms(key, lang), (key, lang)
    for lang in ("en", "es"):  # German may say both alike ("schon 1 andere", "schon 2 andere")
        one, many = i18n.tn(key, lang, 1, **PARAMS), i18n.tn(key, lang, 2, **PARAMS)
        assert one != many, (key, lang, one)


def test_the_plural_rules_pick_the_languages_forms():
    assert i18n.tn("common.points", "en", 1, points=1, max_points=1) == "1/1 point"
    assert i18n.tn("common.points", "en", 2, points=0, max_points=2) == "0/2 points"
    assert i18n.tn("common.points", "es", 1, points=1, max_points=1) == "1/1 punto"
    assert i18n.tn("common.points", "de", 3, points=3, max_points=3) == "3/3 Punkte"
    # Hindi's rule: 0 and 1 take the first form
    assert i18n.tn("common.points", "hi-Latn", 1, points=0, max_points=1) == "0/1 point"
    assert i18n.tn("common.points", "hi-Latn", 5, points=5, max_points=5) == "5/5 points"
    assert i18n.tn("common.points", "en", 1.5, points=1, max_points=1.5) == "1/1.5 points"  # a fraction: plural


def test_a_feedback_with_a_count_renders_its_plural_form():
    one = Feedback("grader.hidden_more", {"name": "x", "lost": "1"}, count="lost")
    two = Feedback("grader.hidden_more", {"name": "x", "lost": "2"}, count="lost")
    assert "1 more point:" in one.render("en") and "2 more points:" in two.render("en")
    assert "1 weiteren Punkt:" in one.render("de") and "2 weitere Punkte:" in two.render("de")


def test_the_extraction_makes_a_key_listed_with_NP_a_plural_entry(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "module.py").write_text('NP_("lab02.brand_new_count")\nFeedback("lab02.brand_new_count")\n'
                                                   'Feedback("lab02.brand_new_single")\n')
    template = catalogs.templates(tmp_path)["autograder"]
    assert template.get("lab02.brand_new_count").pluralizable
    assert not template.get("lab02.brand_new_single").pluralizable


def test_a_plural_entry_with_an_empty_form_is_caught(tmp_path):
    locale = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE, locale)
    path = catalogs.po_path("autograder", "es", locale)
    with open(path, "rb") as handle:
        catalog = read_po(handle)
    message = catalog.get("common.points")
    message.string = (message.string[0], "", message.string[2])  # the "many" form left out
    with open(path, "wb") as handle:
        write_po(handle, catalog)
    found = catalogs.problems("es", "autograder", catalogs.templates()["autograder"], locale)
    assert [(p.key, p.what) for p in found] == [("common.points", "missing")]


# ---------------------------------------------------------------- cases described, not named
INTERNAL_NAMES = re.compile(r"\b(?:correct|no_mask|off_by_one|time_axis_norm|shifted_input|position_leak|faint_leak|"
                            r"no cache|one new token|chunk)\b")


def test_every_described_case_reads_in_each_language_without_internal_names():
    described = [case for lab_id in LAB_IDS for exercise in get_lab(lab_id).exercises
                 for case in exercise.cases({}, seed=1) if case.label]
    assert {case.label[0].split(".")[0] for case in described} == {"lab03", "lab04"}
    for case in described:
        for lang in ("es", "de"):
            text = case.shown.render(lang)
            assert text != case.name and not INTERNAL_NAMES.search(text), (case.name, lang, text)
        assert "{" not in case.shown.render("hi-Latn")


# ---------------------------------------------------------------- an exception's text, quoted
QUOTED = {"en": "“boom at dimension 1”.", "es": "«boom at dimension 1».", "de": "„boom at dimension 1“.",
          "hi-Latn": "\"boom at dimension 1\"."}


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_an_exception_is_quoted_after_a_sentence_that_names_it(lang):
    raised = Feedback("common.raised", {"name": "causal_attention", "case": "Q (2, 5, 4)", "type": "RuntimeError",
                                        "message": "boom at dimension 1"})
    hint = Feedback("lab02.batch_dims", {})
    text = Result("causal_attention", 0, 4, "error", [raised, hint]).render(lang)
    said = raised.render(lang)
    assert said.endswith(QUOTED[lang]), said  # closed, so the next message starts a sentence of its own
    assert "RuntimeError" in said.split(QUOTED[lang][:1])[0]  # the type is named before the quote
    assert text.startswith(said + " ") and text[len(said) + 1].isupper(), text


# ---------------------------------------------------------------- padding_missing tells the truth
def test_with_right_padding_the_causal_mask_alone_keeps_real_tokens_off_padding():
    lengths, T = [3, 5, 1, 4], 5
    causal = allowed(T)[None]  # (1, T, T)
    real = key_padding(lengths, T)  # (B, T)
    reads_padding = causal & ~real[:, None, :]  # (B, T, T): query i may read a padding key j
    assert not (reads_padding & real[:, :, None]).any()  # no real query reads a padding key
    assert (reads_padding & ~real[:, :, None]).any()  # the padded queries do
    english = i18n.text("lab01.padding_missing", "en")
    assert "the padded queries read padding keys" in english
    old_claims = {"en": "so real tokens also read the padding keys",
                  "es": "los tokens reales también leen las keys de padding",
                  "de": "also lesen echte Tokens auch die Padding-Keys",
                  "hi-Latn": "to real tokens padding keys bhi padh rahe hain"}
    for lang, claim in old_claims.items():
        assert claim not in i18n.text("lab01.padding_missing", lang), lang


def test_a_list_of_missed_checks_puts_each_item_on_a_line_of_its_own():
    items = [Feedback("common.failed", {"name": "t"}), Feedback("lab02.missed", {"caught": 3, "total": 5}),
             Feedback("lab02.impl.no_mask", item=True), Feedback("lab02.impl.off_by_one", item=True),
             Feedback("common.see_section", {"section": "07 §1"})]
    text = Result("t", 3, 5, "failed", items).render("de")
    lines = text.split("\n")
    assert lines[1:3] == [i18n.text("lab02.impl.no_mask", "de"), i18n.text("lab02.impl.off_by_one", "de")]
    assert lines[3] == "(Siehe Kapitel 07 §1.)" and len(lines) == 4
    assert not any(i18n.text(f"lab02.impl.{name}", lang).rstrip().endswith(";") for lang in i18n.LANGS
                   for name in ("no_mask", "off_by_one", "mask_after_softmax", "nan_rule"))


def test_the_grader_s_records_keep_the_list_on_its_lines_as_check_shows_it():
    """The batch grader renders a result's messages (engine.render_all) as `check` does (Result.render)."""
    from autograder.grader.engine import render_all

    items = [Feedback("common.failed", {"name": "t"}), Feedback("lab02.impl.no_mask", item=True),
             Feedback("lab02.impl.off_by_one", item=True), Feedback("common.see_section", {"section": "07 §1"})]
    recorded = render_all(items)
    for lang in i18n.LANGS:
        assert recorded[lang] == Result("t", 0, 5, "failed", items).render(lang)
        assert recorded[lang].count("\n") == 3, (lang, recorded[lang])
