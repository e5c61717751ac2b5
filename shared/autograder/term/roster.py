"""The class list, as the LMS gives it: who should hand in, and how the LMS names them.

`load` reads any of these, told apart by their header (term/lms/ says what each
LMS writes and where that was read):
- `canvas`: Canvas's gradebook export (Grades > Export);
- `moodle_worksheet`: Moodle's assignment grading worksheet (View all submissions >
  Download grading worksheet), the only Moodle file with the participant ids that its
  submission download writes into file names, and each hand-in's time;
- `moodle_participants`: Moodle's participants download (First name, Last name and the
  identity fields);
- `csv`: our own `student[,name,email,lms_id,extension_days,section,login]`.
Any of them may carry an `extension_days` column (in Canvas, a custom gradebook column
`Extension days`, which its export writes after Section); Moodle's worksheet says an
extension in its Status column ("Extension granted until: <date>").

Every cell is read with csv over the file's text as it is (only CR and LF end a
record: `str.splitlines` would also split on U+0085, U+2028..., making phantom
students), and every id and name is cleaned here (names.py) before anything
else sees it.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..grader.submissions import UsageError
from . import names

COLUMNS = ("student", "name", "email", "lms_id", "extension_days", "section", "login")
MAX_ROSTER_BYTES = 20 << 20
FORMATS = ("canvas", "moodle_worksheet", "moodle_participants", "csv")


@dataclass(frozen=True)
class Student:
    student: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    extension_days: float = 0.0
    line: int = 0
    section: str = ""
    login: str = ""
    lms_display_name: str = ""  # the name exactly as the LMS writes it (Canvas: "Last, First")
    submitted: str | None = None  # the LMS's text for the hand-in time (Moodle's worksheet), None: no such column
    extension_until: str | None = None  # the LMS's text for an extended due time (Moodle's worksheet status)


@dataclass
class Roster:
    students: list[Student]
    path: Path | None = None
    format: str = "csv"
    lms_columns: list[str] = field(default_factory=list)  # Canvas: the export's assignment columns, in order
    skipped: list[str] = field(default_factory=list)  # rows left out on purpose (Canvas's test student)

    def ids(self) -> list[str]:
        return [s.student for s in self.students]

    def by_id(self) -> dict[str, Student]:
        return {s.student: s for s in self.students}

    def by_lms_id(self) -> dict[str, Student]:
        return {s.lms_id: s for s in self.students if s.lms_id}

    def find(self, key: str) -> Student | None:
        """The one student an id names (as lms_id or as student id); None when none or two do."""
        found = {s.student: s for s in self.students if key in (s.student, s.lms_id)}
        return next(iter(found.values())) if len(found) == 1 else None

    @property
    def has_lms_ids(self) -> bool:
        return any(s.lms_id for s in self.students)

    @property
    def has_names(self) -> bool:
        return any(s.name for s in self.students)

    @property
    def has_times(self) -> bool:
        return any(s.submitted is not None for s in self.students)


def read_text(path: Path, what: str, limit: int = MAX_ROSTER_BYTES) -> str:
    try:
        if not path.is_file():
            raise UsageError(f"{what} {names.shown(path)}: no such file")
        size = path.stat().st_size
        if size > limit:
            raise UsageError(f"{what} {names.shown(path)}: {size} bytes, more than {limit}")
        data = path.read_bytes()[:limit + 1]
    except OSError as error:
        raise UsageError(f"{what} {names.shown(path)}: cannot be read ({error.strerror or error})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UsageError(f"{what} {names.shown(path)}: not UTF-8 text ({error.reason} at byte {error.start}); "
                         "save it as CSV UTF-8") from None


def _rows(text: str, delimiter: str) -> csv.reader:
    return csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)


def _sniff(text: str) -> str:
    """The delimiter of the header line: Canvas and Excel write `;` (or a tab) in some locales."""
    try:
        first = next(_rows(text, ","), [])
    except csv.Error:
        first = []
    if len(first) > 1:
        return ","
    for delimiter in (";", "\t"):
        try:
            if len(next(_rows(text, delimiter), [])) > 1:
                return delimiter
        except csv.Error:
            continue
    return ","


def read_csv_rows(path: Path, what: str, limit: int = MAX_ROSTER_BYTES, text: str | None = None
                  ) -> tuple[list[str], list[tuple[int, dict]]]:
    """(header, [(line number, row)]) of a CSV file; cells are raw text, stripped (the loaders clean them).
    UsageError naming the file and line otherwise."""
    text = read_text(path, what, limit) if text is None else text
    reader = _rows(text, _sniff(text))
    rows: list[tuple[int, dict]] = []
    try:
        header = [cell.strip() for cell in next(reader, [])]
        for cells in reader:
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
                raise UsageError(f"{what} {names.shown(path)} line {reader.line_num}: more cells than the header has")
            row = {key: (cells[i].strip() if i < len(cells) else "") for i, key in enumerate(header)}
            if any(row.values()):
                rows.append((reader.line_num, row))
    except csv.Error as error:
        raise UsageError(f"{what} {names.shown(path)} line {reader.line_num}: {error}") from None
    return header, rows


def detect(header: list[str]) -> str | None:
    from .lms import canvas, moodle

    if canvas.is_gradebook_export(header):
        return "canvas"
    if moodle.is_worksheet(header):
        return "moodle_worksheet"
    if moodle.is_participants(header):
        return "moodle_participants"
    if "student" in header:
        return "csv"
    return None


def extension_cell(row: dict) -> str:
    """The instructor's `extension_days` column (Canvas: a custom gradebook column `Extension days`)."""
    for key, value in row.items():
        if key.strip().lower().replace(" ", "_") == "extension_days":
            return value
    return ""


