"""Where student-controlled text and files enter the trusted grader: each attack class is one row, never a crash.

One batch (lab00, through the command line) grades an honest notebook beside
every attacker; the tests below read its gradebook. The unit tests around it
attack the pieces that need no sandbox: sanitize, the child's channel,
reading, magics, records and the three output formats.
"""
import csv
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corpus.lab00 import EXERCISES, answer_cells, answers, header

from autograder.grader import gradebook, sanitize
from autograder.grader.engine import CellEvent, Outcome
from autograder.grader.sandbox import ChildDied, ChildHandle
from autograder.grader.submissions import Submission, discover, read, strip_magics
from autograder.exercise import Feedback, Result
from autograder.labs import get_lab

LAB00_FULL = get_lab("lab00").max_score  # what an honest lab00 notebook earns

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "solutions" / "en" / "lab00_attention_by_hand.ipynb"
LAB01 = ROOT / "labs" / "en" / "lab01_masks.ipynb"


def grade(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def notebook_of(cells: list, metadata: dict | None = None) -> dict:
    """cells: code sources, or ("md", text) for a markdown cell."""
    out = []
    for cell in cells:
        if isinstance(cell, tuple):
            out.append({"cell_type": "markdown", "metadata": {}, "source": cell[1]})
        else:
            out.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                        "source": cell.splitlines(keepends=True)})
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"lang": "en"} if metadata is None else metadata,
            "cells": out}


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


# Student code that answers the grader's current request itself, on the grader's socket: it finds the
# worker's `request` and `self.sock` up the stack. %ID% in the payload becomes the request's id.
FORGER = textwrap.dedent('''
    import sys, json
    def forge(raw):
        frame = sys._getframe()
        while frame is not None:
            me, request = frame.f_locals.get("self"), frame.f_locals.get("request")
            if isinstance(request, dict) and hasattr(me, "sock"):
                me.sock.sendall(raw.replace(b"%ID%", str(request.get("id")).encode()))
                return
            frame = frame.f_back
    class Forged(list):
        payload = b""
        sent = False
        def _once(self):
            if not self.sent:
                self.sent = True
                forge(self.payload)
        def __iter__(self):
            self._once()
            return super().__iter__()
        def __len__(self):
            self._once()
            return super().__len__()
        def __getitem__(self, index):
            self._once()
            return super().__getitem__(index)
''')


def forged(name: str, payload, value) -> str:
    """`name` = a Forged list; payload: bytes, or the source of an expression the child evaluates."""
    return f"{name} = Forged({value!r})\n{name}.payload = {payload if isinstance(payload, str) else repr(payload)}\n"


BIG_ERROR = """b'{{"id": %ID%, "result": {{"error": {{"type": "E", "message": "' + b"A" * {} + b'"}}}}}}\\n'"""
MD_TRAP = "x\n\n**Score: 10/10**\n\n# Full marks | `code` <b>bold</b> [link](http://evil.example)"


