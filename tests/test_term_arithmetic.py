"""The term's arithmetic, in this process: late days, the penalty (a percentage of the student's
raw score, capped), extensions, overrides and their refusals, and CSV cells that cannot start a
formula in grades.csv and in every export.

Expected numbers are worked out by hand in the comments: students here have partial scores, so
a penalty taken from the maximum instead of the raw score, or a cap that is not applied, shows.
"""
import csv
import io
import json
from datetime import datetime, timedelta, timezone

import pytest

from autograder.grader.submissions import UsageError
from autograder.labs import LabSpec, get_lab
from autograder.term import book, export, lateness, overrides

LAB01 = get_lab("lab01")
DUE = "2026-12-10T23:59:00+01:00"  # 22:59:00 UTC
DUE_UTC = datetime(2026, 12, 10, 22, 59, tzinfo=timezone.utc)
# 6 of lab01's 10 points: causal_mask 2, allowed_mask 1, blocked_mask 1, padding_mask 2, combined 0, window 0
PARTIAL = {"causal_mask": 2, "allowed_mask": 1, "blocked_mask": 1, "padding_mask": 2, "combined_mask": 0,
           "sliding_window_mask": 0}


def stamp(after: timedelta) -> str:
    """nbgrader's timestamp.txt for a hand-in `after` the due time."""
    return (DUE_UTC + after).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def policy(per_day=10.0, cap=30.0, due=DUE):
    return lateness.Policy(lateness.parse_due(due) if due else None, per_day, cap)


# ---------------------------------------------------------------- days and percentages
@pytest.mark.parametrize("after, days", [
    (timedelta(0), 0), (timedelta(seconds=1), 1), (timedelta(days=1), 1), (timedelta(days=1, seconds=1), 2),
    (timedelta(days=2, hours=23), 3), (timedelta(days=10), 10),
])
def test_a_started_day_counts_whole(after, days):
    assessed = lateness.assess(policy(per_day=10, cap=100), 0, stamp(after), False)
    assert assessed.late is (days > 0)
    assert assessed.late_days == days
    assert assessed.penalty_percent == 10 * days
    assert assessed.submitted == (DUE_UTC + after).isoformat()  # the row says when, late or not


def test_a_hand_in_before_the_due_time_is_on_time():
    assessed = lateness.assess(policy(), 0, stamp(-timedelta(hours=5)), False)
    assert (assessed.late, assessed.late_days, assessed.penalty_percent) == (False, 0, 0.0)
    assert assessed.submitted == (DUE_UTC - timedelta(hours=5)).isoformat()


@pytest.mark.parametrize("days, percent", [(0, 0), (1, 10), (2, 20), (3, 30), (4, 30), (40, 30), (-2, 0)])
def test_the_penalty_per_day_stops_at_the_cap(days, percent):
    assert lateness.penalty_for(policy(per_day=10, cap=30), days) == percent


def test_a_cap_of_zero_and_a_cap_above_what_is_reached():
    assert lateness.penalty_for(policy(per_day=10, cap=0), 5) == 0
    assert lateness.penalty_for(policy(per_day=7.5, cap=100), 3) == 22.5


@pytest.mark.parametrize("extension, after, days", [
    (2, timedelta(days=2), 0), (2, timedelta(days=2, seconds=1), 1), (0.5, timedelta(hours=12), 0),
    (0.5, timedelta(hours=13), 1), (3, timedelta(days=1), 0),
])
def test_an_extension_moves_the_due_date(extension, after, days):
    assessed = lateness.assess(policy(per_day=10, cap=100), extension, stamp(after), False)
    assert (assessed.late, assessed.late_days, assessed.penalty_percent) == (days > 0, days, 10 * days)


def test_without_a_due_date_nothing_is_late():
    assessed = lateness.assess(policy(due=None), 0, stamp(timedelta(days=30)), False)
    assert (assessed.late, assessed.penalty_percent) == (False, 0.0)
    assert assessed.submitted is not None


