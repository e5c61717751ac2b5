"""Records (one JSON file per finished submission) and the gradebook built from them.

A record holds every feedback text in all four languages, so the gradebook can
be written in any language without grading again. Records are written
atomically (temporary file + os.replace): a grader killed at any moment leaves
only whole records, and a rerun grades what has none.

Grades are personal data: every file written here is 0600 and every folder
0700. Records pass through sanitize both ways (an older version may have
stored anything), every student-derived text is capped, and each output format
escapes it its own way: CSV cells cannot start a formula, Markdown cannot make
headings, emphasis, links or new lines, HTML is escaped.
"""
from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

from .. import book_links, i18n
from ..i18n import N_
from ..exercise import Feedback
from ..labs import LabSpec
from . import sanitize
from .engine import RECORD_VERSION, Outcome, render_all
from .private_files import private_dir, write_bytes_atomic  # noqa: F401  (gradebook.private_dir is used by batch and the term book)
from .submissions import Submission

STATE_DIR = ".autograder"
FEEDBACK_CHARS = 4000  # one exercise's feedback in one language; an honest one is a few hundred
CELL_NOTE_CHARS = 1000
MAX_CELL_NOTES = 50  # cells with a note per submission; the rest are counted in one more note
PATH_CHARS = 1000
OUTPUT_CHARS = 10_000  # the session keeps 8000, plus its marker
RECORD_STRING = 20_000  # any string of a record read back (the kept output is 8000)


# ---------------------------------------------------------------- records
def records_dir(out: Path) -> Path:
    return out / STATE_DIR / "records"


def prepare(out: Path) -> None:
    """The gradebook's folders, private; the out folder too when it is created here."""
    private_dir(out, existing_too=False)
    for folder in (out / STATE_DIR, records_dir(out), out / "feedback"):
        private_dir(folder)


def record_key(lab: str, student: str, digest: str, seed_fingerprint: str) -> str:
    import hashlib

    text = f"{RECORD_VERSION}\x00{lab}\x00{student}\x00{digest}\x00{seed_fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def write_atomic(path: Path, text: str) -> None:
    """Write `text` whole or not at all; an unchanged file is left as it is (a partial rerun touches only its rows)."""
    # a lone surrogate that slipped past sanitize costs one character, not the gradebook
    data = text.encode("utf-8", errors="replace")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    write_bytes_atomic(path, data)


def _index_path(out: Path, lab: str) -> Path:
    return out / STATE_DIR / f"index-{re.sub(r'[^a-z0-9]', '_', lab.lower())}.json"


def save_index(out: Path, lab: str, records: dict[str, dict]) -> None:
    """Which record holds each student's current row: a later, partial run keeps the rows it does not name."""
    write_atomic(_index_path(out, lab), json.dumps({student: record["key"] for student, record in records.items()
                                                   if isinstance(record.get("key"), str)}, indent=0))


def kept_records(out: Path, lab: str, present: set[str]) -> dict[str, dict]:
    """The records of the last run's students that this run did not name (unusable ones are dropped)."""
    try:
        index = json.loads(_index_path(out, lab).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict):
        return {}
    kept = {}
    for student, key in index.items():
        if student in present or not isinstance(key, str) or not re.fullmatch(r"[0-9a-f]{1,64}", key):
            continue
        record = load_record(out, key)
        if record is not None and record.get("student") == student and record.get("lab") == lab:
            kept[student] = record
    return kept


def clean_record(record: dict) -> dict:
    """Every string of a record made safe (sanitize.text); ProtocolError if it is absurdly deep or big."""
    return sanitize.message(record, max_depth=16, max_items=1_000_000, max_string=RECORD_STRING,
                            max_chars=256 << 20)


def save_record(out: Path, key: str, record: dict) -> None:
    write_atomic(records_dir(out) / f"{key}.json", json.dumps(clean_record(record), ensure_ascii=False, indent=1))


def load_record(out: Path, key: str) -> dict | None:
    """The record stored under `key`, cleaned, or None (graded again) when it is absent or unusable."""
    path = records_dir(out) / f"{key}.json"
    try:
        record = clean_record(json.loads(path.read_text(encoding="utf-8", errors="replace")))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or record.get("key") != key:
        return None
    return record if _well_formed(record) else None