def attackers(folder: Path, elsewhere: Path) -> dict:
    """Writes the batch; returns {student: what the test checks}."""
    def right(student, skip=()):
        return answer_cells(answers(student), skip=skip)

    subs = {}

    def add(student, cells, metadata=None, name=None):
        write(folder / f"{name or student}.ipynb", notebook_of(cells, metadata))
        subs[student] = True

    add("honest", [("md", "# Lab 00"), header("honest"), ("md", "## 1"), *right("honest"), ("md", "done")])
    add("u_cell_surrogate", [header("u_cell_surrogate"),
                             'raise ValueError("bad \\ud800 \\x1b[2J\\x1b]0;title\\x07 text")\n',
                             *right("u_cell_surrogate")])
    add("u_typed_surrogate", [header("\ud800typed\x1b[31m\u202e")])
    add("u_typed_huge", [header("A" * 100_000)])
    add("u_typed_forged", ['from autograder import Lab\nlab = Lab("lab00")\n', FORGER,
                           forged("STUDENT_ID", b'{"id": %ID%, "result": {"ok": {"__tensor__": [1, 2], '
                                                b'"dtype": "float", "shape": "no shape"}}}\n', ["x"])])
    add("u_deep_json", [header("u_deep_json"), FORGER,
                        forged("qk_scores", 'b"[" * 200_000 + b"\\n"', answers("u_deep_json")["qk_scores"]),
                        *right("u_deep_json", skip=("qk_scores",))])
    add("u_big_message", [header("u_big_message"), FORGER,
                          forged("scaled_scores", BIG_ERROR.format(500_000), answers("u_big_message")["scaled_scores"]),
                          forged("causal_mask_T4", BIG_ERROR.format(6_000_000),
                                 answers("u_big_message")["causal_mask_T4"]),
                          *right("u_big_message", skip=("scaled_scores", "causal_mask_T4"))])
    add("u_output", [header("u_output"),
                     'import os, sys\nprint("\\x1b[31mred\\x1b[0m")\nsys.stdout.flush()\n'
                     'os.write(1, b"\\xed\\xa0\\x80 \\x1b[2J raw\\n")\n',
                     *right("u_output")])
    for student in ("=1+2", "@SUM(A1)", "-2+3", "*star*<b>"):
        add(student, [header("+cmd|' /C calc'!A0")])
    bad_name = os.fsencode(folder) + b"/bad\xff\x1b[2Jname.ipynb"
    with open(bad_name, "wb") as handle:
        handle.write(json.dumps(notebook_of([header("x")])).encode())
    add("u_markdown", [header(MD_TRAP), f"raise ValueError({MD_TRAP!r})\n"])
    add("u_metadata", [header("u_metadata"), *right("u_metadata")],
        metadata={"lang": "\ud800\x1b[2J", "labbook": {"lab": "\ud800", "source": "\ud800/\x1b[2J.md"}})
    add("u_whitespace", [header("u_whitespace"), " " * 500_000 + "x\n", "\t" * 200_000 + "!\n",
                         "a = " * 100_000 + "%\n", "x." * 150_000 + "?\n", *right("u_whitespace")])
    add("u_cell_numbers", [("md", "# Lab"), header("u_cell_numbers"), ("md", "a"), ("md", "b"),
                           'raise ValueError("boom")\n', ("md", "c"), "def broken(:\n    pass\n",
                           *right("u_cell_numbers")])
    # links, flat and as an nbgrader student folder
    os.symlink(SOLUTION, folder / "u_link.ipynb")
    write(elsewhere / "lab00" / "attempt.ipynb", notebook_of([header("u_nbg_link"), *right("u_nbg_link")]))
    os.symlink(elsewhere, folder / "u_nbg_link")
    # another lab's notebook: by metadata, by its Lab() call, by its name in a student's folder
    write(folder / "u_wrong_meta.ipynb", LAB01.read_bytes())
    add("u_wrong_call", ['from autograder import Lab\nlab = Lab("lab02")\n'], metadata={})
    write(folder / "u_nbg_wrong" / "lab00" / "lab03_multi_head.ipynb", notebook_of(["x = 1\n"], metadata={}))
    return subs


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("boundary")
    subs, out = base / "subs", base / "out"
    attackers(subs, base / "elsewhere")
    run = grade("lab00", subs, "--out", out, "--timeout", 3, "--cell-timeout", 5, "--seed", 7, "--jobs", 2)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout
    book = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    return {"base": base, "subs": subs, "out": out, "run": run, "book": book,
            "entries": {entry["student"]: entry for entry in book["submissions"]}}


def points(entry) -> dict:
    return {name: item["points"] for name, item in entry["exercises"].items()}


def test_the_honest_neighbour_gets_exactly_its_points(batch):
    entry = batch["entries"]["honest"]
    assert (entry["status"], entry["score"], entry["max_score"]) == ("graded", LAB00_FULL, LAB00_FULL), entry
    assert all(item["status"] == "passed" for item in entry["exercises"].values())


def test_every_attacker_is_exactly_one_row(batch):
    students = [entry["student"] for entry in batch["book"]["submissions"]]
    assert len(students) == len(set(students)) == 22, students
    assert not any(entry["reason_code"] == "grader_error" for entry in batch["book"]["submissions"])
    for entry in batch["book"]["submissions"]:
        for item in entry["exercises"].values():
            assert "grader itself failed" not in item["feedback"], entry


def _clean(value) -> bool:
    text = json.dumps(value, ensure_ascii=False)
    return "\x1b" not in text and "\\u001b" not in text and not any(0xD800 <= ord(c) < 0xE000 for c in text) \
        and "\\ud800" not in text and "\u202e" not in text


