"""Whole generated terms of lab01 (62 students) in Canvas, Moodle and nbgrader layouts, graded once per layout.

Each term has non-submitters, resubmissions, late and extended students,
wrong-lab files, students not on the roster, an unparseable file name and an
identical pair. The expected gradebook comes from how the term was built
(corpus/term.py), and is compared row by row.
"""
import csv
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from corpus import term as T

ROOT = Path(__file__).resolve().parents[1]
MOODLE_LATE = {}  # Moodle's download carries no time: the instructor's late_days overrides say who was late


def run(*args):
    result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def policy():
    return ["--due", T.DUE, "--late-per-day", T.PER_DAY, "--late-cap", T.CAP, "--jobs", "2", "--seed", "12",
            "--quiet"]


@pytest.fixture(scope="module")
def terms(tmp_path_factory):
    """layout -> (term, out folder, first run's stdout), each graded once for the whole module."""
    made = {}
    term = T.make_term(62)
    for layout in ("canvas", "moodle", "nbgrader"):
        work = tmp_path_factory.mktemp(layout)
        (work / "roster.csv").write_text(term.roster_csv())
        extra = []
        if layout == "canvas":
            source = work / "submissions.zip"
            T.canvas_zip(term, source)
        elif layout == "moodle":
            source = work / "moodle.zip"
            T.moodle_zip(term, source)
            late = {s.student: s.late_days for s in term.students if s.late_days and not s.extension_days
                    and s.variant is not None}
            MOODLE_LATE.update(late)
            lines = ["student,exercise,points,reason"] + [f"{s},late_days,{d},Moodle says late" for s, d in late.items()]
            (work / "late.csv").write_text("\n".join(lines) + "\n")
            extra = ["--overrides", work / "late.csv"]
        else:
            source = work / "submitted"
            T.nbgrader_folder(term, source)
        out = work / "out"
        result = run("grade", T.LAB, source, "--out", out, "--roster", work / "roster.csv", *policy(), *extra)
        made[layout] = (term, out, result.stdout, source, work)
    return made


def rows(out: Path) -> dict:
    return {row["student"]: row for row in json.loads((out / "grades.json").read_text())["submissions"]}


@pytest.mark.parametrize("layout", ["canvas", "moodle", "nbgrader"])
def test_every_roster_student_has_the_expected_row(terms, layout):
    term, out, _, _, _ = terms[layout]
    found = rows(out)
    assert sorted(found) == sorted(s.student for s in term.students)  # one row each, nobody else
    for s in term.students:
        want = T.expected_row(s, layout, MOODLE_LATE if layout == "moodle" else None)
        row = found[s.student]
        got = {"status": row["status"], "raw_score": row["raw_score"], "score": row["score"], "late": row["late"],
               "late_days": row["late_days"] if row["late"] else 0, "superseded": len(row["superseded"])}
        expect = {k: want[k] for k in got}
        if not want["late"]:
            expect["late_days"] = 0
        assert got == expect, f"{layout} {s.student} ({s.variant}, late {s.late_days}, ext {s.extension_days})"
        if row["status"] == "graded":
            points = {e: item["points"] for e, item in row["exercises"].items()}
            assert points == {**T.FULL_POINTS, **want["points"]}, s.student
            diagnoses = {e: item["diagnosis"] for e, item in row["exercises"].items() if item["diagnosis"]}
            assert diagnoses == want["diagnoses"], s.student
        assert row["max_score"] == T.MAX


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
    assert "1 file(s) before this one" in (out / "feedback" / f"{resubmitter.student}.md").read_text()


def test_late_and_extended_are_visible_per_student(terms):
    term, out, _, _, _ = terms["nbgrader"]
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as stream:
        table = {line["student"]: line for line in csv.DictReader(stream)}
    late = next(s for s in term.students if s.late_days and not s.extension_days)
    extended = next(s for s in term.students if s.extension_days)
    assert (table[late.student]["late"], table[late.student]["late_days"], table[late.student]["penalty"],
            table[late.student]["score"]) == ("yes", "2", "2", "8")
    assert (table[extended.student]["late"], table[extended.student]["score"]) == ("", "10")
    assert "2 day(s) after the due date" in (out / "feedback" / f"{late.student}.md").read_text()
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


def test_the_identical_pair_is_flagged_in_the_report(terms):
    term, out, _, _, _ = terms["moodle"]
    run("report", out)
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


def test_the_report_counts_and_revisits(terms):
    from autograder.labs import get_lab

    term, out, _, _, _ = terms["nbgrader"]
    run("report", out)
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
    run("report", out)
    assert (out / "report.html").read_text() == before  # deterministic: no date, fixed ids


@pytest.mark.parametrize("lang, title", [("es", "Informe de la clase: lab01"), ("de", "Klassenbericht: lab01"),
                                         ("hi-Latn", "Class report: lab01")])
def test_the_report_in_the_book_languages(terms, lang, title):
    _, out, _, _, _ = terms["canvas"]
    run("report", out, "--lang", lang)
    page = (out / "report.html").read_text()
    assert f'<html lang="{lang}">' in page and title in page


