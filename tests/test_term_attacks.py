"""Attacks on a term's intake, each with the attacking file: who owns a file, which layout, names, static
analysis, student files that are no files. One small class is graded once for the module; everything else
is checked without grading.

- identity: a name the student chose (Canvas's display name, Moodle's original file name) must never
  credit a file to another student;
- layout: one Canvas-looking file among flat ones does not make a Canvas download;
- names: escapes, bidi overrides, invisible characters and look-alike ids never reach a summary raw,
  never make two students one, and are flagged;
- analysis: a notebook nested deeper than the grader's stack does not stop the class;
- files: a FIFO or a link as nbgrader's timestamp.txt is never waited on, never followed.
"""
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from corpus import term as T
from corpus.notebooks import with_definition

from autograder.grader.submissions import UsageError
from autograder.term import analysis, code, files, identity, layouts, names, roster
from autograder.term.sources import Item

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = json.loads((ROOT / "solutions/en/lab01_masks.ipynb").read_text())
CAUSAL_POINTS = T.SPEC.exercise("causal_mask").points

# correct at run time, but its stub's message nests deeper than the grader's stack can unparse
DEEP_STUB = ("def causal_mask(T: int) -> torch.Tensor:\n    raise NotImplementedError(" + "1" + " + 1" * 600 + ")\n")
# a right answer holding a literal nested 80 deep: more than code.MAX_DEPTH, far less than Python's limits
DEEP_RIGHT = ("def causal_mask(T: int) -> torch.Tensor:\n    unused = " + "[" * 80 + "0" + "]" * 80 + "\n"
              "    return torch.full((T, T), float(\"-inf\")).triu(diagonal=1)\n")
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\u202eevil"
CYRILLIC_ALICE = "\u0430lice"  # а (Cyrillic) + lice
INVISIBLE_ALICE = "ali\u200bce"


def items(*item_names):
    return [Item(name, Path("/nonexistent") / name, Path("/nonexistent"), "dl.zip", order=i)
            for i, name in enumerate(item_names)]


def written_roster(tmp_path: Path, text: str) -> roster.Roster:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return roster.load(path)


# ---------------------------------------------------------------- identity
def test_a_moodle_file_name_cannot_claim_another_participant():
    """Moodle writes no `_` into the name: the first `_<id>_assignsubmission_` is the one Moodle wrote."""
    parsed = layouts.parse(items("Att Acker_102_assignsubmission_file_x_101_assignsubmission_file_lab01.ipynb",
                                 "Vic Tim_101_assignsubmission_file_lab01.ipynb"), "moodle", "lab01")
    owners = sorted((e.key, e.name) for e in parsed.entries)
    assert owners == [("101", "Vic Tim"), ("102", "Att Acker")]


def test_a_moodle_name_must_be_the_roster_name_of_that_id(tmp_path):
    class_list = written_roster(tmp_path, "student,name,lms_id\ns1,Vic Tim,101\ns2,Att Acker,102\n")
    parsed = layouts.parse(items("Att Acker_101_assignsubmission_file_/lab01.ipynb",  # someone else's id
                                 "Participant_101_assignsubmission_file_/lab01.ipynb",  # blind marking: no name
                                 "TIM, Vic_101_assignsubmission_file_/lab01.ipynb"), "moodle", "lab01")
    decisions = [identity.decide(e, class_list) for e in parsed.entries]
    assert [(d.student, d.problem) for d in decisions] == [(None, "name_mismatch"), ("s1", None), ("s1", None)]


@pytest.mark.parametrize("with_names", [False, True])
def test_a_canvas_name_readable_as_two_students_is_refused_or_read_by_the_names(tmp_path, with_names):
    """A Canvas display name the student set to `evil_222 _99999999` becomes `evil_222_99999999` in the zip:
    Canvas's first reading says user 222 (the victim), the other says 111 (the uploader)."""
    text = ('student,lms_id,name\nvic,222,"Tim, Vic"\nevil,111,evil_222 _99999999\n' if with_names
            else "student,lms_id\nvic,222\nevil,111\n")
    class_list = written_roster(tmp_path, text)
    parsed = layouts.parse(items("evil_222_99999999_111_801_lab01_masks.ipynb"), "canvas", "lab01")
    decision = identity.decide(parsed.entries[0], class_list)
    if with_names:
        assert (decision.student, decision.problem) == ("evil", None)
    else:
        assert (decision.student, decision.problem, decision.detail) == (None, "ambiguous", "evil, vic")


def test_a_flat_stem_that_is_one_student_id_and_another_lms_id_is_refused(tmp_path):
    class_list = written_roster(tmp_path, "student,lms_id\n7,100\nann,7\n")
    parsed = layouts.parse(items("7.ipynb"), "flat", "lab01")
    assert identity.decide(parsed.entries[0], class_list).problem == "ambiguous"