def test_unencodable_and_escape_text_is_replaced_everywhere(batch):
    entries, out = batch["entries"], batch["out"]
    for path in [out / "grades.json", out / "grades.csv", *(out / "feedback").iterdir(),
                 *(out / ".autograder" / "records").iterdir()]:
        text = path.read_bytes().decode("utf-8")  # strict: every file is valid UTF-8
        assert "\x1b" not in text and "\\u001b" not in text and "\\ud800" not in text, path
    assert "\x1b" not in batch["run"].stdout and "\x1b" not in batch["run"].stderr
    cell = entries["u_cell_surrogate"]
    assert cell["score"] == LAB00_FULL and any("bad \ufffd \ufffd[2J" in c["text"] for c in cell["cells"]), cell["cells"]
    typed = entries["u_typed_surrogate"]
    assert typed["status"] == "graded" and typed["typed_id"] == "\ufffdtyped\ufffd[31m\ufffd" and typed["id_mismatch"]
    assert entries["u_metadata"]["score"] == LAB00_FULL and entries["u_metadata"]["lang"] == "en"
    assert "bad\ufffd\ufffd[2Jname" in entries
    record = next(json.loads(p.read_text()) for p in (out / ".autograder" / "records").iterdir()
                  if json.loads(p.read_text())["student"] == "u_output")
    assert "red" in record["output"] and "raw" in record["output"] and _clean(record)


def test_a_typed_id_of_an_odd_type_or_size_is_the_students_problem(batch):
    forged = batch["entries"]["u_typed_forged"]
    assert forged["status"] == "graded" and forged["score"] == 0
    assert all(item["status"] == "not_answered" and "could not use the value of STUDENT_ID" in item["feedback"]
               for item in forged["exercises"].values()), forged
    huge = batch["entries"]["u_typed_huge"]
    assert huge["status"] == "graded" and len(huge["typed_id"]) < 250 and huge["typed_id"].endswith("characters]")


def test_a_garbled_or_huge_answer_costs_only_its_exercise(batch):
    deep = batch["entries"]["u_deep_json"]
    assert points(deep) == {**{name: 2 for name in EXERCISES}, "qk_scores": 0}, deep
    assert "garbled the channel" in deep["exercises"]["qk_scores"]["feedback"]
    big = batch["entries"]["u_big_message"]
    assert points(big) == {**{name: 2 for name in EXERCISES}, "scaled_scores": 0, "causal_mask_T4": 0}, big
    assert len(big["exercises"]["scaled_scores"]["feedback"]) < gradebook.FEEDBACK_CHARS + 100
    assert "garbled the channel" in big["exercises"]["causal_mask_T4"]["feedback"]  # 6 MB: a protocol error
    assert (batch["out"] / "grades.json").stat().st_size < 1 << 20


def test_pathological_lines_are_graded_like_any_other(batch):
    entry = batch["entries"]["u_whitespace"]
    assert (entry["status"], entry["score"]) == ("graded", 10), entry


def test_csv_cells_never_start_a_formula(batch):
    rows = list(csv.reader((batch["out"] / "grades.csv").open(encoding="utf-8-sig")))
    for row in rows[1:]:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row), row
    students = {row[0] for row in rows[1:]}
    assert {"'=1+2", "'@SUM(A1)", "'-2+3"} <= students
    typed = [row[-2] for row in rows[1:] if row[0] == "'=1+2"]
    assert typed == ["'+cmd|' /C calc'!A0"]


def test_markdown_feedback_cannot_forge_lines_or_markup(batch):
    feedback = batch["out"] / "feedback"
    name = next(p for p in feedback.glob("*.md") if p.stem == "u_markdown")
    markdown = name.read_text(encoding="utf-8")
    lines = markdown.splitlines()
    assert markdown.count("**Score") == 1 and f"**Score: 0/{LAB00_FULL:g} points**" in lines, markdown
    assert [line for line in lines if line.startswith("#")] == ["# Feedback on lab00 for u_markdown",
                                                                "## Notes on your notebook's cells"]
    assert "<b>" not in markdown and "[link](" not in markdown and "\\*\\*Score: 10/10\\*\\*" in markdown
    assert "\\| \\`code\\` &lt;b&gt;bold&lt;/b&gt; \\[link\\]" in markdown
    html_text = name.with_suffix(".html").read_text(encoding="utf-8")
    assert "<b>" not in html_text and "&lt;b&gt;bold" in html_text
    spreadsheet = next(p for p in feedback.glob("*.md") if p.stem.startswith("1"))
    assert spreadsheet.read_text().startswith("# Feedback on lab00 for =1+2\n")  # = starts no line here
    starred = next(p for p in feedback.glob("*.md") if p.stem.startswith("star"))
    assert starred.read_text().startswith("# Feedback on lab00 for \\*star\\*&lt;b&gt;\n")