def extension(raw: str, where: str) -> float:
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or value > 366:
        raise UsageError(f"{where}: extension_days {raw!r} is not a number of days between 0 and 366")
    return value


def load(path: Path) -> Roster:
    from .lms import canvas, moodle

    text = read_text(path, "roster")
    header, rows = read_csv_rows(path, "roster", text=text)
    kind = detect(header)
    shown = names.shown(path)
    if kind is None:
        raise UsageError(
            f"roster {shown} line 1: not a roster this grader knows. It reads, as downloaded: Canvas's gradebook "
            "export (Student, ID, SIS User ID, SIS Login ID, Section, ...), Moodle's grading worksheet (Identifier, "
            "Full name, ...), Moodle's participants download (First name, Last name, ...), or a CSV whose header "
            f"names a `student` column (optional: {', '.join(COLUMNS[1:])}); found {', '.join(header) or 'nothing'}")
    skipped: list[str] = []
    lms_columns: list[str] = []
    if kind == "canvas":
        people, skipped = canvas.roster_rows(rows, shown)
        lms_columns = canvas.assignment_columns(header)
    elif kind == "moodle_worksheet":
        people = moodle.worksheet_rows(rows, shown)
    elif kind == "moodle_participants":
        people = moodle.participants_rows(rows, shown)
    else:
        people = _csv_rows(rows, shown)
    students = _checked(people, shown)
    if not students:
        raise UsageError(f"roster {shown}: no students (only a header)")
    return Roster(students, path, kind, lms_columns, skipped)


def _csv_rows(rows: list[tuple[int, dict]], shown: str) -> list[Student]:
    people = []
    for line, row in rows:
        people.append(Student(
            names.ident(row.get("student", "")), names.name(row.get("name", "")), names.ident(row.get("email", "")),
            names.ident(row.get("lms_id", "")), extension(extension_cell(row), f"roster {shown} line {line}"),
            line, names.name(row.get("section", "")), names.ident(row.get("login", ""))))
    return people


def _checked(people: list[Student], shown: str) -> list[Student]:
    seen: dict[str, int] = {}
    seen_lms: dict[str, int] = {}
    for person in people:
        if not person.student:
            raise UsageError(f"roster {shown} line {person.line}: the student id is empty")
        if person.student in seen:
            raise UsageError(f"roster {shown} line {person.line}: student {person.student!r} is already on line "
                             f"{seen[person.student]}")
        seen[person.student] = person.line
        if person.lms_id:
            if person.lms_id in seen_lms:
                raise UsageError(f"roster {shown} line {person.line}: lms_id {person.lms_id!r} is already on line "
                                 f"{seen_lms[person.lms_id]}")
            seen_lms[person.lms_id] = person.line
    return people
