"""Who a file belongs to: the one roster student that the LMS's own part of its name names, or nobody.

An entry's claims (layouts.py) come only from what the LMS wrote: Canvas's
user id and name, Moodle's participant id and full name, nbgrader's student
folder, a flat file's stem. The rules:
- a claim of an LMS id is looked up in the roster's lms_id column (when the roster has
  one); Moodle's participants download, which has no participant ids, is matched by the
  name alone; a roster without lms_ids by the student id, else by the name;
- when the roster knows the student's name and the LMS wrote one, they must be the same
  person's (names.same_person), else the file is refused as `name_mismatch`;
- a flat stem or an nbgrader folder names the student whose id or lms_id it is;
- all readings of the name together must name exactly one student: two is `ambiguous`,
  none is `unknown`; without a roster, readings with two different ids are `ambiguous` too.
Refused files are reported, never graded as anybody, never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import names
from .layouts import Claim, Entry
from .roster import Roster, Student


@dataclass(frozen=True)
class Decision:
    student: str | None  # the roster's (or, without one, the claim's) student id; None: refused
    claim: Claim  # the reading that decided, or the LMS's own reading when none did
    problem: str | None = None  # None | "unknown" | "ambiguous" | "name_mismatch"
    detail: str = ""  # for the instructor: the students an ambiguous name reads as, or the mismatching names


def _rows(claim: Claim, roster: Roster) -> list[Student]:
    if claim.kind == "lms_id":
        if roster.has_lms_ids:
            return [s for s in roster.students if s.lms_id == claim.key]
        by_id = [] if roster.format == "moodle_participants" else [s for s in roster.students if s.student == claim.key]
        # Moodle's participants download has no participant ids (its ID numbers are no LMS ids): by name
        return by_id or [s for s in roster.students if s.name and claim.name and not claim.blind
                         and names.same_person(claim.name, s.name)]
    return [s for s in roster.students if claim.key in (s.student, s.lms_id)]


def decide(entry: Entry, roster: Roster | None) -> Decision:
    first = entry.claims[0]
    if roster is None:
        # without a roster every reading's id is as good as another: two readings are two students
        keys = sorted({claim.key for claim in entry.claims})
        return Decision(first.key, first) if len(keys) == 1 else Decision(None, first, "ambiguous", ", ".join(keys))
    matched: dict[str, Claim] = {}
    mismatched: list[tuple[Claim, Student]] = []
    for claim in entry.claims:
        for row in _rows(claim, roster):
            if row.name and claim.name and not claim.blind and not names.same_person(claim.name, row.name):
                mismatched.append((claim, row))
            else:
                matched.setdefault(row.student, claim)
    if len(matched) == 1:
        student, claim = next(iter(matched.items()))
        return Decision(student, claim)
    if len(matched) > 1:
        return Decision(None, first, "ambiguous", ", ".join(sorted(matched)))
    if mismatched:
        claim, row = mismatched[0]
        return Decision(None, claim, "name_mismatch",
                        f"the LMS wrote {claim.name!r} with id {claim.key}, the roster names {row.student} "
                        f"{row.name!r}")
    return Decision(None, first, "unknown")