def test_links_are_refused(batch):
    for student in ("u_link", "u_nbg_link"):
        entry = batch["entries"][student]
        assert (entry["status"], entry["score"], entry["reason_code"]) == ("invalid", 0, "symlink"), entry
        assert "symbolic link" in entry["reason"]


def test_following_links_on_request(batch):
    subs, out = batch["base"] / "linked", batch["base"] / "linked-out"
    subs.mkdir()
    os.symlink(SOLUTION, subs / "u_link.ipynb")
    run = grade("lab00", subs, "--out", out, "--seed", 7, "--jobs", 1, "--follow-symlinks")
    assert run.returncode == 0, run.stderr[-3000:]
    entry = json.loads((out / "grades.json").read_text())["submissions"][0]
    assert entry["status"] == "graded" and entry["reason_code"] is None and entry["score"] > 0, entry


def test_a_notebook_of_another_lab_is_a_wrong_lab_row(batch):
    entries = batch["entries"]
    meta = entries["u_wrong_meta"]
    assert (meta["status"], meta["score"], meta["reason_code"]) == ("wrong_lab", 0, "wrong_lab")
    assert "This notebook is lab01 (masks), but this batch grades lab00" in meta["reason"]
    assert "lab02, but this batch grades lab00" in entries["u_wrong_call"]["reason"]
    assert entries["u_nbg_wrong"]["status"] == "wrong_lab" and "lab03" in entries["u_nbg_wrong"]["reason"]
    assert entries["u_wrong_meta"]["duration"] == 0.0  # nothing ran
    assert ", 3 of another lab, " in batch["run"].stdout
    assert "wrong lab: u_wrong_meta: lab01, not lab00" in batch["run"].stdout
    rows = {row["student"]: row for row in csv.DictReader((batch["out"] / "grades.csv").open(encoding="utf-8-sig"))}
    assert rows["u_wrong_meta"]["status"] == "wrong_lab" and rows["u_wrong_meta"]["reason"] == "wrong_lab"


def test_cell_numbers_are_the_ones_jupyter_shows(batch):
    notes = [c["text"] for c in batch["entries"]["u_cell_numbers"]["cells"]]
    assert any(n.startswith("cell 5 raised ValueError: boom") for n in notes), notes
    assert any(n.startswith("cell 7 raised SyntaxError") and "<cell 7>" in n for n in notes), notes
    record = next(json.loads(p.read_text()) for p in (batch["out"] / ".autograder" / "records").iterdir()
                  if json.loads(p.read_text())["student"] == "u_cell_numbers")
    assert sorted(c["cell"] for c in record["cells"]) == [5, 7]


def test_the_gradebook_is_for_the_instructor_only(batch):
    out = batch["out"]
    folders = [out, out / "feedback", out / ".autograder", out / ".autograder" / "records",
               out / ".autograder" / "logs"]
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    files = [out / "grades.json", out / "grades.csv", *(out / "feedback").iterdir(),
             *(out / ".autograder" / "records").iterdir()]
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_resuming_from_records_with_bad_text_works(batch):
    out, records = batch["out"], batch["out"] / ".autograder" / "records"
    path = next(p for p in records.iterdir() if json.loads(p.read_text())["student"] == "honest")
    record = json.loads(path.read_text())
    record["exercises"]["qk_scores"]["feedback"]["en"] = "old \ud800 \x1b[2J" + "Z" * 3_000_000
    record["cells"] = [{"cell": 1, "kind": "error", "text": {"en": "\ud800" * 10}}]
    record.update({"typed_id": "\ud800\x1b[2J", "path": "p\ud800\x1b]0;x\x07"})
    path.write_text(json.dumps(record))  # ASCII escapes: what an older grader could have stored
    run = grade("lab00", batch["subs"], "--out", out, "--seed", 7)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "22 submissions taken from earlier records; 0 graded now." in run.stdout
    book = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    honest = next(e for e in book["submissions"] if e["student"] == "honest")
    assert honest["score"] == LAB00_FULL and _clean(honest)
    assert len(honest["exercises"]["qk_scores"]["feedback"]) < gradebook.FEEDBACK_CHARS + 100


