"""Due dates, extensions and the late penalty.

A started day counts whole: one second late is one day. The penalty is a
percentage of the raw score per late day, capped (`--late-cap`). A roster
extension moves that student's due date. Where the layout carries a time
(nbgrader's timestamp.txt) it decides; where the layout only says "late"
(Canvas `_LATE_`) the first day's penalty applies and late_days stays empty;
an override of `late_days` replaces either.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..grader.submissions import UsageError


@dataclass(frozen=True)
class Policy:
    due: datetime | None = None
    per_day: float = 0.0  # percent of the raw score per started late day
    cap: float = 100.0  # percent, at most


@dataclass
class Lateness:
    late: bool = False
    late_days: int | None = 0  # None: late, by how much the layout does not say
    penalty_percent: float = 0.0
    submitted: str | None = None  # ISO time the layout gave
    note: str | None = None  # key of a texts.py message, for the row


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


_ZONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+\-/]*")


def parse_timestamp(text: str) -> datetime | None:
    """nbgrader's timestamp.txt: `2026-12-10 23:59:00.123456 UTC` (its default format, `%Y-%m-%d %H:%M:%S.%f %Z`),
    a zone name instead of UTC (`Europe/Berlin`, older nbgrader), or ISO 8601 with an offset. A time without
    a zone is UTC, nbgrader's default timezone. Anything else: None."""
    text = text.strip()
    if not text or len(text) > 80:
        return None
    zone = timezone.utc
    head, _, last = text.rpartition(" ")
    if head and _ZONE_WORD.fullmatch(last) and not last[0].isdigit():
        if last.upper() in ("UTC", "GMT", "Z"):
            zone = timezone.utc
        else:
            try:
                zone = ZoneInfo(last)
            except (ZoneInfoNotFoundError, ValueError):
                return None
        text = head
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=zone)


def assess(policy: Policy, extension_days: float, timestamp: str | None, late_flag: bool) -> Lateness:
    if timestamp is not None:
        stamp = parse_timestamp(timestamp)
        if stamp is None:
            # an odd format is no reason to penalise: on time, and the row says why
            return Lateness(note="term.note.odd_timestamp")
        if policy.due is None:
            return Lateness(submitted=stamp.isoformat())
        due = policy.due + timedelta(days=extension_days)
        if stamp <= due:
            return Lateness(submitted=stamp.isoformat())
        days = math.ceil((stamp - due) / timedelta(days=1))
        return Lateness(True, days, penalty_for(policy, days), stamp.isoformat())
    if late_flag:
        if extension_days > 0:
            # the LMS judged by its own due date; ours is later for this student: no penalty, but said
            return Lateness(True, None, 0.0, note="term.note.late_flag_extension")
        return Lateness(True, None, penalty_for(policy, 1) if policy.due is not None or policy.per_day else 0.0)
    return Lateness()


def penalty_for(policy: Policy, days: int) -> float:
    return min(policy.cap, policy.per_day * max(0, days))
