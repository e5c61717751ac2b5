"""A generated term of lab01: who got which notebook, under each LMS's names, and the gradebook to expect.

The expectations come from how the term is built (which variant each student
handed in, and what that variant is known to score), never from the grader.
"""
from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.labs import get_lab
from corpus.notebooks import with_definition

ROOT = Path(__file__).resolve().parents[2]
LAB = "lab01"
SPEC = get_lab(LAB)
MAX = SPEC.max_score


def without(*exercises: str) -> float:
    """The score of a notebook right everywhere but in these exercises (read from the lab, never spelled out)."""
    return MAX - sum(SPEC.exercise(e).points for e in exercises)
DUE = "2026-12-10T23:59:00+01:00"
PER_DAY, CAP = 10.0, 30.0
DUE_TIME = datetime.fromisoformat(DUE)

WRONG_TRIANGLE = '''def causal_mask(T: int) -> torch.Tensor:
    return torch.full((T, T), float("-inf")).tril(diagonal=-1)
'''
# the identical pair: the same wrong window under other names, comments and spacing
PAIR_A = '''def sliding_window_mask(T: int, W: int) -> torch.Tensor:
    rows = torch.arange(T)[:, None]
    cols = torch.arange(T)[None, :]
    return (cols <= rows) & (rows - cols <= W)
'''
PAIR_B = '''def sliding_window_mask(T, W):
    # my own window
    q  = torch.arange(T)[:, None]   # queries
    k  = torch.arange(T)[None, :]
    return (k <= q) & (q - k <= W)
'''

# variant -> (score, points per exercise that differ from full marks, diagnosis per exercise)
KNOWN = {
    "full": (MAX, {}, {}),
    "wrong_triangle": (without("causal_mask"), {"causal_mask": 0.0}, {"causal_mask": "wrong_triangle"}),
    "blank": (0.0, {e: 0.0 for e in ("causal_mask", "allowed_mask", "blocked_mask", "padding_mask", "combined_mask",
                                      "sliding_window_mask")}, {}),
    "pair_a": (without("sliding_window_mask"), {"sliding_window_mask": 0.0}, {"sliding_window_mask": "window_too_wide"}),
    "pair_b": (without("sliding_window_mask"), {"sliding_window_mask": 0.0}, {"sliding_window_mask": "window_too_wide"}),
    "wrong_lab": (0.0, {e: 0.0 for e in ("causal_mask", "allowed_mask", "blocked_mask", "padding_mask",
                                          "combined_mask", "sliding_window_mask")}, {}),
}
STATUS = {"wrong_lab": "wrong_lab"}


def notebook(variant: str) -> dict:
    solution = json.loads((ROOT / "solutions/en/lab01_masks.ipynb").read_text())
    if variant == "full":
        return solution
    if variant == "blank":
        return json.loads((ROOT / "labs/en/lab01_masks.ipynb").read_text())
    if variant == "wrong_lab":
        return json.loads((ROOT / "solutions/en/lab00_attention_by_hand.ipynb").read_text())
    if variant == "wrong_triangle":
        return with_definition(solution, "causal_mask", WRONG_TRIANGLE)
    if variant == "pair_a":
        return with_definition(solution, "sliding_window_mask", PAIR_A)
    if variant == "pair_b":
        return with_definition(solution, "sliding_window_mask", PAIR_B)
    raise KeyError(variant)


@dataclass
class Student:
    student: str
    name: str
    lms_id: str
    email: str
    extension_days: int = 0
    variant: str | None = "full"  # None: hands in nothing
    earlier: str | None = None  # a variant handed in before (superseded)
    late_days: int = 0  # days after its due date (0: on time)
    canvas_late_flag: bool = False


@dataclass
class Term:
    students: list[Student]
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (lms id, name) not on the roster

    def roster_csv(self) -> str:
        stream = io.StringIO()
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["student", "name", "email", "lms_id", "extension_days"])
        for s in self.students:
            writer.writerow([s.student, s.name, s.email, s.lms_id, s.extension_days or ""])
        return stream.getvalue()


def make_term(n: int = 62) -> Term:
    students = []
    for i in range(n):
        first, last = f"Ana{i:02d}", f"Lopez{i:02d}"
        s = Student(f"s{1000 + i}", f"{last}, {first}", str(50000 + i), f"s{1000 + i}@uni.example")
        kind = i % 10
        if kind == 0:
            s.variant = None
        elif kind == 1:
            s.earlier, s.variant = "blank", "full"
        elif kind == 2:
            s.variant = "wrong_triangle"
        elif kind == 3:
            s.late_days = 2
        elif kind == 4:
            s.extension_days, s.late_days = 3, 2  # late by the due date, on time with the extension
        elif kind == 5:
            s.variant = "wrong_lab"
        elif kind == 6:
            s.variant = "blank"
        students.append(s)
    students[7].variant, students[8].variant = "pair_a", "pair_b"
    return Term(students, unknown=[("99901", "Stranger, Sam"), ("99902", "Nobody, Nia")])


def _json(variant: str) -> str:
    return json.dumps(notebook(variant))


def canvas_name(s: Student) -> str:
    return s.name.replace(", ", "").replace(" ", "").lower()


