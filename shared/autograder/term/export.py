"""Grades out of the gradebook into an LMS, and the feedback as one zip for its bulk upload.

What each LMS reads, and where we read it (canvas-lms and Moodle sources):

- canvas: the gradebook import CSV (canvas-lms app/models/gradebook_importer.rb). Its header
  is `Student, ID, SIS User ID, SIS Login ID, Section`, then assignment columns: the row is
  accepted when column 1 contains "Student", column 2 "ID" and the last student column
  "Section"; a row whose first cell contains "Points Possible" gives the points. A student is
  found by ID (the Canvas user id), else by SIS User ID, else by SIS Login ID (the login,
  `pseudonym.unique_id`), else by name. An assignment column is found by the id in
  `Title (id)` (`Assignment.title_and_id`), else by its exact title, and any other header
  becomes a NEW assignment: so the column comes from the roster's Canvas export
  (`lms_columns`) or from --assignment, never from the lab id alone. A blank cell (or `-`)
  changes nothing (`no_score?`), which is what --missing empty writes for missing work.
  Canvas's own export writes `Student` as the sortable name ("Last, First") and may start
  with a UTF-8 BOM (GradebookExporter#include_bom?); the importer tests headers with
  `include?`, so the BOM before "Student" does not matter.
- moodle: "Import grades from CSV" (grade/import/csv/classes/load_data.php): map "Email
  address" (or "ID number") to the user, Grade to the assignment's grade item, Feedback to
  its feedback; an empty grade (or `-`) is "no grade". Moodle's CSV reader drops a BOM
  (lib/csvlib.class.php, core_text::trim_utf8_bom).
- csv: `student, name, email, lms_id, section, status, raw_score, …, notes` for a spreadsheet.

Every CSV starts with a UTF-8 BOM so that Excel opens names as written.

The feedback zip sits next to FILE (`FILE-feedback.zip`), named as each LMS matches uploads:
- Moodle ("Upload multiple feedback files in a zip"): `<Full Name>_<participant id>_
  assignsubmission_file_feedback.html`, the names of its own download.
- Canvas ("Re-Upload Submissions", Assignment#generate_comments_from_files): Canvas splits a
  file's name at `_`, drops `LATE`, and takes the first two all-digit parts as the user id and
  the attachment id; the attachment must be one of that student's submitted files, else the
  file is ignored. A matched file becomes a submission comment ("See attached file") that the
  student sees once grades are posted, shown under the display name of the submitted file it
  names. So each member is `<name>_<user id>_<attachment id>_feedback.ipynb`, with the ids of
  the graded file from the Canvas download, and it is a notebook (its one cell the feedback),
  since Canvas names it like the student's `.ipynb`. A student without a Canvas file (missing,
  or graded from another source) cannot get feedback this way: the export lists them.
- csv: `<feedback_file>.html`.
"""
from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .. import i18n
from ..grader import gradebook
from ..grader.submissions import UsageError
from .book import notes_in

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEADER = ["Email address", "ID number", "Grade", "Feedback"]
CSV_HEADER = ["student", "name", "email", "lms_id", "section", "status", "raw_score", "late", "late_days", "penalty",
              "score", "max_score", "notes"]
MISSING = ("zero", "empty")
# columns of Canvas's export that are totals, not assignments (GradebookImporter::NON_ASSIGNMENT_COLUMN_HEADERS)
CANVAS_TOTALS = re.compile(r"(Current|Final|Unposted|Override) (Score|Points|Grade)|Override Status")
CANVAS_ID_SUFFIX = re.compile(r"\s\((\d+)\)\Z")  # Assignment.title_and_id


@dataclass
class Exported:
    paths: list[Path]
    messages: list[str] = field(default_factory=list)


_cell = gradebook.csv_text


def _number(value: float) -> str:
    return f"{round(value, 4):g}"


def _score(row: dict, missing: str) -> str:
    return "" if missing == "empty" and row["status"] == "missing" else _number(row["score"])