def _well_formed(record: dict) -> bool:
    """What writing the gradebook relies on is there, with the right types."""
    number = (int, float)
    if not (isinstance(record.get("student"), str) and isinstance(record.get("status"), str)
            and isinstance(record.get("score"), number) and isinstance(record.get("max_score"), number)
            and isinstance(record.get("path"), str) and isinstance(record.get("exercises"), dict)
            and isinstance(record.get("cells", []), list)):
        return False
    for item in record["exercises"].values():
        if not (isinstance(item, dict) and isinstance(item.get("points"), number)
                and isinstance(item.get("max_points"), number) and isinstance(item.get("status"), str)):
            return False
    return all(isinstance(c, dict) and isinstance(c.get("cell"), int) and isinstance(c.get("kind"), str)
               for c in record.get("cells", []))


def _capped(texts: dict[str, str], limit: int = FEEDBACK_CHARS) -> dict[str, str]:
    return {lang: sanitize.text(text, limit) for lang, text in texts.items()}


def base_record(spec: LabSpec, submission: Submission, key: str, seed_source: str) -> dict:
    return {
        "version": RECORD_VERSION,
        "key": key,
        "lab": spec.id,
        "student": submission.student,
        "path": sanitize.text(str(submission.path), PATH_CHARS, newlines=False),
        "sha256": submission.digest,
        "seed_source": seed_source,
        "lang": submission.lang,
        "max_score": spec.max_score,
    }


# Why a file is invalid (Submission.invalid), as the row's reason: f"grader.invalid.{reason}".
N_(
    "grader.invalid.binary", "grader.invalid.empty", "grader.invalid.not_json", "grader.invalid.not_notebook",
    "grader.invalid.symlink", "grader.invalid.too_large", "grader.invalid.too_much_code",
    "grader.invalid.truncated", "grader.invalid.unreadable",
)


def invalid_record(spec: LabSpec, submission: Submission, key: str, seed_source: str) -> dict:
    reason = render_all([Feedback(f"grader.invalid.{submission.invalid}", submission.invalid_params)])
    return _not_run_record(spec, submission, key, seed_source, "invalid", submission.invalid, reason)


def wrong_lab_record(spec: LabSpec, submission: Submission, key: str, seed_source: str) -> dict:
    """A notebook of another lab: 0 points, nothing run, and a reason naming both labs."""
    found = f"{submission.lab} ({submission.lab_name})" if submission.lab_name else str(submission.lab)
    reason = render_all([Feedback("grader.wrong_lab", {"found": found, "expected": spec.id})])
    record = _not_run_record(spec, submission, key, seed_source, "wrong_lab", "wrong_lab", reason)
    record["lab_found"] = submission.lab
    return record


