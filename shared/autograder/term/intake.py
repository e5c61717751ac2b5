"""The intake: LMS files and the roster in, clean people and submissions out.

The first stage of a term's run (then the engine, the book, the outputs; data
flows down that list only). Here, and only here: files a student or an LMS
supplied are opened (sources.py, files.py), every name from a zip, a folder or
a CSV is cleaned (names.py), layouts are detected per source (layouts.py),
ownership is decided (identity.py), hand-in times are read (times.py). What
leaves the intake is trusted: every id and name in it is clean, every
submission belongs to exactly one student, every time is an aware datetime.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path, PurePosixPath

from ..grader.submissions import UsageError
from . import identity, layouts, names, sources, times
from .roster import Roster

# time sources a row can name (the contract with the book and the outputs)
MOODLE_WORKSHEET, CANVAS_TIMES, NBGRADER_TIMESTAMP, CANVAS_FLAG = (
    "moodle_worksheet", "canvas_times", "nbgrader_timestamp", "canvas_flag")


@dataclass(frozen=True)
class Person:
    student: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    extension_days: float = 0.0
    section: str = ""
    login: str = ""
    lms_display_name: str = ""


@dataclass
class Submission:
    """The file that counts for one student, and what the LMS says about when it came."""

    person: str  # the student id
    item: sources.Item
    file: str  # where it came from, for the row (cleaned)
    time: datetime | None = None
    time_source: str | None = None  # one of the constants above, or None: no time known
    time_odd: bool = False  # a time was given but could not be read (counts as on time; the row says so)
    late_flag: bool = False  # Canvas's _LATE_
    source: str = "lms"  # "lms" | "extra" (handed in outside the LMS)
    superseded: list[str] = field(default_factory=list)
    lms_name: str = ""  # the name the LMS wrote into the file name


@dataclass
class Intake:
    people: dict[str, Person]  # roster order (or, without a roster, every student a file names)
    submissions: list[Submission]
    layout: str  # of the LMS downloads: one layout, "mixed", or "none"
    source_layouts: list[dict]  # [{"path", "kind", "layout"}]
    unknown: list[dict] = field(default_factory=list)  # {"key", "name", "file", "reason", "detail"}
    unparsed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    junk: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lookalikes: dict[str, list[str]] = field(default_factory=dict)
    extras_matched: dict[str, str] = field(default_factory=dict)  # kept extra path -> student


@dataclass
class Request:
    paths: list  # the PATHs of this run
    out: Path
    lab: str
    layout: str  # "auto" or one layout, for the downloads
    roster: Roster | None
    max_bytes: int
    zone: tzinfo  # of times written without one (Moodle's worksheet, a times CSV)
    times: dict[str, datetime] | None = None  # --submission-times: key (lms id or student id) -> time
    extra_files: list[Path] = field(default_factory=list)  # kept notebooks handed in outside the LMS
    extra_folders: list[Path] = field(default_factory=list)  # kept folders of <student>.ipynb
    allow_unmatched: bool = False
    downloads_known: bool = False  # the term's earlier runs read an LMS download
    due: datetime | None = None  # --due (an extension the LMS gives as a date counts from it)


def take(request: Request) -> Intake:
    roster = request.roster
    found = sources.collect(list(request.paths), request.out, request.max_bytes)
    extra_sources = sources.collect([*request.extra_files, *request.extra_folders], request.out, request.max_bytes)
    intake = Intake({}, [], "none", [])
    intake.refused += found.refused + extra_sources.refused
    entries: list[layouts.Entry] = []
    lms_layouts = []
    # a notebook given by itself next to an LMS download (in this run, or in the term's earlier ones) came
    # from outside the LMS (an emailed resubmission); without any download it is just a flat file
    downloads = request.downloads_known or any(source.kind == "download" for source in found.sources)
    for source in found.sources:
        if source.kind == "file":
            parsed = layouts.parse(source.items, "flat", request.lab)
            for entry in parsed.entries:
                entry.rank = 2 if downloads else 0
            intake.source_layouts.append({"path": source.shown, "kind": "extra" if downloads else "file",
                                          "layout": "flat"})
        else:
            parsed = layouts.parse(source.items, request.layout, request.lab)
            lms_layouts.append(parsed.layout)
            intake.source_layouts.append({"path": source.shown, "kind": "download", "layout": parsed.layout})
        _gather(intake, parsed, entries)
    for source in extra_sources.sources:
        parsed = layouts.parse(source.items, "flat", request.lab)
        for entry in parsed.entries:
            entry.rank = 1
        intake.source_layouts.append({"path": source.shown, "kind": "extra", "layout": "flat"})
        _gather(intake, parsed, entries)
    intake.layout = lms_layouts[0] if len(set(lms_layouts)) == 1 else ("mixed" if lms_layouts else "none")

    by_student: dict[str, list[tuple[layouts.Entry, identity.Decision]]] = {}
    for entry in entries:
        decision = identity.decide(entry, roster)
        if decision.student is None:
            intake.unknown.append({"key": decision.claim.key, "name": decision.claim.name, "file": entry.source,
                                   "reason": decision.problem, "detail": decision.detail})
            continue
        by_student.setdefault(decision.student, []).append((entry, decision))
    _stop_when_most_unmatched(intake, entries, roster, request)

    if roster is not None:
        for s in roster.students:
            intake.people[s.student] = Person(s.student, s.name, s.email, s.lms_id, _extension(s, request),
                                              s.section, s.login, s.lms_display_name)
    for student, claimed in sorted(by_student.items()):
        claimed.sort(key=lambda pair: (pair[0].rank, pair[0].order))
        winner, decision = claimed[-1]
        if roster is None:
            intake.people.setdefault(student, Person(
                student, decision.claim.name, "", student if decision.claim.kind == "lms_id" else "",
                lms_display_name=decision.claim.name))
        intake.submissions.append(_submission(intake, request, student, winner, decision, claimed[:-1]))
        if winner.rank == 2 and winner.item.path is not None:
            intake.extras_matched[str(winner.item.path)] = student
    intake.lookalikes = names.lookalikes(intake.people)
    return intake


def _extension(student, request: Request) -> float:
    """The roster's extension in days, or the one the LMS granted until a date (Moodle), counted from --due."""
    days = student.extension_days
    if student.extension_until and request.due is not None:
        until = times.parse_moodle_date(student.extension_until, request.zone)
        if until is not None:
            days = max(days, (until - request.due).total_seconds() / 86400)
    return days