def test_a_late_flag_without_a_time_costs_one_day():
    flagged = lateness.assess(policy(per_day=15, cap=100), 0, None, True)
    assert (flagged.late, flagged.late_days, flagged.penalty_percent) == (True, None, 15)
    no_due = lateness.assess(policy(per_day=15, cap=100, due=None), 0, None, True)
    assert no_due.penalty_percent == 15  # a per-day penalty was asked for, even without --due
    nothing = lateness.assess(policy(per_day=0, cap=100, due=None), 0, None, True)
    assert (nothing.late, nothing.penalty_percent) == (True, 0.0)
    capped = lateness.assess(policy(per_day=15, cap=5), 0, None, True)
    assert capped.penalty_percent == 5


def test_a_late_flag_for_a_student_with_an_extension_costs_nothing_and_says_so():
    flagged = lateness.assess(policy(), 1, None, True)
    assert (flagged.late, flagged.late_days, flagged.penalty_percent) == (True, None, 0.0)
    assert flagged.note == "term.note.late_flag_extension"


def test_no_time_and_no_flag_under_a_due_date_is_on_time_and_flagged():
    assessed = lateness.assess(policy(), 0, None, False)
    assert (assessed.late, assessed.late_days, assessed.penalty_percent) == (False, 0, 0.0)
    assert (assessed.note, assessed.time_unknown) == ("term.note.time_unknown", True)


def test_no_time_and_no_due_date_is_on_time_without_a_flag():
    assessed = lateness.assess(policy(due=None), 0, None, False)
    assert (assessed.late, assessed.penalty_percent, assessed.note, assessed.time_unknown) == (False, 0.0, None, False)


def test_canvas_saying_on_time_is_on_time_without_a_flag():
    assessed = lateness.assess(policy(), 0, None, False, time_source=lateness.CANVAS_FLAG)
    assert (assessed.late, assessed.note, assessed.time_unknown) == (False, None, False)


def test_an_odd_timestamp_is_on_time_with_a_note():
    assessed = lateness.assess(policy(), 0, "last Tuesday", False)
    assert (assessed.late, assessed.penalty_percent, assessed.note) == (False, 0.0, "term.note.odd_timestamp")


@pytest.mark.parametrize("text, iso", [
    ("2026-12-10 22:59:01.5 UTC", "2026-12-10T22:59:01.500000+00:00"),
    ("2026-12-10 22:59:01 GMT", "2026-12-10T22:59:01+00:00"),
    ("2026-12-10 23:59:01 Europe/Berlin", "2026-12-10T23:59:01+01:00"),
    ("2026-12-10 22:59:01", "2026-12-10T22:59:01+00:00"),  # no zone: UTC, as nbgrader
    ("2026-12-10T23:59:01+01:00", "2026-12-10T23:59:01+01:00"),
    ("2026-12-10T22:59:01Z", "2026-12-10T22:59:01+00:00"),
    ("2026-12-10 22:59:01 utc", "2026-12-10T22:59:01+00:00"),  # zone words in any case
    ("2026-12-10 22:59:01 gmt", "2026-12-10T22:59:01+00:00"),
    ("2026-12-10 22:59:01 Z", "2026-12-10T22:59:01+00:00"),
    ("2026-12-10 22:59:01 z", "2026-12-10T22:59:01+00:00"),
    ("2026-12-10 22:59:01 +01:00", "2026-12-10T22:59:01+01:00"),  # an offset after a space is no zone word
    # Python 3.11 reads any number of second fractions: 20 + 60 = 80 characters, just inside the cap
    ("2026-12-10T22:59:01." + "1" * 60, "2026-12-10T22:59:01.111111+00:00"),
])
def test_timestamps_and_their_zones(text, iso):
    assert lateness.parse_timestamp(text).isoformat() == iso