def _not_run_record(spec: LabSpec, submission: Submission, key: str, seed_source: str, status: str,
                    reason_code: str | None, reason: dict) -> dict:
    record = base_record(spec, submission, key, seed_source)
    record.update({
        "status": status,
        "reason_code": reason_code,
        "reason": reason,
        "score": 0.0,
        "exercises": {
            # the reason is said once, at the top; each exercise only says it was not run
            exercise.id: {"points": 0.0, "max_points": float(exercise.points), "status": status,
                          "diagnosis": None, "feedback": render_all([Feedback("grader.fb.not_run")])}
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
            "feedback": _capped(render_all(result.feedback)),
            # The feedback with hidden inputs named, for `--reveal-hidden` after the deadline.
            "feedback_revealed": _capped(render_all(result.revealed)) if result.revealed is not None else None,
        }
    record.update({
        "status": outcome.status,
        "reason_code": None,
        "reason": None,
        "score": float(sum(result.points for result in outcome.results)),
        "exercises": exercises,
        "typed_id": outcome.typed_id,
        "id_mismatch": outcome.id_mismatch,
        "cells": _cell_notes(outcome.events),
        "notes": _capped(render_all(outcome.notes)) if outcome.notes else {},
        "output": sanitize.text(outcome.output, OUTPUT_CHARS),
        "duration": round(duration, 4),
        "children": outcome.children,
        "hidden_cases": outcome.hidden_cases,
        "cpu": round(outcome.cpu, 4),
        "sandbox": sandbox,
    })
    return record


def _cell_notes(events: list) -> list[dict]:
    """One note per cell that failed, up to MAX_CELL_NOTES, then one that counts the rest: a notebook of
    2000 failing cells must not make a record (and the gradebook) of megabytes."""
    notes = [{"cell": event.number or event.cell + 1, "kind": event.kind,
              "text": _capped(render_all([event.feedback()]), CELL_NOTE_CHARS)} for event in events[:MAX_CELL_NOTES]]
    if len(events) > MAX_CELL_NOTES:
        rest = events[MAX_CELL_NOTES:]
        notes.append({"cell": rest[0].number or rest[0].cell + 1, "kind": "more",
                      "text": render_all([Feedback("grader.cells_more", {"count": len(rest)}, count="count")])})
    return notes


def error_record(spec: LabSpec, submission: Submission, key: str, seed_source: str, detail: str,
                 duration: float) -> dict:
    """The grader could not grade this submission at all (a sandbox failure): status error, 0 points."""
    record = base_record(spec, submission, key, seed_source)
    exercises = {}
    for exercise in spec.exercises:
        text = render_all([Feedback("grader.internal_error", {"name": exercise.id,
                                                               "detail": sanitize.text(detail, 200, newlines=False)})])
        exercises[exercise.id] = {"points": 0.0, "max_points": float(exercise.points), "status": "error",
                                  "diagnosis": None, "feedback": text}
    record.update({"status": "error", "reason_code": "grader_error", "reason": None, "score": 0.0,
                   "exercises": exercises, "typed_id": None, "id_mismatch": False, "cells": [], "notes": {},
                   "output": "", "duration": round(duration, 4)})
    return record


# ---------------------------------------------------------------- the gradebook
def _pick(texts, lang: str, limit: int = FEEDBACK_CHARS) -> str:
    if isinstance(texts, dict):
        texts = texts.get(lang) or texts.get(i18n.DEFAULT_LANG, "")
    return sanitize.text(texts, limit) if isinstance(texts, str) else ""


def feedback_lang(record: dict, forced: str | None) -> str:
    lang = record.get("lang") if isinstance(record.get("lang"), str) else None
    return i18n.normalise_lang(forced or lang)


def _exercise_feedback(exercise_id: str, item: dict, lang: str, reveal_hidden: bool) -> str:
    """The feedback a returned file shows for one exercise. `check`'s words for an unanswered exercise
    ("run that cell, then this one") make no sense once the notebook is handed in."""
    text = _pick((reveal_hidden and item.get("feedback_revealed")) or item["feedback"], lang)
    if item.get("status") == "not_answered" and text in (
            i18n.t("common.not_answered", lang, name=exercise_id), i18n.t("common.not_answered_value", lang,
                                                                            name=exercise_id)):
        return i18n.t("grader.fb.not_answered", lang, name=exercise_id)
    return text


def submission_entry(record: dict, forced_lang: str | None, reveal_hidden: bool = False) -> dict:
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
                "feedback": _exercise_feedback(exercise_id, item, lang, reveal_hidden),
            }
            for exercise_id, item in record["exercises"].items()
        },
        "lang": lang,
        "id_mismatch": bool(record.get("id_mismatch")),
        "typed_id": record["typed_id"] if isinstance(record.get("typed_id"), str) else None,
        "reason": _pick(record.get("reason"), lang) or None,
        "reason_code": record["reason_code"] if isinstance(record.get("reason_code"), str) else None,
        "lab_found": record.get("lab_found"),
        "notebook": record["path"],
        "cells": [{"cell": c["cell"], "kind": c["kind"], "text": _pick(c.get("text"), lang, CELL_NOTE_CHARS)}
                  for c in record.get("cells", [])[:MAX_CELL_NOTES + 1]],
        "duration": record.get("duration", 0.0),
    }
    return entry


_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9_.@+-]{0,63}")
# Windows opens a device, not a file, for these names (whatever the extension)
_DEVICE_NAMES = frozenset({"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)),
                           *(f"lpt{n}" for n in range(10))})


