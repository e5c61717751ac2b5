"""Hand-in times as each source writes them, read into aware datetimes (or None: not guessed).

- nbgrader's `timestamp.txt`: `2026-12-10 23:59:00.123456 UTC` (its default format,
  `%Y-%m-%d %H:%M:%S.%f %Z`), a zone name instead of UTC, or ISO 8601; no zone is UTC
  (nbgrader's default timezone).
- Moodle's grading worksheet, column `Last modified (submission)`: `userdate()` with the
  language pack's `strftimedaydatetime`, in English `%A, %d %B %Y, %I:%M %p` with the day and
  hour written without a leading zero ("Tuesday, 10 December 2026, 11:59 PM"), in the zone of
  the user who downloaded it; `-` when there is no submission (mod/assign/gradingtable.php,
  `col_timesubmitted`).
- Canvas's submissions API (`GET /api/v1/courses/:course/assignments/:assignment/submissions`,
  opened in a browser while logged in): a JSON list of submission objects with `user_id` and
  `submitted_at` (ISO 8601 in UTC, null when nothing was submitted), the body prefixed with
  `while(1);` when Canvas protects it against JSON hijacking.
- A CSV the instructor writes: `student,submitted_at` (ISO 8601; without an offset, the zone given).
"""
from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_ZONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+\-/]*")


def parse_timestamp(text: str) -> datetime | None:
    """nbgrader's timestamp.txt (see above). Anything else: None."""
    text = text.strip()
    if not text or len(text) > 80:
        return None
    zone: tzinfo = timezone.utc
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


_MONTHS = {name: number for number, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
_MOODLE_DATE = re.compile(r"(?:[A-Za-z]+,\s*)?(\d{1,2})\s+([A-Za-z]+)\s+(\d{4}),?\s+(\d{1,2}):(\d{2})(?:\s*([AaPp][Mm]))?")
NO_TIME = "-"


def parse_moodle_date(text: str, zone: tzinfo) -> datetime | None:
    """`Tuesday, 10 December 2026, 11:59 PM` (English) or ISO 8601, read in `zone`; None otherwise."""
    text = " ".join(text.split())
    if not text or text == NO_TIME or len(text) > 80:
        return None
    match = _MOODLE_DATE.fullmatch(text)
    if match:
        day, month_name, year, hour, minute, half = match.groups()
        month = _MONTHS.get(month_name.lower())
        hour_value = int(hour)
        if half:
            if not 1 <= hour_value <= 12:
                return None
            hour_value = hour_value % 12 + (12 if half.lower() == "pm" else 0)
        try:
            return datetime(int(year), month or 0, int(day), hour_value, int(minute), tzinfo=zone)
        except (TypeError, ValueError):
            return None
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=zone)


def zone_named(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is no tz database zone (such as Europe/Berlin or America/New_York)") from None


class TimesError(ValueError):
    """A submission-times file that cannot be read as either form."""


def read_times(data: bytes, zone: tzinfo) -> tuple[str, dict[str, datetime]]:
    """(form, key -> time) of a submission-times file: form `canvas_api` (keys: Canvas user ids) or
    `csv` (keys: whatever the student column holds: a student id or an LMS id)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TimesError(f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    body = text.lstrip()
    if body.startswith("while(1);"):
        body = body[len("while(1);"):].lstrip()
    if body.startswith(("[", "{")):
        return "canvas_api", _canvas_json(body)
    return "csv", _times_csv(text, zone)


def _canvas_json(body: str) -> dict[str, datetime]:
    try:
        value = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise TimesError(f"not JSON ({str(error)[:80]})") from None
    if isinstance(value, dict) and isinstance(value.get("submissions"), list):
        value = value["submissions"]
    if not isinstance(value, list):
        raise TimesError("not a list of Canvas submissions")
    found: dict[str, datetime] = {}
    for item in value:
        if not isinstance(item, dict):
            continue
        # the grouped form (`grouped=1`, or the course's `students/submissions`) nests them per student
        for submission in item["submissions"] if isinstance(item.get("submissions"), list) else [item]:
            if not isinstance(submission, dict):
                continue
            user, submitted = submission.get("user_id"), submission.get("submitted_at")
            if isinstance(user, bool) or not isinstance(user, (int, str)) or not isinstance(submitted, str):
                continue
            try:
                stamp = datetime.fromisoformat(submitted.replace("Z", "+00:00"))
            except ValueError:
                continue
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=timezone.utc)
            key = str(user)
            if key not in found or stamp > found[key]:
                found[key] = stamp
    if not found and value:
        raise TimesError("no submission in it has a user_id and a submitted_at")
    return found


def _times_csv(text: str, zone: tzinfo) -> dict[str, datetime]:
    # only CR and LF end a record (csv with newline=""), never U+2028 and its kind
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in (reader.fieldnames or [])]
    if "student" not in header or "submitted_at" not in header:
        raise TimesError("a CSV needs the header student,submitted_at; a Canvas API answer is JSON")
    reader.fieldnames = header
    found: dict[str, datetime] = {}
    try:
        for row in reader:
            key, raw = (row.get("student") or "").strip(), (row.get("submitted_at") or "").strip()
            if not key or not raw:
                continue
            try:
                stamp = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            except ValueError:
                raise TimesError(f"line {reader.line_num}: {raw[:40]!r} is not an ISO 8601 time") from None
            found[key] = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=zone)
    except csv.Error as error:
        # DictReader counts a line only once its row is read: the csv reader beneath knows the failing one
        raise TimesError(f"line {reader.reader.line_num}: {error}") from None
    return found
