"""Whole generated terms of lab01 in Canvas, Moodle and nbgrader layouts, graded once per layout.

Each term has non-submitters, resubmissions, late and extended students,
wrong-lab files, students not on the roster, an unparseable file name and an
identical pair. The class is the smallest that holds every kind of student of
corpus/term.py at least twice, in both sections, with the shared wrong
answer held by more students than the identical pair (CLASS_SIZE,
test_the_class_holds_every_kind_twice). Each LMS's own files are the input: Canvas's gradebook export
as the roster with its zip, Moodle's grading worksheet (hand-in times
included) with its zip, nbgrader's folder with a CSV roster. The expected
gradebook comes from how the term was built (corpus/term.py), and is compared
row by row. Later tests rerun these gradebooks (other Moodle zip forms and
rosters, Canvas's submission times, an emailed file, kept overrides): every
record is reused, so a rerun costs seconds.

The first grading of each layout runs `python -m autograder` as a command;
the later steps (reruns, reports, exports, status) call the same command
line's main() in this process, which prints and exits the same way without
starting an interpreter per step; one report is still rendered by the command
to show that two processes write the same page.
"""
import csv
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from corpus import term as T
from corpus.cli_here import run_here

ROOT = Path(__file__).resolve().parents[1]
CLASS_SIZE = 23  # kinds cycle by i % 10: 23 gives each kind twice and the wrong triangle three holders
MOODLE_LATE = {}  # late_days overrides of the Moodle term (one on-time student excused... made late by hand)