def feedback_name(student: str) -> str:
    """The stem of a student's feedback files, from their own id alone: a later run, or a classmate added
    or removed, never changes it. A plain id (lower-case ASCII letters, digits and `._@+-`) is its own name;
    any other id is a readable slug, `~` and 16 hex digits of the sha256 of the exact id. No plain name
    holds a `~`, so the two kinds never meet, and ids that differ only by case, a space or a look-alike
    letter get different files, on case-insensitive file systems too."""
    import hashlib
    import unicodedata

    if _PLAIN_NAME.fullmatch(student) and student.split(".")[0] not in _DEVICE_NAMES and not student.endswith("."):
        return student
    # the slug is for reading only: accents dropped, anything else one `_` (one pass over a capped id)
    ascii_text = unicodedata.normalize("NFKD", student[:200]).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9.@+-]+", "_", ascii_text).strip("._-")[:40].strip("._-") or "student"
    if slug.split(".")[0].lower() in _DEVICE_NAMES:
        slug = "_" + slug
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}~{digest}"


def write_gradebook(out: Path, spec: LabSpec, records: list[dict], forced_lang: str | None, meta: dict,
                    reveal_hidden: bool = False, book_url: str | None = None) -> dict:
    records = sorted(records, key=lambda r: r["student"])
    entries = [submission_entry(r, forced_lang, reveal_hidden) for r in records]
    for entry in entries:
        entry["feedback_file"] = feedback_name(entry["student"])
    book = {"lab": spec.id, "max_score": spec.max_score, **meta, "submissions": entries}
    write_atomic(out / "grades.json", json.dumps(book, ensure_ascii=False, indent=1))
    write_atomic(out / "grades.csv", EXCEL_BOM + _csv(spec, entries))
    feedback_dir = private_dir(out / "feedback")
    for record, entry in zip(records, entries):
        name = entry["feedback_file"]
        entry_lang = entry["lang"]
        markdown, html_text = feedback_documents(spec, record, entry, entry_lang, book_url)
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
        row = [_csv_text(entry["student"]), _csv_text(spec.id), _csv_text(entry["status"]),
               f"{entry['score']:g}", f"{entry['max_score']:g}"]
        row += [f"{entry['exercises'].get(e, {}).get('points', 0):g}" for e in exercise_ids]
        if with_id:
            row += ["yes" if entry["id_mismatch"] else "", _csv_text(entry["typed_id"] or "")]
        row += [_csv_text(entry["reason_code"] or "")]
        writer.writerow(row)
    return stream.getvalue()


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Excel reads a CSV as the system's ANSI code page unless it starts with a UTF-8 byte order mark; with
# it, "José García" and "Jürgen" open as written. Canvas's and Moodle's importers take it too (see
# term/export.py), and Python reads it with encoding="utf-8-sig".
EXCEL_BOM = "\ufeff"


def csv_text(value) -> str:
    """A text cell for a CSV an instructor opens in a spreadsheet: one line without control characters,
    terminal escapes or bidirectional overrides (sanitize.text), and no formula (OWASP: a leading quote
    before = + - @ tab CR)."""
    text = sanitize.text("" if value is None else value, RECORD_STRING, newlines=False)
    return "'" + text if text.startswith(_FORMULA_START) else text


_csv_text = csv_text


