"""`grade` for a term, as one pipeline: intake -> engine -> book -> files.

1. What the instructor wrote (roster, policy, overrides, times, the kept state) is
   checked before anything is written (state.py keeps it between runs).
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
from ..grader.batch import Options, resolve_seed, run_batch
from ..grader.submissions import Submission as EngineSubmission, UsageError
from ..labs import LAB_IDS, UnknownLab, get_lab
from . import analysis, book, files, handgrading, intake as intake_stage, lateness, layouts, names, overrides, roster, state
from . import times as time_files
from .state import is_term, load_analysis  # noqa: F401 - the class report and the command line read them here

MAX_TIMES_BYTES = 50 << 20


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


def _read_instructor_file(path: Path, what: str, limit: int) -> bytes:
    if not path.is_file():
        raise UsageError(f"{what} {names.shown(path)}: no such file")
    try:
        if path.stat().st_size > limit:
            raise UsageError(f"{what} {names.shown(path)}: more than {limit} bytes")
        return path.read_bytes()
    except OSError as error:
        raise UsageError(f"{what} {names.shown(path)}: cannot be read ({error.strerror or error})") from None


def _origin(path: Path) -> str:
    return str(Path(path).resolve())


@dataclass
class _Plan:
    """Every kept setting after this run's options, checked; nothing written yet."""

    settings: dict
    changes: list[str]
    class_list: roster.Roster | None
    roster_data: bytes | None
    overrides: list[dict]  # kept entries, each with "read" (where to read it now) and "data" when new
    times_entries: list[dict]
    times_data: list[bytes] | None
    dropped_extra: list[dict]