def run(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def policy(seed="12"):
    # one job slot: a second warm worker costs more than it saves on 20 notebooks (parallel terms:
    # test_term_attacks.py, test_grader_*.py)
    return ["--due", T.DUE, "--late-per-day", T.PER_DAY, "--late-cap", T.CAP, "--jobs", "1", "--seed", seed,
            "--quiet"]


@pytest.fixture(scope="module")
def terms(tmp_path_factory):
    """layout -> (term, out folder, first run's stdout, source, work folder), each graded once for the module."""
    made = {}
    term = T.make_term(CLASS_SIZE)
    for layout in ("canvas", "moodle", "nbgrader"):
        work = tmp_path_factory.mktemp(layout)
        extra = []
        if layout == "canvas":
            source = work / "submissions.zip"
            T.canvas_zip(term, source)
            roster = work / "canvas_gradebook.csv"
            roster.write_text(T.canvas_gradebook_csv(term), encoding="utf-8")
        elif layout == "moodle":
            source = work / "moodle.zip"
            T.moodle_zip(term, source)
            roster = work / "worksheet.csv"
            roster.write_text(T.moodle_worksheet_csv(term), encoding="utf-8")
            on_time = next(s for s in term.students if s.variant == "full" and not s.late_days and not s.earlier)
            MOODLE_LATE[on_time.student] = 3
            (work / "late.csv").write_text("student,exercise,points,reason\n"
                                           f"{on_time.student},late_days,3,handed in by email on Sunday\n")
            extra = ["--overrides", work / "late.csv", "--lms-timezone", T.LMS_ZONE]
        else:
            source = work / "submitted"
            T.nbgrader_folder(term, source)
            roster = work / "roster.csv"
            roster.write_text(term.roster_csv())
        out = work / "out"
        result = run("grade", T.LAB, source, "--out", out, "--roster", roster, *policy(), *extra)
        made[layout] = (term, out, result.stdout, source, work)
    return made


def test_the_class_holds_every_kind_twice():
    """The class is small but still holds what the tests read: every kind of student at least twice, both
    sections, and the wrong triangle shared by more students than the identical pair (so that the pair is the
    smallest group losing points, ranked first in the report)."""
    students = T.make_term(CLASS_SIZE).students
    full_on_time = [s for s in students if s.variant == "full" and not s.earlier and not s.late_days]
    kinds = {
        "no hand-in": [s for s in students if s.variant is None],
        "resubmitted": [s for s in students if s.earlier],
        "late": [s for s in students if s.variant and s.late_days > s.extension_days],
        "late but extended": [s for s in students if s.variant and s.late_days and s.extension_days >= s.late_days],
        "wrong lab": [s for s in students if s.variant == "wrong_lab"],
        "blank": [s for s in students if s.variant == "blank"],
        "full on time": full_on_time,
    }
    assert all(len(found) >= 2 for found in kinds.values()), {kind: len(found) for kind, found in kinds.items()}
    assert [s.variant for s in students].count("pair_a") == [s.variant for s in students].count("pair_b") == 1
    assert [s.variant for s in students].count("wrong_triangle") >= 3
    assert {s.section for s in students} == {"Section A", "Section B"}


def rows(out: Path) -> dict:
    return {row["student"]: row for row in json.loads((out / "grades.json").read_text())["submissions"]}


def assert_expected_rows(term, out: Path, timing: str, late_override=None, superseded=None):
    found = rows(out)
    assert sorted(found) == sorted(s.student for s in term.students)  # one row each, nobody else
    for s in term.students:
        want = T.expected_row(s, timing, late_override)
        row = found[s.student]
        got = {"status": row["status"], "raw_score": row["raw_score"], "score": row["score"], "late": row["late"],
               "late_days": row["late_days"] if row["late"] else 0, "superseded": len(row["superseded"])}
        expect = {k: want[k] for k in got}
        if not want["late"]:
            expect["late_days"] = 0
        expect["superseded"] = (superseded or {}).get(s.student, expect["superseded"])
        assert got == expect, f"{timing} {s.student} ({s.variant}, late {s.late_days}, ext {s.extension_days})"
        if row["status"] == "graded":
            points = {e: item["points"] for e, item in row["exercises"].items()}
            assert points == {**T.FULL_POINTS, **want["points"]}, s.student
            diagnoses = {e: item["diagnosis"] for e, item in row["exercises"].items() if item["diagnosis"]}
            assert diagnoses == want["diagnoses"], s.student
        assert row["max_score"] == T.MAX


@pytest.mark.parametrize("layout", ["canvas", "moodle", "nbgrader"])
def test_every_roster_student_has_the_expected_row(terms, layout):
    term, out, _, _, _ = terms[layout]
    assert_expected_rows(term, out, layout, MOODLE_LATE if layout == "moodle" else None)


def test_the_canvas_export_is_the_roster(terms):
    """student = SIS User ID, lms_id = Canvas's ID, login = SIS Login ID, section, the name as Canvas writes it;
    the test student and the Points Possible row are nobody."""
    term, out, stdout, _, _ = terms["canvas"]
    grades = json.loads((out / "grades.json").read_text())
    assert grades["roster_format"] == "canvas"
    assert grades["lms_columns"] == ["Lab 00: Attention by hand (48210)", T.ASSIGNMENT]
    found = rows(out)
    for s in term.students:
        row = found[s.student]
        assert (row["lms_id"], row["login"], row["section"], row["lms_display_name"]) == \
            (s.lms_id, s.login, s.section, s.name), s.student
    assert "Student, Test" not in {row["name"] for row in found.values()}
    n = len(term.students)  # the export's lines: the header, Points Possible, the students, the test student
    assert f"Roster: canvas, {n} students in 2 sections; left out line {n + 3}: Canvas's test student" in stdout


@pytest.mark.parametrize("layout, source", [("canvas", "canvas_flag"), ("moodle", "moodle_worksheet"),
                                            ("nbgrader", "nbgrader_timestamp")])
def test_lateness_comes_from_the_lms_own_data(terms, layout, source):
    term, out, stdout, _, _ = terms[layout]
    grades = json.loads((out / "grades.json").read_text())
    assert grades["lateness_source"] == source
    found = rows(out)
    for s in term.students:
        row = found[s.student]
        if s.variant is None:
            assert (row["time_source"], row["time_unknown"]) == (None, False)
        elif layout == "moodle" and s.student in MOODLE_LATE:
            assert row["time_source"] == "override"
        else:
            assert (row["time_source"], row["time_unknown"]) == (source, False), s.student
    said = stdout.count("Canvas's download carries no submission times")
    assert said == (1 if layout == "canvas" else 0)


def test_moodle_worksheet_times_give_the_days(terms):
    term, out, _, _, _ = terms["moodle"]
    found = rows(out)
    late = next(s for s in term.students if s.late_days and not s.extension_days and s.variant == "full")
    row = found[late.student]
    assert (row["late"], row["late_days"], row["submitted"]) == (True, late.late_days, T.hand_in_time(late).isoformat())


@pytest.mark.parametrize("layout", ["canvas", "moodle", "nbgrader"])
def test_unknown_students_and_unparsed_names_are_reported_apart(terms, layout):
    term, out, stdout, _, _ = terms[layout]
    grades = json.loads((out / "grades.json").read_text())
    unknown = sorted(item["key"] for item in grades["unknown_student"])
    expected = sorted(lms for lms, _ in term.unknown) if layout != "nbgrader" else sorted(f"x{lms}" for lms, _ in term.unknown)
    assert unknown == expected
    assert all(f"unknown student (not on the roster, not graded): {key}" in stdout for key in expected)
    if layout == "canvas":
        assert len(grades["unparsed"]) == 1 and grades["unparsed"][0].endswith(": notes about lab01.ipynb")
    if layout == "moodle":
        assert len(grades["unparsed"]) == 1 and "Someone_assignsubmission_file_" in grades["unparsed"][0]
        assert any("onlinetext" in junk for junk in grades["junk"])
    with open(out / "unmatched.csv", newline="", encoding="utf-8-sig") as stream:
        kinds = [line["kind"] for line in csv.DictReader(stream)]
    assert kinds.count("unknown_student") == len(expected)


def test_resubmissions_keep_the_latest_and_list_the_others(terms):
    term, out, _, _, _ = terms["canvas"]
    found = rows(out)
    resubmitter = next(s for s in term.students if s.earlier)
    row = found[resubmitter.student]
    assert row["file"].endswith("_lab01_masks-1.ipynb") and row["superseded"][0].endswith("_lab01_masks.ipynb")
    assert row["score"] == T.MAX  # the blank earlier file was not graded, not as anybody else either
    assert "You handed in 1 other file before this one" in (out / "feedback" / f"{resubmitter.student}.md").read_text()


def test_late_and_extended_are_visible_per_student(terms):
    term, out, _, _, _ = terms["nbgrader"]
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as stream:
        table = {line["student"]: line for line in csv.DictReader(stream)}
    late = next(s for s in term.students if s.late_days and not s.extension_days)
    extended = next(s for s in term.students if s.extension_days)
    assert (table[late.student]["late"], table[late.student]["late_days"], table[late.student]["penalty"],
            table[late.student]["score"]) == ("yes", "2", "2", "8")
    assert (table[extended.student]["late"], table[extended.student]["score"]) == ("", "10")
    assert "Handed in 2 days after the due date" in (out / "feedback" / f"{late.student}.md").read_text()
    for column in ("raw_score", "late_days", "penalty", "score", "max_score", "superseded", "status",
                   "causal_mask", "causal_mask_diagnosis"):
        assert column in table[late.student]


def test_canvas_late_flag_without_a_day_count(terms):
    term, out, _, _, _ = terms["canvas"]
    found = rows(out)
    flagged = next(s for s in term.students if s.late_days and not s.extension_days and s.variant == "full")
    extended = next(s for s in term.students if s.extension_days)
    assert (found[flagged.student]["late"], found[flagged.student]["late_days"],
            found[flagged.student]["score"]) == (True, None, 9.0)
    assert (found[extended.student]["late"], found[extended.student]["score"]) == (True, T.MAX)
    assert any("extension" in note for note in found[extended.student]["notes"])


def test_the_identical_pair_is_flagged_in_the_report(terms, capsys):
    term, out, _, _, _ = terms["moodle"]
    run_here(capsys, "report", out)
    page = (out / "report.html").read_text()
    pair = sorted(s.student for s in term.students if s.variant in ("pair_a", "pair_b"))
    # ranked first: the smallest group sharing code that loses points, its members named with their points
    first = page.split("<ol class='groups'>", 1)[1].split("</ul></li>", 1)[0]
    assert "Identical graded code (after normalising names, comments and layout) in " in first
    assert first.count("<li>") == 2 and all(f"{s.name} ({s.student}): " in first
                                            for s in term.students if s.student in pair)
    assert "sliding_window_mask 0/2 (window_too_wide)" in first
    # the pair's own code differs as written: the notebooks are not byte-identical
    assert T.PAIR_A != T.PAIR_B


def test_the_report_counts_and_revisits(terms, capsys):
    from autograder.labs import get_lab

    term, out, _, _, _ = terms["nbgrader"]
    run_here(capsys, "report", out)
    page = (out / "report.html").read_text()
    n_missing = sum(1 for s in term.students if s.variant is None)
    n_wrong_lab = sum(1 for s in term.students if s.variant == "wrong_lab")
    n_late = sum(1 for s in term.students if s.late_days > s.extension_days and s.variant is not None)
    assert f"<td data-status='missing'>{n_missing}</td>" in page
    assert f"<td data-status='wrong_lab'>{n_wrong_lab}</td>" in page
    assert f"<td data-status='late'>{n_late}</td>" in page
    assert f"<td data-status='unknown_student'>{len(term.unknown)}</td>" in page
    wrong = sum(1 for s in term.students if s.variant == "wrong_triangle")
    exercise = get_lab("lab01").exercise("causal_mask")
    section = exercise.sections.get("wrong_triangle", exercise.section)  # the lab's own rule for its feedback
    assert (f"<tr><td><code>causal_mask</code></td><td><code>wrong_triangle</code></td><td>{wrong}</td>"
            f"<td>{round(100 * wrong / len(term.students))}%</td>") in page
    assert f"<td>{section}</td></tr>" in page
    assert page.count("<svg") == 2  # the score and the per-exercise figures, inline
    import re

    # nothing to fetch: the only URLs left are the XML namespace names of SVG itself
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg",
                                                            "http://www.w3.org/1999/xlink"}
    assert "<script" not in page and "<link" not in page and "date" not in page.lower()
    before = page
    run("report", out)  # the command itself, in a new process
    assert (out / "report.html").read_text() == before  # deterministic: no date, fixed ids, whichever process