def feedback_documents(spec: LabSpec, record: dict, entry: dict, lang: str,
                       book_url: str | None = None) -> tuple[str, str]:
    """The student's feedback as Markdown and as HTML; with `book_url` (where the HTML edition is published)
    the chapter references in the exercises' feedback are links to it."""
    t = lambda key, **params: i18n.t(key, lang, **params)  # noqa: E731
    links = book_links.site_resolver(lang, book_url)
    title = t("grader.fb.title", lab=spec.id, student=entry["student"])
    md_title = t("grader.fb.title", lab=spec.id, student=md_text(entry["student"], line_start=False))
    score = i18n.tn("grader.fb.score", lang, entry["max_score"], points=entry["score"], max_points=entry["max_score"])
    rows = [(exercise_id, f"{item['points']:g}/{item['max_points']:g}", _row_feedback(entry, item, t))
            for exercise_id, item in entry["exercises"].items()]
    notes = [_pick(record.get("notes"), lang)] if record.get("notes") else []
    if entry["reason"]:
        notes.insert(0, entry["reason"])
    cells = [c["text"] for c in entry["cells"]]
    hidden = isinstance(record.get("hidden_cases"), int) and record["hidden_cases"] > 0

    md = [f"# {md_title}", "", f"**{score}**", ""]
    for note in notes:
        md += [md_text(note), ""]  # a paragraph each, so that no note can underline the one before
    md += [f"| {t('grader.fb.exercise')} | {t('grader.fb.points')} | {t('grader.fb.feedback')} |", "| --- | --- | --- |"]
    for exercise_id, points, text in rows:
        name = f"`{exercise_id}`" if exercise_id.isidentifier() else md_text(exercise_id)
        md.append(f"| {name} | {points} | {book_links.to_markdown(text, links, md_text)} |")
    if cells:
        md += ["", f"## {t('grader.fb.cells')}", ""] + [f"- {md_text(text)}" for text in cells]
    if hidden:
        md += ["", f"_{t('grader.fb.hidden_cases')}_"]
    markdown = "\n".join(md) + "\n"

    e = html.escape
    body = [f"<h1>{e(title)}</h1>", f"<p><strong>{e(score)}</strong></p>"]
    body += [f"<p>{html_inline(e(note))}</p>" for note in notes]
    body.append(f"<table><thead><tr><th>{e(t('grader.fb.exercise'))}</th><th>{e(t('grader.fb.points'))}</th>"
                f"<th>{e(t('grader.fb.feedback'))}</th></tr></thead><tbody>")
    for exercise_id, points, text in rows:
        body.append(f"<tr><td><code>{e(exercise_id)}</code></td><td>{e(points)}</td>"
                    f"<td>{html_inline(book_links.to_html(text, links)).replace(chr(10), '<br>')}</td></tr>")
    body.append("</tbody></table>")
    if cells:
        body.append(f"<h2>{e(t('grader.fb.cells'))}</h2><ul>" + "".join(f"<li>{e(c)}</li>" for c in cells) + "</ul>")
    if hidden:
        body.append(f"<p><em>{html_inline(e(t('grader.fb.hidden_cases')))}</em></p>")
    html_text = (
        f'<!DOCTYPE html>\n<html lang="{e(lang)}">\n<head><meta charset="utf-8"><title>{e(title)}</title>\n'
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top;text-align:left}"
        "</style></head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
    return markdown, html_text


NOT_RUN = ("invalid", "wrong_lab", "missing")


def _row_feedback(entry: dict, item: dict, t) -> str:
    """An exercise's cell: a notebook that was not run says why once, above the table (records written
    before that rule repeated the reason in every exercise)."""
    text = item.get("feedback") or ""
    if entry["status"] in NOT_RUN and (not text or text == entry.get("reason")):
        return t("grader.fb.not_run")
    return text


def html_inline(escaped: str) -> str:
    """`code` in an escaped text as <code>: the messages mark names so, and a reader of the HTML file
    should not see the backticks."""
    return re.sub(r"`([^`<>\n]+)`", r"<code>\1</code>", escaped)


_MD_SPECIAL = frozenset("\\`*[]|#~")
# `<`, `>` and `&` become entities: every Markdown flavour passes an entity through as the character,
# while a backslash escape of `<` is CommonMark's alone (Python-Markdown leaves `\<img ...>` a tag)
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_MD_LINE_START = frozenset("-+=")  # a line starting so may be a list, a rule or a setext underline


def md_text(text: str, line_start: bool = True) -> str:
    """Student-controlled text as one line of literal Markdown: nothing in it becomes a heading, a new
    line, emphasis, code, a link, HTML or a table cell (nor, at the start of a line, a list or a rule).
    Intraword `_` (`s_spanish`) stays as it is: CommonMark never makes emphasis of it."""
    text = " ".join(str(text).split())
    out = []
    last = len(text) - 1
    digits = len(text) - len(text.lstrip("0123456789")) if line_start else -1
    for index, char in enumerate(text):
        if char in _MD_ENTITIES:
            out.append(_MD_ENTITIES[char])
        elif char in _MD_SPECIAL:
            out.append("\\" + char)
        elif char == "_" and not (0 < index < last and text[index - 1].isalnum() and text[index + 1].isalnum()):
            out.append("\\_")
        elif index == 0 and line_start and char in _MD_LINE_START:
            out.append("\\" + char)
        elif char in ".)" and index == digits and digits > 0:  # `1. ` starts an ordered list
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


i18n.NP_("grader.cells_more")  # one cell, several cells