@pytest.mark.parametrize("text", ["", "   ", "2026-12-10 22:59:01 IST", "2026-12-10 22:59 Mars/Olympus", "soon",
                                  "2026-12-10 " + "9" * 80,
                                  "2026-12-10T22:59:01z",  # ISO 8601 writes Z upper case (Python 3.11 reads only that)
                                  "2026-12-10T22:59:01." + "1" * 61])  # 81 characters: just outside the cap
def test_timestamps_that_are_not_read(text):
    assert lateness.parse_timestamp(text) is None


def test_due_dates_need_an_offset():
    assert lateness.parse_due(DUE) == DUE_UTC
    assert lateness.parse_due("2026-12-10T22:59:00Z") == DUE_UTC
    assert lateness.parse_due(None) is None
    with pytest.raises(UsageError, match="give the offset too .* or the due time depends on the machine's clock"):
        lateness.parse_due("2026-12-10T23:59:00")
    with pytest.raises(UsageError, match="--due 'tomorrow': not an ISO 8601 time"):
        lateness.parse_due("tomorrow")


@pytest.mark.parametrize("text, value", [("10", 10.0), ("0", 0.0), ("100", 100.0), ("12.5", 12.5), (None, 7.0)])
def test_percentages_between_0_and_100(text, value):
    assert lateness.percent(text, "--late-cap", 7.0) == value


@pytest.mark.parametrize("text", ["-1", "100.5", "nan", "inf", "ten", ""])
def test_percentages_outside_0_to_100_are_refused(text):
    with pytest.raises(UsageError, match="--late-cap"):
        lateness.percent(text, "--late-cap", 7.0)


# ---------------------------------------------------------------- the row: raw score, penalty, score
def record(points=PARTIAL, student="ana", status="graded"):
    return {"student": student, "status": status, "score": float(sum(points.values())), "max_score": 10.0,
            "path": f"{student}.ipynb", "lang": "en",
            "exercises": {e: {"points": float(p), "max_points": float(LAB01.exercise(e).points),
                              "status": "passed" if p == LAB01.exercise(e).points else "failed", "diagnosis": None,
                              "feedback": {"en": "."}}
                          for e, p in points.items()}}


def override(student, exercise, points, reason="", line=2):
    return overrides.Override(student, exercise, float(points), reason, line)


def row(meta=None, rec="partial", extension=0.0, spec=LAB01, found=None, **context):
    ctx = book.Context(spec, context.pop("policy", policy()), found or {}, **context)
    rec = record() if rec == "partial" else rec
    return book.build(ctx, book.Person("ana", "Ana", "ana@example.org", "1001", extension), rec, meta or {}).row


def money(r):
    return (r["raw_score"], r["late"], r["late_days"], r["penalty"], r["score"])


def test_the_late_penalty_is_a_share_of_the_raw_score_not_of_the_maximum():
    # 6 points, 2 days late at 10 % a day: 20 % of 6 = 1.2 (of the maximum it would be 2)
    assert money(row({"timestamp": stamp(timedelta(days=1, hours=3))})) == (6.0, True, 2, 1.2, 4.8)


def test_the_cap_is_reached_with_a_partial_score():
    # 6 points, 5 days late at 10 % a day, capped at 30 %: 1.8 (uncapped 3; of the maximum 3)
    assert money(row({"timestamp": stamp(timedelta(days=4, hours=1))})) == (6.0, True, 5, 1.8, 4.2)


def test_the_penalty_is_rounded_to_four_decimals_and_the_score_never_negative():
    odd = dict(PARTIAL, padding_mask=1.33333)  # 5.33333 points
    r = row({"timestamp": stamp(timedelta(hours=1))}, rec=record(odd), policy=policy(per_day=10, cap=100))
    assert (r["raw_score"], r["penalty"], r["score"]) == (5.3333, 0.5333, 4.8)
    everything = row({"timestamp": stamp(timedelta(days=20))}, policy=policy(per_day=10, cap=100))
    assert (everything["penalty"], everything["score"]) == (6.0, 0.0)


