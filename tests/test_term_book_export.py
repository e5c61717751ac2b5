"""The term's gradebook row (book.build), its files (grades.csv, unmatched.csv, the feedback) and the exports
for Canvas, Moodle and a spreadsheet, in this process, from small hand-made records, rosters and overrides.

Every expected value is written by hand: the numbers with their arithmetic in a comment, the notes and the
feedback's words as the English and Spanish catalogues (shared/autograder/locale) write them, the file layouts
as the LMSs read them (see test_term_outputs.py for the sources). A small lab of its own, `lab09` with two
exercises (alpha 2 points, beta 3) and a hand-graded part (essay, 4), keeps the rows short.
"""
import csv
import io
import json
import stat
import zipfile

import nbformat
import pytest

from autograder import i18n
from autograder.exercise import Exercise
from autograder.grader.submissions import UsageError
from autograder.labs import LabSpec
from autograder.term import book, export, lateness, overrides


class Alpha(Exercise):
    id = "alpha"
    points = 2


class Beta(Exercise):
    id = "beta"
    points = 3


SPEC = LabSpec(id="lab09", exercises=[Alpha(), Beta()], hand_graded={"essay": 4.0})
PLAIN = LabSpec(id="lab09", exercises=[Alpha(), Beta()])  # no hand-graded part
WITH_ID = LabSpec(id="lab09", exercises=[Alpha(), Beta()], context_names=("STUDENT_ID",))
DUE = "2026-12-10T23:00:00+00:00"
BOM = "\ufeff"


def policy(per_day=10.0, cap=50.0, due=DUE):
    return lateness.Policy(lateness.parse_due(due) if due else None, per_day, cap)


def record(alpha=2.0, beta=1.0, lang="en", **extra):
    """An engine record: alpha right, beta partly wrong (with a diagnosis)."""
    base = {"student": "ana", "status": "graded", "score": alpha + beta, "max_score": 5.0, "path": "ana.ipynb",
            "lang": lang,
            "exercises": {"alpha": {"points": alpha, "max_points": 2.0, "status": "passed", "diagnosis": None,
                                    "feedback": {"en": "fine", "es": "bien"}},
                          "beta": {"points": beta, "max_points": 3.0, "status": "failed", "diagnosis": "off_by_one",
                                   "feedback": {"en": "wrong", "es": "mal"}}}}
    base.update(extra)
    return base


def override(exercise, points, reason="", student="ana"):
    return overrides.Override(student, exercise, float(points), reason, 2)


def context(spec=SPEC, found=(), **options):
    return book.Context(spec, options.pop("policy", policy()), {(o.student, o.exercise): o for o in found}, **options)


ANA = book.Person("ana", "Ana Pérez", "ana@uni.example", "1001", 1.0, "S1", "aperez", "Pérez, Ana")


def build(meta=None, rec="default", person=ANA, **options):
    return book.build(context(**options), person, record() if rec == "default" else rec, meta or {})


# ---------------------------------------------------------------- the row
# Ana: extension of 1 day moves the due time to 12-11 23:00; handed in 12-13 10:00, 1 day 11 h after: 2
# started days, 20 %. Points: alpha 2, beta 1 overridden to 2.5, essay graded 3: raw 7.5; penalty
# 20 % of 7.5 = 1.5; score 6.
FULL_META = {"file": "subs.zip: ana.ipynb", "superseded": ["old1.ipynb", "old2.ipynb"], "late": False,
             "submitted_at": "2026-12-13T10:00:00+00:00", "time_source": "moodle_worksheet", "time_odd": False,
             "lms_name": "Ana P.", "forbidden": {"beta": [], "alpha": ["torch.tril", "torch.triu"]},
             "answers": {"essay": "Because the future is unknown."},
             "notes": [["term.note.extra_source", {}]], "fields": {"source": "extra", "lookalike": ["ana2"]}}
FULL_FOUND = [override("beta", 2.5, "regraded"), override("essay", 3)]
FULL_EN = [
    "alpha uses torch.tril, torch.triu, which this exercise asks you not to use.",
    "beta: set to 2.5 points by your instructor (regraded).",
    "Handed in 2 days after the due date: −20% of the raw score (7.5 → 6).",
    "You handed in 2 other files before this one; only the latest was graded.",
    "This file reached your instructor outside the LMS (for example by email) and was graded instead of the "
    "LMS's copy.",
]
FULL_ES = [
    "alpha usa torch.tril, torch.triu, que este ejercicio pide no usar.",
    "beta: tu profesor o profesora lo ha fijado en 2.5 puntos (regraded).",
    "Entregado 2 días después de la fecha límite: −20 % de la nota bruta (7.5 → 6).",
    "Antes de este entregaste otros 2 archivos; solo se ha corregido el último.",
    "Este archivo llegó a tu profesor o profesora fuera del LMS (por ejemplo, por correo) y se ha corregido en lugar de la "
    "copia del LMS.",
]


def full(**options):
    return build(FULL_META, record(lang="es", notes={"en": "engine note", "es": "nota del motor"}),
                 found=FULL_FOUND, **options)


def test_a_graded_row_has_every_field_as_worked_out_by_hand():
    row = full().row
    note_texts = row.pop("note_texts")
    assert row == {
        "student": "ana", "status": "graded", "score": 6.0, "max_score": 9.0,  # 2 + 3 + the essay's 4
        "exercises": {
            "alpha": {"points": 2.0, "max_points": 2.0, "status": "passed", "diagnosis": None, "feedback": "bien"},
            "beta": {"points": 2.5, "max_points": 3.0, "status": "failed", "diagnosis": "off_by_one",
                     "feedback": "mal", "override": "regraded"}},
        "lang": "es", "id_mismatch": False, "typed_id": None, "reason": None, "reason_code": None,
        "lab_found": None, "notebook": "ana.ipynb", "cells": [], "duration": 0.0,
        "name": "Ana Pérez", "email": "ana@uni.example", "lms_id": "1001", "lms_name": "Ana P.", "section": "S1",
        "login": "aperez", "lms_display_name": "Pérez, Ana",
        "hand_graded": {"essay": {"points": 3.0, "max_points": 4.0, "graded": True,
                                  "text": "Because the future is unknown."}},
        "raw_score": 7.5, "late": True, "late_days": 2, "penalty_percent": 20.0, "penalty": 1.5,
        "submitted": "2026-12-13T10:00:00+00:00", "extension_days": 1.0, "file": "subs.zip: ana.ipynb",
        "superseded": ["old1.ipynb", "old2.ipynb"], "forbidden": {"alpha": ["torch.tril", "torch.triu"]},
        "overrides": [{"exercise": "beta", "points": 2.5, "reason": "regraded"},
                      {"exercise": "essay", "points": 3.0, "reason": ""}],
        "notes": FULL_EN, "student_notes": FULL_ES,
        "time_source": "moodle_worksheet", "time_unknown": False, "source": "extra", "lookalike": ["ana2"],
    }
    assert [set(text) for text in note_texts] == [set(i18n.LANGS)] * len(FULL_EN)  # every language kept
    assert [text["en"] for text in note_texts] == FULL_EN and [text["es"] for text in note_texts] == FULL_ES


