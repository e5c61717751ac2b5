"""The grader's pieces that need no sandbox: discovery, reading, magics, seeds, anonymity, messages."""
import ast
import json
from pathlib import Path

import pytest

from autograder import i18n
from autograder.grader import engine
from autograder.grader.batch import SEED_ENV, resolve_seed
from autograder.grader.gradebook import feedback_name
from autograder.grader.submissions import Submission, UsageError, discover, read, strip_magics

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"lang": "de"},
            "cells": [{"cell_type": "markdown", "source": "# x", "metadata": {}},
                      {"cell_type": "code", "source": ["x = 1\n", "y = 2\n"], "metadata": {}, "outputs": []}]}


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


def read_file(path: Path, **kwargs) -> Submission:
    return read(Submission(path.stem, path), **kwargs)


# ---------------------------------------------------------------- reading
def test_a_notebook_gives_its_code_cells_and_language(tmp_path):
    submission = read_file(write(tmp_path / "ana.ipynb", NOTEBOOK))
    assert submission.invalid is None
    assert submission.cells == ["x = 1\ny = 2\n"]
    assert submission.lang == "de"


def test_language_from_the_folder_when_metadata_has_none(tmp_path):
    notebook = dict(NOTEBOOK, metadata={})
    assert read_file(write(tmp_path / "es" / "ana.ipynb", notebook)).lang == "es"
    assert read_file(write(tmp_path / "x" / "ana.ipynb", notebook)).lang is None


@pytest.mark.parametrize("content,reason", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"print('hello')\n", "not_json"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(300), "binary"),
    (b"\xff\xfe\x00x\x00y", "binary"),
    (json.dumps(NOTEBOOK).encode()[:-40], "truncated"),
    (b'{"cells": [{"cell_type": "code", "source": "x = \\"never closed', "truncated"),
    (b'{"a": 1}', "not_notebook"),
    (b"[]", "not_notebook"),
    (b'"a string"', "not_notebook"),
    (b'{"nbformat": 4, "cells": 7}', "not_notebook"),
    (b"[" * 100_000 + b"]" * 100_000, "not_json"),
])
def test_broken_files_are_invalid_with_a_reason(tmp_path, content, reason):
    submission = read_file(write(tmp_path / "s.ipynb", content))
    assert submission.invalid == reason


def test_huge_file_is_invalid_without_reading_it(tmp_path):
    path = write(tmp_path / "big.ipynb", dict(NOTEBOOK, padding="x" * (3 << 20)))
    submission = read_file(path, max_bytes=2 << 20)
    assert submission.invalid == "too_large" and submission.invalid_params["size_mb"] == "3.0"


def test_every_invalid_reason_has_a_message():
    """In every language: tests/test_i18n.py checks that each catalogue has every key."""
    reasons = {"unreadable", "empty", "too_large", "binary", "not_json", "truncated", "not_notebook", "too_much_code",
               "symlink"}
    assert {key.split(".")[-1] for key in i18n.keys("autograder") if key.startswith("grader.invalid.")} == reasons


def test_odd_cells_do_not_break_reading(tmp_path):
    notebook = dict(NOTEBOOK, cells=[{"cell_type": "code", "source": 42}, "not a cell",
                                     {"cell_type": "code"}, {"cell_type": "raw", "source": "x"},
                                     {"cell_type": "code", "source": ["a = 1\n", 3]}])
    submission = read_file(write(tmp_path / "odd.ipynb", notebook))
    assert submission.invalid is None and submission.cells == ["", "", ""]


def test_nbformat_3_worksheets(tmp_path):
    notebook = {"nbformat": 3, "metadata": {}, "worksheets": [{"cells": [{"cell_type": "code", "input": "z = 3\n"}]}]}
    assert read_file(write(tmp_path / "old.ipynb", notebook)).cells == ["z = 3\n"]


# ---------------------------------------------------------------- magics
def test_magics_and_shell_lines_are_stripped_keeping_blocks_valid():
    source = ("%matplotlib inline\n!pip install torch\nfiles = !ls\nif True:\n    %timeit f()\n    x = 5 % 3\n"
              "%time y = x * 2\nz = y != 1\nhelp?\n")
    python, runnable = strip_magics(source)
    assert runnable
    ast.parse(python)
    assert "x = 5 % 3" in python and "y = x * 2" in python and "z = y != 1" in python
    assert "pip" not in python and "ls" not in python and "timeit" not in python


def test_cell_magics():
    assert strip_magics("%%bash\necho hi\n") == ("", False)
    assert strip_magics("%%writefile a.py\nx = 1\n") == ("", False)
    python, runnable = strip_magics("%%time\nx = 1\n")
    assert runnable and python.strip() == "x = 1"


