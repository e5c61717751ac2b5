"""What a run changes in the kept state: planned (and checked) before anything is written, kept after
the gradebook is written. Every change is said in the run's summary (state.py keeps the files)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..grader.batch import resolve_seed
from ..grader.submissions import UsageError
from . import files, layouts, names, roster, state
from . import intake as intake_stage
from . import times as time_files

MAX_TIMES_BYTES = 50 << 20


def read_instructor_file(path: Path, what: str, limit: int) -> bytes:
    if not path.is_file():
        raise UsageError(f"{what} {names.shown(path)}: no such file")
    try:
        if path.stat().st_size > limit:
            raise UsageError(f"{what} {names.shown(path)}: more than {limit} bytes")
        return path.read_bytes()
    except OSError as error:
        raise UsageError(f"{what} {names.shown(path)}: cannot be read ({error.strerror or error})") from None


def origin(path: Path) -> str:
    return str(Path(path).resolve())


@dataclass
class Plan:
    """Every kept setting after this run's options, checked; nothing written yet."""

    settings: dict
    changes: list[str]
    class_list: roster.Roster | None
    roster_data: bytes | None
    overrides: list[dict]  # kept entries, each with "read" (where to read it now) and "data" when new
    times_entries: list[dict]
    times_data: list[bytes] | None
    dropped_extra: list[dict]


def plan(options, spec, saved: dict) -> Plan:
    engine = options.engine
    out = engine.out
    kept = state.state_dir(out)
    changes: list[str] = []
    settings = {"version": state.VERSION, "lab": spec.id}

    # the roster
    roster_data, class_list = None, None
    kept_roster = saved.get("roster")
    if options.roster is not None:
        roster_data = read_instructor_file(options.roster, "roster", roster.MAX_ROSTER_BYTES)
        class_list = roster.load(options.roster)
        entry = {"file": "roster.csv", "from": origin(options.roster), "format": class_list.format,
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
        target = origin(Path(text))
        found = [e for e in entries if e["from"] == target or e.get("name") == text or e["file"] == text]
        if not found:
            raise UsageError(f"--drop-overrides {names.shown(text)}: not a kept overrides file; kept: "
                             + (", ".join(names.shown(e.get("name") or e["file"]) for e in entries) or "none"))
        for entry in found:
            entries.remove(entry)
            changes.append(f"overrides: dropped {names.shown(entry.get('name') or entry['file'])}")
    for path in options.overrides:
        data = read_instructor_file(path, "overrides", roster.MAX_ROSTER_BYTES)
        target = origin(path)
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
        times_data = [read_instructor_file(p, "--submission-times", MAX_TIMES_BYTES) for p in options.submission_times]
        times_entries = [{"file": f"submission-times-{n}", "from": origin(p)}
                         for n, p in enumerate(options.submission_times)]
        changes.append("submission times: " + ", ".join(names.shown(p) for p in options.submission_times)
                       + (" replace the kept file(s)" if saved.get("times") else ", kept for later runs"))
    settings["times"] = times_entries
    # files handed in outside the LMS
    extra_files = list(saved.get("extra_files", []))
    extra_folders = list(saved.get("extra_folders", []))
    dropped: list[dict] = []
    for text in options.drop_extra:
        target = origin(Path(text))
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
        target = origin(folder)
        if target not in extra_folders:
            extra_folders.append(target)
            changes.append(f"extra folder: {names.shown(folder)}, kept for later runs")
    settings["extra_files"], settings["extra_folders"] = extra_files, extra_folders
    settings["overrides"] = [{k: v for k, v in e.items() if k not in ("read", "data")} for e in entries]
    return Plan(settings, changes, class_list, roster_data, entries, times_entries, times_data, dropped)


def check_seed(options, spec, saved: dict, plan: Plan):
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


def keep(out: Path, options, plan: Plan, taken: intake_stage.Intake, grades: dict) -> None:
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
        extra_files.append({"file": name, "from": origin(Path(path)), "name": Path(path).name, "student": student})
        plan.changes.append(f"extra: {names.shown(Path(path).name)} counts for {student} instead of the LMS's file, "
                            "kept for later runs (--drop-extra " + student + " to undo)")
    settings["extra_files"] = extra_files
    settings["sources"] = grades["sources"]
    state.save(out, settings)
