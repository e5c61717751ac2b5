"""Records (one JSON file per finished submission) and the gradebook built from them.

A record holds every feedback text in all four languages, so the gradebook can
be written in any language without grading again. Records are written
atomically (temporary file + os.replace): a grader killed at any moment leaves
only whole records, and a rerun grades what has none.
"""
from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import tempfile
from pathlib import Path

from .. import i18n
from ..exercise import Feedback
from ..labs import LabSpec
from .engine import RECORD_VERSION, Outcome, render_all
from .submissions import Submission

STATE_DIR = ".autograder"
_UMASK = os.umask(0o022)
os.umask(_UMASK)


# ---------------------------------------------------------------- records
def records_dir(out: Path) -> Path:
    return out / STATE_DIR / "records"


def record_key(lab: str, student: str, digest: str, seed_fingerprint: str) -> str:
    import hashlib

    text = f"{RECORD_VERSION}\x00{lab}\x00{student}\x00{digest}\x00{seed_fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_UMASK)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def save_record(out: Path, key: str, record: dict) -> None:
    write_atomic(records_dir(out) / f"{key}.json", json.dumps(record, ensure_ascii=False, indent=1))


def load_record(out: Path, key: str) -> dict | None:
    path = records_dir(out) / f"{key}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or record.get("key") != key:
        return None
    return record


def base_record(spec: LabSpec, submission: Submission, key: str, seed_source: str) -> dict:
    return {
        "version": RECORD_VERSION,
        "key": key,
        "lab": spec.id,
        "student": submission.student,
        "path": str(submission.path),
        "sha256": submission.digest,
        "seed_source": seed_source,
        "lang": submission.lang,
        "max_score": spec.max_score,
    }


def invalid_record(spec: LabSpec, submission: Submission, key: str, seed_source: str) -> dict:
    reason = render_all([Feedback(f"grader.invalid.{submission.invalid}", submission.invalid_params)])
    record = base_record(spec, submission, key, seed_source)
    record.update({
        "status": "invalid",
        "reason_code": submission.invalid,
        "reason": reason,
        "score": 0.0,
        "exercises": {
            exercise.id: {"points": 0.0, "max_points": float(exercise.points), "status": "invalid",
                          "diagnosis": None, "feedback": reason}
            for exercise in spec.exercises
        },
        "typed_id": None,
        "id_mismatch": False,
        "cells": [],
        "notes": {},
        "output": "",
        "duration": 0.0,
    })
    return record


def graded_record(spec: LabSpec, submission: Submission, key: str, seed_source: str, outcome: Outcome,
                  duration: float, sandbox: str) -> dict:
    record = base_record(spec, submission, key, seed_source)
    exercises = {}
    for result in outcome.results:
        exercises[result.exercise] = {
            "points": float(result.points),
            "max_points": float(result.max_points),
            "status": result.status,
            "diagnosis": result.diagnosis,
            "feedback": render_all(result.feedback),
        }
    record.update({
        "status": outcome.status,
        "reason_code": None,
        "reason": None,
        "score": float(sum(result.points for result in outcome.results)),
        "exercises": exercises,
        "typed_id": outcome.typed_id,
        "id_mismatch": outcome.id_mismatch,
        "cells": [{"cell": event.cell + 1, "kind": event.kind, "text": render_all([event.feedback()])}
                  for event in outcome.events],
        "notes": render_all(outcome.notes) if outcome.notes else {},
        "output": outcome.output,
        "duration": round(duration, 4),
        "children": outcome.children,
        "hidden_cases": outcome.hidden_cases,
        "cpu": round(outcome.cpu, 4),
        "sandbox": sandbox,
    })
    return record


def error_record(spec: LabSpec, submission: Submission, key: str, seed_source: str, detail: str,
                 duration: float) -> dict:
    """The grader could not grade this submission at all (a sandbox failure): status error, 0 points."""
    record = base_record(spec, submission, key, seed_source)
    exercises = {}
    for exercise in spec.exercises:
        text = render_all([Feedback("grader.internal_error", {"name": exercise.id, "detail": detail[:200]})])
        exercises[exercise.id] = {"points": 0.0, "max_points": float(exercise.points), "status": "error",
                                  "diagnosis": None, "feedback": text}
    record.update({"status": "error", "reason_code": "grader_error", "reason": None, "score": 0.0,
                   "exercises": exercises, "typed_id": None, "id_mismatch": False, "cells": [], "notes": {},
                   "output": "", "duration": round(duration, 4)})
    return record


# ---------------------------------------------------------------- the gradebook
def _pick(texts, lang: str) -> str:
    if isinstance(texts, dict):
        return texts.get(lang) or texts.get(i18n.DEFAULT_LANG, "")
    return texts or ""


def feedback_lang(record: dict, forced: str | None) -> str:
    return i18n.normalise_lang(forced) if forced else (record.get("lang") or i18n.DEFAULT_LANG)


def submission_entry(record: dict, forced_lang: str | None) -> dict:
    lang = feedback_lang(record, forced_lang)
    entry = {
        "student": record["student"],
        "status": record["status"],
        "score": record["score"],
        "max_score": record["max_score"],
        "exercises": {
            exercise_id: {
                "points": item["points"],
                "max_points": item["max_points"],
                "status": item["status"],
                "diagnosis": item.get("diagnosis"),
                "feedback": _pick(item["feedback"], lang),
            }
            for exercise_id, item in record["exercises"].items()
        },
        "lang": lang,
        "id_mismatch": bool(record.get("id_mismatch")),
        "typed_id": record.get("typed_id"),
        "reason": _pick(record.get("reason"), lang) or None,
        "reason_code": record.get("reason_code"),
        "notebook": record["path"],
        "cells": [{"cell": c["cell"], "kind": c["kind"], "text": _pick(c["text"], lang)} for c in record.get("cells", [])],
        "duration": record.get("duration", 0.0),
    }
    return entry