def test_the_instructors_notes_follow_the_instructors_language():
    assert full(instructor_lang="es").row["notes"] == FULL_ES
    assert full(instructor_lang="fr").row["notes"] == FULL_EN  # a language the book lacks: English


def test_the_feedback_shows_the_final_points_and_every_note_in_the_students_language():
    built = full()
    engine_and_term = " ".join(["nota del motor", *FULL_ES])
    assert built.markdown == (
        "# Comentarios sobre lab09 para ana\n\n"
        "**Nota: 6/9 puntos**\n\n"
        f"{engine_and_term}\n\n"
        "| Ejercicio | Puntos | Comentario |\n| --- | --- | --- |\n"
        "| `alpha` | 2/2 | bien |\n| `beta` | 2.5/3 | mal |\n| `essay` | 3/4 |  |\n")
    assert '<html lang="es">' in built.html and "<p><strong>Nota: 6/9 puntos</strong></p>" in built.html
    assert f"<p>{engine_and_term}</p>" in built.html
    assert "<tr><td><code>essay</code></td><td>3/4</td><td></td></tr>" in built.html


def test_the_forced_language_decides_the_feedback_and_its_notes():
    built = build({"superseded": ["a"]}, record(lang="es"), forced_lang="en", policy=policy(due=None))
    assert built.row["lang"] == "en" and built.row["exercises"]["alpha"]["feedback"] == "fine"
    assert built.row["student_notes"] == ["You handed in 1 other file before this one; only the latest was graded."]
    assert "**Score: 3/9 points**" in built.markdown


def test_a_row_without_any_note_has_no_note_paragraph():
    # on time (no due date), nothing forbidden, no override: 2 + 1 = 3 of 9; the essay not graded yet
    built = build(policy=policy(due=None))
    assert built.markdown == (
        "# Feedback on lab09 for ana\n\n**Score: 3/9 points**\n\n"
        "| Exercise | Points | Feedback |\n| --- | --- | --- |\n"
        "| `alpha` | 2/2 | fine |\n| `beta` | 1/3 | wrong |\n| `essay` | 0/4 |  |\n")
    assert (built.row["notes"], built.row["student_notes"], built.row["note_texts"]) == ([], [], [])
    assert built.row["hand_graded"] == {"essay": {"points": 0.0, "max_points": 4.0, "graded": False, "text": ""}}
    assert (built.row["raw_score"], built.row["score"], built.row["late"], built.row["late_days"]) == (3.0, 3.0,
                                                                                                       False, 0)
    assert (built.row["lms_name"], built.row["file"], built.row["superseded"], built.row["forbidden"],
            built.row["overrides"]) == ("", "", [], {}, [])


@pytest.mark.parametrize("engine_notes", ["a string, not a dict per language", None])
def test_engine_notes_that_are_not_per_language_are_left_out(engine_notes):
    built = build({"superseded": ["a"]}, record(notes=engine_notes), policy=policy(due=None))
    assert "\n\nYou handed in 1 other file before this one; only the latest was graded.\n\n" in built.markdown
    assert "a string" not in built.markdown


def test_engine_notes_alone_are_shown():
    built = build(rec=record(notes={"en": "engine note", "es": "nota"}), policy=policy(due=None))
    assert "**Score: 3/9 points**\n\nengine note\n\n| Exercise" in built.markdown


def test_the_feedback_links_chapters_to_the_book_when_its_address_is_given():
    rec = record()
    rec["exercises"]["beta"]["feedback"] = {"en": "see chapter 03"}
    linked = build(rec=rec, policy=policy(due=None), book_url="https://book.example/")
    assert "](<https://book.example/course/en/03_worked_example.html>)" in linked.markdown
    plain = build(rec=rec, policy=policy(due=None))
    assert "| `beta` | 1/3 | see chapter 03 |" in plain.markdown


def test_hidden_feedback_is_revealed_only_when_asked():
    rec = record()
    rec["exercises"]["beta"]["feedback_revealed"] = {"en": "hidden case 3 failed"}
    assert build(rec=rec, reveal_hidden=True).row["exercises"]["beta"]["feedback"] == "hidden case 3 failed"
    assert build(rec=rec).row["exercises"]["beta"]["feedback"] == "wrong"


# ---------------------------------------------------------------- a missing hand-in
def test_a_missing_hand_in_has_every_field_and_is_never_late():
    meta = {"late": True, "forbidden": {"alpha": ["torch.tril"]}}
    built = build(meta, rec=None, forced_lang="es", penalise_forbidden=True)
    row = built.row
    note_texts = row.pop("note_texts")
    not_run = "No se ejecutó: mira la nota de arriba."
    assert row == {
        "student": "ana", "status": "missing", "score": 0.0, "max_score": 9.0,
        "exercises": {"alpha": {"points": 0.0, "max_points": 2.0, "status": "missing", "diagnosis": None,
                                "feedback": not_run},
                      "beta": {"points": 0.0, "max_points": 3.0, "status": "missing", "diagnosis": None,
                               "feedback": not_run}},
        "lang": "es", "id_mismatch": False, "typed_id": None, "reason": None, "reason_code": "missing",
        "lab_found": None, "notebook": "", "cells": [], "duration": 0.0,
        "name": "Ana Pérez", "email": "ana@uni.example", "lms_id": "1001", "lms_name": "", "section": "S1",
        "login": "aperez", "lms_display_name": "Pérez, Ana",
        "hand_graded": {"essay": {"points": 0.0, "max_points": 4.0, "graded": False, "text": ""}},
        "raw_score": 0.0, "late": False, "late_days": 0, "penalty_percent": 0.0, "penalty": 0.0,
        "submitted": None, "extension_days": 1.0, "file": "", "superseded": [],
        "forbidden": {"alpha": ["torch.tril"]}, "overrides": [],
        # a missing hand-in cannot be penalised for what it calls: the note says so without taking points
        "notes": ["No submission for this lab was found.",
                  "alpha uses torch.tril, which this exercise asks you not to use."],
        "student_notes": ["No se ha encontrado ninguna entrega de este lab.",
                          "alpha usa torch.tril, que este ejercicio pide no usar."],
        "time_source": None, "time_unknown": False,
    }
    assert [text["en"] for text in note_texts] == row["notes"]
    assert "| `alpha` | 0/2 | No se ejecutó: mira la nota de arriba. |" in built.markdown
    assert "**Nota: 0/9 puntos**\n\nNo se ha encontrado ninguna entrega de este lab. alpha usa" in built.markdown


