"""The term's gradebook: one row per roster student, from the engine's records plus what the term knows.

Order of computation, per student: the engine's points per exercise; a
forbidden API costs that exercise's points only with --penalise-forbidden;
overrides replace an exercise's points or give a hand-graded part its points;
raw_score is their sum; the late penalty is a percentage of raw_score
(lateness.py); score = raw_score - penalty.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

from .. import i18n
from ..grader import gradebook
from ..labs import LabSpec
from . import lateness as late_rules
from .overrides import LATE_DAYS, Override


def render(key: str, **params) -> dict[str, str]:
    """The message in every language, as records keep their texts. A plural message (NP_) takes the form its
    parameter `count` asks for, so that a note kept as (key, params) renders right wherever it is read."""
    if i18n.plural_forms(key, i18n.DEFAULT_LANG):
        return {lang: i18n.tn(key, lang, float(params["count"]), **params) for lang in i18n.LANGS}
    return {lang: i18n.t(key, lang, **params) for lang in i18n.LANGS}


i18n.NP_("term.note.late", "term.note.superseded")

UNMATCHED_CSV = "unmatched.csv"


@dataclass
class Context:
    spec: LabSpec
    policy: late_rules.Policy
    overrides: dict[tuple[str, str], Override]
    penalise_forbidden: bool = False
    forced_lang: str | None = None
    reveal_hidden: bool = False
    book_url: str | None = None  # feedback links its chapter references to the HTML edition there
    instructor_lang: str = i18n.DEFAULT_LANG  # of grades.csv's notes; students read theirs in their own

    @property
    def max_score(self) -> float:
        return self.spec.max_score + float(sum(self.spec.hand_graded.values()))


@dataclass
class Person:
    student: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    extension_days: float = 0.0
    section: str = ""  # the LMS's section (Canvas "Section"), for the report and the exports
    login: str = ""  # the LMS's login (Canvas "SIS Login ID"), not the email
    lms_display_name: str = ""  # the name as the LMS writes it (Canvas: "Last, First")


@dataclass
class Built:
    row: dict
    markdown: str
    html: str


def _fmt(value: float) -> str:
    return f"{round(value, 4):g}"


def build(ctx: Context, person: Person, record: dict | None, meta: dict) -> Built:
    spec = ctx.spec
    notes: list[dict[str, str]] = []
    if record is None:
        entry = {"student": person.student, "status": "missing", "score": 0.0, "max_score": spec.max_score,
                 "exercises": {e.id: {"points": 0.0, "max_points": float(e.points), "status": "missing",
                                      "diagnosis": None,
                                      "feedback": i18n.t("grader.fb.not_run", i18n.normalise_lang(ctx.forced_lang))}
                               for e in spec.exercises},
                 "lang": i18n.normalise_lang(ctx.forced_lang), "id_mismatch": False, "typed_id": None,
                 "reason": None, "reason_code": "missing", "lab_found": None, "notebook": "", "cells": [],
                 "duration": 0.0}
        notes.append(render("term.note.missing"))
        record = {"notes": {}}
    else:
        entry = gradebook.submission_entry(record, ctx.forced_lang, ctx.reveal_hidden)
    lang = entry["lang"]
    exercises = {key: dict(value) for key, value in entry["exercises"].items()}
    forbidden = meta.get("forbidden") or {}
    for exercise_id, names in sorted(forbidden.items()):
        if not names or exercise_id not in exercises:
            continue
        if ctx.penalise_forbidden and entry["status"] not in ("missing",):
            exercises[exercise_id]["points"] = 0.0
            notes.append(render("term.note.forbidden_penalised", exercise=exercise_id, names=", ".join(names)))
        else:
            notes.append(render("term.note.forbidden", exercise=exercise_id, names=", ".join(names)))
    applied = []
    for exercise_id in exercises:
        override = ctx.overrides.get((person.student, exercise_id))
        if override is not None:
            exercises[exercise_id]["points"] = override.points
            exercises[exercise_id]["override"] = override.reason or "override"
            applied.append(override)
            notes.append(render("term.note.override", exercise=exercise_id, points=_fmt(override.points),
                                reason=override.reason or "-"))
    hand = {}
    for part, max_points in ctx.spec.hand_graded.items():
        override = ctx.overrides.get((person.student, part))
        hand[part] = {"points": override.points if override else 0.0, "max_points": float(max_points),
                      "graded": override is not None, "text": (meta.get("answers") or {}).get(part, "")}
        if override is not None:
            applied.append(override)
    raw = sum(item["points"] for item in exercises.values()) + sum(item["points"] for item in hand.values())

    if entry["status"] == "missing":
        assessed = late_rules.Lateness()
    else:
        assessed = late_rules.assess(ctx.policy, person.extension_days, _submitted(meta), bool(meta.get("late")),
                                     meta.get("time_source"), bool(meta.get("time_odd")))
    days_override = ctx.overrides.get((person.student, LATE_DAYS))
    if days_override is not None:
        days = int(days_override.points)
        assessed = late_rules.Lateness(days > 0, days, late_rules.penalty_for(ctx.policy, days), assessed.submitted,
                                       time_source=late_rules.OVERRIDE)
        applied.append(days_override)
        if days == 0:  # an excuse the student should read about, not a silent change
            notes.append(render("term.note.late_excused", reason=days_override.reason or "-"))
    penalty = round(raw * assessed.penalty_percent / 100, 4)
    score = max(0.0, round(raw - penalty, 4))
    if assessed.note:
        notes.append(render(assessed.note))
    if assessed.late and penalty > 0:
        if assessed.late_days is None:
            notes.append(render("term.note.late_flag", percent=_fmt(assessed.penalty_percent), raw=_fmt(raw),
                                score=_fmt(score)))
        else:
            notes.append(render("term.note.late", count=assessed.late_days, days=assessed.late_days,
                                percent=_fmt(assessed.penalty_percent), raw=_fmt(raw), score=_fmt(score)))
    superseded = list(meta.get("superseded") or [])
    if superseded:
        notes.append(render("term.note.superseded", count=len(superseded)))
    for key, params in meta.get("notes") or []:  # the intake's and the analysis's notes on this hand-in
        notes.append(render(key, **params))

    row = dict(entry)
    row.update({
        "name": person.name, "email": person.email, "lms_id": person.lms_id, "lms_name": meta.get("lms_name") or "",
        "section": person.section, "login": person.login, "lms_display_name": person.lms_display_name,
        "exercises": exercises, "hand_graded": hand,
        "raw_score": round(raw, 4), "late": assessed.late, "late_days": assessed.late_days,
        "penalty_percent": assessed.penalty_percent, "penalty": penalty, "score": score,
        "max_score": ctx.max_score, "submitted": assessed.submitted, "extension_days": person.extension_days,
        "file": meta.get("file", ""), "superseded": superseded,
        "forbidden": {k: v for k, v in sorted(forbidden.items()) if v},
        "overrides": [{"exercise": o.exercise, "points": o.points, "reason": o.reason} for o in applied],
        # the instructor's columns in the instructor's language, the student's feedback in the student's;
        # note_texts keeps every language, so that an export or the report can say them in another
        "notes": [note.get(ctx.instructor_lang) or note[i18n.DEFAULT_LANG] for note in notes],
        "student_notes": [note.get(lang) or note[i18n.DEFAULT_LANG] for note in notes],
        "note_texts": notes,
    })
    # where the hand-in's time came from, and what the intake knows of it (its source, look-alike ids...)
    row.update({"time_source": assessed.time_source, "time_unknown": assessed.time_unknown,
                **(meta.get("fields") or {})})
    markdown, html_text = _feedback(ctx, record, row, notes, lang)
    return Built(row, markdown, html_text)


def _submitted(meta: dict):
    """The hand-in time the intake kept (ISO), or an older run's nbgrader timestamp text."""
    from datetime import datetime

    if isinstance(meta.get("submitted_at"), str):
        try:
            return datetime.fromisoformat(meta["submitted_at"])
        except ValueError:
            return None
    return meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None


