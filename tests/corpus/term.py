"""A generated term of lab01: who got which notebook, under each LMS's names, and the gradebook to expect.

The expectations come from how the term is built (which variant each student
handed in, when, and what that variant is known to score), never from the grader.
The LMS files are written as each LMS writes them (term/lms/ cites where that
was read): Canvas's gradebook export and "Download submissions" zip, Moodle's
grading worksheet, participants download and its three zip forms, nbgrader's
submitted/ folder, Canvas's submissions API answer.
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
    section: str = ""
    login: str = ""

    @property
    def first(self) -> str:
        return self.name.split(", ")[1]

    @property
    def last(self) -> str:
        return self.name.split(", ")[0]

    @property
    def moodle_name(self) -> str:
        """Moodle's fullname() on a site whose fullnamedisplay is `lastname, firstname`: `Last, First`
        (the worksheet's Full name and the download's names are both written so)."""
        return f"{self.last}, {self.first}"


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
        s = Student(f"s{1000 + i}", f"{last}, {first}", str(50000 + i), f"s{1000 + i}@uni.example",
                    section=f"Section {'AB'[i % 2]}", login=f"alopez{i:02d}")
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


ATTACKER, VICTIM = 6, 7  # indexes of the students in the flat Moodle zip's attack (see moodle_zip)


def moodle_zip(term: Term, path: Path, form: str = "folders") -> None:
    """Moodle "Download all submissions" in its three forms: `folders` (`<Full Name>_<participant id>_
    assignsubmission_file_/<file>`), `flat` (the same prefix on each file) and `blind` (blind marking:
    `Participant` instead of the name). The flat form also holds an attack: the student ATTACKER uploads,
    after their own file, a blank notebook named `x_<VICTIM's participant id>_assignsubmission_file_lab01.ipynb`."""
    with zipfile.ZipFile(path, "w") as archive:
        def write(prefix: str, file: str, data: str, minute: int) -> None:
            name = f"{prefix}/{file}" if form != "flat" else f"{prefix}{file}"
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 12, 10, 12, minute, 0)), data)

        def prefix(name: str, lms_id: str) -> str:
            shown = "Participant" if form == "blind" else name
            return f"{shown}_{lms_id}_assignsubmission_file_"

        for s in term.students:
            if s.variant is None:
                continue
            folder = prefix(s.moodle_name, s.lms_id)
            if s.earlier:
                write(folder, "lab01_masks.ipynb", _json(s.earlier), 1)
                write(folder, "lab01_masks (1).ipynb", _json(s.variant), 30)
            else:
                write(folder, "lab01_masks.ipynb", _json(s.variant), 5)
        if form == "flat":
            attacker, victim = term.students[ATTACKER], term.students[VICTIM]
            write(prefix(attacker.moodle_name, attacker.lms_id), f"x_{victim.lms_id}_assignsubmission_file_lab01.ipynb",
                  _json("blank"), 40)
        for lms_id, name in term.unknown:
            write(prefix(name, lms_id), "lab01.ipynb", _json("full"), 5)
        write("Someone_assignsubmission_file_", "lab01.ipynb", _json("full"), 5)  # no id: unparsed
        write("Zed Zulu_12_assignsubmission_onlinetext_", "onlinetext.html", "<p>hi</p>", 5)


def hand_in_time(s: Student) -> datetime:
    """When the student's (last) file came: three hours early, or `late_days` started days after the due time."""
    return DUE_TIME - timedelta(hours=3) if not s.late_days else DUE_TIME + timedelta(days=s.late_days - 1, minutes=1)


LMS_ZONE = "Europe/Berlin"  # the zone the instructor's Moodle shows times in (the due date's +01:00 in December)


def moodle_date(when: datetime) -> str:
    """userdate() with English `strftimedaydatetime` (`%A, %d %B %Y, %I:%M %p`, day and hour without a
    leading zero), in the instructor's zone: `Thursday, 10 December 2026, 8:59 PM`."""
    from zoneinfo import ZoneInfo

    local = when.astimezone(ZoneInfo(LMS_ZONE))
    return (f"{local.strftime('%A')}, {local.day} {local.strftime('%B %Y')}, "
            f"{int(local.strftime('%I'))}:{local.strftime('%M %p')}")