# ---------------------------------------------------------------- pieces, without a sandbox
def test_sanitize_text():
    assert sanitize.text("a\ud800b\x1b[31m\x07\x9b\u202e\r\nc\td") == "a\ufffdb\ufffd[31m\ufffd\ufffd\ufffd\nc\td"
    assert sanitize.text("a\nb\tc\u2028d", newlines=False) == "a b c d"
    assert sanitize.text("x" * 50, limit=10) == "x" * 10 + "…[+40 characters]"
    assert sanitize.text(12) == "12"


def test_sanitize_message_cleans_and_refuses():
    clean = sanitize.message({"a\ud800": ["\x1b", 1, 2.5, None, True, {"b": "c" * 9000}]})
    assert clean == {"a\ufffd": ["\ufffd", 1, 2.5, None, True, {"b": "c" * sanitize.MESSAGE_STRING + "…[+5000 characters]"}]}
    nested = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(sanitize.ProtocolError, match="nested"):
        sanitize.message({"x": nested})
    with pytest.raises(sanitize.ProtocolError, match="items"):
        sanitize.message({"x": [[0.0] * 1000] * 3000})
    with pytest.raises(sanitize.ProtocolError, match="text"):
        sanitize.message({"x": ["y" * 100_000] * 20})


def _channel(*lines: bytes):
    """A ChildHandle whose child is a thread writing `lines` and hanging up."""
    import threading

    ours, theirs = socket.socketpair()
    read_end, write_end = os.pipe()
    os.close(write_end)

    def child():
        theirs.sendall(b"".join(lines))
        theirs.close()

    sender = threading.Thread(target=child, daemon=True)
    sender.start()
    return ChildHandle(ours, read_end, 1 << 16), sender


@pytest.mark.parametrize("line,problem", [
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "RecursionError"),
    (b'{"x": ' + b"[" * 500 + b"]" * 500 + b"}\n", "nested"),
    (b'{"x": "' + b"y" * (2 << 20) + b'"}\n', "too much text"),
    (b"not json\n", "JSONDecodeError"),
    (b'{"x": "\xff"}\n', "UnicodeDecodeError"),
])
def test_the_childs_channel_turns_nonsense_into_child_died(line, problem):
    import time

    handle, sender = _channel(line)
    try:
        with pytest.raises(ChildDied, match=problem) as died:
            handle.receive(time.monotonic() + 20)
        assert "unreadable" in str(died.value)
    finally:
        sender.join(timeout=20)
        handle.close()


def test_the_childs_channel_cleans_what_it_passes_on():
    import time

    handle, sender = _channel(b'{"cell_error": 0, "message": "\\ud800 \\u001b[2J"}\n')
    try:
        assert handle.receive(time.monotonic() + 20) == {"cell_error": 0, "message": "\ufffd \ufffd[2J"}
    finally:
        sender.join(timeout=20)
        handle.close()


def test_captured_output_is_cleaned_where_it_is_read():
    ours, theirs = socket.socketpair()
    read_end, write_end = os.pipe()
    os.write(write_end, b"\x1b[2Jred \xed\xa0\x80 \x9b31m\r\nok\n" + b"x" * 100)
    os.close(write_end)
    handle = ChildHandle(ours, read_end, 40)
    try:
        handle.drain()
        text = handle.output_text()
    finally:
        handle.close()
        theirs.close()
    assert text.startswith("\ufffd[2Jred \ufffd\ufffd\ufffd \ufffd31m\nok\n") and "more bytes not kept" in text, text


PATHOLOGICAL = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from autograder.grader.submissions import Submission, read, strip_magics, discover
    from autograder.grader.gradebook import feedback_name
    lines = [" " * 1_000_000 + "x", " " * 1_000_000 + "x%", " " * 300_000 + "a?" + " " * 300_000 + "x",
             "\\t" * 1_000_000 + "!", "a = " * 250_000 + "%", "x." * 500_000 + "?",
             " \\t" * 400_000 + "= !", "?" + "a." * 400_000 + " " * 100_000 + "x", "Lab(" + " " * 900_000,
             "%time" + " " * 1_000_000, "a, " * 300_000 + "= %x"]
    for line in lines:
        strip_magics(line + "\\n")
        feedback_name(line)
    folder = Path(sys.argv[1])
    path = folder / "p.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "metadata": {"labbook": {"source": " " * 500_000}},
                                "cells": [{"cell_type": "code", "source": line} for line in lines[:2]]}))
    submission = read(Submission("p", path, root=folder))
    assert submission.invalid is None and len(submission.cells) == 2, submission.invalid
    print("ok")
