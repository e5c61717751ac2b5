"""What goes back to the LMS: Canvas and Moodle import CSVs and feedback archives, checked against the formats
as the LMSs' own sources read them (canvas-lms GradebookImporter and Assignment#generate_comments_from_files,
Moodle's gradeimport_csv), on a gradebook written by hand in the shape grades.json has (no grading here).

The expected headers, names and rules below are written from those sources, never taken from export.py.
"""
import contextlib
import csv
import io
import json
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.grader.cli import main
from autograder.labs import get_lab

ROOT = Path(__file__).resolve().parents[1]
SPEC = get_lab("lab02")
BOM = b"\xef\xbb\xbf"
COLUMN = "Lab 2: Causal attention (48212)"
# canvas-lms GradebookImporter: the student columns, in order, that its header check accepts
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Email address", "ID number", "Grade", "Feedback"]


def run(*args, check=True):
    """The command line, in this process (a fresh interpreter would spend seconds importing torch)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(arg) for arg in args])
    result = subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def exercises(points: dict | None = None, status: str = "passed", diagnosis: dict | None = None) -> dict:
    points, diagnosis = points or {}, diagnosis or {}
    return {e.id: {"points": float(points.get(e.id, e.points)), "max_points": float(e.points), "status": status,
                   "diagnosis": diagnosis.get(e.id), "feedback": "ok"} for e in SPEC.exercises}


def note(en: str, es: str) -> dict:
    return {"en": en, "es": es, "de": en + " (de)", "hi-Latn": en + " (hi)"}


def row(student, name, lms_id, status="graded", score=None, lang="en", file="", section="", login="",
        display="", notes=(), email="", **extra) -> dict:
    full = SPEC.max_score
    score = full if score is None else score
    base = {"student": student, "name": name, "email": email, "lms_id": lms_id, "lms_name": "", "section": section,
            "login": login, "lms_display_name": display, "status": status, "score": score, "raw_score": score,
            "max_score": full, "late": False, "late_days": None, "penalty": 0.0, "lang": lang, "file": file,
            "exercises": exercises() if status == "graded" else exercises({e.id: 0 for e in SPEC.exercises},
                                                                          status),
            "notes": [n["en"] for n in notes], "note_texts": list(notes), "superseded": [], "forbidden": {},
            "reason_code": None, "time_source": "", "time_unknown": False}
    base.update(extra)
    return base


def write_book(folder: Path, rows: list[dict], **top) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    book = {"lab": "lab02", "max_score": SPEC.max_score, "layout": "canvas", "roster": True,
            "roster_format": "canvas", "lms_columns": [], "lateness_source": "canvas_flag",
            "seed_fingerprint": "0449a3b066df", "policy": {"penalise_forbidden": False}, "submissions": rows,
            "unknown_student": [], "unparsed": [], "refused": [], "junk": [], "notes": [], **top}
    (folder / "grades.json").write_text(json.dumps(book, ensure_ascii=False))
    (folder / "feedback").mkdir(exist_ok=True)
    for item in rows:
        stem = item.get("feedback_file") or item["student"]
        (folder / "feedback" / f"{stem}.md").write_text(f"# Feedback on lab02 for {item['student']}\n\n**8/12**\n")
        (folder / "feedback" / f"{stem}.html").write_text(f"<p>feedback of {item['student']}</p>")
    return folder


CLASS = [
    row("s2460370", "Amelia Clarke", "48213", section="Section A", login="aclarke", display="Clarke, Amelia",
        email="aclarke@uni.example.edu", file="submissions.zip: clarkeamelia_48213_991234_lab02_causal_attention.ipynb"),
    row("s2460371", "José García López", "48214", section="Section B", login="jgarcia", display="García López, José",
        lang="es", score=9.9, late=True, file="submissions.zip: garcialopezjose_LATE_48214_991300_lab02-1.ipynb",
        notes=[note("The LMS marks this hand-in as late.", "El LMS marca esta entrega como tardía.")]),
    row("s2460372", "Jürgen Müller", "48215", status="missing", score=0.0, section="Section A", login="jmuller",
        display="Müller, Jürgen", notes=[note("No submission for this lab was found.",
                                             "No se ha encontrado ninguna entrega de este lab.")]),
    # graded from a file that is not this student's Canvas download (an emailed resubmission)
    row("s2460373", "Theo Park", "48216", section="Section B", login="tpark", display="Park, Theo",
        file="extra: theo.ipynb"),
]


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    return write_book(tmp_path_factory.mktemp("book"), CLASS, lms_columns=[
        "Lab 1: Masks (48100)", COLUMN, "Lab 12: Review (48300)", "Quiz 2 (48400)"])


def read_csv(path: Path) -> list[list[str]]:
    data = path.read_bytes()
    assert data.startswith(BOM), "Excel needs the UTF-8 byte order mark"
    return list(csv.reader(io.StringIO(data[len(BOM):].decode("utf-8"), newline="")))


# ---------------------------------------------------------------- Canvas
def canvas_header_accepted(header: list[str]) -> bool:
    """GradebookImporter#header?: row[0] includes "Student", row[1] includes "ID", and the last student
    column (here the 5th: with both SIS columns) includes "Section"."""
    return len(header) > 3 and "Student" in header[0] and "ID" in header[1] and "Section" in header[4]


def test_canvas_import_fills_the_labs_own_column(book, tmp_path):
    target = tmp_path / "canvas.csv"
    run("export", book, "--to", "canvas", "--out", target)
    table = read_csv(target)
    assert table[0] == CANVAS_STUDENT_COLUMNS + [COLUMN]
    # Ruby reads the BOM as part of the first cell; the importer's include? still accepts it
    raw_first = target.read_bytes().decode("utf-8").split(",")[0]
    assert raw_first == "\ufeffStudent" and canvas_header_accepted([raw_first] + table[0][1:])
    assert table[1][0] == "Points Possible" and table[1][5] == f"{SPEC.max_score:g}"
    by_id = {line[1]: line for line in table[2:]}
    assert by_id["48213"] == ["Clarke, Amelia", "48213", "s2460370", "aclarke", "Section A", f"{SPEC.max_score:g}"]
    assert by_id["48214"][:5] == ["García López, José", "48214", "s2460371", "jgarcia", "Section B"]
    assert by_id["48215"][5] == "0"  # missing work: 0 unless asked otherwise
    target_empty = tmp_path / "canvas-empty.csv"
    run("export", book, "--to", "canvas", "--out", target_empty, "--missing", "empty")
    by_id = {line[1]: line for line in read_csv(target_empty)[2:]}
    assert by_id["48215"][5] == "" and by_id["48213"][5] == f"{SPEC.max_score:g}"


def test_canvas_never_invents_a_column(tmp_path):
    plain = write_book(tmp_path / "plain", CLASS[:1])  # a CSV roster: no Canvas columns known
    refused = run("export", plain, "--to", "canvas", "--out", tmp_path / "x.csv", check=False)
    assert refused.returncode == 2 and "--assignment" in refused.stderr and "new assignment" in refused.stderr
    assert not (tmp_path / "x.csv").exists()
    given = run("export", plain, "--to", "canvas", "--out", tmp_path / "y.csv", "--assignment", COLUMN)
    assert read_csv(tmp_path / "y.csv")[0][-1] == COLUMN and "note:" not in given.stdout
    bare = run("export", plain, "--to", "canvas", "--out", tmp_path / "z.csv", "--assignment", "lab02")
    assert "creates a new assignment" in bare.stdout  # allowed when asked for, with the reason to check it

    two = write_book(tmp_path / "two", CLASS[:1], lms_columns=["Lab 2 (1)", "Lab 02 resubmission (2)", "Quiz (3)"])
    ambiguous = run("export", two, "--to", "canvas", "--out", tmp_path / "a.csv", check=False)
    assert ambiguous.returncode == 2 and "'Lab 2 (1)'" in ambiguous.stderr
    assert "'Lab 02 resubmission (2)'" in ambiguous.stderr and "Quiz" not in ambiguous.stderr
    chosen = run("export", two, "--to", "canvas", "--out", tmp_path / "b.csv", "--assignment", "Lab 2 (1)")
    assert chosen.returncode == 0
    typo = run("export", two, "--to", "canvas", "--out", tmp_path / "c.csv", "--assignment", "Lab 2 (9)", check=False)
    assert typo.returncode == 2 and "is not a column" in typo.stderr

    none = write_book(tmp_path / "none", CLASS[:1], lms_columns=["Quiz 1 (5)", "Lab 12 (6)", "Collab 2 (7)"])
    missing = run("export", none, "--to", "canvas", "--out", tmp_path / "d.csv", check=False)
    assert missing.returncode == 2 and "no column" in missing.stderr and "'Collab 2 (7)'" in missing.stderr


@pytest.mark.parametrize("column, lab, names", [
    ("Lab 2: Causal attention (48212)", "lab02", True), ("lab02", "lab02", True), ("Lab_02 – masks", "lab02", True),
    ("LAB-2", "lab02", True), ("Labor 2 (5)", "lab02", True), ("Lab 12: Review (48300)", "lab02", False),
    ("Collab 2", "lab02", False), ("Lab 2", "lab00", False), ("Lab 0 (1)", "lab00", True),
    ("Quiz 2 (48400)", "lab02", False), ("Lab 1 (2)", "lab02", False)])
def test_which_column_names_a_lab(column, lab, names):
    from autograder.term.export import names_lab

    assert names_lab(column, lab) is names


def reupload_match(member: str) -> tuple[str, str] | None:
    """canvas-lms AbstractAssignment#infer_comment_context_from_filename, by hand: the base name split at
    `_`, minus "LATE", then the first two parts made only of digits: (user id, attachment id)."""
    parts = [p for p in member.rsplit("/", 1)[-1].split("_") if p != "LATE"]
    if parts and parts[0] == "anon":
        return None
    digits = [p for p in parts if p.isdigit()]
    return (digits[0], digits[1]) if len(digits) >= 2 else None


def test_canvas_feedback_zip_is_matched_by_reupload(book, tmp_path):
    target = tmp_path / "canvas.csv"
    result = run("export", book, "--to", "canvas", "--out", target)
    with zipfile.ZipFile(tmp_path / "canvas-feedback.zip") as archive:
        members = {reupload_match(name): archive.read(name) for name in archive.namelist()}
    # user id and attachment id of each student's graded file in Canvas's download
    assert set(members) == {("48213", "991234"), ("48214", "991300")}
    note_book = nbformat.reads(members[("48213", "991234")].decode(), as_version=4)
    nbformat.validate(note_book)  # Canvas shows it under the name of the student's .ipynb: a notebook it is
    assert "Feedback on lab02 for s2460370" in note_book.cells[0].source
    # the two who cannot get feedback this way are named
    assert "2 students have no file of Canvas's download" in result.stdout
    assert "s2460372" in result.stdout and "s2460373" in result.stdout


# ---------------------------------------------------------------- Moodle and the plain CSV
def test_moodle_import_and_the_feedback_in_the_students_language(book, tmp_path):
    target = tmp_path / "moodle.csv"
    run("export", book, "--to", "moodle", "--out", target)
    table = read_csv(target)
    assert table[0] == MOODLE_COLUMNS
    by_email = {line[1]: line for line in table[1:]}
    assert by_email["s2460371"][3].endswith("El LMS marca esta entrega como tardía.")  # the student's Spanish
    assert by_email["s2460372"][2] == "0"
    run("export", book, "--to", "moodle", "--out", tmp_path / "empty.csv", "--missing", "empty")
    assert {line[1]: line for line in read_csv(tmp_path / "empty.csv")[1:]}["s2460372"][2] == ""
    with zipfile.ZipFile(tmp_path / "moodle-feedback.zip") as archive:
        assert "Amelia Clarke_48213_assignsubmission_file_feedback.html" in archive.namelist()


def test_plain_csv_notes_in_the_instructors_language(book, tmp_path):
    for lang, expected in (("en", "The LMS marks this hand-in as late."), ("es", "El LMS marca esta entrega como tardía."),
                           ("de", "The LMS marks this hand-in as late. (de)")):
        target = tmp_path / f"plain-{lang}.csv"
        run("export", book, "--to", "csv", "--out", target, "--lang", lang)
        table = read_csv(target)
        assert table[0][:5] == ["student", "name", "email", "lms_id", "section"] and table[0][-1] == "notes"
        assert {line[0]: line for line in table[1:]}["s2460371"][-1] == expected
