"""Grades out of the gradebook into an LMS, and the feedback as one zip for its bulk upload.

- canvas: Canvas's gradebook import CSV: `Student, ID, SIS User ID, SIS Login ID, Section`,
  then one assignment column (name it as the Canvas gradebook does, `Lab 01 (123456)`, with
  --assignment, so the import updates that assignment instead of creating one). ID is the
  roster's lms_id (the Canvas user id), SIS User ID the roster's student id, SIS Login ID its email.
- moodle: a grade import CSV: `Email address, ID number, Grade, Feedback`; in Moodle's
  "Import grades from CSV", map "Email address" (or "ID number") to the user and Grade to the
  assignment's grade item.
- csv: `student, name, email, lms_id, status, score, max_score` and the late columns.

The feedback zip sits next to FILE (`FILE-feedback.zip`): per student one HTML file, named as
the LMS matches uploads (Moodle: `<Full Name>_<participant id>_assignsubmission_file_feedback.html`,
as its "Upload multiple feedback files in a zip" expects; Canvas and csv: `<student>.html`).
"""
from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

from ..grader import gradebook
from ..grader.submissions import UsageError

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_HEADER = ["Email address", "ID number", "Grade", "Feedback"]
CSV_HEADER = ["student", "name", "email", "lms_id", "status", "raw_score", "late", "late_days", "penalty", "score",
              "max_score"]


def _cell(value) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text


def _number(value: float) -> str:
    return f"{round(value, 4):g}"


def _feedback_text(row: dict) -> str:
    parts = [f"{exercise}: {_number(item['points'])}/{_number(item['max_points'])}"
             for exercise, item in row["exercises"].items()]
    return "; ".join(parts + list(row.get("notes", [])))[:2000]


def export(folder: Path, target: str, out: Path, assignment: str | None = None) -> list[Path]:
    try:
        grades = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{folder / 'grades.json'}: cannot be read ({error})") from None
    rows = grades.get("submissions", [])
    if rows and "raw_score" not in rows[0]:
        raise UsageError(f"{folder}: graded without a roster (one row per file); grade with --roster for an export")
    name = assignment or grades["lab"]
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\r\n" if target != "csv" else "\n")
    if target == "canvas":
        writer.writerow([*CANVAS_HEADER, name])
        writer.writerow(["Points Possible", "", "", "", "", _number(grades["max_score"])])
        for row in rows:
            writer.writerow([_cell(row.get("name") or row["student"]), _cell(row.get("lms_id", "")),
                             _cell(row["student"]), _cell(row.get("email", "")), "", _number(row["score"])])
    elif target == "moodle":
        writer.writerow(MOODLE_HEADER)
        for row in rows:
            writer.writerow([_cell(row.get("email", "")), _cell(row["student"]), _number(row["score"]),
                             _cell(_feedback_text(row))])
    elif target == "csv":
        writer.writerow(CSV_HEADER)
        for row in rows:
            writer.writerow([_cell(row["student"]), _cell(row.get("name", "")), _cell(row.get("email", "")),
                             _cell(row.get("lms_id", "")), row["status"], _number(row["raw_score"]),
                             "yes" if row["late"] else "", "" if row["late_days"] is None else row["late_days"],
                             _number(row["penalty"]), _number(row["score"]), _number(row["max_score"])])
    else:
        raise UsageError(f"unknown export target {target!r}: canvas, moodle or csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    gradebook.write_atomic(out, stream.getvalue())
    bundle = out.with_name(out.stem + "-feedback.zip")
    _feedback_zip(folder, rows, target, bundle)
    return [out, bundle]


def _moodle_name(row: dict) -> str:
    # the name as Moodle wrote it in the download (its feedback upload matches it), else the roster's
    shown = row.get("lms_name") or row.get("name") or row["student"]
    name = re.sub(r"[\\/:*?\"<>|\x00-\x1f]", "", shown).strip() or row["student"]
    return f"{name}_{row.get('lms_id') or row['student']}_assignsubmission_file_feedback.html"


def _feedback_zip(folder: Path, rows: list[dict], target: str, bundle: Path) -> None:
    temporary = bundle.with_name(f".{bundle.name}.tmp")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
        for row in rows:
            source = folder / "feedback" / f"{row.get('feedback_file', row['student'])}.html"
            try:
                data = source.read_bytes()
            except OSError:
                continue
            member = _moodle_name(row) if target == "moodle" else f"{row.get('feedback_file', row['student'])}.html"
            info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))  # same grades, same bytes
            info.external_attr = 0o600 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    temporary.chmod(0o600)
    temporary.replace(bundle)
