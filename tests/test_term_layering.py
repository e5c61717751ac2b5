"""The term is a one-way pipeline: intake -> engine -> book -> outputs. No stage imports a later one.

- the engine (grader/) never uses course management: only the command line wires the two;
- the intake (term/: names, files, sources, layouts, roster, identity, times, intake, lms/) uses of the
  engine only its cleaning (grader/sanitize.py) and UsageError/MAX_BYTES, and nothing of the book or the
  outputs: names are cleaned and files opened there, never after;
- the book (analysis, code, handgrading, lateness, overrides, book, similarity, state) imports no output.
"""
import ast
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1] / "shared"
GRADER = SHARED / "autograder" / "grader"
TERM = SHARED / "autograder" / "term"
WIRING = {"cli.py"}  # the one place allowed to call into autograder.term

INTAKE = {"names", "files", "sources", "layouts", "roster", "identity", "times", "intake", "lms", "lms.canvas",
          "lms.moodle"}
BOOK = {"analysis", "code", "handgrading", "lateness", "overrides", "book", "similarity", "state"}
OUTPUTS = {"export", "report"}
ORCHESTRATION = {"run", "cli", "status", "kept", "summary"}
INTAKE_MAY_USE_OF_THE_ENGINE = {"autograder.grader", "autograder.grader.sanitize", "autograder.grader.submissions",
                                "autograder.grader.submissions.UsageError", "autograder.grader.submissions.MAX_BYTES",
                                # writing private files (0700 folders, whole-or-nothing 0600 files)
                                "autograder.grader.private_files", "autograder.grader.private_files.private_dir",
                                "autograder.grader.private_files.write_bytes_atomic"}


def package_of(path: Path) -> tuple[str, ...]:
    return tuple(path.relative_to(SHARED).with_suffix("").parts[:-1])


def imported(path: Path, package: tuple[str, ...] | None = None) -> set[str]:
    """Every module an import in `path` names, as an absolute dotted name (`from .. import term` too)."""
    package = package or package_of(path)
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def uses_term(path: Path) -> list[str]:
    return sorted(name for name in imported(path) if name == "autograder.term" or name.startswith("autograder.term."))


def term_module(path: Path) -> str:
    parts = path.relative_to(TERM).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def term_modules_used(path: Path) -> set[str]:
    """The term modules `path` imports (`autograder.term.lms.canvas` -> `lms.canvas`)."""
    found = set()
    for name in imported(path):
        if name.startswith("autograder.term."):
            parts = name.split(".")[2:]
            for end in range(len(parts), 0, -1):  # `from . import names` names the module, `.Student` a member
                candidate = ".".join(parts[:end])
                if (TERM / Path(*parts[:end])).with_suffix(".py").is_file() or (TERM / Path(*parts[:end])).is_dir():
                    found.add(candidate)
                    break
    return found


def modules(stage: set[str]) -> list[Path]:
    return [p for p in TERM.rglob("*.py") if term_module(p) in stage]


def test_the_engine_does_not_import_the_term_package():
    offenders = {path.name: uses_term(path) for path in GRADER.glob("*.py") if path.name not in WIRING}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_scan_sees_every_spelling_of_an_import_of_term(tmp_path):
    # the check above must be able to fail
    sample = tmp_path / "engine_module.py"
    sample.write_text("from ..term import roster\nfrom .. import term\nimport autograder.term.report as r\n"
                      "from . import gradebook\nfrom ..labs import get_lab\n")
    assert sorted(n for n in imported(sample, ("autograder", "grader")) if n.startswith("autograder.term")) == \
        ["autograder.term", "autograder.term.report", "autograder.term.roster"]


def test_the_wiring_module_is_the_only_one_and_it_does_use_term():
    assert uses_term(GRADER / "cli.py"), "cli.py no longer wires the term: drop it from WIRING"


def test_every_term_module_has_a_stage():
    known = INTAKE | BOOK | OUTPUTS | ORCHESTRATION | {""}
    assert sorted(term_module(p) for p in TERM.rglob("*.py") if term_module(p) not in known) == []


def test_the_intake_uses_only_the_engine_s_cleaning_and_nothing_after_it():
    offenders = {}
    for path in modules(INTAKE):
        engine = {n for n in imported(path) if n.startswith("autograder.grader")} - INTAKE_MAY_USE_OF_THE_ENGINE
        later = term_modules_used(path) - INTAKE
        if engine or later:
            offenders[term_module(path)] = sorted(engine | later)
    assert offenders == {}
    assert len(modules(INTAKE)) == len(INTAKE)  # every intake module was looked at


def test_the_book_imports_no_output_and_no_orchestration():
    offenders = {term_module(p): sorted(term_modules_used(p) & (OUTPUTS | ORCHESTRATION)) for p in modules(BOOK)}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_stage_scan_can_fail(tmp_path):
    sample = TERM / "names.py"
    assert "names" in term_modules_used(TERM / "roster.py")
    fake = tmp_path / "intake_module.py"
    fake.write_text("from ..grader import gradebook\nfrom . import book\nfrom .roster import Student\n")
    engine = {n for n in imported(fake, ("autograder", "term")) if n.startswith("autograder.grader")}
    assert engine - INTAKE_MAY_USE_OF_THE_ENGINE == {"autograder.grader.gradebook"}
    assert sample.is_file()
