"""The command line: exit statuses, the sandbox modes, and nothing passing from one student to the next."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus.lab00 import answer_cells, answers, build, header, notebook

ROOT = Path(__file__).resolve().parents[1]


def autograder(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)


def write_notebook(path: Path, cells: list[str], student: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook([header(student), *cells])))


@pytest.mark.parametrize("args,message", [
    (["grade", "lab99", "solutions/en", "--out", "{tmp}/out"], "unknown lab 'lab99'"),
    (["grade", "lab00", "{tmp}/does-not-exist", "--out", "{tmp}/out"], "no such file or folder"),
    (["grade", "lab00", "{tmp}/empty", "--out", "{tmp}/out"], "no *.ipynb submissions found"),
    (["grade", "lab00", "solutions/en", "--out", "{tmp}/out", "--seed", "abc"], "--seed must be an integer"),
    (["grade", "lab00", "solutions/en", "--out", "{tmp}/out", "--lang", "fr"], "unknown language 'fr'"),
    (["grade", "lab00", "solutions/en", "--out", "{tmp}/out", "--jobs", "0"], "--jobs must be at least 1"),
    (["gradescope", "lab99", "--out", "{tmp}/b.zip"], "unknown lab 'lab99'"),
])
def test_a_wrong_call_exits_2_with_a_clear_message(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    run = autograder(*[a.format(tmp=tmp_path) for a in args])
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out" / "grades.json").exists()


def test_missing_option_is_an_argparse_error(tmp_path):
    run = autograder("grade", "lab00", "solutions/en")
    assert run.returncode == 2 and "--out" in run.stderr


LEAK_WRITER = r'''
import os, sys, builtins, numpy, pathlib
for folder in [os.getcwd(), os.environ.get("HOME", "."), "/tmp", "/dev/shm", "/var/tmp"]:
    try:
        pathlib.Path(folder, "leak-from-a.txt").write_text("answers")
        os.chmod(os.path.join(folder, "leak-from-a.txt"), 0o666)
    except OSError:
        pass
numpy.LEAK = True
builtins.LEAK = True
os.environ["LEAK"] = "1"
sys.modules["leak_module"] = numpy
'''

LEAK_READER = r'''
import os, sys, builtins, numpy, glob
found = []
for folder in [os.getcwd(), os.environ.get("HOME", "."), "/tmp", "/dev/shm", "/var/tmp"]:
    found += glob.glob(os.path.join(folder, "leak-from-a.txt"))
    found += glob.glob(os.path.join(folder, "*", "leak-from-a.txt"))
for leak in (hasattr(numpy, "LEAK"), hasattr(builtins, "LEAK"), "LEAK" in os.environ, "leak_module" in sys.modules):
    if leak:
        found.append(leak)
print("LEAKS", found)
'''


def test_nothing_one_student_changes_reaches_the_next(tmp_path):
    """Two submissions on one job slot, writer first: the reader's answers are right only if nothing leaked."""
    subs = tmp_path / "subs"
    write_notebook(subs / "a_writer.ipynb", [LEAK_WRITER, *answer_cells(answers("a_writer"))], "a_writer")
    reader_values = answers("b_reader")
    guarded = [f"if not found:\n    {cell}" if not cell.startswith("lab.") else cell
               for cell in answer_cells(reader_values)]
    write_notebook(subs / "b_reader.ipynb", [LEAK_READER, *guarded], "b_reader")
    run = autograder("grade", "lab00", subs, "--out", tmp_path / "out", "--jobs", 1, "--seed", 3)
    assert run.returncode == 0, run.stderr
    book = json.loads((tmp_path / "out" / "grades.json").read_text())
    scores = {entry["student"]: entry["score"] for entry in book["submissions"]}
    assert scores == {"a_writer": 10, "b_reader": 10}
    record = next(json.loads(p.read_text()) for p in (tmp_path / "out" / ".autograder" / "records").glob("*.json")
                  if json.loads(p.read_text())["student"] == "b_reader")
    assert "LEAKS []" in record["output"]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="without bwrap the main corpus already runs the fallback")
def test_the_fallback_grades_too(tmp_path):
    subs = tmp_path / "subs"
    build(subs, only=("s_correct", "s_os_exit_cell", "s_snoop", "s_not_json"))
    run = autograder("grade", "lab00", subs, "--out", tmp_path / "out", "--sandbox", "fallback", "--seed", 1,
                     "--jobs", 1)
    assert run.returncode == 0, run.stderr
    book = json.loads((tmp_path / "out" / "grades.json").read_text())
    assert book["sandbox"]["mode"] == "fallback" and "fallback" in run.stdout
    got = {e["student"]: (e["status"], e["score"]) for e in book["submissions"]}
    assert got == {"s_correct": ("graded", 10), "s_os_exit_cell": ("error", 10), "s_snoop": ("graded", 8),
                   "s_not_json": ("invalid", 0)}


@pytest.mark.skipif(shutil.which("bwrap") is not None, reason="bwrap is installed here")
def test_asking_for_bwrap_without_it_fails_clearly(tmp_path):
    build(tmp_path / "subs", only=("s_correct",))
    run = autograder("grade", "lab00", tmp_path / "subs", "--out", tmp_path / "out", "--sandbox", "bwrap")
    assert run.returncode == 1 and "bwrap is not installed" in run.stderr
