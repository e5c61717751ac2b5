"""The class report's content, on a gradebook written by hand (no grading): every diagnosis listed and
explained, the students behind each by name, id and section, similarity groups ranked by suspicion with names
and scores, one labelled mean, where lateness came from."""
import html
import json
import re
from pathlib import Path

import pytest

from autograder import i18n
from autograder.labs import LAB_IDS, get_lab
from autograder.term import report

SPEC = get_lab("lab02")
FULL = {e.id: float(e.points) for e in SPEC.exercises}
# (student, name, section, causal_attention diagnosis, perturbation_test diagnosis, late)
CLASS = [
    ("s01", "Ana Ruiz", "A", "mask_after_softmax", None, False),
    ("s02", "Ben Ode", "B", "mask_after_softmax", "missed_positions", True),
    ("s03", "Cai Lin", "A", "mask_after_softmax", None, False),
    ("s04", "Dee Fox", "B", "forgot_scale", None, False),
    ("s05", "Eve Sol", "A", "forgot_scale", "missed_positions", False),
    ("s06", "Fay Kim", "A", "wrong_triangle", None, False),
    ("s07", "Gus Roy", "B", "wrong_triangle", None, False),
    ("s08", "Hal Ito", "A", "diagonal_masked", None, False),
    ("s09", "Ivy Poe", "B", "wrong_axis", None, False),
    ("s10", "Jon Lee", "A", "no_mask", None, False),
    ("s11", "Kim Yu", "B", "future_weight", None, False),
    ("s12", "Lu Wen", "A", None, None, False),
    ("s13", "Mo Diaz", "B", None, None, False),
    ("s14", "Ned Cho", "A", None, None, False),
    ("s15", "Oli Ng", "B", None, None, False),
]
SCORES = {}


def exercise_rows(causal, perturbation):
    rows = {}
    for exercise in SPEC.exercises:
        diagnosis = {"causal_attention": causal, "perturbation_test": perturbation}.get(exercise.id)
        points = 0.0 if diagnosis else FULL[exercise.id]
        rows[exercise.id] = {"points": points, "max_points": FULL[exercise.id], "diagnosis": diagnosis,
                             "status": "failed" if diagnosis else "passed", "feedback": ""}
    return rows


def make_rows():
    rows = []
    for student, name, section, causal, perturbation, late in CLASS:
        exercises = exercise_rows(causal, perturbation)
        raw = sum(item["points"] for item in exercises.values())
        score = round(raw * 0.9, 4) if late else raw
        SCORES[student] = score
        rows.append({"student": student, "name": name, "section": section, "status": "graded", "score": score,
                     "raw_score": raw, "max_score": SPEC.max_score, "late": late, "late_days": None,
                     "penalty": raw - score, "lang": "en", "exercises": exercises, "forbidden": {},
                     "hand_graded": {}, "notes": [], "superseded": [], "file": "", "lms_id": "",
                     "time_source": "canvas_flag", "time_unknown": False})
    rows.append({"student": "s16", "name": "Pat Kay", "section": "B", "status": "missing", "score": 0.0,
                 "raw_score": 0.0, "max_score": SPEC.max_score, "late": False, "late_days": None, "penalty": 0.0,
                 "lang": "en", "exercises": exercise_rows(None, None), "forbidden": {}, "hand_graded": {},
                 "notes": [], "superseded": [], "file": "", "lms_id": "", "time_source": "", "time_unknown": False})
    return rows


SHARED_WRONG = ("def causal_attention(Q, K, V):\n    s = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])\n"
                "    w = torch.softmax(s, dim=-1) * torch.tril(torch.ones(s.shape[-1], s.shape[-1]))\n"
                "    return w @ V, w\n")
COMMON_RIGHT = ("def causal_attention(Q, K, V):\n    s = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])\n"
                "    s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float('-inf'))\n"
                "    w = torch.softmax(s, dim=-1)\n    return w @ V, w\n")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("report")
    book = {"lab": "lab02", "max_score": SPEC.max_score, "roster": True, "lateness_source": "canvas_flag",
            "policy": {"penalise_forbidden": False}, "submissions": make_rows(), "unknown_student": [],
            "unparsed": [], "refused": []}
    (folder / "grades.json").write_text(json.dumps(book))
    # the graded code the term kept: s01 and s03 share a wrong answer; four share the common right one
    codes = {"s01": SHARED_WRONG, "s03": SHARED_WRONG.replace("s ", "s ")}
    codes.update({s: COMMON_RIGHT for s in ("s12", "s13", "s14", "s15")})
    state = folder / ".autograder" / "term"
    state.mkdir(parents=True)
    (state / "students.json").write_text(json.dumps({s: {"code": {"causal_attention": c}} for s, c in codes.items()}))
    return report.build(folder, "en")