def _csv_text(rows: list[list[str]]) -> str:
    stream = io.StringIO()
    csv.writer(stream, lineterminator="\r\n").writerows(rows)
    return stream.getvalue()


ASSIGNMENT = "Lab 01 (123456)"  # title_with_id, as the export names the lab's column


def canvas_gradebook_csv(term: Term) -> str:
    """Canvas's gradebook export (lib/gradebook_exporter.rb): the test student last, a `    Points Possible`
    row, the instructor's custom column `Extension days` after Section, an assignment column per assignment
    (`title (id)`), the totals after them; BOM included."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Extension days",  # a custom column
              "Lab 00: Attention by hand (48210)", ASSIGNMENT, "Assignments Current Score", "Current Score",
              "Unposted Current Score", "Final Score", "Unposted Final Score"]
    rows = [header, ["    Points Possible", "", "", "", "", "", "10.00", "10.00", "(read only)", "(read only)",
                     "(read only)", "(read only)", "(read only)"]]
    for s in term.students:
        rows.append([s.name, s.lms_id, s.student, s.login, s.section, str(s.extension_days or ""), "8.00", "", "80",
                     "80", "80", "40", "40"])
    rows.append(["Student, Test", "99999", "", "8c6b1a2e5d", "Section A", "", "", "", "", "", "", "", ""])
    return "\ufeff" + _csv_text(rows)


WORKSHEET_HEADER = ["Identifier", "Full name", "ID number", "Email address", "Status", "Grade", "Maximum Grade",
                    "Grade can be changed", "Last modified (submission)", "Online text", "Last modified (grade)",
                    "Feedback comments"]


def moodle_worksheet_csv(term: Term) -> str:
    """Moodle's grading worksheet (mod/assign/gradingtable.php): `Participant N`, the full name, identity
    fields, and each hand-in's time in userdate()'s words (`-` for none)."""
    rows = [WORKSHEET_HEADER]
    for s in term.students:
        handed = s.variant is not None
        status = "Submitted for grading" if handed else "No submission"
        if s.extension_days:  # Moodle's "Grant extension": a date, in the Status cell
            status += " Extension granted until: " + moodle_date(DUE_TIME + timedelta(days=s.extension_days))
        rows.append([f"Participant {s.lms_id}", s.moodle_name, s.student, s.email, status, "", "10.00", "Yes",
                     moodle_date(hand_in_time(s)) if handed else "-", "", "-", ""])
    return _csv_text(rows)


def moodle_participants_csv(term: Term) -> str:
    """Moodle's participants download (user/action_redir.php): First name, Last name, identity fields."""
    return _csv_text([["First name", "Last name", "ID number", "Email address"]]
                     + [[s.first, s.last, s.student, s.email] for s in term.students])


def canvas_submissions_json(term: Term) -> str:
    """What /api/v1/courses/:c/assignments/:a/submissions answers in a browser: `while(1);` and a JSON list."""
    items = []
    for s in term.students:
        submitted = hand_in_time(s).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if s.variant else None
        items.append({"id": 9000 + int(s.lms_id) % 1000, "user_id": int(s.lms_id), "assignment_id": 48211,
                      "submitted_at": submitted, "workflow_state": "submitted" if s.variant else "unsubmitted",
                      "late": bool(s.late_days), "seconds_late": 0, "attempt": 2 if s.earlier else 1})
    return "while(1);" + json.dumps(items)


def nbgrader_stamp(s: Student) -> str:
    return hand_in_time(s).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


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
    """The row the gradebook must hold for this student, from the term's construction only.

    `layout` says where lateness comes from: "nbgrader" (timestamps), "moodle" (the grading worksheet's
    times) and "canvas_times" (the submissions API's times) give the time; "canvas" only Canvas's flag;
    "none" (a Moodle participants roster) no time at all."""
    if s.variant is None:
        return {"status": "missing", "raw_score": 0.0, "score": 0.0, "late": False, "late_days": 0, "superseded": 0,
                "points": {}, "diagnoses": {}}
    raw, points, diagnoses = KNOWN[s.variant]
    late, days, percent = False, 0, 0.0
    if layout in ("nbgrader", "moodle", "canvas_times") and s.late_days > s.extension_days:
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
