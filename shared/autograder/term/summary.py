"""The run's summary for the instructor's terminal: counts, files not counted, lateness, flags."""
from __future__ import annotations

from . import roster


def lines(grades: dict, class_list: roster.Roster | None, seed) -> list[str]:
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