''')


def test_no_pathological_line_makes_the_grader_backtrack(tmp_path):
    # a timeout, not a speed measurement: the former regular expressions took hours on these lines
    run = subprocess.run([sys.executable, "-c", PATHOLOGICAL, str(tmp_path)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "shared")})
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


def test_strip_magics_reads_lines_as_the_former_regular_expressions_did():
    import random
    import re

    line_magic = re.compile(r"^(?P<indent>[ \t]*)(?:[\w.\[\], ]+\s*=\s*)?[%!]")
    time_magic = re.compile(r"^(?P<indent>[ \t]*)%time\s+(?P<code>.+)$")
    help_line = re.compile(r"^(?P<indent>[ \t]*)[\w.]+\?\??\s*$|^(?P<indent2>[ \t]*)\?\??[\w.]+\s*$")
    from autograder.grader.submissions import _is_python_modulo

    def former(line: str) -> str:
        timed = time_magic.match(line)
        if timed:
            return timed.group("indent") + timed.group("code")
        if line_magic.match(line) and not _is_python_modulo(line):
            return line_magic.match(line).group("indent") + "pass"
        match = help_line.match(line)
        if match:
            return (match.group("indent") or match.group("indent2") or "") + "pass"
        return line

    pieces = [" ", "\t", "a", "x", ".", "=", "%", "!", "?", "[", "]", ",", "\x1f", "é", "1", "_", "(", "%time",
              "\u3000", "!="]
    rng = random.Random(5)
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        if line.lstrip().startswith("%%"):
            continue  # a cell magic: the cell's first line, not a line's rule
        assert strip_magics(line)[0] == former(line), repr(line)


def test_reading_opens_the_file_once_bounded_and_hashes_what_it_grades(tmp_path, monkeypatch):
    path = write(tmp_path / "ana.ipynb", notebook_of(["x = 1\n"]))
    calls = []
    real_open, real_read = os.open, os.read
    monkeypatch.setattr(os, "open", lambda *a, **k: calls.append(a[0]) or real_open(*a, **k))
    monkeypatch.setattr(os, "read", lambda fd, n: calls.append(n) or real_read(fd, n))
    submission = read(Submission("ana", path, root=tmp_path), max_bytes=1000)
    assert submission.invalid is None and submission.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [c for c in calls if isinstance(c, str) and c.endswith("ana.ipynb")] == ["ana.ipynb"]
    assert all(n <= 1001 for n in calls if isinstance(n, int))
    monkeypatch.undo()
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    assert read(Submission("fifo", fifo, root=tmp_path)).invalid == "unreadable"  # and no hang


def test_links_anywhere_below_the_path_given_are_refused(tmp_path):
    real = write(tmp_path / "real" / "s" / "lab00" / "x.ipynb", notebook_of(["x = 1\n"]))
    subs = tmp_path / "subs"
    subs.mkdir()
    os.symlink(real, subs / "file.ipynb")
    os.symlink(real.parent.parent, subs / "folder")
    os.symlink(tmp_path / "nowhere", subs / "dangling.ipynb")
    found = discover([subs], "lab00")
    got = {s.student: read(s).invalid for s in found.submissions}
    assert got == {"file": "symlink", "folder": "symlink", "dangling": "symlink"}
    followed = {s.student: read(s, follow_symlinks=True).invalid for s in discover([subs], "lab00").submissions}
    assert followed == {"file": None, "folder": None, "dangling": "unreadable"}
    linked_root = tmp_path / "root-link"
    os.symlink(subs, linked_root)  # the PATH given itself is the instructor's: a link there is fine
    write(subs / "plain.ipynb", notebook_of(["x = 1\n"]))
    plain = next(s for s in discover([linked_root], "lab00").submissions if s.student == "plain")
    assert read(plain).invalid is None


def test_student_ids_from_names_are_clean(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/a\xff\x1b[2J\xe2\x80\xae.ipynb", "wb") as handle:
        handle.write(json.dumps(notebook_of(["x = 1\n"])).encode())
    (folder / ("b" * 240 + ".ipynb")).write_text(json.dumps(notebook_of(["x = 1\n"])))
    students = sorted(s.student for s in discover([folder], "lab00").submissions)
    assert students[0] == "a\ufffd\ufffd[2J\ufffd" and students[1].startswith("b" * 200 + "…")
    for submission in discover([folder], "lab00").submissions:
        assert read(submission).invalid is None


@pytest.mark.parametrize("metadata,cells,name,lab", [
    ({"labbook": {"lab": "lab01", "source": "x/lab02_causal_attention.md"}}, [], "s", "lab01"),
    ({"labbook": {"kind": "lab", "source": "sources/solutions/en/lab02_causal_attention.md"}}, [], "s", "lab02"),
    ({}, ["import torch\n", "lab = Lab( 'lab03')\n"], "s", "lab03"),
    ({}, ["x = 1\n"], "lab04_kv_cache", "lab04"),
    ({"labbook": {"lab": ["lab01"], "source": 7}}, ["x = 1\n"], "s", None),
])
def test_the_lab_a_notebook_says_it_is(tmp_path, metadata, cells, name, lab):
    path = write(tmp_path / f"{name}.ipynb", notebook_of(cells, metadata))
    assert read(Submission(name, path, root=tmp_path)).lab == lab


def test_cell_numbers_count_every_cell(tmp_path):
    path = write(tmp_path / "a.ipynb", notebook_of([("md", "x"), "a = 1\n", ("md", "y"), ("md", "z"), "b = 2\n"]))
    assert read(Submission("a", path, root=tmp_path)).cell_numbers == [2, 5]


def _outcome(text: str) -> Outcome:
    result = Result("qk_scores", 0, 2, "error", [Feedback("common.raised", {
        "name": "qk_scores", "case": "c", "type": "E", "message": text})])
    return Outcome("graded", [result], [CellEvent(0, "error", {"type": "E", "message": text}, number=3)], None,
                   False, text, 1)


def test_records_cap_feedback_and_keep_jupyters_cell_numbers(tmp_path):
    spec = get_lab("lab00")
    submission = Submission("ana", tmp_path / "ana.ipynb")
    record = gradebook.graded_record(spec, submission, "k", "--seed", _outcome("A" * 6_000_000), 1.0, "bwrap")
    assert all(len(text) < gradebook.FEEDBACK_CHARS + 100 for text in record["exercises"]["qk_scores"]["feedback"].values())
    assert record["cells"][0]["cell"] == 3 and len(json.dumps(record)) < 200_000


def test_records_that_cannot_be_used_are_graded_again(tmp_path):
    spec = get_lab("lab00")
    record = gradebook.invalid_record(spec, Submission("ana", tmp_path / "a.ipynb", invalid="empty"), "k1", "x")
    gradebook.save_record(tmp_path, "k1", record)
    assert gradebook.load_record(tmp_path, "k1")["student"] == "ana"
    for change in ({"score": "10"}, {"exercises": {"qk_scores": {"points": None}}}, {"cells": [7]}):
        gradebook.save_record(tmp_path, "k1", {**record, **change})
        assert gradebook.load_record(tmp_path, "k1") is None, change
    (gradebook.records_dir(tmp_path) / "k1.json").write_text("[" * 100_000)
    assert gradebook.load_record(tmp_path, "k1") is None


def test_markdown_and_csv_escaping():
    assert gradebook.md_text("# a\n**b** _c_ s_spanish `d` [e](f) <g> | h \\ ~i~ &amp;") == (
        "\\# a \\*\\*b\\*\\* \\_c\\_ s_spanish \\`d\\` \\[e\\](f) &lt;g&gt; \\| h \\\\ \\~i\\~ &amp;amp;")
    assert gradebook.md_text("- item") == "\\- item" and gradebook.md_text("12. x") == "12\\. x"
    assert [gradebook._csv_text(t) for t in ("=1", "+1", "-1", "@x", "\tx", "\rx", "ana", "")] == [
        "'=1", "'+1", "'-1", "'@x", " x", " x", "ana", ""]  # a tab or CR is one line's space, no formula
