"""Each rule of a term's input, with an input that breaks it: roster, layouts, zips, timestamps, overrides."""
import json
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.grader.submissions import UsageError
from autograder.labs import get_lab
from autograder.term import code, handgrading, lateness, layouts, overrides, roster, similarity
from autograder.term.sources import Item

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions/en/lab01_masks.ipynb"


def grade(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def refused_call(capsys, *args) -> str:
    """A call the command line must refuse before grading anything (run in-process: no sandbox starts)."""
    from autograder.grader import cli

    assert cli.main(["grade", *map(str, args)]) == 2
    return capsys.readouterr().err


# ---------------------------------------------------------------- roster
@pytest.mark.parametrize("text, line, words", [
    ("student,name\na,A\nb,B\na,A again\n", 4, "already on line 2"),
    ("id,name\na,A\n", 1, "`student` column"),
    ("student,extension_days\na,2\nb,two\n", 3, "extension_days 'two'"),
    ("student,extension_days\na,-1\n", 2, "extension_days '-1'"),
    ("student,lms_id\na,7\nb,7\n", 3, "lms_id '7' is already on line 2"),
    ("student,name\n,nobody\n", 2, "empty"),
])
def test_a_bad_roster_names_its_line_and_nothing_is_written(tmp_path, capsys, text, line, words):
    path = tmp_path / "roster.csv"
    path.write_text(text)
    with pytest.raises(UsageError) as error:
        roster.load(path)
    assert f"line {line}" in str(error.value) and words in str(error.value)
    assert f"line {line}" in refused_call(capsys, "lab01", SOLUTION, "--out", tmp_path / "out", "--roster", path)
    assert not (tmp_path / "out").exists()


def test_a_good_roster_keeps_every_column(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffstudent,name,email,lms_id,extension_days\ns1,\"Doe, Jo\",jo@x,77,1.5\ns2,,,,\n")
    loaded = roster.load(path)
    assert loaded.students[0] == roster.Student("s1", "Doe, Jo", "jo@x", "77", 1.5, 2)
    assert loaded.find("77").student == "s1" and loaded.find("s2").student == "s2" and loaded.find("x") is None


def test_an_unknown_layout_is_a_usage_error(tmp_path, capsys):
    error = refused_call(capsys, "lab01", SOLUTION, "--out", tmp_path / "out", "--layout", "blackboard")
    assert "unknown layout 'blackboard'" in error
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- layouts
def items(*names):
    return [Item(name, Path("/nonexistent") / name, Path("/nonexistent"), "dl.zip", order=i)
            for i, name in enumerate(names)]


def test_canvas_names_late_flags_and_repeats():
    parsed = layouts.parse(items(
        "doejo_77_1001_lab01_masks.ipynb",
        "doejo_LATE_77_1002_lab01_masks-1.ipynb",  # a later submission id wins
        "roeal_88_1003_lab01_masks-2.ipynb", "roeal_88_1003_lab01_masks.ipynb",  # same id: -2 is newer
        "lab01_masks.ipynb", "doejo_77_1001_notes.pdf", "readme.txt"), "canvas", "lab01")
    keys = [(e.key, e.name, e.late, e.item.name) for e in sorted(parsed.entries, key=lambda e: (e.key, e.order))]
    assert keys == [("77", "doejo", False, "doejo_77_1001_lab01_masks.ipynb"),
                    ("77", "doejo", False, "doejo_77_1001_notes.pdf"),
                    ("77", "doejo", True, "doejo_LATE_77_1002_lab01_masks-1.ipynb"),
                    ("88", "roeal", False, "roeal_88_1003_lab01_masks.ipynb"),
                    ("88", "roeal", False, "roeal_88_1003_lab01_masks-2.ipynb")]
    assert parsed.unparsed == ["dl.zip: lab01_masks.ipynb"] and parsed.junk == ["dl.zip: readme.txt"]


def test_moodle_folders_and_the_flat_download():
    parsed = layouts.parse(items("Jo Doe_123_assignsubmission_file_/lab01.ipynb",
                                 "Al Roe_456_assignsubmission_file_lab01.ipynb",
                                 "Al Roe_456_assignsubmission_onlinetext_/onlinetext.html",
                                 "Someone_assignsubmission_file_/lab01.ipynb"), "auto", "lab01")
    assert parsed.layout == "moodle"
    assert sorted((e.key, e.name) for e in parsed.entries) == [("123", "Jo Doe"), ("456", "Al Roe")]
    assert parsed.unparsed == ["dl.zip: Someone_assignsubmission_file_/lab01.ipynb"]


@pytest.mark.parametrize("folder", ["lab02", "Lab 2", "lab_02", "LAB-02", "Lab02"])
def test_nbgrader_lab_folder_named_like_the_assignment(folder):
    parsed = layouts.parse(items(f"s1/{folder}/lab02_causal_attention.ipynb", f"s1/{folder}/timestamp.txt",
                                 "s2/lab01/lab01_masks.ipynb", "s3/Lab 12/x.ipynb"), "auto", "lab02")
    assert parsed.layout == "nbgrader" and [e.key for e in parsed.entries] == ["s1"]
    assert not layouts.lab_folder_matches("Lab 12", "lab02") and not layouts.lab_folder_matches("lab2b", "lab02")


def test_auto_falls_back_to_flat():
    assert layouts.parse(items("s1.ipynb", "s2.ipynb"), "auto", "lab01").layout == "flat"


# ---------------------------------------------------------------- lateness
@pytest.mark.parametrize("text, iso", [
    ("2026-12-10 22:59:00.123456 UTC", "2026-12-10T22:59:00.123456+00:00"),  # nbgrader's default format
    ("2026-12-10 23:59:00 Europe/Berlin", "2026-12-10T23:59:00+01:00"),
    ("2026-12-10T23:59:00+01:00", "2026-12-10T23:59:00+01:00"),
    ("2026-12-10 22:59:00", "2026-12-10T22:59:00+00:00"),  # no zone: nbgrader's default, UTC
    ("2026-12-10 23:59:00.000000 CET", "2026-12-10T23:59:00+01:00"),  # %Z of a tz database zone
])
def test_nbgrader_timestamps(text, iso):
    assert lateness.parse_timestamp(text).isoformat() == iso


@pytest.mark.parametrize("text", ["yesterday", "10/12/2026 11pm", "2026-12-10 23:59 Mars/Olympus", "",
                                  "2026-12-10 23:59:00 IST"])  # an ambiguous abbreviation: not guessed
def test_an_odd_timestamp_is_on_time_with_a_note(text):
    policy = lateness.Policy(lateness.parse_due("2026-12-01T00:00:00+00:00"), 10, 100)
    assessed = lateness.assess(policy, 0, text, False)
    assert (assessed.late, assessed.penalty_percent, assessed.note) == (False, 0.0, "term.note.odd_timestamp")


def test_started_days_extensions_and_the_cap():
    policy = lateness.Policy(lateness.parse_due("2026-12-10T23:59:00+01:00"), 10, 25)
    assert lateness.assess(policy, 0, "2026-12-10 22:59:00 UTC", False).late is False  # exactly on time
    one_second = lateness.assess(policy, 0, "2026-12-10 22:59:01 UTC", False)
    assert (one_second.late_days, one_second.penalty_percent) == (1, 10)
    five_days = lateness.assess(policy, 0, "2026-12-15 12:00:00 UTC", False)
    assert (five_days.late_days, five_days.penalty_percent) == (5, 25)  # capped
    assert lateness.assess(policy, 5, "2026-12-15 12:00:00 UTC", False).late is False
    flag = lateness.assess(policy, 0, None, True)
    assert (flag.late, flag.late_days, flag.penalty_percent) == (True, None, 10)


@pytest.mark.parametrize("args, words", [(["--due", "2026-12-10"], "give the offset"),
                                         (["--due", "soon"], "not an ISO 8601"),
                                         (["--late-per-day", "120"], "between 0 and 100")])
def test_bad_policy_options(tmp_path, capsys, args, words):
    assert words in refused_call(capsys, "lab01", SOLUTION, "--out", tmp_path / "out", *args)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- overrides
@pytest.mark.parametrize("line, words", [("ghost,causal_mask,1,x", "unknown student 'ghost'"),
                                         ("s1,no_such,1,x", "unknown exercise 'no_such'"),
                                         ("s1,causal_mask,3,x", "between 0 and 2"),
                                         ("s1,late_days,1.5,x", "whole number")])
def test_a_bad_override_names_its_line(tmp_path, line, words):
    path = tmp_path / "overrides.csv"
    path.write_text(f"student,exercise,points,reason\ns1,causal_mask,1,ok\n{line}\n")
    with pytest.raises(UsageError) as error:
        overrides.load(path, {"s1"}, {"causal_mask": 2.0})
    assert "line 3" in str(error.value) and words in str(error.value)


def test_an_empty_points_cell_overrides_nothing(tmp_path):
    path = tmp_path / "sheet.csv"
    path.write_text("student,exercise,points,reason,max_points,text\ns1,why,,hand-graded,2,because\n"
                    "s1,causal_mask,0,copied,,\n")
    assert list(overrides.load(path, {"s1"}, {"causal_mask": 2.0, "why": 2.0})) == [("s1", "causal_mask")]


# ---------------------------------------------------------------- graded code
ORIGINAL = '''import torch
import torch.nn.functional as F

def causal_mask(T):
    """docstring"""
    size = (T, T)  # the shape
    return torch.full(size, float("-inf")).triu(1)
'''
RENAMED = '''import torch
def causal_mask(n: int) -> torch.Tensor:
    # a comment
    shape = (n,   n)
    return torch.full(shape, float('-inf')).triu(1)
'''
OTHER = '''import torch
def causal_mask(T):
    return torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
'''


def test_normalising_names_comments_and_layout():
    first = code.graded_code([ORIGINAL], ["causal_mask", "allowed_mask"])
    assert list(first) == ["causal_mask"]  # allowed_mask is absent: not attempted
    assert first == code.graded_code([RENAMED], ["causal_mask", "allowed_mask"])
    assert first != code.graded_code([OTHER], ["causal_mask"])
    stub = 'def causal_mask(T):\n    """M."""\n    raise NotImplementedError("Hint")\n'
    assert code.graded_code([stub], ["causal_mask"]) == {}


def test_groups_identical_and_near():
    a = code.graded_code([ORIGINAL], ["causal_mask"])
    b = code.graded_code([RENAMED], ["causal_mask"])
    c = code.graded_code([OTHER], ["causal_mask"])
    near = code.graded_code([OTHER.replace('float("-inf")', 'float("-inf") * 1.0')], ["causal_mask"])
    found = similarity.groups({"s1": a, "s2": b, "s3": c, "s4": near, "s5": a, "s6": a})
    shapes = [{key: group[key] for key in ("kind", "students", "exercises")} for group in found]  # (and any score)
    assert {"kind": "identical", "students": ["s1", "s2", "s5", "s6"], "exercises": ["causal_mask"]} in shapes
    assert {"kind": "near", "students": ["s3", "s4"], "exercises": ["causal_mask"]} in shapes
    assert len(found) == 2


FORBIDDEN = ("F.scaled_dot_product_attention",)


@pytest.mark.parametrize("source, uses", [
    ("import torch.nn.functional as F\ndef causal_attention(q, k, v):\n"
     "    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n", True),
    ("from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
     "def helper(q, k, v):\n    return sdpa(q, k, v)\ndef causal_attention(q, k, v):\n    return helper(q, k, v)\n",
     True),
    ("import torch\ndef causal_attention(q, k, v):\n"
     "    return torch.nn.functional.scaled_dot_product_attention(q, k, v)\n", True),
    ("import torch.nn.functional as F\ndef causal_attention(q, k, v):\n    return F.softmax(q @ k.T, -1) @ v\n"
     "def compare(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n", False),  # not in the graded code
    ("def scaled_dot_product_attention(q, k, v):\n    return q\n"
     "def causal_attention(q, k, v):\n    return scaled_dot_product_attention(q, k, v)\n", False),  # the student's own
])
def test_forbidden_apis_in_the_graded_code(source, uses):
    assert code.forbidden_uses([source], "causal_attention", FORBIDDEN) == (list(FORBIDDEN) if uses else [])


def test_lab02_declares_its_forbidden_api():
    from autograder.labs import get_lab

    assert "F.scaled_dot_product_attention" in get_lab("lab02").exercise("causal_attention").forbidden_calls


# ---------------------------------------------------------------- hand-graded parts
def test_hand_graded_answers_go_into_a_sheet_in_the_overrides_format(tmp_path):
    notebook = json.loads(SOLUTION.read_text())
    notebook["cells"].append({"cell_type": "markdown", "source": ["Because the ", "future is unknown."],
                              "metadata": {"tags": ["hand-graded"], "labbook": {"part": "why_causal"}}})
    notebook["cells"].append({"cell_type": "markdown", "source": "=HYPERLINK(1)",
                              "metadata": {"tags": ["hand-graded"], "labbook": {"part": "formula"}}})
    notebook["cells"].append({"cell_type": "markdown", "source": "not tagged",
                              "metadata": {"labbook": {"part": "why_causal"}}})
    path = tmp_path / "s1.ipynb"
    path.write_text(json.dumps(notebook))
    parts = {"why_causal": 2.0, "formula": 1.0}
    found = handgrading.answers(path, parts, 1 << 20)
    assert found == {"why_causal": "Because the future is unknown.", "formula": "=HYPERLINK(1)"}
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(handgrading.sheet([("s1", part, parts[part], text) for part, text in found.items()]))
    assert sheet.read_text().splitlines() == [
        "student,exercise,points,reason,max_points,text",
        "s1,why_causal,,hand-graded,2,Because the future is unknown.",
        "s1,formula,,hand-graded,1,'=HYPERLINK(1)"]  # no spreadsheet formula
    assert overrides.load(sheet, {"s1"}, parts) == {}  # nothing filled in yet: nothing applied
    sheet.write_text(sheet.read_text().replace("why_causal,,", "why_causal,1.5,"))
    assert overrides.load(sheet, {"s1"}, parts)[("s1", "why_causal")].points == 1.5


# ---------------------------------------------------------------- hostile zips
def _write_zip(path: Path, big: int) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("alice.ipynb", SOLUTION.read_text())
        archive.writestr("../../escaped.ipynb", SOLUTION.read_text())
        archive.writestr("/abs/rooted.ipynb", SOLUTION.read_text())
        link = zipfile.ZipInfo("linked.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
        archive.writestr("bomb.ipynb", b"\x00" * big)  # a few KB packed, more than --max-mb unpacked
        archive.writestr("__MACOSX/._alice.ipynb", b"junk")
        archive.writestr("notes.docx", b"junk")


def test_a_hostile_zip_loses_nothing_else_and_writes_nothing_outside_out(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    bundle = work / "subs.zip"
    _write_zip(bundle, 3 << 20)
    out = work / "out"
    result = grade("lab01", bundle, "--out", out, "--jobs", "1", "--seed", "1", "--max-mb", "1", "--quiet",
                   cwd=work)
    assert result.returncode == 0, result.stderr
    refused = [line for line in result.stdout.splitlines() if line.startswith("refused:")]
    assert any("../../escaped.ipynb: refused, a name that climbs out" in line for line in refused)
    assert any("/abs/rooted.ipynb: refused, an absolute name" in line for line in refused)
    assert any("linked.ipynb: refused, a symbolic link" in line for line in refused)
    assert any("bomb.ipynb: refused" in line and "more than 1048576" in line for line in refused)
    assert "not a submission: " in result.stdout and "notes.docx" in result.stdout
    grades = json.loads((out / "grades.json").read_text())
    assert [(row["student"], row["status"], row["score"]) for row in grades["submissions"]] == \
        [("alice", "graded", get_lab("lab01").max_score)]
    assert sorted(p.name for p in tmp_path.rglob("*escaped*")) == []
    assert not Path("/abs/rooted.ipynb").exists()
    assert sorted(p.name for p in work.iterdir()) == ["out", "subs.zip"]


def test_canvas_and_moodle_folders_read_like_their_zips(tmp_path):
    from autograder.term import sources

    canvas = tmp_path / "canvas"
    canvas.mkdir()
    for name in ("doejo_77_1001_lab01.ipynb", "doejo_LATE_77_1002_lab01-1.ipynb", ".DS_Store"):
        (canvas / name).write_text("{}")
    moodle = tmp_path / "moodle"
    (moodle / "Jo Doe_123_assignsubmission_file_").mkdir(parents=True)
    (moodle / "Jo Doe_123_assignsubmission_file_" / "lab01.ipynb").write_text("{}")
    out = tmp_path / "out"
    for folder, layout, keys in ((canvas, "canvas", ["77", "77"]), (moodle, "moodle", ["123"])):
        found = sources.collect([str(folder)], out)
        parsed = layouts.parse(found.items, "auto", "lab01")
        assert parsed.layout == layout and [e.key for e in parsed.entries] == keys
        assert all(e.item.path.parent == folder or e.item.path.parent.parent == folder for e in parsed.entries)
    assert not out.exists()  # a folder is read where it is: nothing copied


def test_the_report_of_a_gradebook_without_roster(tmp_path, capsys):
    """`report` also reads a plain engine gradebook (one row per file)."""
    import json as _json

    from autograder.grader import cli

    out = tmp_path / "out"
    out.mkdir()
    row = {"student": "ann", "status": "graded", "score": 8.0, "max_score": 10.0, "lang": "es",
           "exercises": {e: {"points": p, "max_points": m, "status": "passed", "diagnosis": d, "feedback": ""}
                         for e, p, m, d in (("causal_mask", 0.0, 2.0, "wrong_triangle"), ("allowed_mask", 1.0, 1.0, None),
                                            ("blocked_mask", 1.0, 1.0, None), ("padding_mask", 2.0, 2.0, None),
                                            ("combined_mask", 2.0, 2.0, None), ("sliding_window_mask", 2.0, 2.0, None))}}
    (out / "grades.json").write_text(_json.dumps({"lab": "lab01", "max_score": 10.0, "submissions": [row]}))
    assert cli.main(["report", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "<td><code>wrong_triangle</code></td><td>1</td><td>100%</td>" in page and "<li>es: 1</li>" in page
    assert cli.main(["export", str(out), "--to", "canvas", "--out", str(tmp_path / "c.csv")]) == 2
    assert "graded without a roster" in capsys.readouterr().err


@pytest.mark.parametrize("body", ["-" * 100_000 + "1", "not " * 50_000 + "x", "f" + "(x)" * 50_000,
                                  "a." * 50_000 + "b", "(" * 190 + "1" + ")" * 190])
def test_hostile_code_never_breaks_the_analysis(body):
    # parsed in the grader's own process, so nesting that exhausts the parser is "no code", never a crash
    source = "import torch\ndef causal_mask(T):\n    return " + body + "\n"
    assert isinstance(code.graded_code([source], ["causal_mask"]), dict)
    assert code.forbidden_uses([source], "causal_mask", FORBIDDEN) == []
    assert isinstance(similarity.groups({"a": code.graded_code([source], ["causal_mask"]), "b": {}}), list)


def test_a_folder_without_any_submission_is_an_error_not_a_class_of_missing(tmp_path, capsys):
    empty = tmp_path / "download"
    empty.mkdir()
    (empty / "readme.txt").write_text("nothing here")
    roster_path = tmp_path / "roster.csv"
    roster_path.write_text("student\na\n")
    error = refused_call(capsys, "lab01", empty, "--out", tmp_path / "out", "--roster", roster_path, "--layout", "canvas")
    assert "no submissions found" in error and "as the canvas layout" in error and "1 other files" in error
    assert not (tmp_path / "out" / "grades.json").exists()


# ---------------------------------------------------------------- rosters as the LMS gives them
def test_canvas_export_variants(tmp_path):
    """`;` as Canvas writes it in some locales, LastName/FirstName columns, a name quoted against formulas,
    a "Manual Posting" row, both spellings of Points Possible, the test student left out."""
    path = tmp_path / "export.csv"
    path.write_text("\ufeffLastName;FirstName;ID;SIS User ID;SIS Login ID;Section;Lab 1 (11);Current Score\n"
                    ";;;;;;Manual Posting;\n"
                    "    Points Possible;;;;;;10.00;(read only)\n"
                    "Points Possible;;;;;;10.00;(read only)\n"
                    "=\"=Doe\";Jo;77;s77;jdoe;A and B;5;50\n"
                    "Roe;Al;88;;aroe@uni.example;B;;\n"
                    "Student;Test;99;;x1y2;A;;\n", encoding="utf-8")
    loaded = roster.load(path)
    assert loaded.format == "canvas" and loaded.lms_columns == ["Lab 1 (11)"]
    assert [(s.student, s.name, s.lms_id, s.login, s.email, s.section) for s in loaded.students] == [
        ("s77", "=Doe, Jo", "77", "jdoe", "", "A and B"),
        ("88", "Roe, Al", "88", "aroe@uni.example", "aroe@uni.example", "B")]
    assert loaded.skipped == ["line 7: Canvas's test student (Student, Test)"]


def test_moodle_worksheet_and_participants(tmp_path):
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        "Identifier,Full name,ID number,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Online text,Last modified (grade),Feedback comments\n"
        "Participant 1783408,Amelia Clarke,s1,ac@x,\"Submitted for grading Extension granted until: Sunday, 13 "
        "December 2026, 11:59 PM\",,10.00,Yes,\"Friday, 11 December 2026, 9:05 AM\",,-,\n"
        "Participant 12,Bo Li,,bl@x,No submission,,10.00,Yes,-,,-,\n")
    loaded = roster.load(worksheet)
    assert loaded.format == "moodle_worksheet"
    assert [(s.student, s.name, s.lms_id, s.email, s.submitted, s.extension_until) for s in loaded.students] == [
        ("s1", "Amelia Clarke", "1783408", "ac@x", "Friday, 11 December 2026, 9:05 AM",
         "Sunday, 13 December 2026, 11:59 PM"),
        ("bl@x", "Bo Li", "12", "bl@x", "-", None)]
    participants = tmp_path / "participants.csv"
    participants.write_text("First name,Last name,ID number,Email address\nAmelia,Clarke,s1,ac@x\nBo,Li,,bl@x\n")
    loaded = roster.load(participants)
    assert loaded.format == "moodle_participants" and not loaded.has_lms_ids
    assert [(s.student, s.name) for s in loaded.students] == [("s1", "Amelia Clarke"), ("bl@x", "Bo Li")]


def test_an_unknown_header_names_the_formats(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("Name,Matrikel\nJo,1\n")
    with pytest.raises(UsageError) as error:
        roster.load(path)
    assert "Canvas's gradebook export" in str(error.value) and "Moodle's grading worksheet" in str(error.value)


# ---------------------------------------------------------------- times as the LMS writes them
@pytest.mark.parametrize("text, iso", [
    ("Tuesday, 10 December 2026, 11:59 PM", "2026-12-10T23:59:00+01:00"),
    ("Friday, 11 December 2026, 12:05 AM", "2026-12-11T00:05:00+01:00"),  # 12 AM is midnight
    ("Friday, 11 December 2026, 12:05 PM", "2026-12-11T12:05:00+01:00"),  # 12 PM is noon
    ("Friday, 5 June 2026, 9:05 AM", "2026-06-05T09:05:00+02:00"),  # summer time in the zone
    ("2026-12-10T23:00:00Z", "2026-12-10T23:00:00+00:00"),
    ("Friday, 11 December 2026, 1:05 AM", "2026-12-11T01:05:00+01:00"),  # 1 is the lowest 12-hour hour
    ("Friday, 11 December 2026, 1:05 pm", "2026-12-11T13:05:00+01:00"),
    ("2026-12-10T23:00:00", "2026-12-10T23:00:00+01:00"),  # ISO without an offset is read in the zone
    ("2026-12-10T23:00:00+05:30", "2026-12-10T23:00:00+05:30"),  # an offset written is kept
    # 52 + len(", 10 December 2026, 11:59 PM") = 52 + 28 = 80 characters: just inside the cap
    ("X" * 52 + ", 10 December 2026, 11:59 PM", "2026-12-10T23:59:00+01:00"),
])
def test_moodle_worksheet_dates(text, iso):
    from zoneinfo import ZoneInfo

    from autograder.term import times

    assert times.parse_moodle_date(text, ZoneInfo("Europe/Berlin")).isoformat() == iso


@pytest.mark.parametrize("text", [
    "-", "", "Dienstag, 10. Dezember 2026, 23:59", "Friday, 31 February 2026, 9:05 AM",
    "Friday, 11 December 2026, 13:05 PM", "Friday, 11 December 2026, 0:05 AM",  # 12-hour hours are 1..12
    "Friday, 11 Decembre 2026, 9:05 AM",  # no English month
    "X" * 53 + ", 10 December 2026, 11:59 PM",  # 81 characters: just outside the cap
    "2026-12-10T23:00:00z",  # ISO 8601 writes its zone letter Z upper case (Python 3.11 reads only that)
])
def test_moodle_dates_that_are_no_time(text):
    from datetime import timezone

    from autograder.term import times

    assert times.parse_moodle_date(text, timezone.utc) is None


def test_submission_times_files():
    from datetime import timezone

    from autograder.term import times

    api = ('while(1);[{"user_id": 77, "submitted_at": "2026-12-11T10:00:00Z"}, {"user_id": 88, "submitted_at": null},'
           '{"user_id": 99, "submissions": []}]')
    form, found = times.read_times(api.encode(), timezone.utc)
    assert form == "canvas_api" and {k: v.isoformat() for k, v in found.items()} == {"77": "2026-12-11T10:00:00+00:00"}
    grouped = '[{"user_id": 5, "submissions": [{"user_id": 5, "submitted_at": "2026-12-09T10:00:00Z"}]}]'
    assert list(times.read_times(grouped.encode(), timezone.utc)[1]) == ["5"]
    form, found = times.read_times(b"student,submitted_at\ns1,2026-12-11T10:00:00\ns2,\n", timezone.utc)
    assert form == "csv" and {k: v.isoformat() for k, v in found.items()} == {"s1": "2026-12-11T10:00:00+00:00"}
    with pytest.raises(times.TimesError):
        times.read_times(b"who,when\n", timezone.utc)


def test_a_zone_is_named_as_the_tz_database_names_it():
    from zoneinfo import ZoneInfo

    from autograder.term import times

    assert times.zone_named("Europe/Berlin") == ZoneInfo("Europe/Berlin")
    with pytest.raises(ValueError) as error:
        times.zone_named("Mars/Olympus")
    assert str(error.value) == "'Mars/Olympus' is no tz database zone (such as Europe/Berlin or America/New_York)"


_CANVAS_SUBMISSIONS = '[{"user_id": 77, "submitted_at": "2026-12-11T10:00:00Z"}]'


@pytest.mark.parametrize("body", [
    _CANVAS_SUBMISSIONS,
    " \r\n" + _CANVAS_SUBMISSIONS,  # blank space before the JSON
    "while(1);" + _CANVAS_SUBMISSIONS,
    '\n while(1);\n {"submissions": ' + _CANVAS_SUBMISSIONS + "}",  # the object form, after the guard and space
])
def test_a_canvas_answer_in_each_wrapping(body):
    from datetime import timezone

    from autograder.term import times

    form, found = times.read_times(body.encode(), timezone.utc)
    assert form == "canvas_api" and {k: v.isoformat() for k, v in found.items()} == {"77": "2026-12-11T10:00:00+00:00"}


def test_canvas_submissions_that_name_no_one_or_no_time_are_skipped_and_the_latest_wins():
    from datetime import timezone

    from autograder.term import times

    api = [
        "not a submission",
        {"user_id": 5, "submissions": [  # the grouped form: each skipped one is followed by a good one
            7,
            {"user_id": True, "submitted_at": "2026-12-09T08:00:00Z"},  # a bool is no user id
            {"user_id": None, "submitted_at": "2026-12-09T08:00:00Z"},
            {"user_id": 5.0, "submitted_at": "2026-12-09T08:00:00Z"},
            {"user_id": 5, "submitted_at": "yesterday"},
            {"user_id": 5, "submitted_at": "2026-12-09T12:00:00z"},  # ISO 8601 writes Z upper case: not the latest
            {"user_id": 5, "submitted_at": "2026-12-09T10:00:00Z"},
        ]},
        {"user_id": 6, "submitted_at": "2026-12-11T11:30:00+01:00"},  # an offset written is kept
        {"user_id": 8, "submitted_at": "2026-12-11T10:00:00"},  # no offset: Canvas means UTC
        {"user_id": "9", "submitted_at": "2026-12-11T10:00:00Z"},
        {"user_id": "9", "submitted_at": "2026-12-11T12:00:00Z"},  # a later submission wins ...
        {"user_id": "9", "submitted_at": "2026-12-11T11:00:00Z"},  # ... over earlier ones on either side
        {"user_id": 11, "submitted_at": "2026-12-11T10:00:00Z"},
        {"user_id": 11, "submitted_at": "2026-12-11T11:00:00+01:00"},  # the same instant: the first is kept
    ]
    form, found = times.read_times(json.dumps(api).encode(), timezone.utc)
    assert form == "canvas_api"
    assert {k: v.isoformat() for k, v in found.items()} == {
        "5": "2026-12-09T10:00:00+00:00", "6": "2026-12-11T11:30:00+01:00", "8": "2026-12-11T10:00:00+00:00",
        "9": "2026-12-11T12:00:00+00:00", "11": "2026-12-11T10:00:00+00:00"}
    assert times.read_times(b"[]", timezone.utc) == ("canvas_api", {})


@pytest.mark.parametrize("data, message", [
    # "{" + 2000 spaces + "1": json stops at the 1, char 2001, column 2002; its 81-character message is cut at 80
    (b"{" + b" " * 2000 + b"1}",
     "not JSON (Expecting property name enclosed in double quotes: line 1 column 2002 (char 2001)"),
    (b'{"errors": [{"message": "user authorization required"}]}', "not a list of Canvas submissions"),
    (b'{"submissions": 3}', "not a list of Canvas submissions"),
    (b'[{"user_id": 1, "submitted_at": null}]', "no submission in it has a user_id and a submitted_at"),
    # "student,submitted_at\n" is 21 bytes, "s" is byte 21, Latin-1's e-acute byte 22
    (b"student,submitted_at\ns\xe9,2026-12-11T10:00:00Z\n", "not UTF-8 text (invalid continuation byte at byte 22)"),
    (b"student,when\ns1,2026-12-11T10:00:00Z\n",
     "a CSV needs the header student,submitted_at; a Canvas API answer is JSON"),
    (b"name,submitted_at\ns1,2026-12-11T10:00:00Z\n",
     "a CSV needs the header student,submitted_at; a Canvas API answer is JSON"),
    (b"student,submitted_at\ns1,2026-12-11T10:00:00z\n", "line 2: '2026-12-11T10:00:00z' is not an ISO 8601 time"),
    # the 42-character Moodle form is shown cut to its first 40 characters
    (b'student,submitted_at\n\ns1,"Friday, 11 December 2026, 10:00 AM, Berlin"\n',
     "line 3: 'Friday, 11 December 2026, 10:00 AM, Berl' is not an ISO 8601 time"),
    # csv's default field limit is 131072 characters; the line named is the failing one, not the last good one
    (b"student,submitted_at\ns1,2026-12-11T10:00:00Z\ns2," + b"9" * 131073 + b"\n",
     "line 3: field larger than field limit (131072)"),
])
def test_a_submission_times_file_that_cannot_be_read_says_why(data, message):
    from datetime import timezone

    from autograder.term import times

    with pytest.raises(times.TimesError) as error:
        times.read_times(data, timezone.utc)
    assert str(error.value) == message


@pytest.mark.parametrize("end", ["\r\n", "\n", "\r"])
def test_an_instructors_times_csv_in_any_line_ending(end):
    from zoneinfo import ZoneInfo

    from autograder.term import times

    lines = ["submitted_at , student",  # the columns in either order, padded
             "2026-12-11T09:00:00",  # no student column in this row
             ",s0",  # no time
             "2026-12-11T10:00:00Z,s1",
             "2026-12-11T15:30:00+05:30,s2",  # an offset written is kept
             "2026-12-11T10:00:00,s3"]  # no offset: the zone given (Berlin, +01:00 in December)
    form, found = times.read_times(end.join(lines).encode() + end.encode(), ZoneInfo("Europe/Berlin"))
    assert form == "csv" and {k: v.isoformat() for k, v in found.items()} == {
        "s1": "2026-12-11T10:00:00+00:00", "s2": "2026-12-11T15:30:00+05:30", "s3": "2026-12-11T10:00:00+01:00"}


def test_a_quoted_line_break_in_a_times_csv_is_kept_as_written():
    from datetime import timezone

    from autograder.term import times

    # csv reads a line break inside quotes as written only when the text is opened with newline=""
    found = times.read_times(b'student,submitted_at\r\n"Doe,\r\nJane",2026-12-11T10:00:00Z\r\n', timezone.utc)[1]
    assert list(found) == ["Doe,\r\nJane"]


def test_an_unknown_time_under_a_due_date_is_flagged_and_on_time():
    policy = lateness.Policy(lateness.parse_due("2026-12-10T23:59:00+01:00"), 10, 100)
    assessed = lateness.assess(policy, 0, None, False)
    assert (assessed.late, assessed.penalty_percent, assessed.time_unknown, assessed.note) == \
        (False, 0.0, True, "term.note.time_unknown")
    assert lateness.assess(lateness.Policy(), 0, None, False).time_unknown is False  # no due date: nothing to know
    canvas_on_time = lateness.assess(policy, 0, None, False, "canvas_flag")
    assert (canvas_on_time.time_unknown, canvas_on_time.time_source) == (False, "canvas_flag")


def test_state_kept_by_the_previous_version_is_read(tmp_path):
    """A gradebook graded before this version: its roster, overrides and seed fingerprint are not lost."""
    from autograder.term import state

    folder = state.state_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps({"layout": "canvas", "due": None, "roster": True,
                                                      "overrides": ["overrides-0.csv"], "penalise_forbidden": False}))
    (tmp_path / "grades.json").write_text(json.dumps({"seed_fingerprint": "0449a3b066df", "seed_source": "--seed"}))
    kept = state.load(tmp_path)
    assert kept["roster"]["file"] == "roster.csv" and kept["layout"] == "canvas"
    assert [(e["file"], e["legacy"]) for e in kept["overrides"]] == [("overrides-0.csv", True)]
    assert (kept["seed_fingerprint"], kept["seed_source"]) == ("0449a3b066df", "--seed")


def test_a_roster_without_lms_ids_matches_by_student_id_then_by_name(tmp_path):
    from autograder.term import identity

    parsed = layouts.parse(items("doejo_77_1001_lab01.ipynb"), "canvas", "lab01")
    by_id = tmp_path / "by_id.csv"
    by_id.write_text("student,name\n77,Jo Doe\n88,Al Roe\n")
    by_name = tmp_path / "by_name.csv"
    by_name.write_text('student,name\ns1,"Doe, Jo"\ns2,Al Roe\n')
    assert identity.decide(parsed.entries[0], roster.load(by_id)).student == "77"
    assert identity.decide(parsed.entries[0], roster.load(by_name)).student == "s1"
    other = tmp_path / "other.csv"
    other.write_text("student,name\n77,Al Roe\n")  # the id is on the roster, with another person's name
    assert identity.decide(parsed.entries[0], roster.load(other)).problem == "name_mismatch"


# ---------------------------------------------------------------- only a real Z is a zone
JUNK_ZONE = "2026-12-11T10:00:00XXZXX"  # letters after the seconds that merely contain a Z


def test_letters_after_the_seconds_are_not_read_as_a_zone_by_any_parser():
    from datetime import timezone

    from autograder.term import times

    assert lateness.parse_timestamp(JUNK_ZONE) is None
    assert times.parse_moodle_date(JUNK_ZONE, timezone.utc) is None
    api = '[{"user_id": 5, "submitted_at": "%s"}, {"user_id": 6, "submitted_at": "2026-12-11T10:00:00Z"}]' % JUNK_ZONE
    assert list(times.read_times(api.encode(), timezone.utc)[1]) == ["6"]  # the unreadable one is skipped
    with pytest.raises(times.TimesError) as error:
        times.read_times(f"student,submitted_at\ns1,{JUNK_ZONE}\n".encode(), timezone.utc)
    assert JUNK_ZONE in str(error.value)