def _feedback(ctx: Context, record: dict, row: dict, notes: list[dict[str, str]], lang: str) -> tuple[str, str]:
    """The engine's feedback documents, with the final points and the term's notes."""
    shown = dict(record)
    engine_notes = record.get("notes") if isinstance(record.get("notes"), dict) else {}
    shown["notes"] = {code: " ".join(filter(None, [engine_notes.get(code, "")]
                                            + [note.get(code) or note[i18n.DEFAULT_LANG] for note in notes]))
                      for code in i18n.LANGS} if (notes or engine_notes) else {}
    entry = dict(row)
    entry["exercises"] = {**row["exercises"], **{part: {"points": item["points"], "max_points": item["max_points"],
                                                        "feedback": ""} for part, item in row["hand_graded"].items()}}
    return gradebook.feedback_documents(ctx.spec, shown, entry, lang, ctx.book_url)


# ---------------------------------------------------------------- files
def csv_header(spec: LabSpec) -> list[str]:
    exercise_ids = [e.id for e in spec.exercises]
    header = ["student", "name", "lms_id", "section", "lab", "status", "raw_score", "late", "late_days", "penalty", "score",
              "max_score", *exercise_ids, *[f"{e}_diagnosis" for e in exercise_ids], *spec.hand_graded]
    if "STUDENT_ID" in spec.context_names:
        header += ["id_mismatch", "typed_id"]
    return header + ["reason", "superseded", "file", "forbidden", "notes"]