# ---------------------------------------------------------------- exports
def test_canvas_export_has_canvas_documented_columns(terms, tmp_path):
    term, out, _, _, _ = terms["canvas"]
    target = tmp_path / "canvas.csv"
    run("export", out, "--to", "canvas", "--out", target, "--assignment", "Lab 01 (123456)")
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


def test_moodle_export_identifier_grade_feedback(terms, tmp_path):
    term, out, _, _, _ = terms["moodle"]
    target = tmp_path / "moodle.csv"
    run("export", out, "--to", "moodle", "--out", target)
    with open(target, newline="", encoding="utf-8-sig") as stream:
        table = list(csv.DictReader(stream))
    # Moodle "Import grades from CSV": an identifier column to map (email address or ID number), grade, feedback
    assert list(table[0]) == ["Email address", "ID number", "Grade", "Feedback"]
    grades = {line["Email address"]: float(line["Grade"]) for line in table}
    assert grades == {s.email: T.expected_row(s, "moodle", MOODLE_LATE)["score"] for s in term.students}
    with zipfile.ZipFile(tmp_path / "moodle-feedback.zip") as bundle:
        names = bundle.namelist()
    first = term.students[1]
    full_name = f"{first.name.split(', ')[1]} {first.name.split(', ')[0]}"
    assert f"{full_name}_{first.lms_id}_assignsubmission_file_feedback.html" in names


def test_plain_csv_export(terms, tmp_path):
    term, out, _, _, _ = terms["nbgrader"]
    target = tmp_path / "plain.csv"
    run("export", out, "--to", "csv", "--out", target)
    with open(target, newline="", encoding="utf-8-sig") as stream:
        table = {line["student"]: line for line in csv.DictReader(stream)}
    assert {k: float(v["score"]) for k, v in table.items()} == \
        {s.student: T.expected_row(s, "nbgrader")["score"] for s in term.students}


# ---------------------------------------------------------------- reruns (these change the folders: run last)
def test_overrides_are_kept_on_a_rerun_without_the_option(terms):
    term, out, _, source, work = terms["moodle"]
    late = next(iter(MOODLE_LATE))
    assert rows(out)[late]["late_days"] == MOODLE_LATE[late] and rows(out)[late]["late"]
    # no --overrides, no --due, no --roster: the earlier run's are kept (the secret seed is not: it is given again)
    again = run("grade", T.LAB, source, "--out", out, "--jobs", "2", "--quiet", "--seed", "12")
    handed_in = sum(1 for s in term.students if s.variant is not None)
    assert f"{handed_in} submissions taken from earlier records; 0 graded now." in again.stdout
    row = rows(out)[late]
    assert (row["late"], row["late_days"]) == (True, MOODLE_LATE[late])
    assert row["score"] == T.expected_row(next(s for s in term.students if s.student == late), "moodle",
                                          MOODLE_LATE)["score"]


def test_regrade_one_student_keeps_every_other_row_and_feedback(terms):
    term, out, _, source, work = terms["canvas"]
    before_csv = (out / "grades.csv").read_text()
    feedback = {p.name: p.stat().st_mtime_ns for p in (out / "feedback").iterdir()}
    target = term.students[2].student
    records_before = set((out / ".autograder" / "records").iterdir())
    again = run("grade", T.LAB, source, "--out", out, "--regrade", target, *policy())
    assert "1 graded now" in again.stdout
    assert (out / "grades.csv").read_text() == before_csv  # same grades: every row is still there, unchanged
    changed = sorted(name for name, mtime in feedback.items() if (out / "feedback" / name).stat().st_mtime_ns != mtime)
    assert changed == []  # same content: not even the regraded student's file needed rewriting
    assert len(before_csv.splitlines()) == len(term.students) + 1
    assert set((out / ".autograder" / "records").iterdir()) == records_before  # its record rewritten in place


def test_regrade_with_only_one_file_given_keeps_the_others(terms, tmp_path):
    term, out, _, _, work = terms["nbgrader"]
    s = term.students[2]
    alone = tmp_path / "one"
    (alone / s.student / "Lab 1").mkdir(parents=True)
    notebook = T.notebook("full")
    (alone / s.student / "Lab 1" / "lab01_masks.ipynb").write_text(json.dumps(notebook))
    (alone / s.student / "Lab 1" / "timestamp.txt").write_text(T.nbgrader_stamp(s))
    run("grade", T.LAB, alone, "--out", out, "--regrade", s.student, "--jobs", "1", "--quiet")
    found = rows(out)
    assert len(found) == len(term.students)
    assert found[s.student]["score"] == T.MAX  # the new file
    for other in term.students:
        if other.student != s.student:
            assert found[other.student]["score"] == T.expected_row(other, "nbgrader")["score"], other.student


def test_flat_partial_regrade_no_longer_truncates(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("ann", "bob", "cat"):
        (subs / f"{name}.ipynb").write_text(json.dumps(T.notebook("full")))
    out = tmp_path / "out"
    run("grade", T.LAB, subs, "--out", out, "--jobs", "1", "--quiet", "--seed", "1")
    run("grade", T.LAB, subs / "bob.ipynb", "--out", out, "--regrade", "--jobs", "1", "--quiet", "--seed", "1")
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as stream:
        assert [line["student"] for line in csv.DictReader(stream)] == ["ann", "bob", "cat"]