# ---------------------------------------------------------------- layout
def test_one_canvas_looking_name_does_not_make_a_flat_folder_canvas():
    parsed = layouts.parse(items("s1.ipynb", "s2.ipynb", "s3.ipynb", "s4.ipynb", "x_1_2_lab01.ipynb"), "auto", "lab01")
    assert parsed.layout == "flat" and sorted(e.key for e in parsed.entries) == ["s1", "s2", "s3", "s4", "x_1_2_lab01"]


def test_a_download_no_layout_explains_stops_and_asks(tmp_path, capsys):
    from autograder.grader import cli

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("doe_11_21_lab01.ipynb", "roe_12_22_lab01.ipynb", "Al Bo_13_assignsubmission_file_lab01.ipynb",
                 "Cy Di_14_assignsubmission_file_lab01.ipynb", "s5.ipynb"):
        (mixed / name).write_text(json.dumps(SOLUTION))
    (tmp_path / "roster.csv").write_text("student\ns5\n")
    assert cli.main(["grade", "lab01", str(mixed), "--out", str(tmp_path / "out"), "--seed", "1",
                     "--roster", str(tmp_path / "roster.csv")]) == 2
    error = capsys.readouterr().err
    assert "no layout explains most of its 5 notebooks (names that fit each: canvas 2, moodle 2, nbgrader 0, flat 1)" \
        in error and "--layout" in error
    assert not (tmp_path / "out" / "grades.json").exists()


# ---------------------------------------------------------------- names
def test_a_roster_record_ends_only_at_cr_or_lf(tmp_path):
    class_list = written_roster(tmp_path, "student,name\ns1,Ana\u2028Lopez\ns2,Bo\u0085Ray\u2029x\ns3,Cy\n")
    assert [(s.student, s.name) for s in class_list.students] == [("s1", "Ana Lopez"), ("s2", "Bo Ray x"),
                                                                  ("s3", "Cy")]


def test_names_and_ids_are_cleaned_where_they_enter(tmp_path):
    class_list = written_roster(tmp_path, f"student,name\n{INVISIBLE_ALICE},Ann\u00ad Lee\u200b\ns2,{ESCAPES}\n")
    first, second = class_list.students
    assert first.student == "ali<U+200B>ce" and first.name == "Ann Lee"  # an id shows it, a name loses it
    assert "\x1b" not in second.name and "\x07" not in second.name and "\u202e" not in second.name
    assert names.lookalikes(["alice", CYRILLIC_ALICE, names.ident(INVISIBLE_ALICE), "Alice", "bob"]) == {
        "alice": sorted([CYRILLIC_ALICE, "ali<U+200B>ce", "Alice"]),
        CYRILLIC_ALICE: sorted(["alice", "ali<U+200B>ce", "Alice"]),
        "ali<U+200B>ce": sorted(["alice", CYRILLIC_ALICE, "Alice"]),
        "Alice": sorted(["alice", CYRILLIC_ALICE, "ali<U+200B>ce"])}


# ---------------------------------------------------------------- static analysis
def test_code_nested_deeper_than_the_stack_is_not_analysed_and_never_raises_out():
    assert code.graded_code([DEEP_STUB], ["causal_mask"]) == {}  # a stub, found without unparsing it
    with pytest.raises(code.NotAnalysed):
        code.graded_code([DEEP_RIGHT], ["causal_mask"])
    assert code.forbidden_uses([DEEP_RIGHT], "causal_mask", ("F.scaled_dot_product_attention",)) == []


def test_the_analysis_of_a_deep_notebook_is_a_note(tmp_path):
    path = tmp_path / "deep.ipynb"
    path.write_text(json.dumps(with_definition(SOLUTION, "causal_mask", DEEP_RIGHT)))
    found = analysis.analyse(T.SPEC, "s1", path, tmp_path, 1 << 22)
    assert found[analysis.NOT_ANALYSED] == [f"graded code (nested more than {code.MAX_DEPTH} levels deep)"]


# ---------------------------------------------------------------- files that are no files
def _parse_in_time(found, seconds=20):
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("parsed", layouts.parse(found, "nbgrader", "lab01")),
                              daemon=True)
    worker.start()
    worker.join(seconds)
    return result.get("parsed")


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_fifo_or_a_link_as_timestamp_is_never_waited_on_nor_followed(tmp_path, kind):
    folder = tmp_path / "submitted" / "s1" / "lab01"
    folder.mkdir(parents=True)
    (folder / "lab01.ipynb").write_text(json.dumps(SOLUTION))
    stamp = folder / "timestamp.txt"
    secret = tmp_path / "secret.txt"
    secret.write_text("2020-01-01 00:00:00 UTC")
    if kind == "fifo":
        os.mkfifo(stamp)
    else:
        stamp.symlink_to(secret)
    root = tmp_path / "submitted"
    found = [Item(p.relative_to(root).as_posix(), p, root, "submitted") for p in sorted(folder.iterdir())]
    parsed = _parse_in_time(found)
    if parsed is None and kind == "fifo":
        fd = os.open(stamp, os.O_WRONLY | os.O_NONBLOCK)  # let the blocked reader go
        os.close(fd)
    assert parsed is not None, "reading timestamp.txt blocked"
    entry = parsed.entries[0]
    assert entry.timestamp is None and "not read" in entry.timestamp_problem
    with pytest.raises(files.Refused):
        files.read_regular(stamp, root, 200)