def names_lab(column: str, lab: str) -> bool:
    """Whether a gradebook column's title names this lab: "Lab 2: Causal attention (48212)", "lab02",
    "Lab_02 – masks", "Labor 2" for lab02, never "Lab 12" or "Collab 2"."""
    title = CANVAS_ID_SUFFIX.sub("", column)
    number = int(lab[3:])
    return any(int(match.group(1)) == number for match in
               re.finditer(r"(?<![A-Za-z])lab(?:o|or|oratory|oratorio)?\s*[-_:#.]?\s*0*(\d+)(?!\d)", title, re.I))


def canvas_column(grades: dict, assignment: str | None) -> tuple[str, list[str]]:
    """The Canvas gradebook column this lab's grades go into, and warnings; UsageError when it cannot be
    told (Canvas would make a new assignment of a header it does not know)."""
    lab = grades["lab"]
    columns = [c for c in grades.get("lms_columns") or [] if isinstance(c, str) and not CANVAS_TOTALS.search(c)]
    listed = "; ".join(repr(c) for c in columns)
    if assignment is not None:
        if columns and assignment not in columns:
            raise UsageError(f"--assignment {assignment!r} is not a column of the Canvas gradebook export this term's "
                             f"roster came from (Canvas would create a new assignment); its columns: {listed}")
        warnings = []
        if not CANVAS_ID_SUFFIX.search(assignment):
            warnings.append(f"note: {assignment!r} has no Canvas id '(NNN)': Canvas matches it by the exact assignment "
                            "title, and creates a new assignment if no assignment has that title.")
        return assignment, warnings
    if not columns:
        raise UsageError(f"Canvas needs the existing gradebook column of {lab}, or its import creates a new assignment "
                         f"named {lab!r}: pass --assignment with the column's header as your Canvas gradebook export "
                         "writes it (e.g. --assignment 'Lab 2: Causal attention (48212)'), or grade with that export "
                         "as --roster")
    candidates = [c for c in columns if names_lab(c, lab)]
    if len(candidates) == 1:
        return candidates[0], []
    if not candidates:
        raise UsageError(f"no column of the Canvas gradebook export names {lab}; its columns: {listed}. "
                         "Pass --assignment with the one to fill.")
    raise UsageError(f"several columns of the Canvas gradebook export name {lab}: "
                     f"{'; '.join(repr(c) for c in candidates)}. Pass --assignment with the one to fill.")


def _feedback_text(row: dict) -> str:
    """Moodle's Feedback column: the student reads it, in the student's language."""
    parts = [f"{exercise}: {_number(item['points'])}/{_number(item['max_points'])}"
             for exercise, item in row["exercises"].items()]
    return "; ".join(parts + notes_in(row, row.get("lang") or i18n.DEFAULT_LANG))[:2000]