def safe_filename(student: str, taken: set[str]) -> str:
    name = re.sub(r"[^\w.@+-]+", "_", student, flags=re.UNICODE).strip("._") or "student"
    name = name[:100]
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate.lower())
    return candidate


def write_gradebook(out: Path, spec: LabSpec, records: list[dict], forced_lang: str | None, meta: dict) -> dict:
    records = sorted(records, key=lambda r: r["student"])
    entries = [submission_entry(r, forced_lang) for r in records]
    book = {"lab": spec.id, "max_score": spec.max_score, **meta, "submissions": entries}
    write_atomic(out / "grades.json", json.dumps(book, ensure_ascii=False, indent=1))
    write_atomic(out / "grades.csv", _csv(spec, entries))
    feedback_dir = out / "feedback"
    feedback_dir.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    for record, entry in zip(records, entries):
        name = safe_filename(entry["student"], taken)
        entry_lang = entry["lang"]
        markdown, html_text = feedback_documents(spec, record, entry, entry_lang)
        write_atomic(feedback_dir / f"{name}.md", markdown)
        write_atomic(feedback_dir / f"{name}.html", html_text)
    return book


def _csv(spec: LabSpec, entries: list[dict]) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    exercise_ids = [exercise.id for exercise in spec.exercises]
    with_id = "STUDENT_ID" in spec.context_names
    header = ["student", "lab", "status", "score", "max_score", *exercise_ids]
    if with_id:
        header += ["id_mismatch", "typed_id"]
    header += ["reason"]
    writer.writerow(header)
    for entry in entries:
        row = [entry["student"], spec.id, entry["status"], f"{entry['score']:g}", f"{entry['max_score']:g}"]
        row += [f"{entry['exercises'].get(e, {}).get('points', 0):g}" for e in exercise_ids]
        if with_id:
            row += ["yes" if entry["id_mismatch"] else "", entry["typed_id"] or ""]
        row += [entry["reason_code"] or ""]
        writer.writerow(row)
    return stream.getvalue()


def feedback_documents(spec: LabSpec, record: dict, entry: dict, lang: str) -> tuple[str, str]:
    t = lambda key, **params: i18n.t(key, lang, **params)  # noqa: E731
    title = t("grader.fb.title", lab=spec.id, student=entry["student"])
    score = t("grader.fb.score", points=entry["score"], max_points=entry["max_score"])
    rows = [(exercise_id, f"{item['points']:g}/{item['max_points']:g}", item["feedback"])
            for exercise_id, item in entry["exercises"].items()]
    notes = [_pick(record.get("notes"), lang)] if record.get("notes") else []
    if entry["reason"]:
        notes.insert(0, entry["reason"])
    cells = [c["text"] for c in entry["cells"]]
    hidden = record.get("hidden_cases", 0) > 0

    md = [f"# {title}", "", f"**{score}**", ""]
    md += [f"{note}" for note in notes] + ([""] if notes else [])
    md += [f"| {t('grader.fb.exercise')} | {t('grader.fb.points')} | {t('grader.fb.feedback')} |", "| --- | --- | --- |"]
    for exercise_id, points, text in rows:
        md.append(f"| `{exercise_id}` | {points} | {_md_cell(text)} |")
    if cells:
        md += ["", f"## {t('grader.fb.cells')}", ""] + [f"- {_md_cell(text)}" for text in cells]
    if hidden:
        md += ["", f"_{t('grader.fb.hidden_cases')}_"]
    markdown = "\n".join(md) + "\n"

    e = html.escape
    body = [f"<h1>{e(title)}</h1>", f"<p><strong>{e(score)}</strong></p>"]
    body += [f"<p>{e(note)}</p>" for note in notes]
    body.append(f"<table><thead><tr><th>{e(t('grader.fb.exercise'))}</th><th>{e(t('grader.fb.points'))}</th>"
                f"<th>{e(t('grader.fb.feedback'))}</th></tr></thead><tbody>")
    for exercise_id, points, text in rows:
        body.append(f"<tr><td><code>{e(exercise_id)}</code></td><td>{e(points)}</td><td>{e(text)}</td></tr>")
    body.append("</tbody></table>")
    if cells:
        body.append(f"<h2>{e(t('grader.fb.cells'))}</h2><ul>" + "".join(f"<li>{e(c)}</li>" for c in cells) + "</ul>")
    if hidden:
        body.append(f"<p><em>{e(t('grader.fb.hidden_cases'))}</em></p>")
    html_text = (
        f'<!DOCTYPE html>\n<html lang="{e(lang)}">\n<head><meta charset="utf-8"><title>{e(title)}</title>\n'
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top;text-align:left}"
        "</style></head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
    return markdown, html_text


def _md_cell(text: str) -> str:
    """Student-controlled text inside a Markdown table cell: no pipes, no raw HTML, one line."""
    text = " ".join(str(text).split())
    return html.escape(text, quote=False).replace("|", "\\|")
