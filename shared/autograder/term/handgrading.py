"""Written answers graded by hand.

A lab declares its parts (`LabSpec.hand_graded = {part: points}`); the handout
tags each answer's markdown cell `hand-graded` with metadata
`{"labbook": {"part": "<part>"}}`. `grade` writes DIR/hand-graded.csv in the
overrides format (student,exercise,points,reason) plus the student's text;
the instructor fills in points and passes the sheet back with --overrides.
The points a part is worth come from the lab module, never from the notebook.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..grader import sanitize
from ..grader.submissions import MAX_BYTES
from . import files

TAG = "hand-graded"
ANSWER_CHARS = 5000
SHEET = "hand-graded.csv"
SHEET_HEADER = ("student", "exercise", "points", "reason", "max_points", "text")


def answers(source, parts: dict[str, float], max_bytes: int | None = None) -> dict[str, str]:
    """part -> the student's text (the last tagged cell of each part), from a parsed notebook, or from a
    notebook file read the way every student file is (regular only, no link, never blocking, bounded)."""
    if not parts or source is None:
        return {}
    notebook = source
    if isinstance(source, (str, Path)):
        try:
            raw = files.read_regular(Path(source), None, max_bytes or MAX_BYTES)
            notebook = json.loads(raw.decode("utf-8-sig"))
        except (files.Refused, ValueError, RecursionError):
            return {}
    found: dict[str, str] = {}
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        tags = metadata.get("tags") if isinstance(metadata.get("tags"), list) else []
        labbook = metadata.get("labbook") if isinstance(metadata.get("labbook"), dict) else {}
        part = labbook.get("part")
        if TAG not in tags or not isinstance(part, str) or part not in parts:
            continue
        source_text = cell.get("source", "")
        text = "".join(source_text) if isinstance(source_text, list) and all(isinstance(x, str) for x in source_text) \
            else source_text
        if isinstance(text, str):
            found[part] = sanitize.text(text, ANSWER_CHARS)
    return found


def sheet(rows: list[tuple[str, str, float, str]]) -> str:
    """(student, part, max points, text) -> the CSV the instructor fills in."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(SHEET_HEADER)
    for student, part, max_points, text in rows:
        writer.writerow([student, part, "", "hand-graded", f"{max_points:g}", _safe(text)])
    return stream.getvalue()


def _safe(text: str) -> str:
    return "'" + text if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text