def test_the_canvas_late_flag_takes_one_days_share_of_the_raw_score():
    r = row({"late": True})
    assert money(r) == (6.0, True, None, 0.6, 5.4)
    assert r["penalty_percent"] == 10


def test_an_on_time_row_keeps_its_raw_score():
    assert money(row({"timestamp": stamp(-timedelta(minutes=1))})) == (6.0, False, 0, 0.0, 6.0)


def test_an_extension_on_the_roster_moves_the_due_date():
    assert money(row({"timestamp": stamp(timedelta(days=1, hours=3))}, extension=2)) == (6.0, False, 0, 0.0, 6.0)
    assert money(row({"timestamp": stamp(timedelta(days=2, hours=3))}, extension=2)) == (6.0, True, 1, 0.6, 5.4)


def test_overridden_points_replace_the_graders_before_the_penalty():
    found = {("ana", "combined_mask"): override("ana", "combined_mask", 1.5, "regraded by hand")}
    r = row({"timestamp": stamp(timedelta(hours=1))}, found=found)
    # 6 - 0 + 1.5 = 7.5, one day late: 0.75
    assert money(r) == (7.5, True, 1, 0.75, 6.75)
    assert r["exercises"]["combined_mask"]["points"] == 1.5 and r["exercises"]["combined_mask"]["override"]
    assert r["overrides"] == [{"exercise": "combined_mask", "points": 1.5, "reason": "regraded by hand"}]
    lowered = row(found={("ana", "causal_mask"): override("ana", "causal_mask", 0)})
    assert lowered["raw_score"] == 4.0  # an override may also take points away
    other = row(found={("bob", "combined_mask"): override("bob", "combined_mask", 2)})
    assert other["raw_score"] == 6.0  # another student's override changes nothing here


@pytest.mark.parametrize("days, expected", [
    (0, (6.0, False, 0, 0.0, 6.0)),  # excused
    (1, (6.0, True, 1, 0.6, 5.4)),
    (7, (6.0, True, 7, 1.8, 4.2)),  # capped at 30 %
])
def test_a_late_days_override_replaces_what_the_layout_said(days, expected):
    found = {("ana", overrides.LATE_DAYS): override("ana", overrides.LATE_DAYS, days, "doctor's note")}
    r = row({"timestamp": stamp(timedelta(days=3, hours=1))}, found=found)
    assert money(r) == expected
    assert r["overrides"] == [{"exercise": "late_days", "points": float(days), "reason": "doctor's note"}]


def test_a_late_days_override_for_a_student_the_layout_called_on_time():
    found = {("ana", overrides.LATE_DAYS): override("ana", overrides.LATE_DAYS, 2)}
    assert money(row({}, found=found)) == (6.0, True, 2, 1.2, 4.8)


def test_a_missing_hand_in_is_zero_and_never_late():
    r = row({"late": True}, rec=None)
    assert (r["status"], r["raw_score"], r["late"], r["penalty"], r["score"]) == ("missing", 0.0, False, 0.0, 0.0)
    assert all(item["points"] == 0 for item in r["exercises"].values())


def test_a_forbidden_call_costs_its_exercise_only_when_asked():
    meta = {"forbidden": {"causal_mask": ["F.scaled_dot_product_attention"], "padding_mask": []}}
    flagged = row(meta)
    assert flagged["raw_score"] == 6.0 and flagged["forbidden"] == {"causal_mask": ["F.scaled_dot_product_attention"]}
    penalised = row(meta, penalise_forbidden=True)
    assert penalised["raw_score"] == 4.0 and penalised["exercises"]["causal_mask"]["points"] == 0.0
    assert penalised["exercises"]["padding_mask"]["points"] == 2.0  # an empty list forbids nothing
    given_back = row(meta, penalise_forbidden=True, found={("ana", "causal_mask"): override("ana", "causal_mask", 2)})
    assert given_back["raw_score"] == 6.0


