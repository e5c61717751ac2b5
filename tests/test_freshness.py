"""Committed notebooks are what their text sources build, and labs are what their solutions generate."""
import pytest

from labbook import dependencies
from labbook.build import INDEX, make_index
from labbook.kernel import LANGUAGE_INFO
from labbook.notebooks import ROOT, cell_inputs, make_lab, read, read_source, targets

TARGETS = targets()
IDS = [str(t.source.relative_to(t.source.parents[3])) for t in TARGETS]


def test_there_are_sources():
    assert TARGETS, "no sources found"


@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_built_notebook_matches_its_source(target):
    assert target.built.exists(), f"{target.built} is missing: run `make build`"
    assert cell_inputs(read(target.built)) == cell_inputs(read_source(target)), (
        f"{target.built} is out of date with {target.source}: run `make build`"
    )
    changed = dependencies.changed(read(target.built), ROOT)
    assert not changed, f"{target.built} was executed before {', '.join(changed)} changed: run `make build`"


@pytest.mark.parametrize("target", TARGETS, ids=IDS)
def test_built_notebook_metadata(target):
    notebook = read(target.built)
    assert notebook.metadata["lang"] == target.lang
    assert notebook.metadata["kernelspec"]["name"] == "causal-attention"
    executed = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in executed), "built notebooks are executed"
    # what the book's kernel reports, exactly: else JupyterLab marks the notebook modified as soon as its
    # kernel starts (labbook.kernel; test_jupyterlab opens a chapter and sees its tab stay clean)
    assert notebook.metadata["language_info"] == LANGUAGE_INFO


def test_index_metadata():
    assert read(INDEX).metadata["language_info"] == LANGUAGE_INFO


@pytest.mark.parametrize("target", [t for t in TARGETS if t.lab], ids=[i for t, i in zip(TARGETS, IDS) if t.lab])
def test_lab_is_generated_from_its_solution(target):
    assert target.lab.exists(), f"{target.lab} is missing: run `make build`"
    lab = read(target.lab)
    assert lab == make_lab(read(target.built)), f"{target.lab} differs from what its solution generates"
    assert all(not c.get("outputs") for c in lab.cells if c.cell_type == "code"), "labs carry no outputs"
    assert "# BEGIN SOLUTION" not in "".join(c.source for c in lab.cells)
    assert lab.metadata["lang"] == target.lang


def test_index_lists_every_notebook():
    assert read(INDEX) == make_index(TARGETS), "index.ipynb is stale: run `make build`"
    text = "".join(c.source for c in read(INDEX).cells)
    for target in TARGETS:
        assert f"{target.part}/{target.lang}/{target.name}.ipynb" in text
        if target.lab:
            assert f"labs/{target.lang}/{target.name}.ipynb" in text
