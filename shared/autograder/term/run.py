"""`grade` for a term: roster, layout, latest file per student, the engine, then the term's gradebook.

What a run was told (roster, layout, due date, penalty, overrides) is kept in
DIR/.autograder/term/, so a later run (a resume, `--regrade STUDENT`) that
leaves an option out uses the earlier one: a regrade never loses the policy
or the overrides.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..grader import gradebook
from ..grader.batch import Options, run_batch
from ..grader.submissions import Submission, UsageError, read
from ..labs import LAB_IDS, UnknownLab, get_lab
from . import book, code, handgrading, lateness, layouts, overrides, roster, sources

TERM_DIR = "term"


@dataclass
class TermOptions:
    engine: Options  # the engine's options (paths, out, jobs, seed, limits...)
    roster: Path | None = None
    layout: str | None = None
    due: str | None = None
    late_per_day: str | None = None
    late_cap: str | None = None
    overrides: list[Path] = field(default_factory=list)
    penalise_forbidden: bool | None = None


@dataclass
class TermResult:
    book: dict
    engine_summary: str
    lines: list[str]

    def summary(self) -> str:
        return "\n".join([self.engine_summary, *self.lines])


def _state_dir(out: Path) -> Path:
    return out / gradebook.STATE_DIR / TERM_DIR


def _load_settings(out: Path) -> dict:
    try:
        settings = json.loads((_state_dir(out) / "settings.json").read_text(encoding="utf-8"))
        return settings if isinstance(settings, dict) else {}
    except (OSError, ValueError):
        return {}


def is_term(out: Path) -> bool:
    """Whether DIR was graded as a term before (then every later run of it is one)."""
    return (_state_dir(out) / "settings.json").is_file()


def grade_term(options: TermOptions) -> TermResult:
    engine = options.engine
    try:
        spec = get_lab(engine.lab)
    except UnknownLab:
        raise UsageError(f"unknown lab {engine.lab!r}; labs: {', '.join(LAB_IDS)}") from None
    out = engine.out
    saved = _load_settings(out)
    state = _state_dir(out)

    # Everything the instructor wrote is checked before anything is written.
    roster_path = options.roster or (state / "roster.csv" if saved.get("roster") else None)
    class_list = roster.load(roster_path) if roster_path else None
    layout = options.layout or saved.get("layout") or "auto"
    if layout not in layouts.LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}; layouts: {', '.join(layouts.LAYOUTS)}")
    due_text = options.due if options.due is not None else saved.get("due")
    per_day_text = options.late_per_day if options.late_per_day is not None else saved.get("late_per_day")
    cap_text = options.late_cap if options.late_cap is not None else saved.get("late_cap")
    policy = lateness.Policy(lateness.parse_due(due_text), lateness.percent(per_day_text, "--late-per-day", 0.0),
                             lateness.percent(cap_text, "--late-cap", 100.0))
    penalise = options.penalise_forbidden if options.penalise_forbidden is not None \
        else bool(saved.get("penalise_forbidden"))
    override_paths = list(options.overrides) or [state / name for name in saved.get("overrides", [])]
    for path in override_paths:
        if not path.is_file():
            raise UsageError(f"overrides {path}: no such file")
    if class_list:
        unknown = sorted(engine.regrade_students - set(class_list.ids()))
        if unknown:
            raise UsageError(f"--regrade {unknown[0]}: not on the roster {roster_path}")

    gradebook.prepare(out)
    found = sources.collect(engine.paths, out, engine.max_bytes)
    parsed = layouts.parse(found.items, layout, spec.id)
    if not parsed.entries:
        # a wrong folder must not look like a class where nobody handed in
        raise UsageError(f"no submissions found in {', '.join(map(str, engine.paths))} as the {parsed.layout} layout "
                         f"({len(parsed.unparsed)} notebooks with names that fit no pattern, "
                         f"{len(found.refused)} refused, {len(parsed.junk)} other files)")

    # who handed in what; unknown LMS ids apart
    people: dict[str, book.Person] = {}
    if class_list:
        for s in class_list.students:
            people[s.student] = book.Person(s.student, s.name, s.email, s.lms_id, s.extension_days)
    by_student: dict[str, list[layouts.Entry]] = {}
    unknown_students = []
    for entry in parsed.entries:
        if class_list:
            match = class_list.find(entry.key)
            if match is None:
                unknown_students.append({"key": entry.key, "name": entry.name, "file": entry.source})
                continue
            student = match.student
        else:
            student = entry.key
            people.setdefault(student, book.Person(student, entry.name, "", entry.key if entry.name else ""))
        by_student.setdefault(student, []).append(entry)

    previous = _load_state(out)
    # overrides are checked before anything is graded: a wrong line costs no time and changes no file
    known = set(people) if class_list else set(by_student) | set(previous)
    maxima = {e.id: float(e.points) for e in spec.exercises} | {p: float(v) for p, v in spec.hand_graded.items()}
    applied: dict = {}
    for path in override_paths:
        for key, value in overrides.load(path, known, maxima).items():
            if key in applied:
                raise UsageError(f"overrides {path} line {value.line}: {key[0]} {key[1]} is already set in "
                                 "another overrides file")
            applied[key] = value
    submissions, metas = [], {}
    for student, entries in sorted(by_student.items()):
        entries.sort(key=lambda e: e.order)
        winner = entries[-1]
        item = winner.item
        submission = Submission(student, item.path, root=item.root)
        metas[student] = _analyse(spec, submission, winner, entries[:-1], engine.max_bytes)
        submissions.append(submission)

    engine.submissions = submissions
    engine.write_gradebook = False
    result = run_batch(engine)
    records = {r["student"]: r for r in result.records}

    students = list(people) if class_list else sorted(set(records) | set(people))
    for student in students:
        people.setdefault(student, book.Person(student))
        if student not in metas:
            metas[student] = previous.get(student, {}) if student in records else {}
    ctx = book.Context(spec, policy, applied, penalise, engine.lang, engine.reveal_hidden, engine.book_url)
    built = [book.build(ctx, people[s], records.get(s), metas[s]) for s in students]
    rows = [b.row for b in built]
    grades = {
        "lab": spec.id, "max_score": ctx.max_score, "layout": parsed.layout,
        "seed_source": result.book.get("seed_source"), "seed_fingerprint": result.book.get("seed_fingerprint"),
        "sandbox": result.book.get("sandbox"),
        "policy": {"due": policy.due.isoformat() if policy.due else None, "late_per_day": policy.per_day,
                   "late_cap": policy.cap, "penalise_forbidden": penalise},
        "roster": bool(class_list),
        "submissions": rows,
        "unknown_student": unknown_students,
        "unparsed": parsed.unparsed, "refused": found.refused, "junk": parsed.junk, "notes": parsed.notes,
    }
    book.write(out, ctx, built, grades)
    if spec.hand_graded:
        sheet = [(row["student"], part, item["max_points"], item["text"])
                 for row in rows if row["status"] != "missing" for part, item in row["hand_graded"].items()]
        gradebook.write_atomic(out / handgrading.SHEET, handgrading.sheet(sheet))
    _save(out, options, saved, class_list, override_paths, layout, due_text, per_day_text, cap_text, penalise,
          {s: metas[s] for s in students})
    return TermResult(grades, result.summary(), _summary(grades))


def _analyse(spec, submission: Submission, winner: layouts.Entry, older: list[layouts.Entry], max_bytes: int) -> dict:
    """What the term keeps of a student's hand-in: where it came from, and its graded code, parsed, never run."""
    meta = {"file": winner.source, "superseded": [e.source for e in older], "late": winner.late,
            "timestamp": winner.timestamp, "lms_name": winner.name}
    if submission.path is None:
        return meta
    copy = read(Submission(submission.student, submission.path, root=submission.root), max_bytes)
    if copy.invalid:
        return meta
    ids = [e.id for e in spec.exercises]
    meta["code"] = code.graded_code(copy.cells, ids)
    meta["forbidden"] = {e.id: code.forbidden_uses(copy.cells, e.id, e.forbidden_calls)
                         for e in spec.exercises if e.forbidden_calls}
    meta["lang"] = copy.lang
    meta["answers"] = handgrading.answers(submission.path, spec.hand_graded, max_bytes)
    return meta


