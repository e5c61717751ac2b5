"""Solution regions are cut into stubs; the runtime holds no grader code."""
import ast

import pytest

from labbook.notebooks import cut_solution, read_source, targets

from labbook.notebooks import ROOT


def test_region_without_stub_becomes_not_implemented_at_its_indent():
    code = "def f(T):\n    \"\"\"doc\"\"\"\n    # BEGIN SOLUTION\n    return T\n    # END SOLUTION\n"
    assert cut_solution(code) == "def f(T):\n    \"\"\"doc\"\"\"\n    raise NotImplementedError(\"Your code here\")\n"


def test_stub_lines_replace_the_region():
    code = "# BEGIN SOLUTION\nx = [[1, 2]]\n# STUB: x = ...  # your answer\n# END SOLUTION\nprint(x)"
    assert cut_solution(code) == "x = ...  # your answer\nprint(x)"


def test_unclosed_region_is_an_error():
    with pytest.raises(ValueError):
        cut_solution("# BEGIN SOLUTION\nx = 1\n")


def test_every_solution_source_has_regions_and_stubs_that_parse():
    for target in targets():
        if target.part != "solutions":
            continue
        cells = [c.source for c in read_source(target).cells if c.cell_type == "code"]
        assert any("# BEGIN SOLUTION" in c for c in cells), target.source
        for cell in cells:
            ast.parse(cut_solution(cell))


def test_runtime_imports_nothing_from_the_grader():
    """The sandbox worker holds runtime.py alone: it must not need the rest of autograder."""
    tree = ast.parse((ROOT / "shared/autograder/runtime.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("autograder"), ast.dump(node)
        if isinstance(node, ast.Import):
            assert all(not alias.name.startswith("autograder") for alias in node.names)


def test_runtime_round_trip_and_errors():
    import numpy as np
    import torch

    from autograder.exercise import Array, decode
    from autograder.runtime import run_call

    namespace = {
        "f": lambda T: torch.ones(T, T).tril().bool(),
        "g": lambda: (_ for _ in ()).throw(ValueError("boom")),
        "h": lambda: (torch.zeros(2), 3),
        "todo": lambda: (_ for _ in ()).throw(NotImplementedError()),
        "answer": ...,
    }
    out = run_call(namespace, {"kind": "call", "target": "f", "args": [3]})
    mask = decode(out["ok"])
    assert isinstance(mask, Array) and mask.is_bool and mask.shape == (3, 3)
    assert np.array_equal(mask.values, np.tril(np.ones((3, 3), bool)))
    assert run_call(namespace, {"kind": "call", "target": "g"}) == {"error": {"type": "ValueError", "message": "boom"}}
    pair = decode(run_call(namespace, {"kind": "call", "target": "h"})["ok"])
    assert isinstance(pair, tuple) and pair[0].dtype == "float32" and pair[1] == 3
    assert run_call(namespace, {"kind": "call", "target": "todo"}) == {"not_answered": True}
    assert run_call(namespace, {"kind": "value", "target": "answer"}) == {"not_answered": True}
    assert run_call(namespace, {"kind": "call", "target": "nope"}) == {"missing": "nope"}