def test_a_missing_hand_in_takes_a_late_days_override_and_keeps_overridden_points():
    # the instructor gives the missing student 1 point of alpha and 2 late days: 1 - 20 % = 0.8
    built = build({}, rec=None, found=[override("alpha", 1, "oral exam"), override("late_days", 2)])
    row = built.row
    assert (row["raw_score"], row["late"], row["late_days"], row["penalty_percent"], row["penalty"], row["score"]) \
        == (1.0, True, 2, 20.0, 0.2, 0.8)
    assert row["time_source"] == "override" and row["submitted"] is None


# ---------------------------------------------------------------- forbidden calls
def test_forbidden_calls_are_noted_in_order_and_cost_points_only_when_asked():
    meta = {"forbidden": {"beta": ["F.softmax"], "gamma": ["x"], "alpha": ["torch.tril"], "essay": []}}
    flagged = build(meta, policy=policy(due=None)).row
    assert flagged["notes"] == ["alpha uses torch.tril, which this exercise asks you not to use.",
                                "beta uses F.softmax, which this exercise asks you not to use."]
    assert flagged["raw_score"] == 3.0  # 2 + 1, nothing taken
    # every exercise the analysis named, sorted, empty lists left out (gamma is no exercise of this lab)
    assert list(flagged["forbidden"].items()) == [("alpha", ["torch.tril"]), ("beta", ["F.softmax"]),
                                                  ("gamma", ["x"])]
    penalised = build(meta, policy=policy(due=None), penalise_forbidden=True).row
    assert penalised["notes"] == ["alpha uses torch.tril, which this exercise forbids: 0 points for it.",
                                  "beta uses F.softmax, which this exercise forbids: 0 points for it."]
    assert (penalised["exercises"]["alpha"]["points"], penalised["exercises"]["beta"]["points"]) == (0.0, 0.0)
    assert (penalised["raw_score"], penalised["score"]) == (0.0, 0.0)


def test_every_forbidden_name_is_listed_when_penalising():
    penalised = build({"forbidden": {"alpha": ["torch.tril", "torch.triu"]}}, policy=policy(due=None),
                      penalise_forbidden=True).row
    assert penalised["notes"] == ["alpha uses torch.tril, torch.triu, which this exercise forbids: 0 points for it."]


def test_an_exercise_with_no_forbidden_call_keeps_its_points_when_penalising():
    penalised = build({"forbidden": {"alpha": [], "beta": ["F.softmax"]}}, policy=policy(due=None),
                      penalise_forbidden=True).row
    assert (penalised["exercises"]["alpha"]["points"], penalised["raw_score"]) == (2.0, 2.0)
    assert penalised["notes"] == ["beta uses F.softmax, which this exercise forbids: 0 points for it."]


# ---------------------------------------------------------------- overrides
def test_an_override_without_a_reason_says_override_and_a_dash():
    row = build(policy=policy(due=None), found=[override("alpha", 0.5), override("alpha", 2, student="bob")]).row
    assert row["exercises"]["alpha"]["points"] == 0.5 and row["exercises"]["alpha"]["override"] == "override"
    assert "override" not in row["exercises"]["beta"]
    assert row["notes"] == ["alpha: set to 0.5 points by your instructor (-)."]
    assert row["raw_score"] == 1.5  # 0.5 + 1


def test_override_points_are_shown_to_four_decimals():
    row = build(policy=policy(due=None), found=[override("alpha", 1.23456)]).row
    assert row["notes"] == ["alpha: set to 1.2346 points by your instructor (-)."]
    assert row["raw_score"] == 2.2346  # 1.23456 + 1 = 2.23456, to four decimals


def test_overrides_are_listed_in_exercise_order_then_parts_then_late_days():
    found = [override("late_days", 1, "sick"), override("essay", 4, "good"), override("beta", 0, "copied"),
             override("alpha", 1)]
    row = build(policy=policy(due=None), found=found).row
    assert row["overrides"] == [{"exercise": "alpha", "points": 1.0, "reason": ""},
                                {"exercise": "beta", "points": 0.0, "reason": "copied"},
                                {"exercise": "essay", "points": 4.0, "reason": "good"},
                                {"exercise": "late_days", "points": 1.0, "reason": "sick"}]


def test_a_hand_graded_part_of_another_student_or_unanswered_stays_ungraded():
    row = build({"answers": {"other": "x"}}, policy=policy(due=None), found=[override("essay", 2, student="bob")]).row
    assert row["hand_graded"] == {"essay": {"points": 0.0, "max_points": 4.0, "graded": False, "text": ""}}


# ---------------------------------------------------------------- lateness
def test_a_late_days_override_of_zero_excuses_and_says_why():
    meta = {"submitted_at": "2026-12-20T10:00:00+00:00"}  # 9 days late without the excuse
    row = build(meta, found=[override("late_days", 0, "doctor's note")]).row
    assert (row["late"], row["late_days"], row["penalty_percent"], row["penalty"], row["score"]) == (False, 0, 0.0,
                                                                                                    0.0, 3.0)
    assert row["submitted"] == "2026-12-20T10:00:00+00:00" and row["time_source"] == "override"
    assert row["notes"] == ["Your instructor excused the lateness of this hand-in: no penalty (doctor's note)."]
    unexplained = build(meta, found=[override("late_days", 0)]).row
    assert unexplained["notes"] == ["Your instructor excused the lateness of this hand-in: no penalty (-)."]


@pytest.mark.parametrize("days, percent, penalty, score", [
    (1, 10.0, 0.3, 2.7),  # 10 % of 3
    (4, 40.0, 1.2, 1.8),  # 40 % of 3
    (6, 50.0, 1.5, 1.5),  # 60 % capped at 50 %
])
def test_a_late_days_override_sets_the_days_and_the_penalty(days, percent, penalty, score):
    row = build({}, found=[override("late_days", days, "seen")]).row
    assert (row["late"], row["late_days"], row["penalty_percent"], row["penalty"], row["score"]) == (
        True, days, percent, penalty, score)
    # the day or days, as the count asks
    assert row["notes"] == [f"Handed in {days} {'day' if days == 1 else 'days'} after the due date: −{percent:g}% "
                            f"of the raw score (3 → {score:g})."]


