"""The class report of a generated Canvas term, opened in Chromium: it renders, fetches nothing, and is kept
as a screenshot (artifacts/browser/term_report.png)."""
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
                  "--due", T.DUE, "--late-per-day", "10", "--jobs", "2", "--quiet", "--seed", "5"],
                 ["report", work / "out"]):
        result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
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
