"""DIR/report.html: what the class as a whole got right and wrong, for the next lecture.

Self-contained: the figures are inline SVG from matplotlib (no date in their
metadata, fixed ids: the same gradebook gives the same bytes), no script, no
external URL.
"""
from __future__ import annotations

import html
import io
import json
import re
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
    "term.report.status.unknown_student", "term.report.status.unparsed", "term.report.col.who",
    "term.report.col.section_name", "term.report.col.students", "term.report.col.graded", "term.report.col.missing",
    "term.report.col.late", "term.report.col.mean",
    # lateness_source codes (grades.json), said once at the top
    "term.report.lateness.canvas_flag", "term.report.lateness.moodle_worksheet",
    "term.report.lateness.nbgrader_timestamp", "term.report.lateness.none",
)
# What a diagnosis means where the students' message needs their own case's numbers ('term.report.why.' + name).
i18n.N_(
    "term.report.why.wrong_values", "term.report.why.wrong_shape", "term.report.why.padding_shape",
    "term.report.why.window_too_wide", "term.report.why.window_too_narrow", "term.report.why.rows_not_normalised",
    "term.report.why.future_weight", "term.report.why.layers_missing", "term.report.why.crashes",
    "term.report.why.wrong_cache", "term.report.why.batch_shape", "term.report.why.sinks_double_counted",
    "term.report.why.sinks_missing", "term.report.why.only_next_token",
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


def _figures(rows: list[dict], spec, labels: dict) -> tuple[str, str, list, list]:
    """The two charts as SVG, and the numbers they draw: [(low, high, hand-ins)] per bar of the score
    histogram, [(exercise, points, hand-ins)] per bar of the per-exercise charts."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    with matplotlib.rc_context({"svg.hashsalt": "labbook-report", "svg.fonttype": "path", "font.size": 9}):
        scores = [row["score"] for row in rows if row["status"] in RAN]
        figure, axis = pyplot.subplots(figsize=(6, 2.6))
        top = max(1.0, float(rows[0]["max_score"]) if rows else 1.0)
        counts, edges, _ = axis.hist(scores, bins=min(20, max(1, int(top) + 1)), range=(0, top), color="#3b6ea5",
                                     edgecolor="white")
        score_bars = [(float(low), float(high), int(count)) for low, high, count in zip(edges, edges[1:], counts)]
        axis.set_xlabel(labels["score"])
        axis.set_ylabel(labels["count"])
        score_svg = _svg(figure)
        pyplot.close(figure)

        exercise_bars = []
        exercises = [e.id for e in spec.exercises]
        figure, axes = pyplot.subplots(1, len(exercises), figsize=(1.7 * len(exercises), 2.2), squeeze=False)
        for axis, exercise in zip(axes[0], exercises):
            points = [row["exercises"][exercise]["points"] for row in rows if row["status"] in RAN]
            maximum = float(spec.exercise(exercise).points)
            values = Counter(points)
            keys = sorted(set(values) | {0.0, maximum})
            axis.bar([f"{k:g}" for k in keys], [values.get(k, 0) for k in keys], color="#6a9f58")
            exercise_bars += [(exercise, float(k), int(values.get(k, 0))) for k in keys]
            axis.set_title(exercise, fontsize=8)
            axis.tick_params(labelsize=7)
        figure.tight_layout()
        exercise_svg = _svg(figure)
        pyplot.close(figure)
    return score_svg, exercise_svg, score_bars, exercise_bars


def _labelled(svg: str, chart_id: str, title: str) -> str:
    """The chart as an image with a name (WCAG 1.1.1): role="img", its <title>, and aria-labelledby the
    figure's caption, which says what it shows in the report's language."""
    opening = svg.index(">", svg.index("<svg")) + 1
    head = svg[:opening - 1].rstrip("/")
    return (f'{head} role="img" aria-labelledby="{chart_id}-caption">'
            f'<title>{html.escape(title)}</title>' + svg[opening:])


def _chart(svg: str, chart_id: str, title: str, caption: str, summary: str, heads: list[str],
           rows: list[list[str]]) -> str:
    """A chart in a <figure>: the SVG labelled by the caption, and the numbers it draws as a table."""
    e = html.escape
    table = (f"<table class='chart-data' id='{chart_id}-data'><thead><tr>"
             + "".join(f"<th scope='col'>{e(head)}</th>" for head in heads) + "</tr></thead><tbody>"
             + "".join("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
             + "</tbody></table>")
    return (f"<figure id='{chart_id}'>{_labelled(svg, chart_id, title)}"
            f"<figcaption id='{chart_id}-caption'>{e(caption)}</figcaption>"
            f"<details><summary>{e(summary)}</summary>{table}</details></figure>")


def explanation_template(lab: str, diagnosis: str, lang: str) -> str:
    """What a diagnosis means: the report's own text where the students' message needs numbers of their
    case (`term.report.why.*`), else the message the students got (`<lab>.<name>`, else `diagnosis.<name>`,
    as Exercise.diagnosed looks it up); "" when there is none."""
    catalogue = i18n.catalogue()
    for key in (f"term.report.why.{lab}.{diagnosis}", f"term.report.why.{diagnosis}", f"{lab}.{diagnosis}",
                f"diagnosis.{diagnosis}"):
        templates = catalogue.get(key)
        if templates:
            return templates.get(lang) or templates[i18n.DEFAULT_LANG]
    return ""


def _explanation(lab: str, diagnosis: str, lang: str) -> str:
    """The explanation's first sentence; a placeholder left in a message (a diagnosis added without a report
    text) reads as "…", never as its name."""
    text = re.sub(r"\{\w+(?:![rsa])?(?::[^}]*)?\}", "…", explanation_template(lab, diagnosis, lang))
    first = text.split(". ", 1)[0].rstrip(".")
    first = first[:1].upper() + first[1:]
    return first if len(first) <= 220 else first[:220].rsplit(" ", 1)[0] + " …"


def _who(row: dict) -> str:
    """A student as the instructor knows them: name and id."""
    name = row.get("name") or row.get("lms_display_name") or ""
    return f"{name} ({row['student']})" if name and name != row["student"] else row["student"]


def _people(rows: list[dict], summary: str, e) -> str:
    """A collapsible list of students, grouped by section when the roster has sections."""
    sections = sorted({row.get("section") or "" for row in rows})
    ordered = sorted(rows, key=lambda row: (row.get("section") or "", _who(row).lower()))
    if sections == [""]:
        body = "<ul>" + "".join(f"<li>{e(_who(row))}</li>" for row in ordered) + "</ul>"
    else:
        body = "".join(
            f"<p>{e(section or '-')} ({sum(1 for r in ordered if (r.get('section') or '') == section)})</p><ul>"
            + "".join(f"<li>{e(_who(row))}</li>" for row in ordered if (row.get("section") or "") == section)
            + "</ul>" for section in sections)
    return f"<details><summary>{e(summary)}</summary>{body}</details>"


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.2f}" if values else "-"


def build(folder: Path, lang: str = "en") -> str:
    try:
        grades = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{folder / 'grades.json'}: cannot be read ({error})") from None
    lang = i18n.normalise_lang(lang)
    spec = get_lab(grades["lab"])
    t = lambda key, **p: i18n.t(key, lang, **p)  # noqa: E731
    e = html.escape
    term = any("raw_score" in row for row in grades["submissions"])
    rows = [row for row in grades["submissions"] if "raw_score" in row] or [
        {**row, "raw_score": row["score"], "late": False, "forbidden": {}} for row in grades["submissions"]]
    ran = [row for row in rows if row["status"] in RAN]
    scores = [row["score"] for row in ran]
    by_student = {row["student"]: row for row in rows}
    names = lambda count: t("term.report.names", count=count)  # noqa: E731
    parts = [f"<h1>{e(t('term.report.title', lab=spec.id))}</h1>",
             "<p>" + e(t("term.report.summary", students=len(rows), graded=len(ran))) + "</p>",
             # one mean, saying what it is: the final scores (after lateness and overrides) of the graded hand-ins
             "<p class='mean'>" + e(t("term.report.mean_final" if term else "term.report.mean_raw",
                                      graded=len(ran), mean=_mean(scores), max_score=f"{grades['max_score']:g}",
                                      median=f"{statistics.median(scores):g}" if scores else "-")) + "</p>"]
    source = grades.get("lateness_source")
    if isinstance(source, str) and source:
        key = f"term.report.lateness.{source}"
        text = t(key) if i18n.has(key) else t("term.report.lateness_other", source=source)
        parts.append(f"<p class='lateness'>{e(text)}</p>")

    # hand-ins, with who
    counts = Counter(row["status"] for row in rows)
    late = [row for row in rows if row.get("late")]
    counts["late"] = len(late)
    counts["unknown_student"] = len(grades.get("unknown_student", []))
    counts["unparsed"] = len(grades.get("unparsed", []))
    parts.append(f"<h2>{e(t('term.report.statuses'))}</h2><table class='counts'><tbody>")
    for status in ("graded", "missing", "late", "invalid", "wrong_lab", "timeout", "error", "unknown_student",
                   "unparsed"):
        who = late if status == "late" else [row for row in rows if row["status"] == status]
        listed = _people(who, names(len(who)), e) if who and status != "graded" else ""
        parts.append(f"<tr><th scope='row'>{e(t('term.report.status.' + status))}</th>"
                     f"<td data-status='{status}'>{counts.get(status, 0)}</td><td>{listed}</td></tr>")
    parts.append("</tbody></table>")

    # per section
    sections = sorted({row.get("section") or "" for row in rows} - {""})
    if sections:
        heads = ("section_name", "students", "graded", "missing", "late", "mean")
        parts.append(f"<h2>{e(t('term.report.sections'))}</h2><table class='sections'><thead><tr>"
                     + "".join(f"<th scope='col'>{e(t('term.report.col.' + h))}</th>" for h in heads)
                     + "</tr></thead><tbody>")
        for section in sections:
            members = [row for row in rows if row.get("section") == section]
            graded = [row["score"] for row in members if row["status"] in RAN]
            parts.append(f"<tr><th scope='row'>{e(section)}</th><td>{len(members)}</td><td>{len(graded)}</td>"
                         f"<td>{sum(1 for row in members if row['status'] == 'missing')}</td>"
                         f"<td>{sum(1 for row in members if row.get('late'))}</td><td>{_mean(graded)}</td></tr>")
        parts.append("</tbody></table>")

    labels = {"score": t("term.report.score_axis"), "count": t("term.report.count_axis")}
    score_svg, exercise_svg, score_bars, exercise_bars = _figures(rows, spec, labels)
    max_score = f"{grades['max_score']:g}"
    parts += [f"<h2>{e(t('term.report.scores'))}</h2>" + _chart(
                  score_svg, "chart-scores", t("term.report.scores"),
                  t("term.report.scores_caption", graded=len(ran), max_score=max_score),
                  t("term.report.chart_data"), [t("term.report.col.score_range"), t("term.report.col.count")],
                  [[f"{low:.3g}–{high:.3g}", str(count)] for low, high, count in score_bars]),
              f"<h2>{e(t('term.report.per_exercise'))}</h2>" + _chart(
                  exercise_svg, "chart-exercises", t("term.report.per_exercise"),
                  t("term.report.exercises_caption", graded=len(ran)), t("term.report.chart_data"),
                  [t("term.report.col.exercise"), t("term.report.col.points"), t("term.report.col.count")],
                  [[exercise, f"{points:g}", str(count)] for exercise, points, count in exercise_bars])]

    # every diagnosis, with its students: what to reteach, and to whom
    parts.append(f"<h2>{e(t('term.report.diagnoses'))}</h2>")
    table = []
    for exercise in spec.exercises:
        found: dict[str, list[dict]] = {}
        for row in ran:
            diagnosis = row["exercises"][exercise.id].get("diagnosis")
            if diagnosis:
                found.setdefault(diagnosis, []).append(row)
        sections_of = getattr(exercise, "sections", {}) or {}
        for diagnosis, who in sorted(found.items(), key=lambda item: (-len(item[1]), item[0])):
            table.append((exercise.id, diagnosis, who, _explanation(spec.id, diagnosis, lang),
                          sections_of.get(diagnosis, exercise.section)))
    if table:
        heads = ("exercise", "mistake", "count", "share", "who", "explanation", "section")
        parts.append("<table class='diagnoses'><thead><tr>" + "".join(
            f"<th scope='col'>{e(t('term.report.col.' + h))}</th>" for h in heads) + "</tr></thead><tbody>")
        for exercise_id, diagnosis, who, explanation, section in table:
            parts.append(f"<tr><td><code>{e(exercise_id)}</code></td><td><code>{e(diagnosis)}</code></td>"
                         f"<td>{len(who)}</td><td>{100 * len(who) / max(1, len(rows)):.0f}%</td>"
                         f"<td>{_people(who, names(len(who)), e)}</td><td>{e(explanation)}</td>"
                         f"<td>{e(section)}</td></tr>")
        parts.append("</tbody></table>")
    else:
        parts.append(f"<p>{e(t('term.report.no_diagnoses'))}</p>")
    unanswered = [(exercise.id, [row for row in ran if row["exercises"][exercise.id].get("status") == "not_answered"])
                  for exercise in spec.exercises]
    unanswered = [(exercise_id, who) for exercise_id, who in unanswered if who]
    if unanswered:
        parts.append(f"<h3>{e(t('term.report.not_attempted'))}</h3><ul class='not-attempted'>" + "".join(
            f"<li><code>{e(exercise_id)}</code>: {_people(who, names(len(who)), e)}</li>"
            for exercise_id, who in unanswered) + "</ul>")

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

    # review flags: the groups most worth a look first
    analysis = load_analysis(folder)
    present = {row["student"] for row in ran}
    groups = rank_groups(similarity.groups({s: (a.get("code") or {}) for s, a in analysis.items() if s in present}),
                         by_student)
    penalised = grades.get("policy", {}).get("penalise_forbidden")
    parts.append(f"<h2>{e(t('term.report.flags'))}</h2>")
    if groups:
        parts.append(f"<p><em>{e(t('term.report.groups_hint'))}</em></p><ol class='groups'>")
        for group in groups:
            parts.append(_group_item(group, by_student, t, e))
        parts.append("</ol>")
    forbidden = []
    for row in rows:
        for exercise_id, used in (row.get("forbidden") or {}).items():
            key = "term.report.forbidden_penalised" if penalised else "term.report.forbidden"  # one sentence each
            forbidden.append("<li class='forbidden'>" + e(t(key, student=_who(row), exercise=exercise_id,
                                                            names=", ".join(used))) + "</li>")
    if forbidden:
        parts.append("<ul class='flags'>" + "".join(forbidden) + "</ul>")
    if not groups and not forbidden:
        parts.append(f"<p>{e(t('term.report.no_flags'))}</p>")

    unmatched = [f"{item['key']} {item['name']}: {item['file']}" for item in grades.get("unknown_student", [])]
    unmatched += grades.get("unparsed", []) + grades.get("refused", [])
    if unmatched:
        parts.append(f"<h2>{e(t('term.report.unmatched'))}</h2><ul class='unmatched'>"
                     + "".join(f"<li>{e(text)}</li>" for text in unmatched) + "</ul>")

    title = t("term.report.title", lab=spec.id)
    return (f'<!DOCTYPE html>\n<html lang="{e(lang)}">\n<head><meta charset="utf-8"><title>{e(title)}</title>\n'
            "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;line-height:1.4;padding:0 1em}"
            "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;"
            "text-align:left;vertical-align:top}figure{margin:0}svg{max-width:100%;height:auto}"
            "details ul{margin:.25em 0;padding-left:1.2em}details p{margin:.25em 0}"
            "ol.groups li{margin-bottom:.5em}</style></head>\n"
            "<body>\n<main>\n" + "\n".join(parts) + "\n</main>\n</body>\n</html>\n")


def rank_groups(groups: list[dict], by_student: dict[str, dict]) -> list[dict]:
    """Groups most worth a look first: shared code that loses points (a shared wrong answer is rarely a
    coincidence, while short correct answers converge), then identical before near-identical, small before
    large, the closest first."""
    ranked = []
    for group in groups:
        lost = any(by_student[s]["exercises"][x]["points"] < by_student[s]["exercises"][x]["max_points"]
                   for s in group["students"] if s in by_student for x in group["exercises"]
                   if x in by_student[s]["exercises"])
        ranked.append({**group, "wrong": lost})
    return sorted(ranked, key=lambda g: (not g["wrong"], g["kind"] != "identical", len(g["students"]),
                                         -g.get("similarity", 1.0), g["students"]))


def _group_item(group: dict, by_student: dict[str, dict], t, e) -> str:
    exercises = ", ".join(group["exercises"])
    similarity_text = f"{100 * group.get('similarity', 1.0):.0f}%"
    key = "term.report.group_identical" if group["kind"] == "identical" else "term.report.group_near"
    head = t(key, exercises=exercises, similarity=similarity_text)
    verdict = t("term.report.group_wrong" if group["wrong"] else "term.report.group_right")
    members = []
    for student in group["students"]:
        row = by_student.get(student)
        if row is None:
            continue
        points = ", ".join(
            f"{x} {row['exercises'][x]['points']:g}/{row['exercises'][x]['max_points']:g}"
            + (f" ({row['exercises'][x]['diagnosis']})" if row["exercises"][x].get("diagnosis") else "")
            for x in group["exercises"] if x in row["exercises"])
        members.append(f"<li>{e(_who(row))}: {e(points)}; {e(t('term.report.group_score'))} "
                       f"{row['score']:g}/{row['max_score']:g}</li>")
    kind = f"group {group['kind']}" + (" wrong" if group["wrong"] else "")
    return (f"<li class='{kind}'><strong>{e(head)}</strong> {e(verdict)}"
            f"<ul>{''.join(members)}</ul></li>")


def write_report(folder: Path, lang: str = "en") -> Path:
    path = folder / "report.html"
    gradebook.write_atomic(path, build(folder, lang))
    return path