def test_the_canvas_late_flag_takes_the_first_days_share():
    # no time, Canvas says late, no extension: 10 % of 3 = 0.3
    row = build({"late": True, "time_source": "canvas_flag"}, person=book.Person("ana")).row
    assert (row["late"], row["late_days"], row["penalty_percent"], row["penalty"], row["score"]) == (True, None, 10.0,
                                                                                                    0.3, 2.7)
    assert row["notes"] == ["The LMS marks this hand-in as late (without saying by how much): the first day's "
                            "penalty applies, −10% (3 → 2.7)."]
    assert row["time_source"] == "canvas_flag"


def test_a_late_flag_with_an_extension_costs_nothing_and_says_so():
    row = build({"late": True}).row  # Ana has a 1-day extension
    assert (row["late"], row["penalty"], row["score"]) == (True, 0.0, 3.0)
    assert row["notes"] == ["The LMS marks this hand-in as late, but you have an extension: no penalty."]


def test_late_without_a_penalty_has_no_late_note():
    row = build({"submitted_at": "2026-12-13T10:00:00+00:00"}, policy=policy(per_day=0)).row
    assert (row["late"], row["late_days"], row["penalty"], row["notes"]) == (True, 2, 0.0, [])


def test_a_late_hand_in_worth_nothing_has_no_late_note():
    row = build({"submitted_at": "2026-12-13T10:00:00+00:00"}, rec=record(alpha=0.0, beta=0.0)).row
    assert (row["late"], row["late_days"], row["raw_score"], row["penalty"], row["score"], row["notes"]) == (
        True, 2, 0.0, 0.0, 0.0, [])


@pytest.mark.parametrize("submitted, late_days", [
    ("2026-12-11T23:00:00+00:00", 0),  # exactly at the extended due time
    ("2026-12-11T23:00:01+00:00", 1),  # one second after it
])
def test_the_extension_on_the_roster_moves_the_due_time(submitted, late_days):
    row = build({"submitted_at": submitted}).row
    assert (row["late_days"], row["submitted"]) == (late_days, submitted)


def test_a_student_without_an_extension_is_late_a_day_earlier():
    bob = book.Person("bob")
    row = book.build(context(), bob, record(student="bob"), {"submitted_at": "2026-12-11T23:00:00+00:00"}).row
    assert (row["late_days"], row["penalty"], row["extension_days"]) == (1, 0.3, 0.0)


def test_an_nbgrader_timestamp_is_read_when_no_iso_time_was_kept():
    row = build({"submitted_at": None, "timestamp": "2026-12-12 00:00:00 UTC"}).row
    assert (row["late_days"], row["time_source"]) == (1, "nbgrader_timestamp")
    assert build({"timestamp": 1765497600}).row["time_unknown"] is True  # a number is no timestamp text


def test_an_unreadable_iso_time_counts_as_unknown_not_as_the_older_timestamp():
    row = build({"submitted_at": "yesterday", "timestamp": "2026-12-20 00:00:00 UTC"}).row
    assert (row["late"], row["submitted"], row["time_unknown"]) == (False, None, True)
    assert row["notes"] == ["The time of this hand-in is not known, so no late penalty was applied; your "
                            "instructor may still set one."]


def test_a_time_the_intake_could_not_read_is_on_time_with_a_note():
    row = build({"time_odd": True, "time_source": "moodle_worksheet"}).row
    assert (row["late"], row["time_source"]) == (False, "moodle_worksheet")
    assert row["notes"] == ["The hand-in time could not be read, so this submission counts as on time."]


def test_the_score_never_drops_below_zero_and_is_rounded():
    row = build(rec=record(alpha=0.0, beta=0.0), policy=policy(due=None)).row
    assert (row["raw_score"], row["score"]) == (0.0, 0.0)
    # 1.11111 + 1 = 2.11111, two days late at 10 %: penalty 0.422222 -> 0.4222; score 2.11111 - 0.4222 = 1.68891
    row = build({"submitted_at": "2026-12-13T10:00:00+00:00"}, rec=record(alpha=1.11111)).row
    assert (row["raw_score"], row["penalty"], row["score"]) == (2.1111, 0.4222, 1.6889)


def test_the_intakes_notes_keep_their_parameters():
    row = build({"notes": [["term.note.superseded", {"count": 3}]]}, policy=policy(due=None)).row
    assert row["notes"] == ["You handed in 3 other files before this one; only the latest was graded."]


def test_the_maximum_adds_the_hand_graded_parts():
    assert context().max_score == 9.0  # 2 + 3 + 4
    assert context(PLAIN).max_score == 5.0
    assert book.render("term.note.missing") == {
        "en": "No submission for this lab was found.", "es": "No se ha encontrado ninguna entrega de este lab.",
        "de": i18n.t("term.note.missing", "de"), "hi-Latn": i18n.t("term.note.missing", "hi-Latn")}


# ---------------------------------------------------------------- grades.csv
def read_csv(text):
    return list(csv.reader(io.StringIO(text.removeprefix(BOM), newline="")))


HEADER = ["student", "name", "lms_id", "section", "lab", "status", "raw_score", "late", "late_days", "penalty",
          "score", "max_score", "alpha", "beta", "alpha_diagnosis", "beta_diagnosis"]
TAIL = ["reason", "superseded", "file", "forbidden", "notes"]


@pytest.mark.parametrize("spec, header", [
    (SPEC, HEADER + ["essay"] + TAIL),
    (PLAIN, HEADER + TAIL),
    (WITH_ID, HEADER + ["id_mismatch", "typed_id"] + TAIL),
])
def test_grades_csv_header(spec, header):
    assert book.csv_header(spec) == header
    assert book.csv_text(spec, []) == ",".join(header) + "\n"


def test_grades_csv_rows_as_worked_out_by_hand():
    row = full().row
    text = book.csv_text(SPEC, [row, build(rec=None).row])
    assert text.count("\n") == 3 and "\r" not in text  # header and two rows, one line each
    assert read_csv(text)[1:] == [
        ["ana", "Ana Pérez", "1001", "S1", "lab09", "graded", "7.5", "yes", "2", "1.5", "6", "9", "2", "2.5", "",
         "off_by_one", "3", "", "old1.ipynb; old2.ipynb", "subs.zip: ana.ipynb", "alpha: torch.tril, torch.triu",
         " ".join(FULL_EN)],
        ["ana", "Ana Pérez", "1001", "S1", "lab09", "missing", "0", "", "0", "0", "0", "9", "0", "0", "", "", "",
         "missing", "", "", "", "No submission for this lab was found."],
    ]
    assert read_csv(book.csv_text(SPEC, [row], "es"))[1][-1] == " ".join(FULL_ES)