@pytest.mark.parametrize("lang, title", [("es", "Informe de la clase: lab01"), ("de", "Kursbericht: lab01"),
                                         ("hi-Latn", "Class report: lab01")])
def test_the_report_in_the_book_languages(terms, lang, title, capsys):
    _, out, _, _, _ = terms["canvas"]
    run_here(capsys, "report", out, "--lang", lang)
    page = (out / "report.html").read_text()
    assert f'<html lang="{lang}">' in page and title in page


# ---------------------------------------------------------------- exports
def test_canvas_export_has_canvas_documented_columns(terms, tmp_path, capsys):
    term, out, _, _, _ = terms["canvas"]
    target = tmp_path / "canvas.csv"
    run_here(capsys, "export", out, "--to", "canvas", "--out", target, "--assignment", "Lab 01 (123456)")
    with open(target, newline="", encoding="utf-8-sig") as stream:
        table = list(csv.reader(stream))
    # Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then the assignment columns
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 01 (123456)"]
    assert table[1][0] == "Points Possible" and table[1][-1] == "10"
    by_canvas_id = {line[1]: line for line in table[2:]}
    assert sorted(by_canvas_id) == sorted(s.lms_id for s in term.students)
    for s in term.students:
        want = T.expected_row(s, "canvas")
        assert by_canvas_id[s.lms_id][0] == s.name and by_canvas_id[s.lms_id][2] == s.student
        assert float(by_canvas_id[s.lms_id][5]) == want["score"], s.student
    with zipfile.ZipFile(tmp_path / "canvas-feedback.zip") as bundle:  # named for Canvas's re-upload
        assert sorted(name.split("_")[1] for name in bundle.namelist()) == sorted(
            s.lms_id for s in term.students if s.variant is not None)


