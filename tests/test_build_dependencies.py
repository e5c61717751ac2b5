"""Precise rebuilds: a notebook is stale exactly when its source, a file it imported or a message it showed changed."""
import re
import shutil

import nbformat
import pytest

from autograder import i18n
from labbook import dependencies
from labbook.build import keep_unchanged_outputs
from labbook.notebooks import ROOT, read, targets

TARGETS = targets()
BUILT = {target.built.relative_to(ROOT).as_posix(): read(target.built) for target in TARGETS if target.built.exists()}


def code_of(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


@pytest.fixture
def shared_copy(tmp_path):
    """A copy of shared/ under a scratch root: edit it and ask which notebooks it makes stale."""
    shutil.copytree(ROOT / "shared", tmp_path / "shared", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def stale_in(root) -> set[str]:
    return {path for path, notebook in BUILT.items() if dependencies.changed(notebook, root)}


def test_every_built_notebook_records_what_it_used():
    for path, notebook in BUILT.items():
        depends = notebook.metadata["labbook"].get("depends")
        assert depends and depends["files"], f"{path} records no dependencies: run `make build`"


def test_an_untouched_copy_makes_nothing_stale(shared_copy):
    assert stale_in(shared_copy) == set()


def test_a_points_change_makes_exactly_the_notebooks_that_use_the_lab_stale(shared_copy):
    lab = shared_copy / "shared/autograder/labs/judging02.py"
    text = lab.read_text()
    assert "    points = 4\n" in text  # causal_attention (its judge holds the points)
    lab.write_text(text.replace("    points = 4\n", "    points = 5\n", 1))
    uses_lab02 = re.compile(r"Lab\(\"lab02\"\)|autograder\.labs\.lab02|from autograder\.labs import .*\blab02\b")
    expected = {path for path, notebook in BUILT.items() if uses_lab02.search(code_of(notebook))}
    assert expected, "no notebook uses lab02?"
    assert stale_in(shared_copy) == expected


def test_a_change_to_the_grader_makes_nothing_stale(shared_copy):
    sandbox = shared_copy / "shared/autograder/grader/sandbox.py"
    sandbox.write_text(sandbox.read_text() + "\n# a comment\n")
    assert stale_in(shared_copy) == set()


def test_a_changed_translation_makes_only_the_notebooks_that_show_it_stale(monkeypatch):
    key = "ch03.scores"
    spanish = dict(i18n._messages("labbook", "es"))
    spanish[key] = spanish[key] + " (cambiado)"
    monkeypatch.setitem(i18n._LOADED, ("labbook", "es"), spanish)
    expected = {path for path, notebook in BUILT.items()
                if notebook.metadata["lang"] == "es" and f'"{key}"' in code_of(notebook)}
    assert expected, f"no Spanish notebook shows {key}?"
    assert stale_in(ROOT) == expected


def test_a_changed_shared_file_is_named(shared_copy):
    show = shared_copy / "shared/labbook/show.py"
    show.write_text(show.read_text() + "\n")
    notebook = BUILT["course/en/03_worked_example.ipynb"]
    assert dependencies.changed(notebook, shared_copy) == ["shared/labbook/show.py"]


# ---------------------------------------------------------------- stable files
def _notebook(text: str):
    cell = nbformat.v4.new_code_cell("print(x)", id="c000")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return nbformat.v4.new_notebook(cells=[cell])


def test_outputs_that_differ_only_in_timings_keep_their_committed_bytes():
    kept = keep_unchanged_outputs(_notebook("took 3.1 ms, 0x7f00aa\n"), _notebook("took 2.7 ms, 0x7f11bb\n"))
    assert kept.cells[0].outputs[0]["text"] == "took 2.7 ms, 0x7f11bb\n"


def test_outputs_that_really_changed_are_written():
    kept = keep_unchanged_outputs(_notebook("[3/3 points]\n"), _notebook("[2/2 points]\n"))
    assert kept.cells[0].outputs[0]["text"] == "[3/3 points]\n"


def test_an_unchanged_measuring_cell_keeps_its_committed_measurement_unless_asked():
    def measured(text):
        notebook = _notebook(text)
        notebook.cells[0].metadata["tags"] = ["nbval-ignore-output"]
        return notebook

    assert keep_unchanged_outputs(measured("x8.7\n"), measured("x8.9\n")).cells[0].outputs[0]["text"] == "x8.9\n"
    assert keep_unchanged_outputs(measured("x8.7\n"), measured("x8.9\n"), remeasure=True) \
        .cells[0].outputs[0]["text"] == "x8.7\n"