def table_rows(page: str, css: str) -> list[str]:
    table = page.split(f"<table class='{css}'>", 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S)


def test_every_diagnosis_is_listed_with_its_count_and_students(page):
    rows = table_rows(page, "diagnoses")
    found = {re.findall(r"<code>(.*?)</code>", r)[1]: r for r in rows}
    # written from CLASS by hand: 7 causal_attention mistakes (no silent top 5) and one perturbation_test one
    assert sorted(found) == sorted(["mask_after_softmax", "forgot_scale", "wrong_triangle", "diagonal_masked",
                                    "wrong_axis", "no_mask", "future_weight", "missed_positions"])
    assert "<td>3</td>" in found["mask_after_softmax"] and "<td>2</td>" in found["missed_positions"]
    who = found["mask_after_softmax"]
    assert "<details><summary>names (3)</summary>" in who
    assert all(name in who for name in ("Ana Ruiz (s01)", "Ben Ode (s02)", "Cai Lin (s03)"))
    assert "<p>A (2)</p>" in who and "<p>B (1)</p>" in who  # by section
    assert "Dee Fox" not in who


def test_every_listed_mistake_is_explained(page):
    rows = {re.findall(r"<code>(.*?)</code>", r)[1]: r for r in table_rows(page, "diagnoses")}
    # the three the instructor found empty, and the one whose message needs a case's numbers
    assert "after the softmax" in rows["mask_after_softmax"]
    assert "1/√d_k" in rows["forgot_scale"]
    assert "wrong triangle" in rows["wrong_triangle"]
    assert "above the diagonal" in rows["future_weight"] and "weights[i" not in rows["future_weight"]
    assert not any("{" in row or "…" in row for row in rows.values())  # no placeholder, named or blanked


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_every_diagnosis_of_every_lab_has_an_explanation(lang):
    for lab in LAB_IDS:
        for exercise in get_lab(lab).exercises:
            for diagnosis in (*exercise.diagnosis_names(), "wrong_values", "wrong_shape"):
                template = report.explanation_template(lab, diagnosis, lang)
                assert template and "{" not in template.split(". ")[0], (lab, diagnosis, lang, template)


def test_sections_statuses_and_the_one_mean(page):
    sections = {re.search(r"<th scope='row'>(.*?)</th>", r).group(1): re.findall(r"<td>(.*?)</td>", r)
                for r in table_rows(page, "sections")}
    assert sections["A"][:4] == ["8", "8", "0", "0"] and sections["B"][:4] == ["8", "7", "1", "1"]
    graded = [SCORES[s] for s, *_ in CLASS]
    mean = f"{sum(graded) / len(graded):.2f}"
    assert page.count("Mean score") == 1 and page.lower().count(" mean ") == 0  # one mean, and no other
    assert f"Mean score after late penalties and overrides, over the 15 graded hand-ins: {mean} of" in page
    missing = page.split("data-status='missing'>1</td>", 1)[1].split("</tr>", 1)[0]
    assert "Pat Kay (s16)" in missing
    assert html.unescape(page).count("Canvas's download only flags late hand-ins") == 1


def test_similarity_groups_are_ranked_shared_wrong_code_first(page):
    groups = re.findall(r"<li class='(group [^']*)'>(.*?)</ul></li>", page.split("<ol class='groups'>", 1)[1], re.S)
    assert [kind for kind, _ in groups] == ["group identical wrong", "group identical"]
    first, second = groups[0][1], groups[1][1]
    assert "Ana Ruiz (s01): causal_attention 0/4 (mask_after_softmax)" in first and "Cai Lin (s03)" in first
    assert "similarity 100%" in first and "look at this group first" in first
    assert all(f"({s})" in second for s in ("s12", "s13", "s14", "s15"))


def test_self_contained(page):
    assert "<script" not in page and "<link" not in page
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg",
                                                               "http://www.w3.org/1999/xlink"}


def test_a_report_without_sections_or_groups(tmp_path):
    rows = [{**row, "section": ""} for row in make_rows()]
    (tmp_path / "grades.json").write_text(json.dumps({"lab": "lab02", "max_score": SPEC.max_score,
                                                      "submissions": rows}))
    page = report.build(tmp_path, "de")
    assert "<table class='sections'>" not in page and "<ol class='groups'>" not in page
    assert '<html lang="de">' in page and "Mittlere Punktzahl" in page
    assert Path  # noqa: B018