def test_hand_graded_parts_add_to_the_raw_score_and_the_maximum():
    spec = LabSpec(id="lab01", exercises=LAB01.exercises, hand_graded={"why_causal": 3.0})
    ungraded = row(spec=spec)
    assert (ungraded["raw_score"], ungraded["max_score"]) == (6.0, 13.0)
    assert ungraded["hand_graded"]["why_causal"] == {"points": 0.0, "max_points": 3.0, "graded": False, "text": ""}
    graded = row({"timestamp": stamp(timedelta(hours=2))}, spec=spec,
                 found={("ana", "why_causal"): override("ana", "why_causal", 2.5)})
    # 6 + 2.5 = 8.5, one day late: 0.85
    assert money(graded) == (8.5, True, 1, 0.85, 7.65)
    assert graded["hand_graded"]["why_causal"]["graded"] is True


# ---------------------------------------------------------------- overrides files
def overrides_file(tmp_path, *lines, name="overrides.csv"):
    path = tmp_path / name
    path.write_text("\n".join(["student,exercise,points,reason", *lines]) + "\n", encoding="utf-8")
    return path


MAXIMA = {"causal_mask": 2.0, "allowed_mask": 1.0, "why_causal": 3.0}


def load(tmp_path, *lines):
    return overrides.load(overrides_file(tmp_path, *lines), {"ana", "bob"}, MAXIMA)


@pytest.mark.parametrize("points", ["0", "2", "1.5", "2.0", "0.0"])
def test_points_from_zero_to_the_maximum_are_taken(tmp_path, points):
    found = load(tmp_path, f"ana,causal_mask,{points},ok")
    assert found == {("ana", "causal_mask"): overrides.Override("ana", "causal_mask", float(points), "ok", 2)}


@pytest.mark.parametrize("points", ["-1", "-0.5", "2.01", "3", "nan", "inf", "-inf", "two"])
def test_points_outside_zero_to_the_maximum_are_refused_with_their_line(tmp_path, points):
    with pytest.raises(UsageError) as error:
        load(tmp_path, "bob,allowed_mask,1,fine", f"ana,causal_mask,{points},x")
    assert "line 3" in str(error.value) and "between 0 and 2" in str(error.value)


@pytest.mark.parametrize("days, ok", [("0", True), ("3", True), ("366", True), ("367", False), ("-1", False),
                                      ("2.5", False), ("1e400", False)])
def test_late_days_are_whole_days_up_to_a_year(tmp_path, days, ok):
    if ok:
        assert load(tmp_path, f"ana,late_days,{days},")[("ana", "late_days")].points == float(days)
    else:
        with pytest.raises(UsageError, match="line 2"):
            load(tmp_path, f"ana,late_days,{days},")


def test_a_line_set_twice_in_one_file_is_refused_naming_both_lines(tmp_path):
    with pytest.raises(UsageError) as error:
        load(tmp_path, "ana,causal_mask,1,first", "bob,causal_mask,1,", "ana,causal_mask,2,second")
    assert "line 4" in str(error.value) and "line 2" in str(error.value)
    with pytest.raises(UsageError, match="line 3"):
        load(tmp_path, "ana,late_days,1,", "ana,late_days,1,")  # even with the same value


def test_the_same_exercise_for_two_students_and_two_exercises_for_one_student_are_fine(tmp_path):
    found = load(tmp_path, "ana,causal_mask,1,", "bob,causal_mask,2,", "ana,allowed_mask,0,", "ana,late_days,0,")
    assert sorted(found) == [("ana", "allowed_mask"), ("ana", "causal_mask"), ("ana", "late_days"),
                             ("bob", "causal_mask")]


def test_an_empty_points_cell_sets_nothing_and_does_not_block_a_later_line(tmp_path):
    found = load(tmp_path, "ana,why_causal,,", "ana,why_causal,2.5,read it")
    assert found[("ana", "why_causal")].points == 2.5 and found[("ana", "why_causal")].line == 3


