"""Due dates, extensions and the late penalty.

A started day counts whole: one second late is one day. The penalty is a
percentage of the raw score per late day, capped (`--late-cap`). A roster
extension moves that student's due date. Where the LMS gives a time
(Moodle's grading worksheet, Canvas's submission times, nbgrader's
timestamp.txt; read in the intake, times.py) it decides; where it only says
"late" (Canvas `_LATE_`) the first day's penalty applies and late_days stays
empty; an override of `late_days` replaces either. A hand-in with no known
time under a due date is on time, and its row says so (`time_unknown`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..grader.submissions import UsageError
from .times import parse_timestamp  # noqa: F401 - read here by older callers

CANVAS_FLAG = "canvas_flag"
OVERRIDE = "override"


@dataclass(frozen=True)
class Policy:
    due: datetime | None = None
    per_day: float = 0.0  # percent of the raw score per started late day
    cap: float = 100.0  # percent, at most


@dataclass
class Lateness:
    late: bool = False
    late_days: int | None = 0  # None: late, by how much the LMS does not say
    penalty_percent: float = 0.0
    submitted: str | None = None  # ISO time the LMS gave
    note: str | None = None  # key of a message, for the row
    time_source: str | None = None  # where the time (or the flag) came from; None: nowhere
    time_unknown: bool = False  # a due date, a hand-in, and no time to judge it by


def parse_due(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        due = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--due {text!r}: not an ISO 8601 time such as 2026-12-10T23:59:00+01:00") from None
    if due.tzinfo is None:
        raise UsageError(f"--due {text!r}: give the offset too (2026-12-10T23:59:00+01:00), "
                         "or the due time depends on the machine's clock settings")
    return due


def percent(text: str | None, option: str, default: float) -> float:
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise UsageError(f"{option} {text!r}: a percentage between 0 and 100")
    return value


def assess(policy: Policy, extension_days: float, submitted: datetime | str | None, late_flag: bool,
           time_source: str | None = None, odd: bool = False) -> Lateness:
    """The lateness of one hand-in: `submitted` is its time (an nbgrader timestamp's text is read too),
    `late_flag` Canvas's _LATE_, `odd` a time that was given but could not be read."""
    if isinstance(submitted, str):
        time_source = time_source or "nbgrader_timestamp"
        stamp = parse_timestamp(submitted)
        odd = odd or stamp is None
        submitted = stamp
    if submitted is not None:
        if policy.due is None:
            return Lateness(submitted=submitted.isoformat(), time_source=time_source)
        due = policy.due + timedelta(days=extension_days)
        if submitted <= due:
            return Lateness(submitted=submitted.isoformat(), time_source=time_source)
        days = math.ceil((submitted - due) / timedelta(days=1))
        return Lateness(True, days, penalty_for(policy, days), submitted.isoformat(), time_source=time_source)
    if odd:
        # an odd format is no reason to penalise: on time, and the row says why
        return Lateness(note="term.note.odd_timestamp", time_source=time_source, time_unknown=policy.due is not None)
    if late_flag:
        if extension_days > 0:
            # the LMS judged by its own due date; ours is later for this student: no penalty, but said
            return Lateness(True, None, 0.0, note="term.note.late_flag_extension", time_source=CANVAS_FLAG)
        return Lateness(True, None, penalty_for(policy, 1) if policy.due is not None or policy.per_day else 0.0,
                        time_source=CANVAS_FLAG)
    if time_source == CANVAS_FLAG:
        return Lateness(time_source=CANVAS_FLAG)  # Canvas says on time, by its own due date
    if policy.due is not None:
        return Lateness(note="term.note.time_unknown", time_unknown=True)
    return Lateness()


def penalty_for(policy: Policy, days: int) -> float:
    return min(policy.cap, policy.per_day * max(0, days))