def _load_state(out: Path) -> dict:
    try:
        state = json.loads((_state_dir(out) / "students.json").read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def load_analysis(out: Path) -> dict:
    """student -> what _analyse kept (the class report reads it)."""
    return _load_state(out)


def _save(out, options, saved, class_list, override_paths, layout, due, per_day, cap, penalise, metas) -> None:
    state = gradebook.private_dir(_state_dir(out))
    settings = {"layout": layout, "due": due, "late_per_day": per_day, "late_cap": cap,
                "penalise_forbidden": penalise, "roster": bool(class_list), "overrides": saved.get("overrides", [])}
    if options.roster:
        gradebook.write_atomic(state / "roster.csv", Path(options.roster).read_text(encoding="utf-8-sig"))
    if options.overrides:
        names = []
        for index, path in enumerate(override_paths):
            name = f"overrides-{index}.csv"
            gradebook.write_atomic(state / name, Path(path).read_text(encoding="utf-8-sig"))
            names.append(name)
        for stale in state.glob("overrides-*.csv"):
            if stale.name not in names:
                stale.unlink()
        settings["overrides"] = names
    gradebook.write_atomic(state / "students.json", json.dumps(metas, ensure_ascii=False))
    gradebook.write_atomic(state / "settings.json", json.dumps(settings, indent=1))


def _summary(grades: dict) -> list[str]:
    rows = grades["submissions"]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    late = sum(1 for row in rows if row["late"])
    lines = [f"Term: {len(rows)} students ({grades['layout']} layout): "
             + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + f"; {late} late."]
    superseded = sum(len(row["superseded"]) for row in rows)
    if superseded:
        lines.append(f"{superseded} earlier files superseded by a later one of the same student (listed per row).")
    for item in grades["unknown_student"]:
        lines.append(f"unknown student (not on the roster, not graded): {item['key']} {item['name']}: {item['file']}")
    for text in grades["unparsed"]:
        lines.append(f"unparsed file name (not graded, not guessed): {text}")
    for text in grades["refused"]:
        lines.append(f"refused: {text}")
    for text in grades["junk"]:
        lines.append(f"not a submission: {text}")
    for text in grades["notes"]:
        lines.append(f"note: {text}")
    for row in rows:
        for exercise, names in row["forbidden"].items():
            lines.append(f"forbidden API: {row['student']}: {exercise} uses {', '.join(names)}")
    return lines
