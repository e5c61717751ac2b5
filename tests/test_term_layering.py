"""The engine never uses course management: only the command line wires the two."""
import ast
from pathlib import Path

GRADER = Path(__file__).resolve().parents[1] / "shared" / "autograder" / "grader"
WIRING = {"cli.py"}  # the one place allowed to call into autograder.term


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            base = "." * node.level + module
            names.add(base)
            names |= {f"{base}.{alias.name}" if base.endswith(".") is False else base + alias.name
                      for alias in node.names}
    return names


def _uses_term(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.startswith(("..term", "autograder.term")) or n == "...term"
                  or n.startswith("...term") or n == "..term" or ".term." in n or n.endswith(".term"))


def test_the_engine_does_not_import_the_term_package():
    offenders = {path.name: _uses_term(_imports(path)) for path in GRADER.glob("*.py") if path.name not in WIRING}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_scan_sees_an_import_of_the_term_package(tmp_path):
    # the check above must be able to fail: a module that does import term is found
    sample = tmp_path / "engine_module.py"
    sample.write_text("from ..term import roster\nimport autograder.term.report as report\n")
    assert _uses_term(_imports(sample)) == ["..term", "..term.roster", "autograder.term.report"]


def test_the_wiring_module_is_the_only_one_and_it_does_use_term():
    assert _uses_term(_imports(GRADER / "cli.py")), "cli.py no longer wires the term: drop it from WIRING"