# ---------------------------------------------------------------- discovery
def test_folder_of_notebooks_and_nbgrader_layout(tmp_path):
    write(tmp_path / "flat" / "ana.ipynb", NOTEBOOK)
    write(tmp_path / "flat" / "ben.ipynb", NOTEBOOK)
    write(tmp_path / "flat" / "notes.txt", b"not a submission")
    write(tmp_path / "flat" / ".hidden.ipynb", NOTEBOOK)
    write(tmp_path / "flat" / "lab03_multi_head.ipynb", NOTEBOOK)  # another lab's notebook
    write(tmp_path / "nbg" / "carla" / "lab00" / "lab00_attention_by_hand.ipynb", NOTEBOOK)
    write(tmp_path / "nbg" / "dev" / "lab00" / "attempt.ipynb", NOTEBOOK)
    write(tmp_path / "nbg" / "dev" / "lab01" / "other.ipynb", NOTEBOOK)
    write(tmp_path / "nbg" / "eve" / "lab00" / ".ipynb_checkpoints" / "x.ipynb", NOTEBOOK)
    found = discover([tmp_path / "flat", tmp_path / "nbg"], "lab00")
    assert [(s.student, s.path.name) for s in found.submissions] == [
        ("ana", "ana.ipynb"), ("ben", "ben.ipynb"),
        ("carla", "lab00_attention_by_hand.ipynb"), ("dev", "attempt.ipynb")]
    assert any("other labs" in note for note in found.notes)


def test_same_stem_twice_is_kept_apart_and_same_file_twice_counts_once(tmp_path):
    a = write(tmp_path / "a" / "ana.ipynb", NOTEBOOK)
    write(tmp_path / "b" / "ana.ipynb", NOTEBOOK)
    found = discover([tmp_path / "a", tmp_path / "b", a], "lab00")
    assert [s.student for s in found.submissions] == ["ana", "ana-2"]
    assert any("both called 'ana'" in note for note in found.notes)


def test_missing_path_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        discover([tmp_path / "nope"], "lab00")


def test_safe_feedback_file_names():
    assert feedback_name("ana") == "ana"
    assert feedback_name("ANA").startswith("ANA~")  # its own name, apart from ana's on case-insensitive disks
    assert feedback_name("../../etc/passwd").startswith("etc_passwd~")
    assert feedback_name("").startswith("student~")


# ---------------------------------------------------------------- seeds, order, anonymity
def test_seed_sources(monkeypatch):
    monkeypatch.delenv(SEED_ENV, raising=False)
    default = resolve_seed("lab02", None)
    assert default.source == "default" and default == resolve_seed("lab02", None)
    assert resolve_seed("lab03", None).value != default.value
    monkeypatch.setenv(SEED_ENV, "77")
    assert (resolve_seed("lab02", None).value, resolve_seed("lab02", None).source) == (77, SEED_ENV)
    assert resolve_seed("lab02", "5").source == "--seed"
    with pytest.raises(UsageError):
        resolve_seed("lab02", "banana")


def test_hidden_cases_follow_the_seed_and_the_lab_not_the_student():
    a = engine.case_seed(1, "lab02")
    assert a == engine.case_seed(1, "lab02")
    assert a != engine.case_seed(2, "lab02") != engine.case_seed(2, "lab01")


def test_functions_handed_to_a_students_test_lose_their_names():
    spec = {"kind": "call", "target": "perturbation_test",
            "args": [{"__function__": "def no_mask(X):\n    return helper(X) + no_mask_offset\n\n"
                                      "def helper(X):\n    return X\nno_mask_offset = 0\n", "name": "no_mask"}],
            "kwargs": {"T": 8}}
    out = engine.anonymise(spec)
    function = out["args"][0]
    assert function["name"] == engine.ANONYMOUS_FUNCTION
    assert "no_mask(" not in function["__function__"] and "def candidate(X)" in function["__function__"]
    namespace = {}
    exec(function["__function__"], namespace)
    assert namespace["candidate"](3) == 3
    assert out["kwargs"] == {"T": 8} and spec["args"][0]["name"] == "no_mask"  # the original is untouched


# ---------------------------------------------------------------- what the sandbox holds
def test_runtime_and_worker_import_nothing_of_the_autograder():
    for path in (ROOT / "shared/autograder/runtime.py", ROOT / "shared/autograder/grader/_worker.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and not (node.module or "").startswith("autograder"), (path, node.module)
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("autograder") for alias in node.names), path


def test_worker_directory_holds_only_the_worker_runtime_and_stubs():
    from autograder.grader.sandbox import WorkerDir

    worker = WorkerDir()
    try:
        files = sorted(str(p.relative_to(worker.path)) for p in worker.path.rglob("*") if p.is_file())
        code = [f for f in files if f.endswith(".py")]
        assert code == ["_stubs_permissive.py", "_worker.py", "autograder/__init__.py", "labbook/__init__.py",
                        "runtime.py"]
        assert all(f.startswith("mplconfig/") for f in files if not f.endswith(".py"))
        stub = (worker.path / "autograder" / "__init__.py").read_text()
        assert "class Lab" in stub and "labs" not in stub
    finally:
        worker.cleanup()


def test_modules_the_zygote_imports_for_the_notebooks():
    from autograder.grader.sandbox import modules_to_preimport

    common = "import torch\nfrom torch.nn.attention.bias import causal_lower_right\nimport numpy.linalg as la\n"
    odd = "import torch._inductor\nimport matplotlib.backends.backend_tkagg\nimport os\n"
    notebooks = [[common], [common], [common, odd], ["def broken(:"]]
    assert modules_to_preimport(notebooks) == ["numpy.linalg", "torch.nn.attention.bias"]
    assert modules_to_preimport([[common]]) == []  # one notebook alone chooses nothing