def canvas_zip(term: Term, path: Path) -> None:
    """Canvas "Download submissions": name[_LATE]_userid_submissionid_file, -1 on a repeated file name."""
    with zipfile.ZipFile(path, "w") as archive:
        for index, s in enumerate(term.students):
            if s.variant is None:
                continue
            late = "_LATE" if s.late_days else ""  # Canvas judges by its own due date: extensions unknown to it
            base = f"{canvas_name(s)}{late}_{s.lms_id}"
            if s.earlier:
                archive.writestr(f"{base}_{700000 + index}_lab01_masks.ipynb", _json(s.earlier))
                archive.writestr(f"{base}_{800000 + index}_lab01_masks-1.ipynb", _json(s.variant))
            else:
                archive.writestr(f"{base}_{800000 + index}_lab01_masks.ipynb", _json(s.variant))
        for lms_id, name in term.unknown:
            archive.writestr(f"{name.replace(', ', '').lower()}_{lms_id}_900000_lab01_masks.ipynb", _json("full"))
        archive.writestr("notes about lab01.ipynb", _json("full"))  # fits no pattern: unparsed
        archive.writestr("__MACOSX/._x", b"junk")


def moodle_zip(term: Term, path: Path) -> None:
    """Moodle "Download all submissions": `<Full Name>_<participant id>_assignsubmission_file_/<file>`."""
    with zipfile.ZipFile(path, "w") as archive:
        def write(name: str, data: str, minute: int) -> None:
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 12, 10, 12, minute, 0)), data)

        for s in term.students:
            if s.variant is None:
                continue
            folder = f"{s.name.split(', ')[1]} {s.name.split(', ')[0]}_{s.lms_id}_assignsubmission_file_"
            if s.earlier:
                write(f"{folder}/lab01_masks.ipynb", _json(s.earlier), 1)
                write(f"{folder}/lab01_masks (1).ipynb", _json(s.variant), 30)
            else:
                write(f"{folder}/lab01_masks.ipynb", _json(s.variant), 5)
        for lms_id, name in term.unknown:
            write(f"{name}_{lms_id}_assignsubmission_file_/lab01.ipynb", _json("full"), 5)
        write("Someone_assignsubmission_file_/lab01.ipynb", _json("full"), 5)  # no id: unparsed
        write("Zed Zulu_12_assignsubmission_onlinetext_/onlinetext.html", "<p>hi</p>", 5)


def nbgrader_stamp(s: Student) -> str:
    when = DUE_TIME - timedelta(hours=3) if not s.late_days else DUE_TIME + timedelta(days=s.late_days - 1, minutes=1)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def nbgrader_folder(term: Term, root: Path) -> None:
    """nbgrader's submitted/<student>/<assignment>/ with timestamp.txt; the assignment is named `Lab 1`."""
    for s in term.students:
        if s.variant is None:
            continue
        folder = root / s.student / "Lab 1"
        folder.mkdir(parents=True)
        (folder / "lab01_masks.ipynb").write_text(_json(s.variant))
        if s.earlier:  # a second notebook in the folder: the one named after the lab counts
            (folder / "Untitled.ipynb").write_text(_json(s.earlier))
        (folder / "timestamp.txt").write_text(nbgrader_stamp(s))
    for lms_id, _ in term.unknown:
        folder = root / f"x{lms_id}" / "Lab 1"
        folder.mkdir(parents=True)
        (folder / "lab01_masks.ipynb").write_text(_json("full"))
        (folder / "timestamp.txt").write_text(nbgrader_stamp(Student("x", "x", "x", "x")))
    other = root / term.students[9].student / "lab00"
    other.mkdir(parents=True)
    (other / "lab00.ipynb").write_text(_json("full"))


def expected_row(s: Student, layout: str, late_override: dict[str, int] | None = None) -> dict:
    """The row the gradebook must hold for this student, from the term's construction only."""
    if s.variant is None:
        return {"status": "missing", "raw_score": 0.0, "score": 0.0, "late": False, "late_days": 0, "superseded": 0,
                "points": {}, "diagnoses": {}}
    raw, points, diagnoses = KNOWN[s.variant]
    late, days, percent = False, 0, 0.0
    if layout == "nbgrader" and s.late_days > s.extension_days:
        late, days = True, s.late_days
        percent = min(CAP, PER_DAY * days)
    elif layout == "canvas" and s.late_days:
        late, days = True, None  # the flag says late, not by how much: the first day, unless extended
        percent = 0.0 if s.extension_days else PER_DAY
    if late_override and s.student in late_override:
        days = late_override[s.student]
        late, percent = days > 0, min(CAP, PER_DAY * days)
    return {"status": STATUS.get(s.variant, "graded"), "raw_score": raw, "score": round(raw * (1 - percent / 100), 4),
            "late": late, "late_days": days, "superseded": 1 if s.earlier else 0, "points": points,
            "diagnoses": diagnoses}


# the lab's points per exercise, as the lab01 chapter hands them out (10 in all)
FULL_POINTS = {"causal_mask": 2.0, "allowed_mask": 1.0, "blocked_mask": 1.0, "padding_mask": 2.0,
               "combined_mask": 2.0, "sliding_window_mask": 2.0}