def _plan(options: TermOptions, spec, saved: dict) -> _Plan:
    engine = options.engine
    out = engine.out
    kept = state.state_dir(out)
    changes: list[str] = []
    settings = {"version": state.VERSION, "lab": spec.id}

    # the roster
    roster_data, class_list = None, None
    kept_roster = saved.get("roster")
    if options.roster is not None:
        roster_data = _read_instructor_file(options.roster, "roster", roster.MAX_ROSTER_BYTES)
        class_list = roster.load(options.roster)
        entry = {"file": "roster.csv", "from": _origin(options.roster), "format": class_list.format,
                 "count": len(class_list.students)}
        described = f"{names.shown(options.roster)} ({class_list.format}, {len(class_list.students)} students)"
        if kept_roster and kept_roster.get("from") != entry["from"]:
            changes.append(f"roster: {described} replaces the kept {names.shown(kept_roster.get('from'))}")
        elif kept_roster:
            changes.append(f"roster: {described} read again")
        else:
            changes.append(f"roster: {described}, kept for later runs")
        settings["roster"] = entry
    elif kept_roster:
        class_list = roster.load(kept / kept_roster["file"])
        settings["roster"] = dict(kept_roster, format=class_list.format, count=len(class_list.students))
    else:
        settings["roster"] = None

    # layout and policy: a given option replaces the kept one, and the change is said
    def setting(name: str, given, default, shown: str):
        before = saved.get(name, default)
        value = given if given is not None else before
        if given is not None and name in saved and given != before:
            changes.append(f"{shown}: {before if before is not None else 'none'} -> {given}")
        settings[name] = value
        return value

    layout = setting("layout", options.layout, "auto", "--layout")
    if layout not in layouts.LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}; layouts: {', '.join(layouts.LAYOUTS)}")
    setting("due", options.due, None, "--due")
    setting("late_per_day", options.late_per_day, None, "--late-per-day")
    setting("late_cap", options.late_cap, None, "--late-cap")
    setting("penalise_forbidden", options.penalise_forbidden, False, "--penalise-forbidden")
    zone_name = setting("lms_timezone", options.lms_timezone, None, "--lms-timezone")
    if zone_name is not None:
        try:
            time_files.zone_named(zone_name)
        except ValueError as error:
            raise UsageError(f"--lms-timezone {error}") from None

    # overrides accumulate: a file given again is read again, a new one is added, only --drop-overrides removes
    entries = [dict(e, read=kept / e["file"]) for e in saved.get("overrides", [])]
    legacy = [e for e in entries if e.get("legacy")]
    if legacy and options.overrides:
        entries = [e for e in entries if not e.get("legacy")]
        changes.append(f"overrides: the {len(legacy)} file(s) kept by an older version (which did not keep where "
                       "they came from) are replaced by the ones given, as that version did")
    for text in options.drop_overrides:
        target = _origin(Path(text))
        found = [e for e in entries if e["from"] == target or e.get("name") == text or e["file"] == text]
        if not found:
            raise UsageError(f"--drop-overrides {names.shown(text)}: not a kept overrides file; kept: "
                             + (", ".join(names.shown(e.get("name") or e["file"]) for e in entries) or "none"))
        for entry in found:
            entries.remove(entry)
            changes.append(f"overrides: dropped {names.shown(entry.get('name') or entry['file'])}")
    for path in options.overrides:
        data = _read_instructor_file(path, "overrides", roster.MAX_ROSTER_BYTES)
        target = _origin(path)
        existing = next((e for e in entries if e["from"] == target), None)
        if existing is not None:
            existing.update(read=path, data=data)
            changes.append(f"overrides: {names.shown(path)} read again (replaces its kept copy)")
        else:
            taken = {e["file"] for e in entries}
            number = next(n for n in range(len(entries) + 1) if f"overrides-{n}.csv" not in taken)
            entries.append({"file": f"overrides-{number}.csv", "from": target, "name": path.name, "read": path,
                            "data": data})
            changes.append(f"overrides: added {names.shown(path)}"
                           + (f" (kept with {len(entries) - 1} other file(s))" if len(entries) > 1 else ""))
    for entry in entries:
        if not Path(entry["read"]).is_file():
            raise UsageError(f"overrides {names.shown(entry['read'])}: no such file")

    # submission times: the files given now replace the kept ones (several: every page of Canvas's answer)
    times_entries, times_data = saved.get("times") or [], None
    if isinstance(times_entries, dict):  # a single kept file (this version's first shape)
        times_entries = [times_entries]
    if options.submission_times:
        times_data = [_read_instructor_file(p, "--submission-times", MAX_TIMES_BYTES) for p in options.submission_times]
        times_entries = [{"file": f"submission-times-{n}", "from": _origin(p)}
                         for n, p in enumerate(options.submission_times)]
        changes.append("submission times: " + ", ".join(names.shown(p) for p in options.submission_times)
                       + (" replace the kept file(s)" if saved.get("times") else ", kept for later runs"))
    settings["times"] = times_entries
    # files handed in outside the LMS
    extra_files = list(saved.get("extra_files", []))
    extra_folders = list(saved.get("extra_folders", []))
    dropped: list[dict] = []
    for text in options.drop_extra:
        target = _origin(Path(text))
        if target in extra_folders:
            extra_folders.remove(target)
            changes.append(f"extra folder: dropped {names.shown(text)}")
            continue
        found = [e for e in extra_files if e.get("student") == text]
        if not found:
            raise UsageError(f"--drop-extra {names.shown(text)}: no kept file of that student and no kept --extra "
                             "folder of that name; kept: " + (", ".join(
                                 [names.shown(e['student']) for e in extra_files] + [names.shown(f) for f in extra_folders])
                                 or "none"))
        for entry in found:
            extra_files.remove(entry)
            dropped.append(entry)
            changes.append(f"extra: dropped the file {names.shown(entry.get('name'))} of {entry['student']} "
                           "(the LMS's file counts again)")
    for folder in options.extra:
        if not Path(folder).is_dir():
            raise UsageError(f"--extra {names.shown(folder)}: no such folder")
        target = _origin(folder)
        if target not in extra_folders:
            extra_folders.append(target)
            changes.append(f"extra folder: {names.shown(folder)}, kept for later runs")
    settings["extra_files"], settings["extra_folders"] = extra_files, extra_folders
    settings["overrides"] = [{k: v for k, v in e.items() if k not in ("read", "data")} for e in entries]
    return _Plan(settings, changes, class_list, roster_data, entries, times_entries, times_data, dropped)