def test_moodle_export_identifier_grade_feedback(terms, tmp_path, capsys):
    term, out, _, _, _ = terms["moodle"]
    target = tmp_path / "moodle.csv"
    run_here(capsys, "export", out, "--to", "moodle", "--out", target)
    with open(target, newline="", encoding="utf-8-sig") as stream:
        table = list(csv.DictReader(stream))
    # Moodle "Import grades from CSV": an identifier column to map (email address or ID number), grade, feedback
    assert list(table[0]) == ["Email address", "ID number", "Grade", "Feedback"]
    grades = {line["Email address"]: float(line["Grade"]) for line in table}
    assert grades == {s.email: T.expected_row(s, "moodle", MOODLE_LATE)["score"] for s in term.students}
    with zipfile.ZipFile(tmp_path / "moodle-feedback.zip") as bundle:
        names = bundle.namelist()
    first = term.students[1]  # named as Moodle's download names them (its fullnamedisplay: Last, First)
    assert f"{first.moodle_name}_{first.lms_id}_assignsubmission_file_feedback.html" in names


def test_plain_csv_export(terms, tmp_path, capsys):
    term, out, _, _, _ = terms["nbgrader"]
    target = tmp_path / "plain.csv"
    run_here(capsys, "export", out, "--to", "csv", "--out", target)
    with open(target, newline="", encoding="utf-8-sig") as stream:
        table = {line["student"]: line for line in csv.DictReader(stream)}
    assert {k: float(v["score"]) for k, v in table.items()} == \
        {s.student: T.expected_row(s, "nbgrader")["score"] for s in term.students}


