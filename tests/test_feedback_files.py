"""Feedback files and the gradebook's CSV against hostile names (issue 21): a student's feedback file is named
from their own id alone, never taken by a look-alike classmate; raw HTML from an id or a file name never becomes
a tag in any Markdown viewer; escape characters never reach grades.csv. No grading: records are written the
way the engine writes an unreadable hand-in's."""
import csv
import html.parser
import io
import itertools
import json
from pathlib import Path

import mistune
import pytest
from markdown_it import MarkdownIt

from autograder import i18n
from autograder.grader import gradebook
from autograder.grader.submissions import Submission
from autograder.labs import get_lab

SPEC = get_lab("lab00")
# differ from "alice" by a leading space, by case, by a Cyrillic а (U+0430), by a trailing dot
LOOKALIKES = ["alice", " alice", "Alice", "ALICE", "\u0430lice", "alice.", "bob", "Bob"]


def write(folder, students):
    records = [gradebook.invalid_record(SPEC, Submission(s, folder / "x.ipynb", invalid="empty"), f"k{i}", "--seed")
               for i, s in enumerate(students)]
    gradebook.prepare(folder)
    book = gradebook.write_gradebook(folder, SPEC, records, None, {})
    return {entry["student"]: entry["feedback_file"] for entry in book["submissions"]}


def test_each_student_keeps_their_own_feedback_file_whatever_the_classmates(tmp_path):
    alone = {s: write(tmp_path / f"alone{i}", [s])[s] for i, s in enumerate(LOOKALIKES)}
    names = list(alone.values())
    assert len(set(names)) == len(names)  # injective
    assert len({name.lower() for name in names}) == len(names)  # on a case-insensitive disk too
    assert alone["alice"] == "alice" and alone["bob"] == "bob"  # a plain id is its own, readable name
    for index, order in enumerate([LOOKALIKES, LOOKALIKES[::-1], LOOKALIKES[3:] + LOOKALIKES[:3]]):
        folder = tmp_path / f"class{index}"
        assert write(folder, order) == alone  # the same name whoever else is in the class, in any order
        for student, name in alone.items():
            # each file is that student's: the title names them, and grades.json records the name
            text = (folder / "feedback" / f"{name}.md").read_text()
            assert gradebook.md_text(student, line_start=False) in text.splitlines()[0]
        book = json.loads((folder / "grades.json").read_text())
        assert {e["student"]: e["feedback_file"] for e in book["submissions"]} == alone
    for pair in itertools.combinations(LOOKALIKES, 2):  # classmates added or removed change nothing
        assert write(tmp_path / "pair", list(pair)) == {s: alone[s] for s in pair}


def test_feedback_names_are_safe_file_names():
    for student in ("../../etc/passwd", "con", "NUL.txt", "-rf", ".hidden", "a/b\\c", "x" * 5000, "", "\x1b[2J"):
        name = gradebook.feedback_name(student)
        assert name and "/" not in name and "\\" not in name and not name.startswith((".", "-"))
        assert len(name) <= 64 and name.split(".")[0].lower() not in ("con", "nul")


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)


def rendered_tags(markdown: str) -> set[str]:
    tags = set()
    for render in (MarkdownIt("commonmark").enable("table").render, mistune.html):
        parser = Tags()
        parser.feed(render(markdown))
        tags |= parser.tags
    return tags


HOSTILE = ['<img src=x onerror=alert(1)>', '<img src=x onerror=alert(1)\\>', '\\<script>alert(1)</script>',
           '<a href="javascript:alert(1)">x</a>', '<!-- hidden -->', '<https://evil.example>', '&lt;b&gt;',
           'a<b>c</b>', '[x](javascript:alert(1))', '![x](https://evil.example/p.png)']


@pytest.mark.parametrize("text", HOSTILE)
def test_no_markdown_viewer_renders_a_tag_from_student_text(text):
    escaped = gradebook.md_text(text)
    assert "<" not in escaped and ">" not in escaped  # an entity is literal in every Markdown flavour
    assert rendered_tags(escaped) <= {"p"}
    # and inside the feedback table, as the exercise column and the title show it
    assert rendered_tags(f"| a | b |\n| --- | --- |\n| {escaped} | x |") <= {"table", "thead", "tbody", "tr", "th",
                                                                            "td"}