def _check_seed(options: TermOptions, spec, saved: dict, plan: _Plan):
    engine = options.engine
    seed = resolve_seed(spec.id, engine.seed)
    kept = saved.get("seed_fingerprint")
    if kept and kept != seed.fingerprint:
        told = {"default": "the default seed (no --seed, no $AUTOGRADER_SEED)"}.get(seed.source, seed.source)
        if not engine.regrade:
            raise UsageError(
                f"this gradebook was graded with the hidden cases of the seed whose fingerprint is {kept} (from "
                f"{saved.get('seed_source') or 'an earlier run'}); this run's seed, from {told}, has fingerprint "
                f"{seed.fingerprint}. Give the same --seed (or $AUTOGRADER_SEED), or pass --regrade to grade "
                "everyone again with the new seed. Nothing was written.")
        plan.changes.append(f"seed: fingerprint {kept} -> {seed.fingerprint} ({told}): everyone graded again")
    plan.settings["seed_fingerprint"], plan.settings["seed_source"] = seed.fingerprint, seed.source
    return seed


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
    plan = _plan(options, spec, saved)
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
            _read_instructor_file(kept / entry["file"], "kept submission times", MAX_TIMES_BYTES)
        try:
            form, found = time_files.read_times(data, zone)
        except time_files.TimesError as error:
            raise UsageError(f"--submission-times {names.shown(entry['from'])}: {error}") from None
        entry["form"] = form
        given_times = {**(given_times or {}), **found}
    seed = _check_seed(options, spec, saved, plan)
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
    _keep(out, options, plan, taken, grades)
    state.save_analysis(out, {s: metas[s] for s in students})
    return TermResult(grades, result.summary(), plan.changes + _summary(grades, class_list, seed))


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


def _keep(out: Path, options: TermOptions, plan: _Plan, taken: intake_stage.Intake, grades: dict) -> None:
    settings = plan.settings
    if plan.roster_data is not None:
        state.keep_copy(out, "roster.csv", plan.roster_data)
    for entry in plan.overrides:
        if "data" in entry:
            state.keep_copy(out, entry["file"], entry["data"])
    kept_names = {e["file"] for e in plan.overrides}
    for stale in state.state_dir(out).glob("overrides-*.csv"):
        if stale.name not in kept_names:
            stale.unlink()
    settings["overrides"] = [{k: v for k, v in e.items() if k not in ("read", "data")} for e in plan.overrides]
    if plan.times_data is not None:
        for stale in state.state_dir(out).glob("submission-times*"):
            stale.unlink()
        for entry, data in zip(plan.times_entries, plan.times_data):
            state.keep_copy(out, entry["file"], data)
    for entry in plan.dropped_extra:
        state.remove(out, entry["file"])
    # notebooks given by themselves this run, that named a student: kept (one per student, the latest given)
    given = {str(Path(p)) for p in options.engine.paths}
    extra_files = [e for e in settings["extra_files"]]
    for path, student in sorted(taken.extras_matched.items()):
        if path not in given:
            continue
        try:  # a student's file: regular only, never through a link, bounded (files.py)
            data = files.read_regular(Path(path), None, options.engine.max_bytes)
        except files.Refused as refused:
            plan.changes.append(f"extra: {names.shown(path)} not kept ({refused})")
            continue
        name = f"extra/{names.ident(student).replace('/', '_')[:80]}.ipynb"
        for old in [e for e in extra_files if e["student"] == student]:
            extra_files.remove(old)
        state.keep_copy(out, name, data)
        extra_files.append({"file": name, "from": _origin(Path(path)), "name": Path(path).name, "student": student})
        plan.changes.append(f"extra: {names.shown(Path(path).name)} counts for {student} instead of the LMS's file, "
                            "kept for later runs (--drop-extra " + student + " to undo)")
    settings["extra_files"] = extra_files
    settings["sources"] = grades["sources"]
    state.save(out, settings)