def export(folder: Path, target: str, out: Path, assignment: str | None = None, missing: str = "zero",
           lang: str = i18n.DEFAULT_LANG) -> Exported:
    try:
        grades = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{folder / 'grades.json'}: cannot be read ({error})") from None
    rows = grades.get("submissions", [])
    if rows and "raw_score" not in rows[0]:
        raise UsageError(f"{folder}: graded without a roster (one row per file); grade with --roster for an export")
    if missing not in MISSING:
        raise UsageError(f"--missing {missing!r}: zero or empty")
    lang = i18n.normalise_lang(lang)
    messages: list[str] = []
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\r\n" if target != "csv" else "\n")
    if target == "canvas":
        column, warnings = canvas_column(grades, assignment)
        messages += warnings
        writer.writerow([*CANVAS_HEADER, column])
        writer.writerow(["Points Possible", "", "", "", "", _number(grades["max_score"])])
        for row in rows:
            # Student as Canvas writes it (its sortable name); the importer matches by ID first
            writer.writerow([_cell(row.get("lms_display_name") or row.get("name") or row["student"]),
                             _cell(row.get("lms_id", "")), _cell(row["student"]), _cell(row.get("login", "")),
                             _cell(row.get("section", "")), _score(row, missing)])
    elif target == "moodle":
        writer.writerow(MOODLE_HEADER)
        for row in rows:
            writer.writerow([_cell(row.get("email", "")), _cell(row["student"]), _score(row, missing),
                             _cell(_feedback_text(row))])
    elif target == "csv":
        writer.writerow(CSV_HEADER)
        for row in rows:
            writer.writerow([_cell(row["student"]), _cell(row.get("name", "")), _cell(row.get("email", "")),
                             _cell(row.get("lms_id", "")), _cell(row.get("section", "")), row["status"],
                             _number(row["raw_score"]), "yes" if row["late"] else "",
                             "" if row["late_days"] is None else row["late_days"], _number(row["penalty"]),
                             _score(row, missing), _number(row["max_score"]), _cell(" ".join(notes_in(row, lang)))])
    else:
        raise UsageError(f"unknown export target {target!r}: canvas, moodle or csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    gradebook.write_atomic(out, gradebook.EXCEL_BOM + stream.getvalue())
    bundle = out.with_name(out.stem + "-feedback.zip")
    messages += _feedback_zip(folder, grades, target, bundle)
    return Exported([out, bundle], messages)


# ---------------------------------------------------------------- the feedback zip
def _moodle_name(row: dict) -> str:
    # the name as Moodle wrote it in the download (its feedback upload matches it), else the roster's
    shown = row.get("lms_name") or row.get("name") or row["student"]
    name = re.sub(r"[\\/:*?\"<>|\x00-\x1f]", "", shown).strip() or row["student"]
    return f"{name}_{row.get('lms_id') or row['student']}_assignsubmission_file_feedback.html"


def canvas_ids(file: str) -> tuple[str, str] | None:
    """(user id, attachment id) of a file of Canvas's "Download Submissions", read as Canvas reads a
    re-uploaded name: the base name split at `_`, `LATE` dropped, the first two all-digit parts."""
    base = PurePosixPath(file.rsplit(": ", 1)[-1]).name
    digits = [part for part in base.split("_") if part != "LATE" and part.isascii() and part.isdigit()]
    return (digits[0], digits[1]) if len(digits) >= 2 else None


def _canvas_member(row: dict) -> str | None:
    ids = canvas_ids(row.get("file") or "") if row["status"] != "missing" else None
    if ids is None or ids[0] != str(row.get("lms_id") or ""):
        return None  # not graded from this student's own Canvas file: nothing Canvas could match
    # a name part with letters only, so that Canvas finds no number in it
    name = re.sub(r"[^a-z]", "", (row.get("lms_name") or row.get("name") or "").lower())[:40] or "student"
    return f"{name}_{ids[0]}_{ids[1]}_feedback.ipynb"


def _feedback_notebook(markdown: str, lang: str) -> str:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown, id="feedback")])
    notebook.metadata = nbformat.from_dict({"lang": lang, "labbook": {"kind": "feedback"}})
    return nbformat.writes(notebook)


def _feedback_zip(folder: Path, grades: dict, target: str, bundle: Path) -> list[str]:
    rows = grades.get("submissions", [])
    unreachable = []
    temporary = bundle.with_name(f".{bundle.name}.tmp")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
        for row in rows:
            stem = row.get("feedback_file") or gradebook.feedback_name(row["student"])
            if target == "canvas":
                member, source = _canvas_member(row), folder / "feedback" / f"{stem}.md"
                if member is None:
                    unreachable.append(row["student"])
                    continue
            else:
                member = _moodle_name(row) if target == "moodle" else f"{stem}.html"
                source = folder / "feedback" / f"{stem}.html"
            try:
                data = source.read_text(encoding="utf-8")
            except OSError:
                continue
            if target == "canvas":
                data = _feedback_notebook(data, row.get("lang") or i18n.DEFAULT_LANG)
            info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))  # same grades, same bytes
            info.external_attr = 0o600 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data.encode("utf-8"))
    temporary.chmod(0o600)
    temporary.replace(bundle)
    if not unreachable:
        return []
    shown = ", ".join(unreachable[:20]) + (f" and {len(unreachable) - 20} more" if len(unreachable) > 20 else "")
    return [f"{len(unreachable)} students have no file of Canvas's download to attach feedback to (missing, or "
            f"graded from another source); give theirs by hand from {folder / 'feedback'}/: {shown}"]