@pytest.mark.parametrize("line, words", [
    ("carol,causal_mask,1,", r"line 2: unknown student 'carol' \(not on the roster and not in the gradebook\)"),
    ("ana,causal_attention,1,", "line 2: unknown exercise 'causal_attention'; this lab has allowed_mask, causal_mask, "
                                "why_causal and late_days"),
    ("ana,Causal_mask,1,", "unknown exercise")])
def test_unknown_students_and_exercises_are_refused(tmp_path, line, words):
    with pytest.raises(UsageError, match=words):
        load(tmp_path, line)


def test_a_header_without_the_needed_columns_is_refused(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("student,reason\nana,x\n", encoding="utf-8")
    with pytest.raises(UsageError) as error:
        overrides.load(path, {"ana"}, MAXIMA)
    assert f"overrides {path} line 1: the header must be student,exercise,points,reason; missing exercise, points" \
        == str(error.value)


def test_the_reason_column_may_be_left_out(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("student,exercise,points\nana,causal_mask,1\n", encoding="utf-8")
    assert overrides.load(path, {"ana"}, MAXIMA) == {
        ("ana", "causal_mask"): overrides.Override("ana", "causal_mask", 1.0, "", 2)}


def test_an_overrides_file_that_is_not_there_is_named(tmp_path):
    with pytest.raises(UsageError, match=r"^overrides .*absent\.csv: no such file"):
        overrides.load(tmp_path / "absent.csv", {"ana"}, MAXIMA)


def test_a_line_set_in_two_overrides_files_is_refused_before_grading(tmp_path, capsys):
    from autograder.grader import cli

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ana.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    roster = tmp_path / "roster.csv"
    roster.write_text("student\nana\nbob\n", encoding="utf-8")
    first = overrides_file(tmp_path, "ana,causal_mask,1,", name="first.csv")
    second = overrides_file(tmp_path, "bob,causal_mask,1,", "ana,causal_mask,2,", name="second.csv")
    out = tmp_path / "out"
    code = cli.main(["grade", "lab01", str(subs), "--out", str(out), "--roster", str(roster),
                     "--overrides", str(first), "--overrides", str(second), "--quiet"])
    error = capsys.readouterr().err
    assert code == 2, error
    assert "second.csv line 3" in error and "ana causal_mask" in error
    assert not (out / "grades.csv").exists() and not (out / "grades.json").exists()


# ---------------------------------------------------------------- CSV cells that cannot start a formula
HOSTILE = ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


def shown(text):
    """A hostile cell as a spreadsheet must get it (OWASP CSV injection): a control character becomes a space
    (a cell is one line), and a leading = + - @ gets a quote in front."""
    return " " + text[1:] if text[0] in "\t\r" else "'" + text


def read_csv(text):
    """The rows of a CSV text as a spreadsheet sees them (the UTF-8 byte order mark is for Excel)."""
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))


def test_every_hostile_cell_is_defused_and_keeps_its_text():
    assert [shown(text) for text in HOSTILE] == ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2+3", "'@SUM(A1)",
                                                 " TAB", " CR"]


@pytest.mark.parametrize("text", HOSTILE)
def test_grades_csv_cells_never_start_a_formula(text):
    r = row({"file": text, "superseded": [text]}, rec=dict(record(), student=text))
    r.update(student=text, name=text, lms_id=text, note_texts=[{"en": text}], reason_code=text)
    r["exercises"]["causal_mask"]["diagnosis"] = text
    header, line = read_csv(book.csv_text(LAB01, [r]))
    cells = dict(zip(header, line))
    for column in ("student", "name", "lms_id", "causal_mask_diagnosis", "reason", "superseded", "file", "notes"):
        assert cells[column] == shown(text), (column, cells[column])