def _gather(intake: Intake, parsed: layouts.Parsed, entries: list) -> None:
    entries += parsed.entries
    intake.unparsed += parsed.unparsed
    intake.junk += parsed.junk
    intake.notes += parsed.notes


def _submission(intake: Intake, request: Request, student: str, entry: layouts.Entry, decision: identity.Decision,
                older: list) -> Submission:
    roster = request.roster
    row = roster.by_id().get(student) if roster is not None else None
    person_lms = row.lms_id if row is not None else (decision.claim.key if decision.claim.kind == "lms_id" else "")
    submission = Submission(student, entry.item, entry.source, superseded=[e.source for e, _ in older],
                            lms_name=decision.claim.name, source="extra" if entry.extra else "lms",
                            late_flag=decision.claim.late)
    given = (request.times or {})
    known = given.get(person_lms) if person_lms else None
    known = known or given.get(student)
    if known is not None:
        submission.time, submission.time_source = known, CANVAS_TIMES
    elif entry.extra:
        pass  # emailed: its time is not known (an override says it, or --submission-times)
    elif entry.timestamp is not None or entry.timestamp_problem is not None:
        submission.time_source = NBGRADER_TIMESTAMP
        submission.time = times.parse_timestamp(entry.timestamp) if entry.timestamp is not None else None
        submission.time_odd = submission.time is None
        if entry.timestamp_problem:
            intake.notes.append(entry.timestamp_problem)
    elif row is not None and row.submitted is not None and _is_moodle(entry):
        submission.time_source = MOODLE_WORKSHEET
        submission.time = times.parse_moodle_date(row.submitted, request.zone)
        submission.time_odd = submission.time is None and row.submitted not in ("", times.NO_TIME)
        if submission.time is None and not submission.time_odd:
            submission.time_source = None  # the worksheet says no submission, yet a file is there: time unknown
    elif decision.claim.kind == "lms_id" and _is_canvas(entry):
        submission.time_source = CANVAS_FLAG
    return submission