# ---------------------------------------------------------------- one class, graded once
@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """A Canvas zip and a flat folder, no roster: a victim and the file that claims to be theirs, a notebook
    too deep for the grader's stack, one nested past the analysis bound, a member named with escapes, and
    three students whose ids read as `alice`."""
    work = tmp_path_factory.mktemp("attacked")
    blank = json.loads((ROOT / "labs/en/lab01_masks.ipynb").read_text())
    with zipfile.ZipFile(work / "canvas.zip", "w") as archive:
        archive.writestr("timvic_222_800_lab01_masks.ipynb", json.dumps(SOLUTION))
        archive.writestr("evil_222_99999999_111_801_lab01_masks.ipynb", json.dumps(blank))
        archive.writestr("deep_333_802_lab01_masks.ipynb",
                         json.dumps(with_definition(SOLUTION, "causal_mask", DEEP_STUB)))
        archive.writestr("far_555_804_lab01_masks.ipynb",
                         json.dumps(with_definition(SOLUTION, "causal_mask", DEEP_RIGHT)))
        archive.writestr(f"{ESCAPES}_444_803_lab01_masks.ipynb", json.dumps(SOLUTION))
    flat = work / "flat"
    flat.mkdir()
    for stem in ("alice", CYRILLIC_ALICE, INVISIBLE_ALICE):
        (flat / f"{stem}.ipynb").write_text(json.dumps(SOLUTION))
    out = work / "out"
    result = subprocess.run([sys.executable, "-m", "autograder", "grade", "lab01", str(work / "canvas.zip"), str(flat),
                             "--out", str(out), "--seed", "5", "--jobs", "2", "--quiet"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    return result, out


def book_rows(out: Path) -> dict:
    return {row["student"]: row for row in json.loads((out / "grades.json").read_text())["submissions"]}


def test_the_class_is_graded_whatever_its_attackers_did(attacked):
    result, out = attacked
    assert result.returncode == 0, result.stdout + result.stderr
    found = book_rows(out)
    assert sorted(found) == sorted(["222", "333", "555", "alice", CYRILLIC_ALICE, "ali<U+200B>ce"])
    assert found["222"]["score"] == T.MAX  # the victim keeps their own notebook
    assert found["333"]["score"] == T.MAX - CAUSAL_POINTS  # the deep stub is a stub: its points, nothing else


def test_a_file_readable_as_two_students_is_refused_and_reported(attacked):
    result, out = attacked
    grades = json.loads((out / "grades.json").read_text())
    refused = [u for u in grades["unknown_student"] if u["reason"] == "ambiguous"]
    assert [(u["file"].rsplit(": ", 1)[1], u["detail"]) for u in refused] == \
        [("evil_222_99999999_111_801_lab01_masks.ipynb", "111, 222, 99999999")]
    assert "refused (its name reads as the file of more than one student: 111, 222, 99999999; not graded, not " \
        "guessed)" \
        in result.stdout
    assert "ambiguous_owner,222,evil," in (out / "unmatched.csv").read_text()


def test_nothing_raw_reaches_the_summary_or_the_gradebook(attacked):
    result, out = attacked
    for text in (result.stdout, result.stderr, (out / "grades.json").read_text(), (out / "grades.csv").read_text(),
                 (out / "unmatched.csv").read_text()):
        assert not any(c in text for c in ("\x1b", "\x07", "\u202e", "\u200b")), repr(text[:200])
    assert "unparsed file name (not graded, not guessed): " in result.stdout and "pwned" in result.stdout


def test_look_alike_ids_are_flagged_in_rows_and_summary(attacked):
    result, out = attacked
    found = book_rows(out)
    assert found["alice"]["lookalike"] == sorted([CYRILLIC_ALICE, "ali<U+200B>ce"])
    assert found[CYRILLIC_ALICE]["lookalike"] == sorted(["alice", "ali<U+200B>ce"])
    assert found["222"]["lookalike"] == []
    line = next(line for line in result.stdout.splitlines() if line.startswith("look-alike ids"))
    assert all(repr(s) in line for s in ("alice", CYRILLIC_ALICE, "ali<U+200B>ce"))


def test_code_past_the_analysis_bound_is_graded_with_a_note(attacked):
    result, out = attacked
    row = book_rows(out)["555"]
    assert row["score"] == T.MAX and row["not_analysed"] == [f"graded code (nested more than {code.MAX_DEPTH} "
                                                             "levels deep)"]
    assert "not analysed: 555: graded code" in result.stdout
    assert len(row["notes"]) == 1 and "could not be checked" in row["notes"][0]
