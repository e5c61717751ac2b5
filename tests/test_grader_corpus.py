"""The batch grader on a corpus of adversarial and broken lab00 submissions: exact outcomes.

One batch grades the whole corpus (tests/corpus/lab00.py) through the command
line, in whatever sandbox this machine offers (bwrap when installed, else the
fallback); every test below reads that batch's gradebook.
"""
import csv
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.attacks import processes_named
from corpus.lab00 import EXERCISES, build, submissions

from autograder.labs import get_lab

LAB00_FULL = get_lab("lab00").max_score  # what an honest lab00 notebook earns

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "cs" + secrets.token_hex(6)  # names the processes s_fork leaves behind


def grade(*args, cwd=ROOT, timeout=300):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    expected = build(folder / "submissions", token=TOKEN)
    out = folder / "out"
    run = grade("lab00", folder / "submissions", "--out", out, "--timeout", 2, "--cell-timeout", 2,
                "--max-mb", 2, "--seed", 1234, "--jobs", 2)
    assert run.returncode == 0, run.stderr + run.stdout
    book = json.loads((out / "grades.json").read_text())
    return {"expected": expected, "book": book, "out": out, "run": run,
            "entries": {entry["student"]: entry for entry in book["submissions"]}}


def isolated(book) -> bool:
    sandbox = book["sandbox"]
    return sandbox["mode"] == "bwrap" or sandbox["privileged"]


STUDENTS = sorted(submissions())


def test_every_submission_exactly_once(batch):
    students = [entry["student"] for entry in batch["book"]["submissions"]]
    assert sorted(students) == sorted(batch["expected"]) == STUDENTS
    assert len(students) == len(set(students))


@pytest.mark.parametrize("student", STUDENTS)
def test_outcome(batch, student):
    expected = batch["expected"][student]
    entry = batch["entries"][student]
    if expected.needs_isolation and not isolated(batch["book"]):
        pytest.skip("the fallback sandbox without root hides nothing from student code")
    details = json.dumps(entry, indent=1, ensure_ascii=False)
    assert entry["status"] == expected.status, details
    assert entry["score"] == expected.score, details
    assert entry["max_score"] == LAB00_FULL
    assert sorted(entry["exercises"]) == sorted(EXERCISES)
    for exercise, (status, text) in expected.exercises.items():
        item = entry["exercises"][exercise]
        assert item["status"] == status, f"{exercise}: {details}"
        assert text in item["feedback"], f"{exercise}: {item['feedback']}"
    notes = [(cell["kind"], cell["text"]) for cell in entry["cells"]]
    unmatched = list(notes)
    for kind, text in expected.cells:  # each expected note matches a note of its own: three errors are three
        match = next((note for note in unmatched if note[0] == kind and text in note[1]), None)
        assert match is not None, f"{kind} {text!r} not in {unmatched} (of {notes})"
        unmatched.remove(match)
    assert entry["id_mismatch"] == expected.id_mismatch
    assert entry["reason_code"] == expected.reason_code
    if expected.status == "invalid":
        assert entry["reason"] and all(e["points"] == 0 for e in entry["exercises"].values())


def test_nothing_a_student_printed_or_patched_counts(batch):
    entries = batch["entries"]
    for student in ("s_fake_print", "s_patch_compare", "s_eq_object"):
        assert entries[student]["score"] == 0, student
        assert "✅" not in entries[student]["exercises"]["qk_scores"]["feedback"]


def test_a_crash_or_timeout_costs_only_its_exercise(batch):
    entries = batch["entries"]
    loop = entries["s_loop_value"]["exercises"]
    assert loop["qk_scores"]["points"] == 0 and "limit is 2 s per exercise" in loop["qk_scores"]["feedback"]
    assert all(loop[name]["points"] == 2 for name in EXERCISES if name != "qk_scores")
    crash = entries["s_exit_value"]["exercises"]["scaled_scores"]["feedback"]
    assert "stopped on the case scaled_scores (exit code 7)" in crash


def test_sandbox_cut_the_network_and_hid_the_repository(batch):
    if not isolated(batch["book"]):
        pytest.skip("no isolation without bwrap or root")
    notes = [cell["text"] for cell in batch["entries"]["s_snoop"]["cells"]]
    assert any("No such file or directory" in n or "Permission denied" in n for n in notes), notes
    assert any("Network is unreachable" in n or "OSError" in n for n in notes), notes


def test_no_process_survives_the_batch(batch):
    leftovers = processes_named(TOKEN)
    assert not leftovers, f"{len(leftovers)} processes left by s_fork"


def test_summary_counts_and_flags(batch):
    summary = batch["run"].stdout
    assert "31 submissions: 18 graded, 7 invalid, 3 timed out, 3 with errors." in summary
    assert "id mismatch: s_typed_other typed STUDENT_ID 'friend-42'" in summary
    assert "Slowest:" in summary and "Sandbox:" in summary
    assert "Hidden cases: seed from --seed" in summary
    assert "grading lab00 [" in batch["run"].stderr and "ETA" in batch["run"].stderr


def test_csv_has_one_row_per_submission_and_a_column_per_exercise(batch):
    rows = list(csv.DictReader((batch["out"] / "grades.csv").open(encoding="utf-8-sig")))
    assert [row["student"] for row in rows] == STUDENTS
    assert list(rows[0])[:10] == ["student", "lab", "status", "score", "max_score", *EXERCISES]
    by_student = {row["student"]: row for row in rows}
    assert by_student["s_typed_other"]["id_mismatch"] == "yes"
    assert by_student["s_missing"]["scaled_scores"] == "0" and by_student["s_missing"]["score"] == "8"
    assert by_student["s_binary"]["status"] == "invalid" and by_student["s_binary"]["reason"] == "binary"


def test_feedback_files_in_the_notebooks_language(batch):
    feedback = batch["out"] / "feedback"
    spanish = (feedback / "s_spanish.md").read_text()
    assert "Comentarios sobre lab00 para s_spanish" in spanish and "correcto" in spanish
    english = (feedback / "s_correct.html").read_text()
    assert '<html lang="en">' in english and f"{LAB00_FULL:g}/{LAB00_FULL:g} points" in english
    assert "Notes on your notebook" in (feedback / "s_sys_exit.md").read_text()
    assert "cut off before its end" in (feedback / "s_truncated.md").read_text()


def test_rerun_reuses_every_record_and_can_switch_language(batch):
    run = grade("lab00", batch["out"].parent / "submissions", "--out", batch["out"], "--seed", 1234,
                "--max-mb", 2, "--lang", "de")
    assert run.returncode == 0, run.stderr
    assert "31 submissions taken from earlier records; 0 graded now." in run.stdout
    book = json.loads((batch["out"] / "grades.json").read_text())
    entry = next(e for e in book["submissions"] if e["student"] == "s_spanish")
    assert entry["lang"] == "de" and "richtig" in entry["exercises"]["qk_scores"]["feedback"]
    assert "Rückmeldung zu lab00" in (batch["out"] / "feedback" / "s_spanish.md").read_text()

