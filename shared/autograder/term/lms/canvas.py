"""What Canvas writes: its gradebook export (the roster) and the names in its "Download submissions" zip.

Read from Canvas's source (instructure/canvas-lms):
- lib/gradebook_exporter.rb: the header is `Student` (or `LastName, FirstName`), `ID`,
  `SIS User ID` (when SIS ids are shown), `SIS Login ID`, `Integration ID` and `Root Account`
  (optional), `Section`, the custom gradebook columns, one column per assignment named
  `title_with_id` (`Lab 02 (48212)`), then the totals (`Current Score`...). A row of
  "Manual Posting" may come first, then `    Points Possible` (four leading spaces in newer
  exports). The name is the user's sortable name (`Last, First`), written `="..."` when it
  starts with `=`; the test student (Student View, `Student, Test`) comes last. Several
  sections of one student are one cell (`A and B`).
- lib/content_zipper.rb: each uploaded file is `<name>[_LATE]_<user id>_<attachment id>_<file>`,
  where name is the sortable name lowercased with `_<digits>_` runs joined and everything
  but word characters removed (so it may hold `_` and digits), LATE is Canvas's own late
  flag, the attachment id is the file's, and <file> the student's original file name (the
  student chooses it); anonymous grading writes `anon_<anonymous id>` and no name; a name
  repeated in the zip gets `-N` before its extension.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...grader.submissions import UsageError
from .. import names
from ..roster import Student, extension, extension_cell

NAME_COLUMNS = ("Student",)
SPLIT_NAME = ("LastName", "FirstName")
TOTALS = ("Current Score", "Unposted Current Score", "Final Score", "Unposted Final Score", "Current Grade",
          "Unposted Current Grade", "Final Grade", "Unposted Final Grade", "Override Score", "Override Grade",
          "Current Points", "Final Points")
ASSIGNMENT = re.compile(r".+ \((\d+)\)")
TEST_STUDENT = "Student, Test"  # Canvas's Student View user (sortable name of "Test Student")


def is_gradebook_export(header: list[str]) -> bool:
    named = "Student" in header or all(c in header for c in SPLIT_NAME)
    return named and "ID" in header and "SIS Login ID" in header


def assignment_columns(header: list[str]) -> list[str]:
    after = header[header.index("Section") + 1:] if "Section" in header else header
    return [c for c in after if ASSIGNMENT.fullmatch(c) and not any(c.startswith(t) or t in c for t in TOTALS)]


def _name(raw: str) -> str:
    if raw.startswith('="') and raw.endswith('"') and len(raw) >= 3:
        raw = raw[2:-1]  # the exporter quotes a name that starts with `=` against spreadsheet formulas
    return raw


def roster_rows(rows: list[tuple[int, dict]], shown: str) -> tuple[list[Student], list[str]]:
    """Students of a Canvas gradebook export: student = SIS User ID (else Canvas's ID), lms_id = ID
    (the user id in the zip's names), login = SIS Login ID, section = Section, name as Canvas writes it."""
    people, skipped = [], []
    for line, row in rows:
        if "Student" in row:
            written = _name(row.get("Student", ""))
        else:
            last, first = _name(row.get("LastName", "")), _name(row.get("FirstName", ""))
            written = f"{last}, {first}" if last and first else last or first
        canvas_id = row.get("ID", "")
        if written.strip() == "Points Possible" or not canvas_id:
            continue  # the points row, or the "Manual Posting" row: no student
        if written.strip() == TEST_STUDENT and not row.get("SIS User ID"):
            skipped.append(f"line {line}: Canvas's test student ({TEST_STUDENT})")
            continue
        if not canvas_id.isdigit():
            raise UsageError(f"roster {shown} line {line}: Canvas's ID {names.shown(canvas_id)!r} is not a number "
                             "(the ID column holds Canvas's user id)")
        login = names.ident(row.get("SIS Login ID", ""))
        people.append(Student(
            student=names.ident(row.get("SIS User ID", "") or canvas_id), name=names.name(written),
            email=login if "@" in login else "", lms_id=names.ident(canvas_id),
            extension_days=extension(extension_cell(row), f"roster {shown} line {line}"), line=line,
            section=names.name(row.get("Section", "")), login=login, lms_display_name=names.name(written)))
    return people, skipped


# ---------------------------------------------------------------- file names in the zip
@dataclass(frozen=True)
class Reading:
    """One way to read a file name as Canvas's: who (user id, name) and what (attachment, original file)."""

    name: str
    user: str
    attachment: int
    file: str
    late: bool


_TAIL = re.compile(r"_(LATE_)?(\d+)_(\d+)_")
_WORD = re.compile(r"\w*")
_ANONYMOUS = re.compile(r"anon_\w+?_\d+_.+")
MAX_READINGS = 16


def readings(base: str) -> list[Reading]:
    """Every split of `base` that Canvas could have written, first (Canvas's own reading) first.

    The name part may hold `_` and digits, and the student chose the file name after the
    ids, so a name such as `x_12_34_y_56_78_lab.ipynb` can be read in more than one way;
    the caller decides, against the roster, whether those readings name one student or two.
    """
    found: list[Reading] = []
    start = 0
    while len(found) < MAX_READINGS:
        match = _TAIL.search(base, start)
        if match is None:
            break
        start = match.start() + 1
        name, rest = base[:match.start()], base[match.end():]
        if not rest or not _WORD.fullmatch(name):
            continue
        found.append(Reading(name, match.group(2), int(match.group(3)), rest, bool(match.group(1))))
    return found


def is_anonymous(base: str) -> bool:
    return bool(_ANONYMOUS.fullmatch(base))


_REPEAT = re.compile(r"(?P<stem>.*?)-(?P<n>\d+)")


def repeat_number(file: str) -> int:
    """`lab01-2.ipynb` -> 2: Canvas's `-N` for a file name repeated in the zip (0 when none)."""
    stem = file.rsplit(".", 1)[0] if "." in file else file
    match = _REPEAT.fullmatch(stem)
    return int(match["n"]) if match else 0
