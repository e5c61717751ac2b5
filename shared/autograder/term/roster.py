"""The class list: who should hand in, and how an LMS names them."""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from ..grader.submissions import UsageError

COLUMNS = ("student", "name", "email", "lms_id", "extension_days")
MAX_ROSTER_BYTES = 20 << 20


@dataclass(frozen=True)
class Student:
    student: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    extension_days: float = 0.0
    line: int = 0


@dataclass
class Roster:
    students: list[Student]
    path: Path | None = None

    def ids(self) -> list[str]:
        return [s.student for s in self.students]

    def by_id(self) -> dict[str, Student]:
        return {s.student: s for s in self.students}

    def by_lms_id(self) -> dict[str, Student]:
        return {s.lms_id: s for s in self.students if s.lms_id}

    def find(self, key: str) -> Student | None:
        """The student an LMS or a folder calls `key`: by lms_id first, then by the gradebook id."""
        return self.by_lms_id().get(key) or self.by_id().get(key)


def read_csv_rows(path: Path, what: str, limit: int = MAX_ROSTER_BYTES) -> tuple[list[str], list[tuple[int, dict]]]:
    """(header, [(line number, row)]) of a CSV file the instructor wrote; UsageError naming the file otherwise."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise UsageError(f"{what} {path}: {size} bytes, more than {limit}")
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise UsageError(f"{what} {path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise UsageError(f"{what} {path}: cannot be read ({error.strerror or error})") from None
    reader = csv.DictReader(text.splitlines(keepends=True), restval="")
    try:
        header = [name.strip() for name in (reader.fieldnames or [])]
        reader.fieldnames = header
        rows = []
        for row in reader:
            if None in row:
                raise UsageError(f"{what} {path} line {reader.line_num}: more cells than the header has")
            cells = {key: (value or "").strip() for key, value in row.items()}
            if any(cells.values()):
                rows.append((reader.line_num, cells))
    except csv.Error as error:
        raise UsageError(f"{what} {path} line {reader.line_num}: {error}") from None
    return header, rows


def load(path: Path) -> Roster:
    header, rows = read_csv_rows(path, "roster")
    if "student" not in header:
        raise UsageError(f"roster {path} line 1: the header must name a `student` column "
                         f"(optional: {', '.join(COLUMNS[1:])}); found {', '.join(header) or 'nothing'}")
    seen: dict[str, int] = {}
    seen_lms: dict[str, int] = {}
    students = []
    for line, row in rows:
        student = row.get("student", "")
        if not student:
            raise UsageError(f"roster {path} line {line}: the student id is empty")
        if student in seen:
            raise UsageError(f"roster {path} line {line}: student {student!r} is already on line {seen[student]}")
        seen[student] = line
        lms_id = row.get("lms_id", "")
        if lms_id:
            if lms_id in seen_lms:
                raise UsageError(f"roster {path} line {line}: lms_id {lms_id!r} is already on line {seen_lms[lms_id]}")
            seen_lms[lms_id] = line
        raw = row.get("extension_days", "")
        try:
            extension = float(raw) if raw else 0.0
        except ValueError:
            extension = math.nan
        if not math.isfinite(extension) or extension < 0 or extension > 366:
            raise UsageError(f"roster {path} line {line}: extension_days {raw!r} is not a number of days "
                             "between 0 and 366")
        students.append(Student(student, row.get("name", ""), row.get("email", ""), lms_id, extension, line))
    if not students:
        raise UsageError(f"roster {path}: no students (only a header)")
    return Roster(students, path)