# ---------------------------------------------------------------- reruns (these change the folders: run last)
def test_overrides_are_kept_on_a_rerun_without_the_option(terms, capsys):
    term, out, _, source, work = terms["moodle"]
    late = next(iter(MOODLE_LATE))
    assert rows(out)[late]["late_days"] == MOODLE_LATE[late] and rows(out)[late]["late"]
    # no --overrides, no --due, no --roster: the earlier run's are kept (the secret seed is not: it is given again)
    again = run_here(capsys, "grade", T.LAB, source, "--out", out, "--jobs", "2", "--quiet", "--seed", "12")
    handed_in = sum(1 for s in term.students if s.variant is not None)
    assert f"{handed_in} submissions taken from earlier records; 0 graded now." in again.stdout
    row = rows(out)[late]
    assert (row["late"], row["late_days"]) == (True, MOODLE_LATE[late])
    assert row["score"] == T.expected_row(next(s for s in term.students if s.student == late), "moodle",
                                          MOODLE_LATE)["score"]


@pytest.mark.parametrize("form", ["flat", "blind", "participants"])
def test_the_other_moodle_downloads_grade_the_same_class(terms, tmp_path, form, capsys):
    """Moodle's zip without folders (with an attack in it), under blind marking, and its participants download
    as the roster (no participant ids: matched by name; no times). Every record is reused."""
    term, out, _, _, work = terms["moodle"]
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    source = tmp_path / f"moodle_{form}.zip"
    T.moodle_zip(term, source, "folders" if form == "participants" else form)
    extra = []
    if form == "participants":
        (tmp_path / "participants.csv").write_text(T.moodle_participants_csv(term))
        extra = ["--roster", tmp_path / "participants.csv"]
    again = run_here(capsys, "grade", T.LAB, source, "--out", copy, "--jobs", "2", "--quiet", "--seed", "12", *extra)
    handed_in = sum(1 for s in term.students if s.variant is not None)
    assert f"{handed_in} submissions taken from earlier records; 0 graded now." in again.stdout
    attacker, victim = term.students[T.ATTACKER], term.students[T.VICTIM]
    superseded = {attacker.student: 1} if form == "flat" else {}
    assert_expected_rows(term, copy, "none" if form == "participants" else "moodle", MOODLE_LATE, superseded)
    found = rows(copy)
    if form == "flat":
        # the file named after the victim's participant id is the attacker's upload: it counts for the attacker
        assert found[attacker.student]["file"].endswith(f"x_{victim.lms_id}_assignsubmission_file_lab01.ipynb")
        assert found[victim.student]["file"].endswith(f"{victim.lms_id}_assignsubmission_file_lab01_masks.ipynb")
        assert found[victim.student]["superseded"] == []
    if form == "participants":
        assert "roster: " in again.stdout
        assert f"(moodle_participants, {len(term.students)} students) replaces the kept" in again.stdout
        unknown = [s.student for s in term.students if s.variant is not None and s.student not in MOODLE_LATE]
        assert sorted(r["student"] for r in found.values() if r["time_unknown"]) == sorted(unknown)
        assert f"{len(unknown)} hand-ins have no known time" in again.stdout


