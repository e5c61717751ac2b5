"""Attack classes beyond tests/test_grader_boundary.py: each is one sensible row, the honest neighbour keeps its points.

One lab00 batch through the command line grades an honest notebook beside
attackers that forge answers on the child's socket (an error that is a string,
a plain dict, a tensor whose shape does not fit its numbers, an int no float
holds), return objects that only call themselves torch.Tensor, return a meta
tensor, raise exceptions whose __str__ raises SystemExit, fail in 300 cells,
or hand in a FIFO or a folder named like a notebook. Before the fixes these
gave "the grader itself failed", "not answered", a crashed cell, a record of
megabytes, or no row at all.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.lab00 import EXERCISES, answer_cells, answers, header
from test_grader_boundary import FORGER, forged, notebook_of, write

from autograder.grader import gradebook, sanitize

ROOT = Path(__file__).resolve().parents[1]

FAKE_TENSOR = '''
class Fake:
    """Calls itself torch.Tensor; its shape fits neither its numbers nor any array."""
    shape = SHAPE
    dtype = "float32"
    def detach(self): return self
    def to(self, *a): return self
    def reshape(self, *a): return self
    def numel(self): return 2
    def is_complex(self): return False
    def double(self): return self
    def tolist(self): return [1.0, 2.0]
Fake.__module__, Fake.__qualname__ = "torch", "Tensor"
'''


def _answer(payload: bytes) -> bytes:
    return b'{"id": %ID%, "result": ' + payload + b'}\n'


FORGERIES = {  # exercise -> a forged answer to its request that no worker sends
    "qk_scores": _answer(b'{"error": "boom"}'),
    "scaled_scores": _answer(b'{"ok": {"a": 1}}'),
    "causal_mask_T4": _answer(b'{"ok": {"__tensor__": [' + b"1" * 4000 + b'], "dtype": "float32", "shape": [1]}}'),
    "attention_weights": _answer(b'{"ok": {"__tensor__": [1, 2], "dtype": "float32", "shape": [5, 5]}}'),
    "attention_output": _answer(b'{"ok": {"__tuple__": 5}}'),
}
FORGERIES_2 = {
    "qk_scores": _answer(b'{"error": {"type": "E", "message": "m"}, "points": 2}'),
    "scaled_scores": _answer(b'{"ok": {"__tensor__": null, "dtype": "float32", "shape": 7}}'),
    "causal_mask_T4": _answer(b'{"ok": {"__object__": 5}}'),
    "attention_weights": _answer(b'{"ok": {"__tensor__": [[1, [2]]], "dtype": 5, "shape": [2]}}'),
}
MANY_CELLS = 300


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("attacks")
    subs, out = base / "subs", base / "out"

    def add(student, cells):
        write(subs / f"{student}.ipynb", notebook_of([header(student), *cells]))

    def right(student, skip=()):
        return answer_cells(answers(student), skip=skip)

    add("honest", right("honest"))
    for student, forgeries in (("x_forged", FORGERIES), ("x_forged_2", FORGERIES_2)):
        values = answers(student)
        add(student, [FORGER, *(forged(name, payload, values[name]) for name, payload in forgeries.items()),
                      *right(student, skip=tuple(forgeries))])
    add("x_fake_tensor", [FAKE_TENSOR.replace("SHAPE", "[5, 5]"), "qk_scores = Fake()\n",
                          FAKE_TENSOR.replace("SHAPE", "['x']"), "scaled_scores = Fake()\n",
                          "causal_mask_T4 = 10 ** 400\n",
                          *right("x_fake_tensor", skip=("qk_scores", "scaled_scores", "causal_mask_T4"))])
    add("x_meta_tensor", ["import torch\nqk_scores = torch.zeros(3, 3, device='meta')\n",
                          *right("x_meta_tensor", skip=("qk_scores",))])
    add("x_str_exits", ["class E(Exception):\n    def __str__(self):\n        raise SystemExit(3)\nraise E()\n",
                        *right("x_str_exits")])
    add("x_many_cells", [f"raise ValueError('{i} ' + 'E' * 280)\n" for i in range(MANY_CELLS)] + right("x_many_cells"))
    os.mkfifo(subs / "x_fifo.ipynb")
    (subs / "x_folder.ipynb").mkdir()
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "lab00", str(subs), "--out", str(out),
                          "--timeout", "3", "--cell-timeout", "5", "--seed", "11", "--jobs", "2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout
    book = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    return {"out": out, "run": run, "book": book, "entries": {e["student"]: e for e in book["submissions"]}}


def points(entry) -> dict:
    return {name: item["points"] for name, item in entry["exercises"].items()}


def test_the_honest_neighbour_gets_exactly_its_points(batch):
    entry = batch["entries"]["honest"]
    assert (entry["status"], entry["score"]) == ("graded", 10), entry


def test_no_attack_makes_the_grader_fail(batch):
    assert len(batch["entries"]) == 9, sorted(batch["entries"])
    for entry in batch["book"]["submissions"]:
        assert entry["reason_code"] != "grader_error", entry
        for item in entry["exercises"].values():
            assert "grader itself failed" not in item["feedback"], (entry["student"], item)


def test_a_forged_answer_is_that_exercises_protocol_error(batch):
    for student, forgeries in (("x_forged", FORGERIES), ("x_forged_2", FORGERIES_2)):
        entry = batch["entries"][student]
        assert entry["status"] == "error"
        assert points(entry) == {name: 0 if name in forgeries else 2 for name in EXERCISES}, entry
        for name in forgeries:
            assert "garbled the channel" in entry["exercises"][name]["feedback"], (student, name, entry)


def test_a_value_that_only_calls_itself_a_tensor_is_an_object(batch):
    entry = batch["entries"]["x_fake_tensor"]
    assert (entry["status"], entry["score"]) == ("graded", 4), entry
    for name in ("qk_scores", "scaled_scores"):
        assert entry["exercises"][name]["status"] == "failed" and "an object of type Tensor" in entry["exercises"][name]["feedback"]
    assert entry["exercises"]["causal_mask_T4"]["status"] == "failed"  # an int of 1329 bits: an object too


def test_a_value_that_cannot_be_read_is_an_error_not_unanswered(batch):
    item = batch["entries"]["x_meta_tensor"]["exercises"]["qk_scores"]
    assert item["status"] == "error" and "NotImplementedError" in item["feedback"], item
    assert batch["entries"]["x_meta_tensor"]["score"] == 8


def test_an_exception_whose_str_exits_fails_its_cell_only(batch):
    entry = batch["entries"]["x_str_exits"]
    assert (entry["status"], entry["score"]) == ("graded", 10), entry
    assert [c["kind"] for c in entry["cells"]] == ["error"] and "message unavailable" in entry["cells"][0]["text"]


def test_cell_notes_are_capped_per_submission(batch):
    entry = batch["entries"]["x_many_cells"]
    assert (entry["status"], entry["score"]) == ("graded", 10)
    assert len(entry["cells"]) == gradebook.MAX_CELL_NOTES + 1, len(entry["cells"])
    assert entry["cells"][-1]["kind"] == "more"
    assert f"{MANY_CELLS - gradebook.MAX_CELL_NOTES} more cells" in entry["cells"][-1]["text"]
    records = list((batch["out"] / ".autograder" / "records").glob("*.json"))
    assert max(p.stat().st_size for p in records) < 400_000
    assert (batch["out"] / "grades.json").stat().st_size < 200_000


def test_a_fifo_or_a_folder_named_like_a_notebook_is_a_row(batch):
    for student in ("x_fifo", "x_folder"):
        entry = batch["entries"][student]
        assert (entry["status"], entry["reason_code"], entry["score"]) == ("invalid", "unreadable", 0), entry
        assert "not a regular file" in entry["reason"]


# ---------------------------------------------------------------- the check itself, without a sandbox
@pytest.mark.parametrize("result", [
    {"ok": [1.0, {"__tensor__": [1.0, 2.0, True], "dtype": "float32", "shape": [3]}, {"__tuple__": ["a", None]}]},
    {"ok": {"__tensor__": None, "dtype": "float32", "shape": [100_000, 100_000], "truncated": True}},
    {"ok": {"__object__": "Thing", "repr": "<thing>"}},
    {"ok": float("nan")}, {"missing": "qk_scores"}, {"not_answered": True},
    {"ok": True, "calls": [[None, {"__shape__": [2, 3]}, {"__tensor__": [1.0], "dtype": "float32", "shape": [1]}]]},
])
def test_what_the_worker_sends_is_accepted(result):
    assert sanitize.call_result(result) == (result, "")


@pytest.mark.parametrize("result", [
    [1], {}, {"ok": 1, "missing": "x"}, {"ok": 1, "timeout": True}, {"error": "boom"}, {"missing": 5},
    {"not_answered": 1}, {"ok": {"a": 1}}, {"ok": 10 ** 400}, {"ok": {"__tuple__": 5}},
    {"ok": {"__object__": 5}}, {"ok": {"__tensor__": [1.0], "dtype": 5, "shape": [1]}},
    {"ok": {"__tensor__": [1.0, 2.0], "dtype": "float32", "shape": [5, 5]}},
    {"ok": {"__tensor__": [1.0], "dtype": "float32", "shape": ["x"]}},
    {"ok": {"__tensor__": [[1.0]], "dtype": "float32", "shape": [1]}},
    {"ok": {"__tensor__": [10 ** 400], "dtype": "float32", "shape": [1]}},
    {"ok": 1, "calls": [[{"__shape__": ["x"]}]]}, {"ok": 1, "calls": "x"},
    {"ok": 1, "calls": [[{"__tensor__": [1.0], "dtype": "float32", "shape": [2]}]]},
])
def test_what_no_worker_sends_is_refused(result):
    clean, problem = sanitize.call_result(result)
    assert clean is None and problem, result


def test_an_errors_type_and_message_become_strings():
    clean, problem = sanitize.call_result({"error": {"type": ["x"], "message": 5}})
    assert problem == "" and clean == {"error": {"type": "['x']", "message": "5"}}
