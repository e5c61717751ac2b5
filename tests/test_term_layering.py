"""The engine never uses course management: only the command line wires the two."""
import ast
from pathlib import Path

GRADER = Path(__file__).resolve().parents[1] / "shared" / "autograder" / "grader"
PACKAGE = ("autograder", "grader")  # where the scanned modules live, to resolve relative imports
WIRING = {"cli.py"}  # the one place allowed to call into autograder.term


def imported(path: Path) -> set[str]:
    """Every module an import in `path` names, as an absolute dotted name (`from .. import term` too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = list(PACKAGE[:len(PACKAGE) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def uses_term(path: Path) -> list[str]:
    return sorted(name for name in imported(path) if name == "autograder.term" or name.startswith("autograder.term."))


def test_the_engine_does_not_import_the_term_package():
    offenders = {path.name: uses_term(path) for path in GRADER.glob("*.py") if path.name not in WIRING}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_scan_sees_every_spelling_of_an_import_of_term(tmp_path):
    # the check above must be able to fail
    sample = tmp_path / "engine_module.py"
    sample.write_text("from ..term import roster\nfrom .. import term\nimport autograder.term.report as r\n"
                      "from . import gradebook\nfrom ..labs import get_lab\n")
    assert uses_term(sample) == ["autograder.term", "autograder.term.report", "autograder.term.roster"]


def test_the_wiring_module_is_the_only_one_and_it_does_use_term():
    assert uses_term(GRADER / "cli.py"), "cli.py no longer wires the term: drop it from WIRING"