def test_typed_ids_in_lab00s_grades_csv_never_start_a_formula():
    spec = get_lab("lab00")
    rec = {"student": "ana", "status": "graded", "score": 0.0, "max_score": 10.0, "path": "a.ipynb", "lang": "en",
           "typed_id": "=1+1", "id_mismatch": True,
           "exercises": {e.id: {"points": 0.0, "max_points": 2.0, "status": "failed", "feedback": {"en": "."}}
                         for e in spec.exercises}}
    ctx = book.Context(spec, policy(), {})
    r = book.build(ctx, book.Person("ana"), rec, {}).row
    header, line = read_csv(book.csv_text(spec, [r]))
    cells = dict(zip(header, line))
    assert (cells["typed_id"], cells["id_mismatch"]) == ("'=1+1", "yes")


def test_harmless_cells_are_left_as_they_are():
    r = row({"file": "a=b.ipynb"})
    r.update(name="Ana-María", note_texts=[{"en": "late: -20%", "es": "tarde: -20%"}])
    header, line = read_csv(book.csv_text(LAB01, [r]))
    cells = dict(zip(header, line))
    assert (cells["name"], cells["file"], cells["notes"]) == ("Ana-María", "a=b.ipynb", "late: -20%")
    assert (cells["raw_score"], cells["score"], cells["max_score"], cells["causal_mask"]) == ("6", "6", "10", "2")
    header, line = read_csv(book.csv_text(LAB01, [r], lang="es"))
    assert dict(zip(header, line))["notes"] == "tarde: -20%"  # the instructor's language


def test_unmatched_csv_cells_never_start_a_formula():
    rows = read_csv(book.unmatched_csv({"unknown_student": [{"key": "=1", "name": "+2", "file": "-3"}],
                                        "unparsed": ["@4"], "refused": ["\t5"], "junk": ["\r6"]}))
    assert rows[1] == ["unknown_student", "'=1", "'+2", "'-3"]
    assert [r[0] for r in rows[2:]] == ["unparsed", "refused", "junk"]
    assert [r[3] for r in rows[2:]] == ["'@4", " 5", " 6"]


def graded_folder(tmp_path, text):
    """A gradebook folder as `grade --roster` writes it, one row whose every text is `text`."""
    folder = tmp_path / "gb"
    (folder / "feedback").mkdir(parents=True)
    entry = row({"timestamp": stamp(timedelta(days=1, hours=3))})
    entry.update(student=text, name=text, email=text, lms_id=text, lms_display_name=text, login=text,
                 note_texts=[{"en": text}], feedback_file="ana")
    (folder / "grades.json").write_text(json.dumps({"lab": "lab01", "max_score": 10.0, "submissions": [entry]}))
    (folder / "feedback" / "ana.html").write_text("<p>feedback</p>")
    return folder


def exported(folder, target, out):
    export.export(folder, target, out, assignment="Lab 1 (4821)" if target == "canvas" else None)
    return read_csv(out.read_bytes().decode("utf-8"))


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("target", ["canvas", "moodle", "csv"])
def test_every_export_escapes_every_text_cell(tmp_path, target, text):
    rows = exported(graded_folder(tmp_path, text), target, tmp_path / f"{target}.csv")
    student_rows = rows[2:] if target == "canvas" else rows[1:]
    (cells,) = student_rows
    texts = {"canvas": [0, 1, 2, 3], "moodle": [0, 1], "csv": [0, 1, 2, 3]}[target]
    for index in texts:
        assert cells[index] == shown(text), (target, index, cells)
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in cells), cells


@pytest.mark.parametrize("where", ["grades.csv", "csv export"])
def test_a_cr_inside_a_cell_keeps_its_row_whole(tmp_path, where):
    if where == "grades.csv":
        r = row()
        r.update(name="Ana\rMaría")
        rows = read_csv(book.csv_text(LAB01, [r]))
    else:
        rows = exported(graded_folder(tmp_path, "Ana\rMaría"), "csv", tmp_path / "x.csv")
    assert len(rows) == 2 and "Ana María" in rows[1]


