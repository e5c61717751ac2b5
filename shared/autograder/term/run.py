"""`grade` for a term, as one pipeline: intake -> engine -> book -> files.

1. What the instructor wrote (roster, policy, overrides, times, the kept state) is
   checked before anything is written (kept.py; state.py keeps it between runs).
2. The intake (intake.py) turns the LMS's files and the roster into clean people and
   submissions: the one place where names are cleaned and student files opened.
3. The engine (grader.batch) grades those submissions in its sandbox.
4. The book (analysis.py, book.py, lateness.py, overrides.py) makes one row per student.
5. The gradebook's files are written, and the kept state with what changed in it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timezone
from pathlib import Path

from ..grader import gradebook
from ..grader.batch import Options, run_batch
from ..grader.submissions import Submission as EngineSubmission, UsageError
from ..labs import LAB_IDS, UnknownLab, get_lab
from . import analysis, book, handgrading, lateness, names, overrides, roster, state, summary
from . import intake as intake_stage
from . import kept as kept_state
from . import times as time_files
from .state import is_term, load_analysis  # noqa: F401 - the class report and the command line read them here



@dataclass
class TermOptions:
    engine: Options  # the engine's options (paths, out, jobs, seed, limits...)
    roster: Path | None = None
    layout: str | None = None
    due: str | None = None
    late_per_day: str | None = None
    late_cap: str | None = None
    overrides: list[Path] = field(default_factory=list)
    drop_overrides: list[str] = field(default_factory=list)
    penalise_forbidden: bool | None = None
    lms_timezone: str | None = None
    submission_times: list[Path] = field(default_factory=list)  # every page of Canvas's answer, or CSVs
    extra: list[Path] = field(default_factory=list)  # folders of <student>.ipynb handed in outside the LMS
    drop_extra: list[str] = field(default_factory=list)
    allow_unmatched: bool = False


@dataclass
class TermResult:
    book: dict
    engine_summary: str
    lines: list[str]

    def summary(self) -> str:
        return "\n".join([self.engine_summary, *self.lines])


def grade_term(options: TermOptions) -> TermResult:
    engine = options.engine
    try:
        spec = get_lab(engine.lab)
    except UnknownLab:
        raise UsageError(f"unknown lab {engine.lab!r}; labs: {', '.join(LAB_IDS)}") from None
    out = engine.out
    saved = state.load(out)
    kept = state.state_dir(out)

    # 1. everything the instructor wrote is checked before anything is written
    plan = kept_state.plan(options, spec, saved)
    class_list = plan.class_list
    settings = plan.settings
    policy = lateness.Policy(lateness.parse_due(settings["due"]),
                             lateness.percent(settings["late_per_day"], "--late-per-day", 0.0),
                             lateness.percent(settings["late_cap"], "--late-cap", 100.0))
    zone = time_files.zone_named(settings["lms_timezone"]) if settings["lms_timezone"] else \
        (policy.due.tzinfo if policy.due is not None else timezone.utc)
    given_times = None
    for index, entry in enumerate(plan.times_entries):
        data = plan.times_data[index] if plan.times_data is not None else \
            kept_state.read_instructor_file(kept / entry["file"], "kept submission times", kept_state.MAX_TIMES_BYTES)
        try:
            form, found = time_files.read_times(data, zone)
        except time_files.TimesError as error:
            raise UsageError(f"--submission-times {names.shown(entry['from'])}: {error}") from None
        entry["form"] = form
        given_times = {**(given_times or {}), **found}
    seed = kept_state.check_seed(options, spec, saved, plan)
    if class_list:
        unknown = sorted(engine.regrade_students - set(class_list.ids()))
        if unknown:
            raise UsageError(f"--regrade {unknown[0]}: not on the roster")

    # 2. the intake
    gradebook.prepare(out)
    extra_files = [kept / e["file"] for e in settings["extra_files"] if (kept / e["file"]).is_file()]
    taken = intake_stage.take(intake_stage.Request(
        engine.paths, out, spec.id, settings["layout"], class_list, engine.max_bytes, zone, given_times,
        extra_files, [Path(f) for f in settings["extra_folders"]], options.allow_unmatched,
        any(source.get("kind") == "download" for source in saved.get("sources", [])), policy.due))
    if not taken.submissions and not taken.unknown:
        # a wrong folder must not look like a class where nobody handed in
        raise UsageError(f"no submissions found in {', '.join(names.shown(p) for p in engine.paths)} as the "
                         f"{taken.layout} layout ({len(taken.unparsed)} notebooks with names that fit no pattern, "
                         f"{len(taken.refused)} refused, {len(taken.junk)} other files)")
    people = {s: book.Person(p.student, p.name, p.email, p.lms_id, p.extension_days, p.section, p.login,
                             p.lms_display_name) for s, p in taken.people.items()}

    # overrides are checked before anything is graded: a wrong line costs no time and changes no file
    previous = state.load_analysis(out)
    known = set(people) if class_list else set(people) | set(previous)
    maxima = {e.id: float(e.points) for e in spec.exercises} | {p: float(v) for p, v in spec.hand_graded.items()}
    applied: dict = {}
    for entry in plan.overrides:
        found = overrides.load(Path(entry["read"]), known, maxima)
        entry["lines"] = len(found)
        for key, value in found.items():
            if key in applied:
                raise UsageError(f"overrides {names.shown(entry.get('name') or entry['file'])} line {value.line}: "
                                 f"{key[0]} {key[1]} is already set in another kept overrides file")
            applied[key] = value

    # 3. the engine
    engine.submissions = [EngineSubmission(s.person, s.item.path, root=s.item.root) for s in taken.submissions]
    engine.write_gradebook = False
    result = run_batch(engine)
    records = {r["student"]: r for r in result.records}

    # 4. the book
    metas = {}
    for submission in taken.submissions:
        metas[submission.person] = _meta(spec, submission, taken, engine.max_bytes)
    students = list(people) if class_list else sorted(set(records) | set(people))
    for student in students:
        people.setdefault(student, book.Person(student))
        if student not in metas:
            metas[student] = previous.get(student, {}) if student in records else {}
        fields = dict(metas[student].get("fields") or {})
        fields["lookalike"] = taken.lookalikes.get(student, [])
        metas[student]["fields"] = fields
    ctx = book.Context(spec, policy, applied, bool(settings["penalise_forbidden"]), engine.lang,
                       engine.reveal_hidden, engine.book_url)
    built = [book.build(ctx, people[s], records.get(s), metas[s]) for s in students]
    rows = [b.row for b in built]
    grades = {
        "lab": spec.id, "max_score": ctx.max_score, "layout": taken.layout, "sources": taken.source_layouts,
        "seed_source": result.book.get("seed_source"), "seed_fingerprint": result.book.get("seed_fingerprint"),
        "sandbox": result.book.get("sandbox"),
        "policy": {"due": policy.due.isoformat() if policy.due else None, "late_per_day": policy.per_day,
                   "late_cap": policy.cap, "penalise_forbidden": bool(settings["penalise_forbidden"]),
                   "lms_timezone": settings["lms_timezone"]},
        "roster": bool(class_list),
        "roster_format": class_list.format if class_list else None,
        "lms_columns": list(class_list.lms_columns) if class_list else [],
        "lateness_source": _lateness_source(rows),
        "submissions": rows,
        "unknown_student": taken.unknown,
        "unparsed": taken.unparsed, "refused": taken.refused, "junk": taken.junk, "notes": taken.notes,
        "lookalikes": taken.lookalikes,
    }

    # 5. the files, then the kept state
    book.write(out, ctx, built, grades)
    if spec.hand_graded:
        sheet = [(row["student"], part, item["max_points"], item["text"])
                 for row in rows if row["status"] != "missing" for part, item in row["hand_graded"].items()]
        gradebook.write_atomic(out / handgrading.SHEET, handgrading.sheet(sheet))
    kept_state.keep(out, options, plan, taken, grades)
    state.save_analysis(out, {s: metas[s] for s in students})
    return TermResult(grades, result.summary(), plan.changes + summary.lines(grades, class_list, seed))


def _meta(spec, submission: intake_stage.Submission, taken: intake_stage.Intake, max_bytes: int) -> dict:
    meta = {"file": submission.file, "superseded": submission.superseded, "late": submission.late_flag,
            "submitted_at": submission.time.isoformat() if submission.time else None,
            "time_source": submission.time_source, "time_odd": submission.time_odd, "lms_name": submission.lms_name}
    found = analysis.analyse(spec, submission.person, submission.item.path, submission.item.root, max_bytes)
    failed = found.pop(analysis.NOT_ANALYSED, [])
    meta.update(found)
    # the file as the intake shows it (the engine records the path it opened, invisible characters and all)
    meta["fields"] = {"source": submission.source, "not_analysed": failed,
                      "notebook": names.shown(str(submission.item.path), 1000)}
    notes = []
    if submission.source == "extra":
        notes.append(["term.note.extra_source", {}])
    if failed:
        notes.append(["term.note.not_analysed", {}])
    meta["notes"] = notes
    return meta


def _lateness_source(rows: list[dict]) -> str | None:
    found = {row.get("time_source") for row in rows if row["status"] != "missing"} - {None, lateness.OVERRIDE}
    return found.pop() if len(found) == 1 else ("mixed" if found else None)