_text = gradebook.csv_text


def notes_in(row: dict, lang: str) -> list[str]:
    """The row's notes in `lang` (rows written before note_texts was kept: as they were written)."""
    texts = row.get("note_texts")
    if not isinstance(texts, list):
        return list(row.get("notes") or [])
    return [text.get(lang) or text.get(i18n.DEFAULT_LANG, "") for text in texts if isinstance(text, dict)]


def csv_text(spec: LabSpec, rows: list[dict], lang: str = i18n.DEFAULT_LANG) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(csv_header(spec))
    exercise_ids = [e.id for e in spec.exercises]
    for row in rows:
        line = [_text(row["student"]), _text(row["name"]), _text(row["lms_id"]), _text(row.get("section", "")),
                spec.id, row["status"],
                _fmt(row["raw_score"]), "yes" if row["late"] else "",
                "" if row["late_days"] is None else str(row["late_days"]), _fmt(row["penalty"]), _fmt(row["score"]),
                _fmt(row["max_score"])]
        line += [_fmt(row["exercises"][e]["points"]) for e in exercise_ids]
        line += [_text(row["exercises"][e].get("diagnosis") or "") for e in exercise_ids]
        line += [_fmt(row["hand_graded"][p]["points"]) if row["hand_graded"][p]["graded"] else ""
                 for p in spec.hand_graded]
        if "STUDENT_ID" in spec.context_names:
            line += ["yes" if row["id_mismatch"] else "", _text(row["typed_id"] or "")]
        line += [_text(row["reason_code"] or ""), _text("; ".join(row["superseded"])), _text(row["file"]),
                 _text("; ".join(f"{k}: {', '.join(v)}" for k, v in row["forbidden"].items())),
                 _text(" ".join(notes_in(row, lang)))]
        writer.writerow(line)
    return stream.getvalue()


def unmatched_csv(book: dict) -> str:
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["kind", "lms_key", "name", "file"])
    for item in book["unknown_student"]:
        kind = {"ambiguous": "ambiguous_owner", "name_mismatch": "name_mismatch"}.get(item.get("reason"),
                                                                                      "unknown_student")
        writer.writerow([kind, _text(item["key"]), _text(item["name"]), _text(item["file"])])
    for kind in ("unparsed", "refused", "junk"):
        for text in book[kind]:
            writer.writerow([kind, "", "", _text(text)])
    return stream.getvalue()


def write(out: Path, ctx: Context, built: list[Built], book: dict) -> None:
    for item in built:  # from the student's own id alone: never another student's file (gradebook.feedback_name)
        item.row["feedback_file"] = gradebook.feedback_name(item.row["student"])
    gradebook.write_atomic(out / "grades.json", json.dumps(book, ensure_ascii=False, indent=1))
    gradebook.write_atomic(out / "grades.csv",
                           gradebook.EXCEL_BOM + csv_text(ctx.spec, book["submissions"], ctx.instructor_lang))
    gradebook.write_atomic(out / UNMATCHED_CSV, gradebook.EXCEL_BOM + unmatched_csv(book))
    feedback = gradebook.private_dir(out / "feedback")
    for item in built:
        name = item.row["feedback_file"]
        gradebook.write_atomic(feedback / f"{name}.md", item.markdown)
        gradebook.write_atomic(feedback / f"{name}.html", item.html)