@pytest.mark.parametrize("target, header", [
    ("canvas", ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 1 (4821)"]),
    ("moodle", ["Email address", "ID number", "Grade", "Feedback"]),
    ("csv", ["student", "name", "email", "lms_id", "section", "status", "raw_score", "late", "late_days", "penalty",
             "score", "max_score"]),
])
def test_exports_carry_the_late_score(tmp_path, target, header):
    rows = exported(graded_folder(tmp_path, "ana"), target, tmp_path / "x.csv")
    assert rows[0][:len(header)] == header
    if target == "canvas":
        assert rows[1] == ["Points Possible", "", "", "", "", "10"]
        assert rows[2][5] == "4.8"
    elif target == "moodle":
        assert rows[1][2] == "4.8" and rows[1][3].startswith("causal_mask: 2/2; allowed_mask: 1/1")
    else:
        assert rows[1][5:12] == ["graded", "6", "yes", "2", "1.2", "4.8", "10"]


# ---------------------------------------------------------------- where a time came from, and odd times
@pytest.mark.parametrize("due, after, late", [(None, timedelta(days=3), False), (DUE, -timedelta(hours=1), False),
                                              (DUE, timedelta(hours=1), True)])
def test_the_source_of_a_time_is_kept_on_the_row(due, after, late):
    found = lateness.assess(policy(due=due), 0, DUE_UTC + after, False, time_source="moodle_worksheet")
    assert (found.late, found.time_source, found.time_unknown) == (late, "moodle_worksheet", False)


@pytest.mark.parametrize("due, unknown", [(DUE, True), (None, False)])
def test_an_unreadable_time_is_on_time_said_so_and_keeps_its_source(due, unknown):
    found = lateness.assess(policy(due=due), 0, "the 10th, around noon", False)
    assert found == lateness.Lateness(note="term.note.odd_timestamp", time_source="nbgrader_timestamp",
                                      time_unknown=unknown)
    given = lateness.assess(policy(due=due), 0, None, False, time_source="moodle_worksheet", odd=True)
    assert (given.note, given.time_source, given.time_unknown) == ("term.note.odd_timestamp", "moodle_worksheet", unknown)


def test_canvas_late_flag_under_an_extension_is_no_penalty_and_says_where_it_came_from():
    found = lateness.assess(policy(), 2, None, True)
    assert found == lateness.Lateness(True, None, 0.0, note="term.note.late_flag_extension", time_source="canvas_flag")


# ---------------------------------------------------------------- overrides: every refusal names the file and line
@pytest.mark.parametrize("lines, line, says", [
    (["carol,causal_mask,1,"], 2, "unknown student 'carol'"),
    (["ana,no_such_part,1,"], 2, "unknown exercise 'no_such_part'"),
    (["ana,causal_mask,1,", "ana,causal_mask,3,"], 3, "points '3' for causal_mask must be a number between 0 and 2"),
    (["ana,late_days,1.5,"], 2, "late_days must be a whole number, not '1.5'"),
    (["ana,causal_mask,1,", "ana,causal_mask,2,"], 3, "ana causal_mask is already set on line 2"),
])
def test_every_overrides_refusal_names_the_file_and_line(tmp_path, lines, line, says):
    path = overrides_file(tmp_path, *lines)
    with pytest.raises(UsageError) as error:
        overrides.load(path, {"ana", "bob"}, MAXIMA)
    assert str(error.value).startswith(f"overrides {path} line {line}: {says}")


@pytest.mark.parametrize("length, kept", [
    (450, "r" * 450), (500, "r" * 500), (501, "r" * 500 + "…[+1 characters]"), (900, "r" * 500 + "…[+400 characters]")])
def test_an_override_reason_is_kept_up_to_500_characters(tmp_path, length, kept):
    found = load(tmp_path, "ana,causal_mask,1," + "r" * length)
    assert found[("ana", "causal_mask")].reason == kept


def test_an_overrides_file_without_a_reason_column_has_empty_reasons(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("student,exercise,points\nana,causal_mask,1\n", encoding="utf-8")
    assert overrides.load(path, {"ana"}, MAXIMA) == {
        ("ana", "causal_mask"): overrides.Override("ana", "causal_mask", 1.0, "", 2)}