def _is_moodle(entry: layouts.Entry) -> bool:
    from .lms import moodle

    return moodle.prefix(PurePosixPath(entry.item.name).parts[0]) is not None


def _is_canvas(entry: layouts.Entry) -> bool:
    from .lms import canvas

    return bool(canvas.readings(PurePosixPath(entry.item.name).name))


def _stop_when_most_unmatched(intake: Intake, entries: list, roster: Roster | None, request: Request) -> None:
    """A run whose notebooks mostly fit no name pattern, or name nobody on the roster, is not a class where
    most did not hand in: it is a wrong roster column or a wrong download. Stop and say which."""
    if request.allow_unmatched:
        return
    notebooks = [e for e in entries if e.item.name.lower().endswith(".ipynb")]
    unmatched_notebooks = sum(1 for u in intake.unknown if u["file"].lower().endswith(".ipynb"))
    matched = len(notebooks) - unmatched_notebooks
    total = len(notebooks) + len(intake.unparsed)
    if total == 0 or 2 * matched > total:
        return
    lines = [f"{matched} of the {total} notebooks found belong to a student"
             + (" on the roster" if roster is not None else "") + f" ({len(intake.unparsed)} with names that fit "
             f"no pattern, {unmatched_notebooks} not matched): this does not look like this class's download."]
    if roster is not None and intake.unknown:
        lines.append(_roster_hint(intake, roster))
    if intake.unparsed:
        lines.append("Names that fit no pattern: " + "; ".join(intake.unparsed[:3])
                     + (" ..." if len(intake.unparsed) > 3 else "")
                     + f". Layouts found: {', '.join(s['path'] + ' ' + s['layout'] for s in intake.source_layouts)}.")
    lines.append("Nothing was written. If this is right (a partial download), pass --allow-unmatched.")
    raise UsageError("\n".join(lines))


def _roster_hint(intake: Intake, roster: Roster) -> str:
    keys = [u["key"] for u in intake.unknown if u["key"]]
    sample = ", ".join(sorted(set(keys))[:3])
    reasons = {u["reason"] for u in intake.unknown}
    if reasons == {"name_mismatch"}:
        return ("The files' ids are on the roster, but with other names: " + intake.unknown[0]["detail"]
                + ". Is the roster from this course?")
    lms_ids = [s.lms_id for s in roster.students if s.lms_id]
    by_student = {s.student for s in roster.students}
    if keys and all(key in by_student for key in keys):
        return (f"The files' ids ({sample}) are in the roster's student column, not in lms_id: put the id the LMS "
                "writes into file names in lms_id (Canvas: the gradebook export's ID; Moodle: the grading "
                "worksheet's participant number), or pass the LMS's own export as --roster.")
    held = ", ".join(lms_ids[:3]) if lms_ids else "nothing"
    none = "None" if not any(key in {s.lms_id for s in roster.students} for key in keys) else "Most"
    return (f"{none} of the file ids ({sample} ...) is on the roster: is this the Canvas user id (the ID column of "
            f"Canvas's gradebook export) or Moodle's participant id (its grading worksheet)? The roster's lms_id "
            f"column holds {held}. Passing the LMS's own export as --roster puts each id in its place.")