def test_grades_csv_writes_a_flag_without_days_and_numbers_to_four_decimals():
    row = build({"late": True, "forbidden": {"beta": ["a"], "alpha": ["b", "c"]}}, person=book.Person("ana"),
                rec=record(alpha=1.23456)).row
    # 1.23456 + 1 = 2.23456 -> 2.2346; 10 % of it 0.223456 -> 0.2235; score 2.23456 - 0.2235 = 2.01106 -> 2.0111
    cells = dict(zip(book.csv_header(SPEC), read_csv(book.csv_text(SPEC, [row]))[1]))
    assert (cells["raw_score"], cells["late"], cells["late_days"], cells["penalty"], cells["score"],
            cells["alpha"]) == ("2.2346", "yes", "", "0.2235", "2.0111", "1.2346")
    assert cells["forbidden"] == "alpha: b, c; beta: a"


def test_grades_csv_of_a_row_kept_without_a_section():
    row = build(policy=policy(due=None)).row
    del row["section"]
    assert read_csv(book.csv_text(PLAIN, [row]))[1][:5] == ["ana", "Ana Pérez", "1001", "", "lab09"]


def test_grades_csv_of_a_lab_that_asks_for_the_student_id():
    rows = [book.build(context(WITH_ID), book.Person("ana"), record(id_mismatch=True, typed_id="s123"), {}).row,
            book.build(context(WITH_ID), book.Person("bob"), record(student="bob"), {}).row]
    table = read_csv(book.csv_text(WITH_ID, rows))
    assert [line[16:18] for line in table] == [["id_mismatch", "typed_id"], ["yes", "s123"], ["", ""]]


def test_notes_in_a_language_and_rows_written_before_note_texts():
    row = {"notes": ["old note"], "note_texts": [{"en": "one", "es": "uno"}, {"en": "two"}, "junk", {"de": "drei"}]}
    assert book.notes_in(row, "es") == ["uno", "two", ""]
    assert book.notes_in(row, "en") == ["one", "two", ""]
    assert book.notes_in({"notes": ["as written"]}, "es") == ["as written"]
    assert book.notes_in({"notes": None, "note_texts": None}, "es") == []
    assert book.notes_in({}, "es") == []


def test_unmatched_csv_names_each_kind():
    found = {"unknown_student": [{"key": "k1", "name": "Who", "file": "a.ipynb"},
                                 {"key": "k2", "name": "Two", "file": "b.ipynb", "reason": "ambiguous"},
                                 {"key": "k3", "name": "Other", "file": "c.ipynb", "reason": "name_mismatch"},
                                 {"key": "k4", "name": "X", "file": "d.ipynb", "reason": "something else"}],
             "unparsed": ["e.ipynb"], "refused": ["f.zip", "g.zip"], "junk": ["h.txt"]}
    assert book.unmatched_csv(found) == (
        "kind,lms_key,name,file\n"
        "unknown_student,k1,Who,a.ipynb\nambiguous_owner,k2,Two,b.ipynb\nname_mismatch,k3,Other,c.ipynb\n"
        "unknown_student,k4,X,d.ipynb\n"
        "unparsed,,,e.ipynb\nrefused,,,f.zip\nrefused,,,g.zip\njunk,,,h.txt\n")


def test_write_puts_every_file_in_place(tmp_path):
    ctx = context(instructor_lang="es")
    built = [full(), book.build(ctx, book.Person("Bob Z"), None, {})]
    grades = {"lab": "lab09", "max_score": 9.0, "submissions": [b.row for b in built],
              "unknown_student": [], "unparsed": ["x.ipynb"], "refused": [], "junk": []}
    book.write(tmp_path, ctx, built, grades)
    assert built[0].row["feedback_file"] == "ana"
    # "Bob Z" is not a plain id: a slug, `~` and 16 hex digits
    assert built[1].row["feedback_file"].startswith("Bob_Z~") and len(built[1].row["feedback_file"]) == 6 + 16
    written = (tmp_path / "grades.json").read_text(encoding="utf-8")
    assert written.startswith('{\n "lab": "lab09",\n "max_score": 9.0,\n') and "Ana Pérez" in written
    assert json.loads(written)["submissions"][1]["feedback_file"] == built[1].row["feedback_file"]
    table = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    assert table.startswith(BOM + "student,name,")
    assert read_csv(table)[1][-1] == " ".join(FULL_ES)  # the instructor's language
    assert (tmp_path / "unmatched.csv").read_text(encoding="utf-8") == (
        BOM + "kind,lms_key,name,file\nunparsed,,,x.ipynb\n")
    feedback = tmp_path / "feedback"
    assert stat.S_IMODE(feedback.stat().st_mode) == 0o700
    for item in built:
        name = item.row["feedback_file"]
        assert (feedback / f"{name}.md").read_text(encoding="utf-8") == item.markdown
        assert (feedback / f"{name}.html").read_text(encoding="utf-8") == item.html
    assert sorted(p.name for p in tmp_path.iterdir()) == ["feedback", "grades.csv", "grades.json", "unmatched.csv"]


# ---------------------------------------------------------------- exports
COLUMN = "Lab 9: Masks (777)"
NOTES = [{"en": "Late by 2 days.", "es": "Tarde 2 días."}, {"en": "Regraded.", "es": "Recorregido."}]


def points(alpha, beta):
    return {"alpha": {"points": alpha, "max_points": 2.0}, "beta": {"points": beta, "max_points": 3.0}}


# rows as grades.json keeps them; only what the exports read
ROWS = [
    {"student": "ana", "name": "Ana Pérez", "lms_display_name": "Pérez, Ana", "lms_name": "Ana P. Pérez",
     "lms_id": "1001", "login": "aperez", "section": "S1", "email": "ana@uni.example", "lang": "es",
     "status": "graded", "raw_score": 7.5, "late": True, "late_days": 2, "penalty": 1.5, "score": 6.0,
     "max_score": 9.0, "exercises": points(2.0, 2.5), "note_texts": NOTES, "feedback_file": "ana",
     "file": "submissions.zip: anaperez_LATE_1001_5555_lab09.ipynb"},
    {"student": "bob", "name": "Bob Stone", "lms_display_name": "", "lms_name": "", "lms_id": "1002", "email": "",
     "lang": None, "status": "missing", "raw_score": 0.0, "late": False, "late_days": 0, "penalty": 0.0,
     "score": 0.0, "max_score": 9.0, "exercises": points(0.0, 0.0), "note_texts": [{"en": "Missing."}],
     "feedback_file": "bob", "file": ""},
    # a row with the fewest fields: no name, no LMS id, no feedback_file (its stem is its plain id)
    {"student": "s3", "status": "graded", "raw_score": 4.12345, "late": True, "late_days": None, "penalty": 0.4,
     "score": 3.72345, "max_score": 9.0, "exercises": points(1.0, 3.0), "notes": ["old"], "file": "extra: s3.ipynb"},
]


