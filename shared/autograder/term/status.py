"""`python -m autograder status DIR`: what a term keeps and where it stands, without grading anything."""
from __future__ import annotations

import json
from pathlib import Path

from ..grader.submissions import UsageError
from . import names, state


def status_text(out: Path) -> str:
    if not state.is_term(out):
        raise UsageError(f"{names.shown(out)}: not a term's gradebook (no {state.STATE_DIR}/{state.TERM_DIR}/"
                         f"{state.SETTINGS}; grade LAB PATH --roster ROSTER --out {names.shown(out)} first)")
    settings = state.load(out)
    try:
        grades = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        grades = {}
    lines = [f"Term gradebook {names.shown(out)}" + (f" ({settings['lab']})" if settings.get("lab") else "")]
    kept = settings.get("roster")
    if kept:
        lines.append(f"Roster: {kept.get('format') or 'csv'}, {kept.get('count') if kept.get('count') is not None else '?'}"
                     f" students, from {names.shown(kept.get('from'))} (kept copy {state.TERM_DIR}/{kept.get('file')})")
    else:
        lines.append("Roster: none (one row per student a file names)")
    lines.append(f"Layout: {settings.get('layout') or 'auto'}")
    policy = [f"due {settings.get('due') or 'none'}", f"late per day {settings.get('late_per_day') or 0}%",
              f"cap {settings.get('late_cap') or 100}%",
              "forbidden APIs penalised" if settings.get("penalise_forbidden") else "forbidden APIs flagged only"]
    if settings.get("lms_timezone"):
        policy.append(f"LMS times in {settings['lms_timezone']}")
    lines.append("Policy: " + ", ".join(policy))
    fingerprint = settings.get("seed_fingerprint")
    lines.append(f"Seed fingerprint: {fingerprint} (from {settings.get('seed_source')})" if fingerprint
                 else "Seed fingerprint: none kept")
    overrides = settings.get("overrides") or []
    lines.append(f"Overrides files: {len(overrides)}")
    for entry in overrides:
        count = entry.get("lines")
        lines.append(f"  {names.shown(entry.get('name') or entry.get('file'))}"
                     + (f": {count} lines" if count is not None else "") + f", from {names.shown(entry.get('from'))}")
    times = settings.get("times") or []
    times = [times] if isinstance(times, dict) else times
    lines.append("Submission times: " + (", ".join(f"{names.shown(t.get('from'))} ({t.get('form', '?')})"
                                                   for t in times) or "none"))
    lines.append("Sources of the last run:")
    for source in settings.get("sources") or []:
        lines.append(f"  {source.get('path')}: {source.get('kind')}, {source.get('layout')} layout")
    for entry in settings.get("extra_files") or []:
        lines.append(f"  handed in outside the LMS: {names.shown(entry.get('name'))} for {entry.get('student')} "
                     f"(kept copy {state.TERM_DIR}/{entry.get('file')})")
    for folder in settings.get("extra_folders") or []:
        lines.append(f"  --extra folder: {names.shown(folder)}")
    rows = grades.get("submissions") or []
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.get("status", "?")] = counts.get(row.get("status", "?"), 0) + 1
    late = sum(1 for row in rows if row.get("late"))
    unknown_time = sum(1 for row in rows if row.get("time_unknown"))
    lines.append(f"Students: {len(rows)}: " + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none")
                 + f"; {late} late; {unknown_time} with no known hand-in time")
    lines.append(f"Lateness from: {grades.get('lateness_source') or 'nothing (no times)'}")
    lines.append(f"Files not counted for anybody: {len(grades.get('unknown_student') or [])} of unknown or refused "
                 f"owners, {len(grades.get('unparsed') or [])} unparsed, {len(grades.get('refused') or [])} refused "
                 f"(DIR/unmatched.csv)")
    return "\n".join(lines)
