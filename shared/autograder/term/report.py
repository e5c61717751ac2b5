"""DIR/report.html: what the class as a whole got right and wrong, for the next lecture.

Self-contained: the figures are inline SVG from matplotlib (no date in their
metadata, fixed ids: the same gradebook gives the same bytes), no script, no
external URL.
"""
from __future__ import annotations

import html
import io
import json
import statistics
from collections import Counter
from pathlib import Path

from .. import i18n
from ..grader import gradebook
from ..grader.submissions import UsageError
from ..labs import get_lab
from . import similarity
from .run import load_analysis

# Keys built at run time ('term.report.status.' + status, 'term.report.col.' + heading), listed for `make catalogs`.
i18n.N_(
    "term.report.col.exercise", "term.report.col.mistake", "term.report.col.count", "term.report.col.share",
    "term.report.col.explanation", "term.report.col.section", "term.report.status.graded",
    "term.report.status.missing", "term.report.status.late", "term.report.status.invalid",
    "term.report.status.wrong_lab", "term.report.status.timeout", "term.report.status.error",
    "term.report.status.unknown_student", "term.report.status.unparsed",
)

RAN = ("graded", "timeout", "error")


def _svg(figure) -> str:
    stream = io.StringIO()
    figure.savefig(stream, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = stream.getvalue()
    text = text[text.index("<svg"):]
    start, end = text.find("<metadata>"), text.find("</metadata>")
    if 0 <= start < end:  # RDF naming its vocabularies by URL: nothing a reader needs
        text = text[:start] + text[end + len("</metadata>"):]
    return text


def _figures(rows: list[dict], spec, labels: dict) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    with matplotlib.rc_context({"svg.hashsalt": "labbook-report", "svg.fonttype": "path", "font.size": 9}):
        scores = [row["score"] for row in rows if row["status"] in RAN]
        figure, axis = pyplot.subplots(figsize=(6, 2.6))
        top = max(1.0, float(rows[0]["max_score"]) if rows else 1.0)
        axis.hist(scores, bins=min(20, max(1, int(top) + 1)), range=(0, top), color="#3b6ea5", edgecolor="white")
        axis.set_xlabel(labels["score"])
        axis.set_ylabel(labels["count"])
        score_svg = _svg(figure)
        pyplot.close(figure)

        exercises = [e.id for e in spec.exercises]
        figure, axes = pyplot.subplots(1, len(exercises), figsize=(1.7 * len(exercises), 2.2), squeeze=False)
        for axis, exercise in zip(axes[0], exercises):
            points = [row["exercises"][exercise]["points"] for row in rows if row["status"] in RAN]
            maximum = float(spec.exercise(exercise).points)
            values = Counter(points)
            keys = sorted(set(values) | {0.0, maximum})
            axis.bar([f"{k:g}" for k in keys], [values.get(k, 0) for k in keys], color="#6a9f58")
            axis.set_title(exercise, fontsize=8)
            axis.tick_params(labelsize=7)
        figure.tight_layout()
        exercise_svg = _svg(figure)
        pyplot.close(figure)
    return score_svg, exercise_svg


def _explanation(lab: str, diagnosis: str, lang: str) -> str:
    """The first sentence of the feedback a student with this mistake got, its numbers left as names."""
    import re

    templates = i18n.catalogue().get(f"{lab}.{diagnosis}")
    if not templates:
        return ""
    text = re.sub(r"\{(\w+)\}", r"\1", templates.get(lang) or templates[i18n.DEFAULT_LANG])
    first = text.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= 200 else first[:200].rsplit(" ", 1)[0] + " …"


def build(folder: Path, lang: str = "en") -> str:
    try:
        grades = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{folder / 'grades.json'}: cannot be read ({error})") from None
    lang = i18n.normalise_lang(lang)
    spec = get_lab(grades["lab"])
    t = lambda key, **p: i18n.t(key, lang, **p)  # noqa: E731
    e = html.escape
    rows = [row for row in grades["submissions"] if "raw_score" in row] or [
        {**row, "raw_score": row["score"], "late": False, "forbidden": {}} for row in grades["submissions"]]
    ran = [row for row in rows if row["status"] in RAN]
    scores = [row["score"] for row in ran]
    parts = [f"<h1>{e(t('term.report.title', lab=spec.id))}</h1>",
             "<p>" + e(t("term.report.summary", students=len(rows), graded=len(ran),
                          mean=f"{statistics.fmean(scores):.2f}" if scores else "-",
                          max_score=f"{grades['max_score']:g}",
                          median=f"{statistics.median(scores):g}" if scores else "-")) + "</p>"]

    # hand-ins
    counts = Counter(row["status"] for row in rows)
    counts["late"] = sum(1 for row in rows if row.get("late"))
    counts["unknown_student"] = len(grades.get("unknown_student", []))
    counts["unparsed"] = len(grades.get("unparsed", []))
    parts.append(f"<h2>{e(t('term.report.statuses'))}</h2><table class='counts'><tbody>")
    for status in ("graded", "missing", "late", "invalid", "wrong_lab", "timeout", "error", "unknown_student",
                   "unparsed"):
        parts.append(f"<tr><th>{e(t('term.report.status.' + status))}</th>"
                     f"<td data-status='{status}'>{counts.get(status, 0)}</td></tr>")
    parts.append("</tbody></table>")

    labels = {"score": t("term.report.score_axis"), "count": t("term.report.count_axis")}
    score_svg, exercise_svg = _figures(rows, spec, labels)
    parts += [f"<h2>{e(t('term.report.scores'))}</h2><figure>{score_svg}</figure>",
              f"<h2>{e(t('term.report.per_exercise'))}</h2><figure>{exercise_svg}</figure>"]

    # mistakes
    parts.append(f"<h2>{e(t('term.report.diagnoses'))}</h2>")
    table = []
    for exercise in spec.exercises:
        found = Counter(row["exercises"][exercise.id].get("diagnosis") for row in ran)
        found.pop(None, None)
        sections = getattr(exercise, "sections", {}) or {}
        for diagnosis, count in found.most_common(5):
            table.append((exercise.id, diagnosis, count, count / max(1, len(rows)),
                          _explanation(spec.id, diagnosis, lang), sections.get(diagnosis, exercise.section)))
    if table:
        heads = ("exercise", "mistake", "count", "share", "explanation", "section")
        parts.append("<table class='diagnoses'><thead><tr>" + "".join(
            f"<th>{e(t('term.report.col.' + h))}</th>" for h in heads) + "</tr></thead><tbody>")
        for exercise_id, diagnosis, count, share, explanation, section in table:
            parts.append(f"<tr><td><code>{e(exercise_id)}</code></td><td><code>{e(diagnosis)}</code></td>"
                         f"<td>{count}</td><td>{100 * share:.0f}%</td><td>{e(explanation)}</td>"
                         f"<td>{e(section)}</td></tr>")
        parts.append("</tbody></table>")
    else:
        parts.append(f"<p>{e(t('term.report.no_diagnoses'))}</p>")

    # written answers still to grade
    parts_seen = sorted({part for row in rows for part in (row.get("hand_graded") or {})})
    if parts_seen:
        handed = [row for row in rows if row["status"] != "missing"]
        parts.append(f"<h2>{e(t('term.report.hand_graded'))}</h2><ul class='hand-graded'>" + "".join(
            "<li>" + e(t("term.report.hand_graded_part", part=part,
                         graded=sum(1 for row in handed if row["hand_graded"][part]["graded"]),
                         answers=sum(1 for row in handed if row["hand_graded"][part]["text"]))) + "</li>"
            for part in parts_seen) + "</ul>")

    # languages
    languages = Counter(row.get("lang") or "?" for row in ran)
    parts.append(f"<h2>{e(t('term.report.languages'))}</h2><ul class='languages'>"
                 + "".join(f"<li>{e(code)}: {n}</li>" for code, n in sorted(languages.items())) + "</ul>")

    # review flags
    analysis = load_analysis(folder)
    present = {row["student"] for row in ran}
    groups = similarity.groups({s: (a.get("code") or {}) for s, a in analysis.items() if s in present})
    penalised = grades.get("policy", {}).get("penalise_forbidden")
    flags = []
    for group in groups:
        key = "term.report.identical" if group["kind"] == "identical" else "term.report.near"
        flags.append(f"<li class='group {group['kind']}'>" + e(t(key, students=", ".join(group["students"]),
                                                               exercises=", ".join(group["exercises"]))) + "</li>")
    for row in rows:
        for exercise_id, names in (row.get("forbidden") or {}).items():
            flags.append("<li class='forbidden'>" + e(t("term.report.forbidden", student=row["student"],
                                                        exercise=exercise_id, names=", ".join(names),
                                                        penalised=t("term.report.penalised") if penalised else ""))
                         + "</li>")
    parts.append(f"<h2>{e(t('term.report.flags'))}</h2>")
    if groups:
        parts.append(f"<p><em>{e(t('term.report.groups_hint'))}</em></p>")
    parts.append("<ul class='flags'>" + "".join(flags) + "</ul>" if flags else f"<p>{e(t('term.report.no_flags'))}</p>")

    unmatched = [f"{item['key']} {item['name']}: {item['file']}" for item in grades.get("unknown_student", [])]
    unmatched += grades.get("unparsed", []) + grades.get("refused", [])
    if unmatched:
        parts.append(f"<h2>{e(t('term.report.unmatched'))}</h2><ul class='unmatched'>"
                     + "".join(f"<li>{e(text)}</li>" for text in unmatched) + "</ul>")

    title = t("term.report.title", lab=spec.id)
    return (f'<!DOCTYPE html>\n<html lang="{e(lang)}">\n<head><meta charset="utf-8"><title>{e(title)}</title>\n'
            "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;line-height:1.4;padding:0 1em}"
            "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;"
            "text-align:left;vertical-align:top}figure{margin:0}svg{max-width:100%;height:auto}</style></head>\n"
            "<body>\n" + "\n".join(parts) + "\n</body>\n</html>\n")


def write_report(folder: Path, lang: str = "en") -> Path:
    path = folder / "report.html"
    gradebook.write_atomic(path, build(folder, lang))
    return path