def test_a_hostile_id_stays_text_in_the_feedback_file(tmp_path):
    student = '<img src=x onerror=alert(1)\\>'
    name = write(tmp_path, [student])[student]
    markdown = (tmp_path / "feedback" / f"{name}.md").read_text()
    assert "img" not in rendered_tags(markdown) and "script" not in rendered_tags(markdown)
    assert "<img" not in (tmp_path / "feedback" / f"{name}.html").read_text()


def test_escape_characters_never_reach_grades_csv(tmp_path):
    students = ["evil\x1b[31mred", "bell\x07", "rtl\u202eexe.ipynb", "=1+2", "ok"]
    write(tmp_path, students)
    data = (tmp_path / "grades.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")  # Excel reads UTF-8 only with the byte order mark
    text = data.decode("utf-8-sig")
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    cells = [row[0] for row in csv.reader(io.StringIO(text))][1:]
    assert "'=1+2" in cells and "ok" in cells and len(cells) == len(students)


# ---------------------------------------------------------------- wording of a returned file (problem 12)
def test_a_wrong_lab_hand_in_says_why_once(tmp_path):
    submission = Submission("ana", tmp_path / "x.ipynb", lab="lab01", lab_name="masks")
    record = gradebook.wrong_lab_record(SPEC, submission, "k", "--seed")
    entry = gradebook.submission_entry(record, None)
    markdown, page = gradebook.feedback_documents(SPEC, record, entry, "en")
    assert markdown.count("This notebook is lab01") == 1 and page.count("This notebook is lab01") == 1
    assert markdown.count("Not run: see the note at the top.") == len(SPEC.exercises)


def test_an_unanswered_exercise_is_not_told_to_run_a_cell(tmp_path):
    record = gradebook.invalid_record(SPEC, Submission("ana", tmp_path / "x.ipynb", invalid="empty"), "k", "-")
    record.update(status="graded", reason=None, reason_code=None, hidden_cases=3)
    first = SPEC.exercises[0].id
    record["exercises"][first].update(status="not_answered", feedback={  # check's words, as the record keeps them
        lang: i18n.t("common.not_answered", lang, name=first) for lang in i18n.LANGS})
    assert "run that cell" in record["exercises"][first]["feedback"]["en"]
    entry = gradebook.submission_entry(record, "es")
    assert "run that cell" not in entry["exercises"][first]["feedback"]
    assert entry["exercises"][first]["feedback"].startswith(f"{first}: sin responder")
    markdown, page = gradebook.feedback_documents(SPEC, record, entry, "en")
    # the footer's `check` is code in the HTML, never literal backticks
    assert "<code>check</code>" in page and "`" not in page


def test_a_missing_student_and_an_excused_lateness_are_explained():
    from autograder.term import book, lateness
    from autograder.term.overrides import Override

    override = Override("bob", "late_days", 0.0, "doctor's note", 2)
    ctx = book.Context(SPEC, lateness.Policy(None, 10.0, 100.0), {("bob", "late_days"): override})
    missing = book.build(ctx, book.Person("ann"), None, {})
    assert all(item["feedback"] == "Not run: see the note at the top." for item in missing.row["exercises"].values())
    record = gradebook.invalid_record(SPEC, Submission("bob", Path("x.ipynb"), invalid="empty"), "k", "-")
    excused = book.build(ctx, book.Person("bob"), record, {"late": True})
    assert excused.row["late"] is False and excused.row["penalty"] == 0
    assert "Your instructor excused the lateness of this hand-in: no penalty (doctor's note)." in excused.row["notes"]
    assert "excused the lateness" in excused.markdown


def test_a_list_of_missed_checks_keeps_one_item_a_line_in_the_html_and_stays_in_its_markdown_cell(tmp_path):
    record = gradebook.invalid_record(SPEC, Submission("ana", tmp_path / "x.ipynb", invalid="empty"), "k", "-")
    record.update(status="graded", reason=None, reason_code=None)
    first = SPEC.exercises[0].id
    listed = "❌ t: It passed 3 of 5 checks. Missed:\n• no mask at all\n• mask off by one\n(See chapter 07 §1.)"
    record["exercises"][first].update(status="failed", feedback={lang: listed for lang in i18n.LANGS})
    entry = gradebook.submission_entry(record, "en")
    markdown, page = gradebook.feedback_documents(SPEC, record, entry, "en")
    assert "Missed:<br>• no mask at all<br>• mask off by one<br>" in page
    row = next(line for line in markdown.splitlines() if "Missed:" in line)  # the table's row stays one line
    assert row.startswith(f"| `{first}` |") and row.endswith("|") and "mask off by one" in row