def gradebook_folder(tmp_path, rows=ROWS, **top):
    folder = tmp_path / "gb"
    (folder / "feedback").mkdir(parents=True)
    grades = {"lab": "lab09", "max_score": 9.0, "lms_columns": [COLUMN, "Quiz 9 (778)"], "submissions": rows, **top}
    (folder / "grades.json").write_text(json.dumps(grades, ensure_ascii=False), encoding="utf-8")
    for stem in ("ana", "bob", "s3"):
        (folder / "feedback" / f"{stem}.md").write_text(f"# Feedback for {stem}\n", encoding="utf-8")
        (folder / "feedback" / f"{stem}.html").write_text(f"<p>{stem} ✓</p>", encoding="utf-8")
    return folder


def exported(tmp_path, target, **options):
    out = tmp_path / "out" / f"{target}.csv"
    result = export.export(gradebook_folder(tmp_path), target, out, **options)
    assert result.paths == [out, tmp_path / "out" / f"{target}-feedback.zip"]
    return result, out.read_bytes().decode("utf-8")


@pytest.mark.parametrize("missing, bob", [("zero", "0"), ("empty", "")])
def test_the_canvas_import_file(tmp_path, missing, bob):
    result, text = exported(tmp_path, "canvas", missing=missing)
    assert text == (BOM + f"Student,ID,SIS User ID,SIS Login ID,Section,{COLUMN}\r\n"
                    "Points Possible,,,,,9\r\n"
                    '"Pérez, Ana",1001,ana,aperez,S1,6\r\n'  # Canvas's sortable name
                    f"Bob Stone,1002,bob,,,{bob}\r\n"  # no sortable name: the roster's
                    "s3,,s3,,,3.7235\r\n")  # no name at all: the id; 3.72345 to four decimals
    folder = tmp_path / "gb"
    assert result.messages == [
        "2 students have no file of Canvas's download to attach feedback to (missing, or graded from another "
        f"source); give theirs by hand from {folder / 'feedback'}/: bob, s3"]


@pytest.mark.parametrize("missing, bob", [("zero", "0"), ("empty", "")])
def test_the_moodle_import_file(tmp_path, missing, bob):
    result, text = exported(tmp_path, "moodle", missing=missing)
    assert text == (BOM + "Email address,ID number,Grade,Feedback\r\n"
                    "ana@uni.example,ana,6,alpha: 2/2; beta: 2.5/3; Tarde 2 días.; Recorregido.\r\n"  # her Spanish
                    f",bob,{bob},alpha: 0/2; beta: 0/3; Missing.\r\n"
                    ",s3,3.7235,alpha: 1/2; beta: 3/3; old\r\n")
    assert result.messages == []


@pytest.mark.parametrize("lang, ana_notes", [("en", "Late by 2 days. Regraded."), ("ES", "Tarde 2 días. Recorregido."),
                                             ("xx", "Late by 2 days. Regraded.")])
def test_the_spreadsheet_export(tmp_path, lang, ana_notes):
    result, text = exported(tmp_path, "csv", lang=lang)
    assert text == (BOM + "student,name,email,lms_id,section,status,raw_score,late,late_days,penalty,score,max_score,"
                    "notes\n"
                    f"ana,Ana Pérez,ana@uni.example,1001,S1,graded,7.5,yes,2,1.5,6,9,{ana_notes}\n"
                    "bob,Bob Stone,,1002,,missing,0,,0,0,0,9,Missing.\n"
                    "s3,,,,,graded,4.1235,yes,,0.4,3.7235,9,old\n")
    assert result.messages == []
    assert read_csv(exported(tmp_path / "empty", "csv", missing="empty")[1])[2][10] == ""


def zip_members(path):
    with zipfile.ZipFile(path) as archive:
        return {info.filename: (info, archive.read(info).decode("utf-8")) for info in archive.infolist()}


@pytest.mark.parametrize("target, expected", [
    ("moodle", {"Ana P. Pérez_1001_assignsubmission_file_feedback.html": "<p>ana ✓</p>",
                "Bob Stone_1002_assignsubmission_file_feedback.html": "<p>bob ✓</p>",
                "s3_s3_assignsubmission_file_feedback.html": "<p>s3 ✓</p>"}),
    ("csv", {"ana.html": "<p>ana ✓</p>", "bob.html": "<p>bob ✓</p>", "s3.html": "<p>s3 ✓</p>"}),
])
def test_the_feedback_zip_for_moodle_and_the_spreadsheet(tmp_path, target, expected):
    exported(tmp_path, target)
    bundle = tmp_path / "out" / f"{target}-feedback.zip"
    members = zip_members(bundle)
    assert {name: data for name, (_, data) in members.items()} == expected
    for info, _ in members.values():  # the same grades give the same bytes, readable by the owner only
        assert (info.date_time, info.external_attr >> 16, info.compress_type) == ((1980, 1, 1, 0, 0, 0), 0o600,
                                                                                  zipfile.ZIP_DEFLATED)
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{target}-feedback.zip", f"{target}.csv"]


def test_the_canvas_feedback_zip_holds_a_notebook_per_matched_student(tmp_path):
    exported(tmp_path, "canvas")
    members = zip_members(tmp_path / "out" / "canvas-feedback.zip")
    # the name's letters only ("Ana P. Pérez" loses the dots, the space and the é), then the two Canvas ids
    assert list(members) == ["anapprez_1001_5555_feedback.ipynb"]
    info, data = members["anapprez_1001_5555_feedback.ipynb"]
    assert (info.date_time, info.external_attr >> 16) == ((1980, 1, 1, 0, 0, 0), 0o600)
    notebook = nbformat.reads(data, as_version=4)
    nbformat.validate(notebook)
    assert [(cell.cell_type, cell.id, cell.source) for cell in notebook.cells] == [
        ("markdown", "feedback", "# Feedback for ana\n")]
    assert dict(notebook.metadata) == {"lang": "es", "labbook": {"kind": "feedback"}}


def test_a_canvas_notebook_without_a_language_is_english(tmp_path):
    row = dict(ROWS[0], lang=None)
    export.export(gradebook_folder(tmp_path, [row]), "canvas", tmp_path / "c.csv")
    ((_, data),) = zip_members(tmp_path / "c-feedback.zip").values()
    assert nbformat.reads(data, as_version=4).metadata["lang"] == "en"


