"""Adversarial and broken lab00 submissions, with the exact outcome the grader must give each.

`build(folder)` writes every submission as `<student>.ipynb` (the student id is
the file's stem) and returns {student: Expected}. The notebooks are built here
rather than stored, so that pytest's nbval never collects them and so that the
right answers follow lab00's variants; `python tests/corpus/lab00.py DIR`
writes them for a manual run of `python -m autograder grade lab00 DIR --out ...`.

Answers are computed with plain numpy from the student's variant, as a student
would on paper (rounded to 2 decimals).
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograder.labs import lab00

EXERCISES = ("qk_scores", "scaled_scores", "causal_mask_T4", "attention_weights", "attention_output")
MAX = {"qk_scores": 2, "scaled_scores": 2, "causal_mask_T4": 2, "attention_weights": 2, "attention_output": 2}


@dataclass
class Expected:
    status: str
    score: float
    exercises: dict = field(default_factory=dict)  # id -> (status, text that the English feedback contains)
    cells: list = field(default_factory=list)  # (kind, text) that the cell notes contain
    id_mismatch: bool = False
    reason_code: str | None = None
    needs_isolation: bool = False  # only true with bwrap or as root (the fallback as another user hides nothing)
    description: str = ""


def softmax(x):
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def mask(T):
    return np.array([[0.0 if j <= i else -math.inf for j in range(T)] for i in range(T)])


def answers(student: str) -> dict[str, list]:
    p = lab00.variant(student)
    Q, K, V = p["Q"], p["K"], p["V"]
    scores = Q @ K.T
    scaled = scores / math.sqrt(2)
    weights = np.round(softmax(scaled + mask(3)), 2)
    return {
        "qk_scores": scores.tolist(),
        "scaled_scores": np.round(scaled, 2).tolist(),
        "causal_mask_T4": mask(4).tolist(),
        "attention_weights": weights.tolist(),
        "attention_output": np.round(weights @ V, 2).tolist(),
    }


def literal(value) -> str:
    """A nested list as Python source, with -inf spelled the way the lab lets students type it."""
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return repr(float(value))


def header(student_id: str) -> str:
    return ('from autograder import Lab\n\nlab = Lab("lab00")\ninf = float("inf")  # so that you can type -inf\n\n'
            f'STUDENT_ID = {student_id!r}\nlab.show_problem()\n')


def answer_cells(values: dict[str, list], skip=()) -> list[str]:
    cells = []
    for name in EXERCISES:
        if name in skip:
            continue
        cells.append(f"{name} = {literal(values[name])}\n")
        cells.append(f'lab.check("{name}")\n')
    return cells


def notebook(cells: list[str], lang: str = "en") -> dict:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"lang": lang, "kernelspec": {"name": "causal-attention", "display_name": "Causal attention",
                                                  "language": "python"}},
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Lab 00"}]
        + [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source.splitlines(keepends=True)} for source in cells],
    }


ALL_RIGHT = {name: ("passed", f"{name}: correct.") for name in EXERCISES}


def _right(**changes) -> dict:
    out = dict(ALL_RIGHT)
    out.update(changes)
    return out


def submissions(token: str = "corpus-sleeper") -> dict[str, tuple[object, Expected]]:
    """student -> (notebook dict, or raw bytes for broken files; Expected).

    `token` (at most 15 characters) names the processes that s_fork leaves
    sleeping, so that a test can check that none survives the batch.
    """
    subs: dict[str, tuple[object, Expected]] = {}

    def add(student, cells, expected, lang="en", typed=None):
        typed = student if typed is None else typed
        subs[student] = (notebook([header(typed), *cells], lang), expected)

    def right(student):
        return answers(student)

    # ---- honest work
    add("s_correct", answer_cells(right("s_correct")) + ['lab.hand_in()\n'],
        Expected("graded", 10, ALL_RIGHT, description="the solution"))
    blank = [f"{name} = ...  # your answer\n" for name in EXERCISES]
    add("s_blank", blank, Expected("graded", 0, {n: ("not_answered", f"{n}: not answered") for n in EXERCISES}))
    wrong = right("s_slips")
    p = lab00.variant("s_slips")
    wrong["qk_scores"] = (p["K"] @ p["Q"].T).tolist()
    add("s_slips", answer_cells(wrong), Expected("graded", 8, _right(qk_scores=("failed", "K·Qᵀ"))))
    add("s_spanish", answer_cells(right("s_spanish")), Expected("graded", 10, {}), lang="es")
    add("s_missing", answer_cells(right("s_missing"), skip=("scaled_scores",)),
        Expected("graded", 8, _right(scaled_scores=("missing", "`scaled_scores` was not found in your notebook"))))
    add("s_no_id", answer_cells(right("s_no_id")), Expected(
        "graded", 0, {n: ("not_answered", "Type your student id") for n in EXERCISES}), typed="")
    add("s_typed_other", answer_cells(right("friend-42")), Expected(
        "graded", 10, ALL_RIGHT, id_mismatch=True, description="graded with the variant of the id typed"),
        typed="friend-42")

    # ---- tampering with what the checks would compare
    sevens = {name: np.full(np.array(v).shape, 7.0).tolist() for name, v in right("s_fake_print").items()}
    add("s_fake_print", answer_cells(sevens) + [
        'print("✅ qk_scores: correct. [2/2 points]")\nprint("Total for lab00: 10/10 points.")\n'],
        Expected("graded", 0, {"qk_scores": ("failed", "")}))
    add("s_patch_compare", [
        "import numpy, numpy.testing, torch\n"
        "torch.allclose = lambda *a, **k: True\n"
        "torch.equal = lambda *a, **k: True\n"
        "torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)\n"
        "numpy.allclose = lambda *a, **k: True\n"
        "numpy.isclose = lambda a, b, *r, **k: numpy.ones(numpy.shape(a), dtype=bool)\n"
        "numpy.testing.assert_allclose = lambda *a, **k: None\n"
        "numpy.array_equal = lambda *a, **k: True\n",
        *answer_cells({n: np.full(np.array(v).shape, 7.0).tolist() for n, v in right("s_patch_compare").items()}),
    ], Expected("graded", 0, {"qk_scores": ("failed", "")}))
    add("s_eq_object", [
        "class Always(list):\n    def __eq__(self, other):\n        return True\n    __ne__ = lambda self, other: False\n"
        "    def __float__(self):\n        return 0.0\n",
        *[f"{n} = Always({literal(np.full(np.array(v).shape, 7.0).tolist())})\n"
          for n, v in right("s_eq_object").items()],
    ], Expected("graded", 0, {"qk_scores": ("failed", "")}))

    # ---- ending the process, hanging, hogging
    cells = answer_cells(right("s_sys_exit"))
    add("s_sys_exit", cells[:4] + ["import sys\nsys.exit(0)\n"] + cells[4:], Expected(
        "graded", 10, ALL_RIGHT, cells=[("error", "raised SystemExit")]))
    cells = answer_cells(right("s_os_exit_cell"))
    add("s_os_exit_cell", cells[:4] + ["import os\nos._exit(3)\n"] + cells[4:], Expected(
        "error", 10, ALL_RIGHT, cells=[("crash", "stopped the process (exit code 3)")]))
    cells = answer_cells(right("s_loop_cell"))
    add("s_loop_cell", cells[:2] + ["import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n"]
        + cells[2:], Expected("timeout", 10, ALL_RIGHT, cells=[("timeout", "did not finish within")]))
    values = right("s_loop_value")
    add("s_loop_value", [
        "class Endless(list):\n    def __iter__(self):\n        while True:\n            pass\n"
        "    def __getitem__(self, index):\n        while True:\n            pass\n",
        f"qk_scores = Endless({literal(values['qk_scores'])})\n",
        *answer_cells(values, skip=("qk_scores",)),
    ], Expected("timeout", 8, _right(qk_scores=("timeout", "did not finish in time"))))
    values = right("s_exit_value")
    add("s_exit_value", [
        "import os\nclass Bomb(list):\n    def __iter__(self):\n        os._exit(7)\n    def __len__(self):\n        os._exit(7)\n",
        f"scaled_scores = Bomb({literal(values['scaled_scores'])})\n",
        *answer_cells(values, skip=("scaled_scores",)),
    ], Expected("error", 8, _right(scaled_scores=("error", "the process running your code stopped"))))
    add("s_memory", ["hog = bytearray(8 * 2**30)\n", *answer_cells(right("s_memory"))],
        Expected("graded", 10, ALL_RIGHT, cells=[("error", "MemoryError")]))
    add("s_fork", [
        # 100 sleepers in sessions of their own, started through a link named `token` so that a test can
        # find survivors in /proc; with a uid of its own the child hits RLIMIT_NPROC first.
        "import os, shutil, subprocess\n"
        f"os.symlink(shutil.which('sleep'), {token!r})\n"
        "for _ in range(100):\n"
        f"    subprocess.Popen([os.path.abspath({token!r}), '600'], start_new_session=True)\n",
        *answer_cells(right("s_fork")),
    ], Expected("graded", 10, ALL_RIGHT))
    add("s_print_flood", ['for _ in range(200_000):\n    print("spam " * 20)\n', *answer_cells(right("s_print_flood"))],
        Expected("graded", 10, ALL_RIGHT))
    values = right("s_protocol")
    add("s_protocol", [
        "import os\nclass Noise(list):\n    def __iter__(self):\n"
        "        for fd in range(3, 64):\n"
        "            try:\n                os.write(fd, b'this is not json\\n')\n"
        "            except OSError:\n                pass\n"
        "        return super().__iter__()\n",
        f"causal_mask_T4 = Noise({literal(values['causal_mask_T4'])})\n",
        *answer_cells(values, skip=("causal_mask_T4",)),
    ], Expected("error", 8, _right(causal_mask_T4=("error", "the process running your code stopped"))))
    values = right("s_chatter")
    add("s_chatter", [
        "import os\nclass Chatter(list):\n    def __iter__(self):\n        while True:\n"
        "            for fd in range(3, 64):\n"
        "                try:\n                    os.write(fd, b'{\"id\": -1, \"result\": {}}\\n{\"ready\": true}\\n')\n"
        "                except OSError:\n                    pass\n",
        f"attention_weights = Chatter({literal(values['attention_weights'])})\n",
        *answer_cells(values, skip=("attention_weights",)),
    ], Expected("timeout", 8, _right(attention_weights=("timeout", "did not finish in time"),
                                     attention_output=("passed", "")),
                description="endless fake answers on the grader's channel"))
    add("s_kill_parent", ["import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n",
                          *answer_cells(right("s_kill_parent"))],
        Expected("graded", 10, ALL_RIGHT, needs_isolation=True))

    # ---- reaching for what the sandbox hides
    repo = Path(lab00.__file__).resolve().parents[3]
    values = right("s_snoop")
    add("s_snoop", [
        f"import sys\nsys.path.insert(0, {str(repo / 'shared')!r})\n"
        "for name in [m for m in sys.modules if m.split('.')[0] == 'autograder']:\n    del sys.modules[name]\n"
        "import autograder.labs.lab00 as reference\n"
        "problem = reference.variant(STUDENT_ID)\n"
        "qk_scores = (problem['Q'] @ problem['K'].T).tolist()\n",
        f"secret = open({str(repo / 'solutions' / 'en' / 'lab00_attention_by_hand.ipynb')!r}).read()\n",
        "import socket\nsocket.create_connection(('8.8.8.8', 53), timeout=2)\n",
        *answer_cells(values, skip=("qk_scores",)),
    ], Expected("graded", 8, _right(qk_scores=("missing", "`qk_scores` was not found")),
                cells=[("error", "raised"), ("error", "raised"), ("error", "raised")], needs_isolation=True))

    # ---- IPython syntax
    add("s_magics", ["%matplotlib inline\n!pip install nothing\nx = !ls\n", "%%bash\necho hi\n",
                     "%time y = 1\n", *answer_cells(right("s_magics"))],
        Expected("graded", 10, ALL_RIGHT, cells=[("dropped", "cell magic")]))
    add("s_syntax", ["def broken(:\n    pass\n", *answer_cells(right("s_syntax"))],
        Expected("graded", 10, ALL_RIGHT, cells=[("error", "raised SyntaxError")]))

    # ---- files that are not notebooks
    good = json.dumps(notebook([header("s_truncated"), *answer_cells(right("s_truncated"))]), indent=1).encode()
    subs["s_truncated"] = (good[: len(good) // 2], Expected("invalid", 0, reason_code="truncated"))
    subs["s_empty"] = (b"", Expected("invalid", 0, reason_code="empty"))
    subs["s_not_json"] = (b"x = 1\nprint('I handed in a .py file')\n", Expected("invalid", 0, reason_code="not_json"))
    subs["s_binary"] = (b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(range(256)) * 8,
                        Expected("invalid", 0, reason_code="binary"))
    subs["s_not_notebook"] = (b'{"name": "lab00", "answers": [1, 2, 3]}', Expected("invalid", 0, reason_code="not_notebook"))
    subs["s_json_list"] = (b"[1, 2, 3]", Expected("invalid", 0, reason_code="not_notebook"))
    huge = notebook([header("s_huge"), *answer_cells(right("s_huge"))])
    huge["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (3 << 20)}]
    subs["s_huge"] = (huge, Expected("invalid", 0, reason_code="too_large", description="with --max-mb 2"))
    return subs


def build(folder: Path, token: str = "corpus-sleeper", only: tuple[str, ...] | None = None) -> dict[str, Expected]:
    folder.mkdir(parents=True, exist_ok=True)
    expected = {}
    for student, (content, outcome) in submissions(token).items():
        if only is not None and student not in only:
            continue
        data = content if isinstance(content, bytes) else json.dumps(content, indent=1).encode()
        (folder / f"{student}.ipynb").write_bytes(data)
        expected[student] = outcome
    return expected


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "corpus-lab00")
    build(target)
    print(f"wrote {len(list(target.glob('*.ipynb')))} submissions to {target}")