def test_a_roster_with_the_wrong_ids_stops_with_a_hint(terms, tmp_path, capsys):
    """lms_id holding the SIS ids instead of Canvas's user ids: no gradebook of a whole class `missing`, but exit 2."""
    term, _, _, source, _ = terms["canvas"]
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name,lms_id\n" + "".join(f'{s.student},"{s.name}",{s.student}\n' for s in term.students))
    result = run_here(capsys, "grade", T.LAB, source, "--out", tmp_path / "out", "--roster", roster, "--seed", "12",
                      check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "none of the file ids" in result.stderr.lower() and "is this the Canvas user id" in result.stderr
    assert "The roster's lms_id column holds s1000, s1001, s1002" in result.stderr
    assert not (tmp_path / "out" / "grades.json").exists()
    forced = run_here(capsys, "grade", T.LAB, source, "--out", tmp_path / "out", "--roster", roster, "--seed", "12",
                 "--allow-unmatched", "--quiet", "--jobs", "1")
    assert all(row["status"] == "missing" for row in rows(tmp_path / "out").values())
    files = sum(1 + bool(s.earlier) for s in term.students if s.variant is not None) + len(term.unknown)
    assert forced.stdout.count("unknown student (not on the roster") == files


def test_canvas_submission_times_give_per_day_penalties(terms, tmp_path, capsys):
    term, out, _, source, work = terms["canvas"]
    times = work / "submissions.json"
    times.write_text(T.canvas_submissions_json(term))
    again = run_here(capsys, "grade", T.LAB, source, "--out", out, "--submission-times", times, *policy())
    assert "submission times: " in again.stdout and "kept for later runs" in again.stdout
    assert "0 graded now" in again.stdout
    assert_expected_rows(term, out, "canvas_times")
    grades = json.loads((out / "grades.json").read_text())
    assert grades["lateness_source"] == "canvas_times"
    assert "Canvas's download carries no submission times" not in again.stdout


def test_files_from_outside_the_lms_count_and_are_kept(terms, tmp_path, capsys):
    """An emailed resubmission given next to the zip, and a kept --extra folder: each counts instead of the
    LMS's file, a later run of the zip alone keeps both, --drop-extra goes back to the LMS's."""
    term, out, _, source, _ = terms["canvas"]
    s = term.students[2]  # handed in a wrong triangle through Canvas, then emailed a fixed notebook
    emailed = tmp_path / "email" / f"{s.student}.ipynb"
    emailed.parent.mkdir()
    emailed.write_text(json.dumps(T.notebook("full")))
    first = run_here(capsys, "grade", T.LAB, source, emailed, "--out", out, *policy())
    assert "1 graded now" in first.stdout
    assert f"counts for {s.student} instead of the LMS's file" in first.stdout
    row = rows(out)[s.student]
    assert (row["score"], row["source"]) == (T.MAX, "extra")
    assert row["file"].endswith(f"{s.student}.ipynb") and row["superseded"][0].endswith("_lab01_masks.ipynb")
    assert "outside the LMS" in " ".join(row["notes"])
    emailed.unlink()  # the instructor's copy is gone: the term kept its own

    other = next(x for x in term.students if x.variant == "full" and not x.earlier and not x.late_days)
    folder = tmp_path / "emailed"
    folder.mkdir()
    (folder / f"{other.lms_id}.ipynb").write_text(json.dumps(T.notebook("full")))  # named by the Canvas id
    # the zip alone, and a folder
    again = run_here(capsys, "grade", T.LAB, source, "--out", out, "--extra", folder, *policy())
    assert "0 graded now" in again.stdout  # the kept copy and the folder's notebook: records reused
    found = rows(out)
    assert (found[s.student]["score"], found[s.student]["source"]) == (T.MAX, "extra")
    assert (found[other.student]["source"], found[other.student]["file"]) == \
        ("extra", f"{folder}: {other.lms_id}.ipynb")
    assert f"--extra folder: {folder}" in run_here(capsys, "status", out).stdout

    dropped = run_here(capsys, "grade", T.LAB, source, "--out", out, "--drop-extra", s.student, "--drop-extra", folder,
                       *policy())
    assert f"extra: dropped the file {s.student}.ipynb of {s.student}" in dropped.stdout
    found = rows(out)
    assert (found[s.student]["score"], found[s.student]["source"]) == \
        (T.expected_row(s, "canvas_times")["score"], "lms")
    assert found[other.student]["source"] == "lms"


def test_another_seed_or_none_is_refused_and_names_the_kept_one(terms, capsys):
    from autograder.grader.batch import resolve_seed

    term, out, _, source, _ = terms["canvas"]
    before = (out / "grades.json").read_text()
    kept = resolve_seed(T.LAB, "12").fingerprint
    for seed in (["--seed", "13"], []):
        result = run_here(capsys, "grade", T.LAB, source, "--out", out, "--quiet", *seed, check=False)
        assert result.returncode == 2, result.stdout + result.stderr
        assert f"graded with the hidden cases of the seed whose fingerprint is {kept} (from --seed)" in result.stderr
        assert "--regrade" in result.stderr
    assert (out / "grades.json").read_text() == before


def test_status_shows_what_the_term_keeps(terms, capsys):
    from autograder.grader.batch import resolve_seed

    term, out, _, _, work = terms["canvas"]
    shown = run_here(capsys, "status", out).stdout
    assert f"Roster: canvas, {len(term.students)} students, from " in shown and "canvas_gradebook.csv" in shown
    assert f"Seed fingerprint: {resolve_seed(T.LAB, '12').fingerprint} (from --seed)" in shown
    assert "Policy: due 2026-12-10T23:59:00+01:00, late per day 10.0%, cap 30.0%" in shown
    assert "Submission times: " in shown and "(canvas_api)" in shown
    assert "submissions.zip: download, canvas layout" in shown
    missing = sum(1 for s in term.students if s.variant is None)
    assert f"{missing} missing" in shown and f"Students: {len(term.students)}: " in shown
    assert run_here(capsys, "status", work, check=False).returncode == 2


def test_overrides_accumulate_and_are_dropped_only_when_asked(terms, capsys):
    term, out, _, source, work = terms["moodle"]
    late = next(iter(MOODLE_LATE))
    fixed = next(s for s in term.students if s.variant == "wrong_triangle")
    (work / "regrade.csv").write_text(f"student,exercise,points,reason\n{fixed.student},causal_mask,1,regrade request\n")
    added = run_here(capsys, "grade", T.LAB, source, "--out", out, "--overrides", work / "regrade.csv", *policy())
    assert "overrides: added " in added.stdout and "regrade.csv (kept with 1 other file(s))" in added.stdout
    found = rows(out)
    assert found[late]["late_days"] == MOODLE_LATE[late]  # the first file still applies
    assert found[fixed.student]["exercises"]["causal_mask"]["points"] == 1.0
    # a TA gives one file again and drops the other: only what is said changes, and it is said
    again = run_here(capsys, "grade", T.LAB, source, "--out", out, "--overrides", work / "regrade.csv",
                     "--drop-overrides", work / "late.csv", *policy())
    assert "regrade.csv read again" in again.stdout and "overrides: dropped late.csv" in again.stdout
    found = rows(out)
    assert (found[late]["late"], found[late]["score"]) == (False, T.MAX)
    assert found[fixed.student]["exercises"]["causal_mask"]["points"] == 1.0
    MOODLE_LATE.clear()


def test_regrade_one_student_keeps_every_other_row_and_feedback(terms, capsys):
    term, out, _, source, work = terms["canvas"]
    before_csv = (out / "grades.csv").read_text()
    feedback = {p.name: p.stat().st_mtime_ns for p in (out / "feedback").iterdir()}
    target = term.students[2].student
    records_before = set((out / ".autograder" / "records").iterdir())
    again = run_here(capsys, "grade", T.LAB, source, "--out", out, "--regrade", target, *policy())
    assert "1 graded now" in again.stdout
    assert (out / "grades.csv").read_text() == before_csv  # same grades: every row is still there, unchanged
    changed = sorted(name for name, mtime in feedback.items() if (out / "feedback" / name).stat().st_mtime_ns != mtime)
    assert changed == []  # same content: not even the regraded student's file needed rewriting
    assert len(before_csv.splitlines()) == len(term.students) + 1
    assert set((out / ".autograder" / "records").iterdir()) == records_before  # its record rewritten in place


def test_regrade_with_only_one_file_given_keeps_the_others(terms, tmp_path, capsys):
    term, out, _, _, work = terms["nbgrader"]
    s = term.students[2]
    alone = tmp_path / "one"
    (alone / s.student / "Lab 1").mkdir(parents=True)
    notebook = T.notebook("full")
    (alone / s.student / "Lab 1" / "lab01_masks.ipynb").write_text(json.dumps(notebook))
    (alone / s.student / "Lab 1" / "timestamp.txt").write_text(T.nbgrader_stamp(s))
    run_here(capsys, "grade", T.LAB, alone, "--out", out, "--regrade", s.student, "--jobs", "1", "--quiet",
             "--seed", "12")
    found = rows(out)
    assert len(found) == len(term.students)
    assert found[s.student]["score"] == T.MAX  # the new file
    for other in term.students:
        if other.student != s.student:
            assert found[other.student]["score"] == T.expected_row(other, "nbgrader")["score"], other.student


def test_flat_partial_regrade_no_longer_truncates(tmp_path, capsys):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann", "cat"):
        (subs / f"{name}.ipynb").write_text(json.dumps(T.notebook("full")))
    # bob handed in another lab's notebook: his regrade needs no worker, the kept rows are what is at stake
    (subs / "bob.ipynb").write_text(json.dumps(T.notebook("wrong_lab")))
    out = tmp_path / "out"
    run_here(capsys, "grade", T.LAB, subs, "--out", out, "--jobs", "1", "--quiet", "--seed", "1")
    run_here(capsys, "grade", T.LAB, subs / "bob.ipynb", "--out", out, "--regrade", "--jobs", "1", "--quiet",
             "--seed", "1")
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as stream:
        assert [line["student"] for line in csv.DictReader(stream)] == ["ann", "bob", "cat"]