def test_the_zip_takes_the_feedback_file_the_gradebook_names(tmp_path):
    # a gradebook written by an older version, whose feedback files had other names
    folder = gradebook_folder(tmp_path, [dict(ROWS[0], feedback_file="legacy-ana")])
    (folder / "feedback" / "legacy-ana.html").write_text("<p>kept</p>", encoding="utf-8")
    export.export(folder, "csv", tmp_path / "x.csv")
    assert {name: data for name, (_, data) in zip_members(tmp_path / "x-feedback.zip").items()} == {
        "legacy-ana.html": "<p>kept</p>"}


def test_the_canvas_export_gives_the_column_warning_and_the_feedback_message_together(tmp_path):
    folder = gradebook_folder(tmp_path, lms_columns=[])
    result = export.export(folder, "canvas", tmp_path / "c.csv", assignment="Lab 9")
    assert result.messages == [
        "note: 'Lab 9' has no Canvas id '(NNN)': Canvas matches it by the exact assignment title, and creates a new "
        "assignment if no assignment has that title.",
        "2 students have no file of Canvas's download to attach feedback to (missing, or graded from another "
        f"source); give theirs by hand from {folder / 'feedback'}/: bob, s3"]


def test_the_gradebook_is_read_as_utf8_whatever_the_machines_locale(tmp_path, monkeypatch):
    folder = gradebook_folder(tmp_path)
    # a machine whose locale is not UTF-8 (Windows' cp1252): what open() reads when no encoding is given
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "cp1252")
    export.export(folder, "csv", tmp_path / "x.csv")
    monkeypatch.undo()
    assert read_csv((tmp_path / "x.csv").read_bytes().decode("utf-8"))[1][1] == "Ana Pérez"
    assert zip_members(tmp_path / "x-feedback.zip")["ana.html"][1] == "<p>ana ✓</p>"


def test_a_student_whose_feedback_file_is_gone_is_left_out_of_the_zip(tmp_path):
    folder = gradebook_folder(tmp_path)
    (folder / "feedback" / "bob.html").unlink()
    (folder / "feedback" / "ana.md").unlink()
    assert export.export(folder, "csv", tmp_path / "x.csv").messages == []
    assert sorted(zip_members(tmp_path / "x-feedback.zip")) == ["ana.html", "s3.html"]
    result = export.export(folder, "canvas", tmp_path / "c.csv", assignment=COLUMN)
    assert zip_members(tmp_path / "c-feedback.zip") == {}
    assert result.messages[0].startswith("2 students have no file")  # ana had a file: she is not listed


@pytest.mark.parametrize("count, shown", [
    (20, ", ".join(f"m{n:02}" for n in range(20))),
    (21, ", ".join(f"m{n:02}" for n in range(20)) + " and 1 more"),
])
def test_the_students_without_canvas_feedback_are_named_up_to_twenty(tmp_path, count, shown):
    rows = [dict(ROWS[1], student=f"m{n:02}", feedback_file=f"m{n:02}") for n in range(count)]
    folder = gradebook_folder(tmp_path, rows)
    result = export.export(folder, "canvas", tmp_path / "c.csv")
    assert result.messages == [f"{count} students have no file of Canvas's download to attach feedback to (missing, "
                               f"or graded from another source); give theirs by hand from {folder / 'feedback'}/: "
                               f"{shown}"]


def test_an_empty_class_exports_headers_only(tmp_path):
    folder = gradebook_folder(tmp_path, [])
    result = export.export(folder, "moodle", tmp_path / "deep" / "er" / "m.csv")
    written = (tmp_path / "deep" / "er" / "m.csv").read_bytes().decode("utf-8")
    assert written == BOM + "Email address,ID number,Grade,Feedback\r\n"
    assert result.messages == [] and zip_members(tmp_path / "deep" / "er" / "m-feedback.zip") == {}


def test_a_gradebook_without_submissions_exports_headers_only(tmp_path):
    folder = tmp_path / "gb"
    folder.mkdir()
    (folder / "grades.json").write_text(json.dumps({"lab": "lab09"}), encoding="utf-8")
    assert export.export(folder, "csv", tmp_path / "c.csv").messages == []
    assert (tmp_path / "c.csv").read_text(encoding="utf-8") == (
        BOM + "student,name,email,lms_id,section,status,raw_score,late,late_days,penalty,score,max_score,notes\n")


def test_the_moodle_feedback_column_stops_at_2000_characters():
    exercises = points(2.0, 3.0)  # "alpha: 2/2; beta: 3/3; " is 23 characters
    whole = {"exercises": exercises, "lang": "en", "note_texts": [{"en": "x" * 1977}]}
    assert export._feedback_text(whole) == "alpha: 2/2; beta: 3/3; " + "x" * 1977
    longer = dict(whole, note_texts=[{"en": "x" * 1977 + "yz"}])
    assert export._feedback_text(longer) == "alpha: 2/2; beta: 3/3; " + "x" * 1977


@pytest.mark.parametrize("setup, message", [
    ("absent", "grades.json: cannot be read ([Errno 2]"),
    ("not json", "grades.json: cannot be read (Expecting value"),
    ("no roster", ": graded without a roster (one row per file); grade with --roster for an export"),
])
def test_a_gradebook_that_cannot_be_exported(tmp_path, setup, message):
    folder = tmp_path / "gb"
    folder.mkdir()
    if setup == "not json":
        (folder / "grades.json").write_text("not json", encoding="utf-8")
    elif setup == "no roster":
        (folder / "grades.json").write_text(json.dumps({"lab": "lab09", "submissions": [{"student": "a"}]}))
    with pytest.raises(UsageError) as error:
        export.export(folder, "csv", tmp_path / "x.csv", missing="none")
    assert str(error.value).startswith(str(folder)) and message in str(error.value)
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("target, missing, message", [
    ("csv", "none", "--missing 'none': zero or empty"),
    ("blackboard", "zero", "unknown export target 'blackboard': canvas, moodle or csv"),
])
def test_options_that_cannot_be_exported(tmp_path, target, missing, message):
    folder = gradebook_folder(tmp_path)
    with pytest.raises(UsageError) as error:
        export.export(folder, target, tmp_path / "x.csv", missing=missing)
    assert str(error.value) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gb"]


# ---------------------------------------------------------------- which Canvas column
def grades_with(*columns):
    return {"lab": "lab09", "lms_columns": list(columns)}


def test_the_one_column_that_names_the_lab_is_taken():
    grades = grades_with("Quiz 9 (1)", "Lab 9 Current Score", "Lab 9 Final Points", "Lab 9 Unposted Grade",
                         "Lab 9 Override Score", "Override Status", 9, None, "Lab 9 (2)", "Lab 19 (3)")
    assert export.canvas_column(grades, None) == ("Lab 9 (2)", [])