def _summary(grades: dict, class_list: roster.Roster | None, seed) -> list[str]:
    rows = grades["submissions"]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    late = sum(1 for row in rows if row["late"])
    lines = [f"Term: {len(rows)} students ({grades['layout']} layout): "
             + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + f"; {late} late."]
    if class_list is not None:
        sections = sorted({s.section for s in class_list.students if s.section})
        lines.append(f"Roster: {grades['roster_format']}, {len(class_list.students)} students"
                     + (f" in {len(sections)} sections" if sections else "")
                     + "".join(f"; left out {text}" for text in class_list.skipped) + ".")
    superseded = sum(len(row["superseded"]) for row in rows)
    if superseded:
        lines.append(f"{superseded} earlier files superseded by a later one of the same student (listed per row).")
    for item in grades["unknown_student"]:
        if item["reason"] == "ambiguous":
            lines.append(f"refused (its name reads as the file of more than one student: {item['detail']}; not "
                         f"graded, not guessed): {item['file']}")
        elif item["reason"] == "name_mismatch":
            lines.append(f"refused (the name does not match the roster: {item['detail']}; not graded): {item['file']}")
        else:
            lines.append(f"unknown student (not on the roster, not graded): {item['key']} {item['name']}: "
                         f"{item['file']}")
    for text in grades["unparsed"]:
        lines.append(f"unparsed file name (not graded, not guessed): {text}")
    for text in grades["refused"]:
        lines.append(f"refused: {text}")
    for text in grades["junk"]:
        lines.append(f"not a submission: {text}")
    for text in grades["notes"]:
        lines.append(f"note: {text}")
    seen = set()
    for student, others in sorted(grades["lookalikes"].items()):
        group = tuple(sorted([student, *others]))
        if group not in seen:
            seen.add(group)
            lines.append("look-alike ids (they read the same; check that each file is credited to the right "
                         "person): " + ", ".join(repr(s) for s in group))
    source = grades["lateness_source"]
    if source == "canvas_flag" or (source == "mixed" and any(r.get("time_source") == "canvas_flag" for r in rows)):
        lines.append("Lateness: Canvas's download carries no submission times, only a _LATE_ flag (by Canvas's own "
                     "due date): a flagged file loses one day's penalty and its late_days stays empty. For per-day "
                     "penalties pass --submission-times FILE (Canvas's submissions API answer, or student,submitted_at).")
    unknown_time = [row["student"] for row in rows if row.get("time_unknown")]
    if unknown_time:
        lines.append(f"{len(unknown_time)} hand-ins have no known time, so no late penalty (row field time_unknown): "
                     + ", ".join(unknown_time[:8]) + (" ..." if len(unknown_time) > 8 else "")
                     + ". Moodle: pass its grading worksheet as --roster; Canvas: --submission-times; or set "
                     "late_days by override.")
    for row in rows:
        for exercise, found in row["forbidden"].items():
            lines.append(f"forbidden API: {row['student']}: {exercise} uses {', '.join(found)}")
        for part in row.get("not_analysed") or []:
            lines.append(f"not analysed: {row['student']}: {part} (no similarity or forbidden-API check for it)")
        if row.get("source") == "extra":
            lines.append(f"handed in outside the LMS: {row['student']}: {row['file']} counts")
    lines.append(f"Seed fingerprint {seed.fingerprint} ({seed.source}), kept: a later run must give the same seed.")
    return lines
