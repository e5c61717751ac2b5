"""The class report of a generated Canvas term, opened in Chromium: it renders, fetches nothing, and is kept
as a screenshot (artifacts/browser/term_report.png). With the students' feedback pages of the same grading run,
it passes axe-core's WCAG 2.1 A/AA rules (axe_support), in English and in Spanish, and its charts are labelled
images whose numbers are also text."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from corpus import term as T  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Ten students are every variant of the generated term once (a blank, a wrong triangle, the identical pair, a
# missing hand-in ...): all a report shows, for a third of the grading time of thirty.
TERM = T.make_term(10)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("term_report")
    (work / "roster.csv").write_text(TERM.roster_csv())
    T.canvas_zip(TERM, work / "submissions.zip")
    for args in (["grade", T.LAB, work / "submissions.zip", "--out", work / "out", "--roster", work / "roster.csv",
                  "--due", T.DUE, "--late-per-day", "10", "--jobs", "2", "--quiet", "--seed", "5",
                  # feedback pages then link the chapters they name: links in prose, as the book's
                  "--book-url", "https://book.example.edu/causal/"],
                 ["report", work / "out", "--lang", "es"], ["report", work / "out"]):
        result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        if "es" in args:  # the Spanish report, kept beside the English one
            (work / "out" / "report.html").rename(work / "out" / "report.es.html")
    return work / "out" / "report.html"


def test_the_class_report_in_chromium(page, page_log, report, artifacts):
    page.goto(report.as_uri())
    assert page.title() == "Class report: lab01"
    headings = page.locator("h2").all_inner_texts()
    assert headings[:4] == ["Hand-ins", "Score distribution", "Points per exercise",
                            "Most common mistakes, and where to revisit them in class"]
    assert page.locator("figure svg").count() == 2
    box = page.locator("figure svg").first.bounding_box()
    assert box["width"] > 200 and box["height"] > 80  # drawn, not an empty box
    missing = sum(student.variant is None for student in TERM.students)  # as the term was made
    assert missing >= 1 and page.locator("td[data-status='missing']").inner_text() == str(missing)
    assert page.locator("li.group.identical").count() >= 1
    # the students behind a mistake are one click away, by name and id
    row = page.locator("table.diagnoses tr", has_text="wrong_triangle")
    names = row.locator("details li")
    assert not names.first.is_visible()
    row.locator("summary").click()
    assert names.first.is_visible() and "(s1" in names.first.inner_text()
    assert page.locator("main h1").count() == 1 and page.locator("th[scope]").count() > 0
    assert [url for url in page_log.requests if not url.startswith("file://")] == []
    assert page_log.errors == []
    page.screenshot(path=str(artifacts / "term_report.png"), full_page=True)
    assert (artifacts / "term_report.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def report_es(report) -> Path:
    return report.parent / "report.es.html"


def test_axe_finds_no_violation_on_the_report_and_feedback_pages(browser, report, report_es, artifacts):
    from axe_support import audit_pages, axe_problem, totals_table

    problem = axe_problem()
    if problem:
        pytest.fail(problem)  # a broken set-up, not a reason to skip (axe_support)
    feedback = sorted((report.parent / "feedback").glob("*.html"))
    assert len(feedback) >= 5 and any("book-ref" in page.read_text(encoding="utf-8") for page in feedback)
    pages = [(path.relative_to(report.parent).as_posix(), path.as_uri()) for path in [report, report_es, *feedback]]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        audits = audit_pages(context, pages)
    finally:
        context.close()
    (artifacts / "axe_report.md").write_text(totals_table(audits) + "\n", encoding="utf-8")
    problems = [line for audit in audits for line in audit.lines()]
    assert problems == [], "\n".join(problems)


# Every <svg> of the page: its role, its accessible name (aria-labelledby's texts, else aria-label, else its
# own <title>) and whether a table of its numbers sits in its figure.
SVG_FACTS = """() => [...document.querySelectorAll('svg')].map(svg => {
  const byId = (svg.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean)
    .map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
  const title = svg.querySelector(':scope > title');
  const figure = svg.closest('figure');
  return {role: svg.getAttribute('role'), name: byId || svg.getAttribute('aria-label') || (title ? title.textContent : ''),
          title: title ? title.textContent : '', table: figure ? figure.querySelectorAll('table td').length : 0};
})"""


def unlabelled_svgs(page) -> list[str]:
    return [f"svg {index}: {facts}" for index, facts in enumerate(page.evaluate(SVG_FACTS))
            if facts["role"] != "img" or len(facts["name"].strip()) < 20 or not facts["title"].strip()
            or facts["table"] == 0]


def test_the_report_charts_are_labelled_images_with_their_numbers_as_text(page, report, report_es):
    import json

    from autograder import i18n
    from autograder.labs import get_lab

    grades = json.loads((report.parent / "grades.json").read_text(encoding="utf-8"))
    graded = [row for row in grades["submissions"] if row["status"] in ("graded", "timeout", "error")]
    for path, lang in ((report, "en"), (report_es, "es")):
        page.goto(path.as_uri())
        assert page.locator("svg").count() == 2
        assert unlabelled_svgs(page) == []
        captions = page.locator("figure figcaption").all_inner_texts()
        assert captions[0] == i18n.t("term.report.scores_caption", lang, graded=len(graded),
                                     max_score=f"{grades['max_score']:g}")
        # per exercise and points, the number of hand-ins as the grading recorded them, as text in the table
        rows = page.locator("#chart-exercises-data tbody tr").evaluate_all(
            "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))")
        shown = {(exercise, float(points)): int(count) for exercise, points, count in rows}
        for exercise in get_lab(grades["lab"]).exercises:
            for points in {row["exercises"][exercise.id]["points"] for row in graded}:
                expected = sum(row["exercises"][exercise.id]["points"] == points for row in graded)
                assert shown[(exercise.id, float(points))] == expected, (exercise.id, points)
        scores = page.locator("#chart-scores-data tbody td:nth-child(2)").evaluate_all(
            "tds => tds.map(td => td.textContent)")  # in a closed <details>: no innerText
        assert sum(map(int, scores)) == len(graded)
    # the check can fail: a chart stripped of its role and label, and one without a table of its numbers
    page.evaluate("""() => { const svg = document.querySelector('svg'); svg.removeAttribute('role');
                             svg.removeAttribute('aria-labelledby');
                             document.querySelector('#chart-exercises-data').remove(); }""")
    assert len(unlabelled_svgs(page)) == 2