@pytest.mark.parametrize("columns, message", [
    ((), "Canvas needs the existing gradebook column of lab09, or its import creates a new assignment named 'lab09': "
         "pass --assignment with the column's header as your Canvas gradebook export writes it (e.g. --assignment "
         "'Lab 2: Causal attention (48212)'), or grade with that export as --roster"),
    (("Current Score", "Lab 9 Final Grade"), "Canvas needs the existing gradebook column of lab09"),  # totals only
    (("Quiz 9 (1)", "Lab 19 (3)"), "no column of the Canvas gradebook export names lab09; its columns: 'Quiz 9 (1)'; "
                                   "'Lab 19 (3)'. Pass --assignment with the one to fill."),
    (("Lab 9 (1)", "Quiz (4)", "lab09 resubmission (2)"),
     "several columns of the Canvas gradebook export name lab09: 'Lab 9 (1)'; 'lab09 resubmission (2)'. Pass "
     "--assignment with the one to fill."),
])
def test_no_column_or_several_are_refused(columns, message):
    with pytest.raises(UsageError) as error:
        export.canvas_column(grades_with(*columns), None)
    assert str(error.value).startswith(message)


def test_a_named_assignment_must_be_a_column_when_columns_are_known():
    with pytest.raises(UsageError) as error:
        export.canvas_column(grades_with("Lab 9 (1)", "Quiz (2)", "Final Score"), "Lab 9 (7)")
    assert str(error.value) == ("--assignment 'Lab 9 (7)' is not a column of the Canvas gradebook export this term's "
                                "roster came from (Canvas would create a new assignment); its columns: 'Lab 9 (1)'; "
                                "'Quiz (2)'")
    assert export.canvas_column(grades_with("Lab 9 (1)", "Quiz (2)"), "Quiz (2)") == ("Quiz (2)", [])


@pytest.mark.parametrize("assignment, warned", [("Lab 9 (12)", False), ("Lab 9", True), ("Lab 9 (12) ", True),
                                                ("Lab 9(12)", True), ("Lab 9 (x)", True)])
def test_a_named_assignment_without_columns_is_taken_with_a_warning_unless_it_has_an_id(assignment, warned):
    note = (f"note: {assignment!r} has no Canvas id '(NNN)': Canvas matches it by the exact assignment title, and "
            "creates a new assignment if no assignment has that title.")
    assert export.canvas_column({"lab": "lab09"}, assignment) == (assignment, [note] if warned else [])


@pytest.mark.parametrize("column, lab, names", [
    ("Lab 12: Review (48300)", "lab12", True), ("Lab 2 (12)", "lab12", False), ("Lab (12)", "lab12", False),
    ("Lab (2)", "lab02", False), ("Laboratory #3", "lab03", True), ("Laboratorio 3", "lab03", True),
    ("Lab.3", "lab03", True), ("LAB 003", "lab03", True), ("Lab 30", "lab03", False), ("Slab 3", "lab03", False),
    ("Lab 2 and Lab 3", "lab03", True), ("Labo 3", "lab03", True), ("Labs 3", "lab03", False),
])
def test_which_column_names_a_lab(column, lab, names):
    assert export.names_lab(column, lab) is names


# ---------------------------------------------------------------- the names in the zip
@pytest.mark.parametrize("file, ids", [
    ("submissions.zip: folder/anaperez_LATE_1001_5555_lab09.ipynb", ("1001", "5555")),
    ("a: b: ana_12_34_56.ipynb", ("12", "34")),
    ("ana_12_x_34_y.ipynb", ("12", "34")),
    ("ana_12.ipynb", None), ("ana_12_34.ipynb", None), ("ana.ipynb", None), ("", None),
    ("ana_١٢_34_56_x.ipynb", ("34", "56")),  # Arabic-Indic digits are no Canvas id
    ("12_34_ana.ipynb", ("12", "34")),
    # nested archives whose names hold numbers: only the last part is Canvas's file name
    ("batch_4_5: resub_6_7: ana_12_34_x.ipynb", ("12", "34")),
])
def test_canvas_ids_are_read_as_canvas_reads_a_reuploaded_name(file, ids):
    assert export.canvas_ids(file) == ids


@pytest.mark.parametrize("row, member", [
    ({"status": "graded", "lms_id": "12", "name": "Zoë O'Neil-Smith", "file": "x: zoe_12_34_x.ipynb"},
     "zooneilsmith_12_34_feedback.ipynb"),
    ({"status": "graded", "lms_id": "12", "lms_name": "Bo", "name": "Zoë", "file": "zoe_12_34_x.ipynb"},
     "bo_12_34_feedback.ipynb"),
    ({"status": "graded", "lms_id": "12", "name": "李", "file": "zoe_12_34_x.ipynb"}, "student_12_34_feedback.ipynb"),
    ({"status": "graded", "lms_id": "12", "file": "zoe_12_34_x.ipynb"}, "student_12_34_feedback.ipynb"),
    ({"status": "graded", "lms_id": "12", "name": "a" * 45, "file": "zoe_12_34_x.ipynb"},
     "a" * 40 + "_12_34_feedback.ipynb"),
    ({"status": "graded", "lms_id": "13", "name": "Zoë", "file": "zoe_12_34_x.ipynb"}, None),  # another's file
    ({"status": "graded", "name": "Zoë", "file": "zoe_12_34_x.ipynb"}, None),
    ({"status": "missing", "lms_id": "12", "name": "Zoë", "file": "zoe_12_34_x.ipynb"}, None),
    ({"status": "graded", "lms_id": "12", "name": "Zoë"}, None),
])
def test_the_canvas_member_name(row, member):
    assert export._canvas_member(row) == member


@pytest.mark.parametrize("row, member", [
    ({"student": "s1", "lms_name": "Ana <P>", "name": "Ana", "lms_id": "7"},
     "Ana P_7_assignsubmission_file_feedback.html"),
    # what Windows and zip tools cannot take in a name goes, then the spaces around it
    ({"student": "s1", "name": ' a/b\\c:d*e?f"g|h\x01 ', "lms_id": "7"},
     "abcdefgh_7_assignsubmission_file_feedback.html"),
    ({"student": "s1", "name": "??", "lms_id": ""}, "s1_s1_assignsubmission_file_feedback.html"),
    ({"student": "s1"}, "s1_s1_assignsubmission_file_feedback.html"),
])
def test_the_moodle_member_name(row, member):
    assert export._moodle_name(row) == member
