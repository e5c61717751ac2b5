"""Mutation testing of the code that decides grades: `make mutation [MODULES="exercise lab00"] [MUTATION_JOBS=2]`.

mutmut (pinned in requirements-mutation.txt) plants one small bug at a time (a `<` for a `<=`, a
constant off by one, a branch dropped) and runs the tests that call the mutated function; a
mutant the tests let through is a grading bug they would not notice. What is mutated and which
tests run: tests/mutation/scope.toml. Survivors that no test can kill, because they change
nothing a grade depends on, are listed with their reason in tests/mutation/equivalent.txt.

mutmut imports mutated code from `mutants/src/`, and names modules after their path under
`src/`: the package lives in shared/, so the run happens in a staging copy, build/mutation/,
laid out as src/autograder, src/labbook and tests/ (rebuilt on every run, so no result is
reused from an older tree). The repository's notebooks are linked in, for the tests that read
them. Prints, per module: mutants, killed, equivalent, survivors, score = killed / (mutants -
equivalent); then every survivor with its key (the line to add to equivalent.txt, reason
first, if it is one). The full mutmut output is in build/mutation/mutmut.log.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
STAGE = ROOT / "build" / "mutation"
PACKAGE = "autograder"
LINKED = ("course", "labs", "solutions", "sources")  # read by some tests through LABBOOK_ROOT
EQUIVALENT = HERE / "equivalent.txt"
CAUGHT = {"killed", "timeout", "caught by type check"}


PRELOAD = '''"""Written by tests/mutation/run.py: imported once by mutmut's fork server, before it forks a child per mutant."""
import importlib

import numpy  # noqa: F401
import torch

torch.set_num_threads(1)
for _name in ("autograder.labs", "autograder.grading", "autograder.evidence", "autograder.runtime",
              "autograder.grader.engine", "autograder.term.book", "autograder.term.export"):
    importlib.import_module(_name)
for _lab in importlib.import_module("autograder.labs").LAB_IDS:
    importlib.import_module(f"autograder.labs.{_lab}")
'''


@dataclass
class Module:
    name: str
    file: str  # under shared/autograder/
    functions: list[str] | None = None  # None: the whole file

    @property
    def dotted(self) -> str:
        return PACKAGE + "." + self.file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

    def patterns(self) -> list[str]:
        """mutmut's mutant names of this module (its mangled function names, `x_f` or `xǁClassǁf`)."""
        if self.functions is None:
            return [f"{self.dotted}.x*"]  # not `.*`: labs/__init__'s pattern would take in every lab's mutants
        return [f"{self.dotted}.{mangle(function)}__mutmut_*" for function in self.functions]


def mangle(function: str) -> str:
    if "." in function:
        cls, name = function.split(".")
        return f"xǁ{cls}ǁ{name}"
    return f"x_{function}"


def unmangle(mangled: str) -> str:
    if mangled.startswith("xǁ"):
        _, cls, name = mangled.split("ǁ")
        return f"{cls}.{name}"
    return mangled.removeprefix("x_")


@dataclass
class Tally:
    module: Module
    total: int = 0
    caught: int = 0
    equivalent: int = 0
    unchecked: int = 0  # not tested yet (a run stopped early): left out of the score
    survivors: list[tuple[str, str, str]] = field(default_factory=list)  # (status, key, mutant name)

    @property
    def score(self) -> float:
        judged = self.total - self.equivalent - self.unchecked
        return 100.0 * self.caught / judged if judged else 100.0


def load_scope() -> tuple[dict[str, Module], list[str], list[str]]:
    scope = tomllib.loads((HERE / "scope.toml").read_text(encoding="utf-8"))
    modules = {name: Module(name, item["file"], item.get("functions")) for name, item in scope["modules"].items()}
    return modules, scope["tests"]["files"], scope["tests"].get("deselect", [])


def load_equivalents() -> dict[str, str]:
    """key -> reason; a key is `module file | function | mutated line`, so it survives unrelated edits."""
    found = {}
    for number, line in enumerate(EQUIVALENT.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(" | ", 3)
        if len(parts) != 4:
            sys.exit(f"{EQUIVALENT}:{number}: expected `file | function | reason | mutated line`")
        file, function, reason, mutated = (part.strip() for part in parts)
        found[f"{file} | {function} | {mutated}"] = reason
    return found


def stage(modules: list[Module], tests: list[str], deselect: list[str], tests_from: Path | None = None) -> None:
    """build/mutation: the package under src/, the tests, a pyproject that configures pytest and mutmut."""
    if STAGE.exists():
        shutil.rmtree(STAGE)
    (STAGE / "src").mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("autograder", "labbook"):
        shutil.copytree(ROOT / "shared" / package, STAGE / "src" / package, ignore=ignore)
    shutil.copytree(tests_from or ROOT / "tests", STAGE / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "browser"))
    # mutmut runs the tests in mutants/, a copy of this folder: the tests find the notebooks there
    (STAGE / "mutants").mkdir()
    for name in LINKED:
        (STAGE / "mutants" / name).symlink_to(ROOT / name)
    pytest_config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    # pytest starts once per mutant: only the plugins the tests need (third-party ones are not even
    # loaded, see run_mutmut), and none that calls gc.collect() at exit (seconds on a heap holding torch)
    args = ["-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:doctest",
            "-p", "no:junitxml", "-p", "no:pastebin", "-p", "no:legacypath", "-p", "no:stepwise",
            "-p", "no:faulthandler", "-p", "no:setuponly", "-p", "no:setupplan"]
    for test in deselect:
        args += ["--deselect", test]
    # mutmut's fork server loads this before forking a child per mutant: torch and the labs are imported once
    (STAGE / "conftest.py").write_text(PRELOAD, encoding="utf-8")
    present = [test for test in tests if (STAGE / test.split("::")[0]).exists()]
    config = {
        "source_paths": ["src/"],
        "only_mutate": [f"src/{PACKAGE}/{module.file}" for module in modules],
        "pytest_add_cli_args_test_selection": present,
        "pytest_add_cli_args": args,
        # one server process imports torch, the labs and the tests once, then forks a child per mutant
        "process_isolation": "forkserver",
        "also_copy": ["conftest.py"],
    }
    lines = ["[tool.pytest.ini_options]",
             f"markers = {json.dumps(pytest_config.get('markers', []))}",
             f"filterwarnings = {json.dumps(pytest_config.get('filterwarnings', []))}",
             "", "[tool.mutmut]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    (STAGE / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_mutmut(modules: list[Module], jobs: int, only: list[str] | None = None) -> int:
    env = dict(os.environ)
    # mutmut forks one child per mutant from a process that has used torch: one thread keeps that safe
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.pop("LABBOOK_ROOT", None)
    names = only or [pattern for module in modules for pattern in module.patterns()]
    mutmut = Path(sys.executable).with_name("mutmut")
    log = STAGE / "mutmut.log"
    with log.open("w", encoding="utf-8") as stream:
        done = subprocess.run([str(mutmut), "run", "--max-children", str(jobs), *names], cwd=STAGE, env=env,
                              stdout=stream, stderr=subprocess.STDOUT)
    return done.returncode


def collect(modules: list[Module], equivalents: dict[str, str]) -> tuple[list[Tally], set[str]]:
    """Per module, the statuses of its mutants (read from mutmut's meta files) and each survivor's key."""
    os.chdir(STAGE)
    sys.path.insert(0, str(STAGE))
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    used: set[str] = set()
    tallies = []
    for module in modules:
        tally = Tally(module)
        meta = STAGE / "mutants" / "src" / PACKAGE / f"{module.file}.meta"
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {}) if meta.exists() else {}
        patterns = module.patterns()
        for name, code in sorted(codes.items(), key=lambda item: _natural(item[0])):
            if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                continue
            tally.total += 1
            status = status_by_exit_code[code]
            if status == "not checked":
                tally.unchecked += 1
                continue
            if status in CAUGHT:
                tally.caught += 1
                continue
            key = survivor_key(module, name, get_diff_for_mutant(name, path=Path("src") / PACKAGE / module.file))
            if key in equivalents:
                tally.equivalent += 1
                used.add(key)
            else:
                tally.survivors.append((status, key, name))
        tallies.append(tally)
    return tallies, used


def _natural(name: str) -> tuple:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def survivor_key(module: Module, name: str, diff: str) -> str:
    mangled = name.rsplit(".", 1)[1].split("__mutmut_")[0]
    lines = diff.splitlines()
    added = [line[1:].strip() for line in lines if line.startswith("+") and not line.startswith("+++")]
    if not added:  # the mutant deletes a line: name the line it deletes
        added = ["(deleted) " + line[1:].strip() for line in lines if line.startswith("-") and not line.startswith("---")]
    return f"{module.file} | {unmangle(mangled)} | {' '.join(added)}"


def report(tallies: list[Tally], equivalents: dict[str, str], used: set[str], full_run: bool, seconds: float) -> str:
    unchecked = sum(t.unchecked for t in tallies)
    lines = [f"{'module':<11} {'file':<20} {'mutants':>7} {'caught':>6} {'equiv':>5} {'left':>5} {'score':>7}"
             + (f" {'unrun':>5}" if unchecked else "")]
    for t in tallies:
        lines.append(f"{t.module.name:<11} {t.module.file:<20} {t.total:>7} {t.caught:>6} {t.equivalent:>5} "
                     f"{len(t.survivors):>5} {t.score:>6.1f}%" + (f" {t.unchecked:>5}" if unchecked else ""))
    total = sum(t.total for t in tallies)
    caught = sum(t.caught for t in tallies)
    equivalent = sum(t.equivalent for t in tallies)
    judged = total - equivalent - unchecked
    lines.append(f"{'all':<11} {'':<20} {total:>7} {caught:>6} {equivalent:>5} {judged - caught:>5} "
                 f"{100.0 * caught / judged if judged else 100.0:>6.1f}%" + (f" {unchecked:>5}" if unchecked else ""))
    if unchecked:
        lines.append(f"PARTIAL: {unchecked} mutants were not tested (the run stopped early); scores are over the rest")
    lines.append(f"({seconds / 60:.1f} min; 'caught' = killed or timed out; 'left' = survived or not run by any test)")
    survivors = [(t.module.name, *s) for t in tallies for s in t.survivors]
    if survivors:
        lines += ["", "Survivors (kill each with a test, or add it to tests/mutation/equivalent.txt as",
                  "`file | function | why no test can tell | mutated line`):"]
        for module, status, key, name in survivors:
            file, function, mutated = key.split(" | ", 2)
            lines.append(f"  [{status}] {file} | {function} | ? | {mutated}    ({name})")
    if full_run:
        stale = sorted(set(equivalents) - used)
        if stale:
            lines += ["", "Listed as equivalent but no longer a surviving mutant (remove from equivalent.txt):"]
            lines += [f"  {key}" for key in stale]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    global STAGE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", default="", help="names from tests/mutation/scope.toml, space or comma separated")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--tests", default="", help="test files to use instead of scope.toml's (space separated)")
    parser.add_argument("--mutants", default="",
                        help="mutant names or globs to test again, e.g. the survivors of the last run (space separated); "
                             "the others count as not run")
    parser.add_argument("--report-only", action="store_true", help="print the report of the last run again")
    parser.add_argument("--tests-from", type=Path, default=None,
                        help="a tests/ folder to use instead of the repository's (e.g. an older commit's, for a baseline)")
    parser.add_argument("--stage", type=Path, default=ROOT / "build" / "mutation", help="staging folder (default build/mutation)")
    args = parser.parse_args(argv)
    STAGE = args.stage.resolve()
    modules, tests, deselect = load_scope()
    wanted = [name for name in args.modules.replace(",", " ").split() if name]
    unknown = [name for name in wanted if name not in modules]
    if unknown:
        print(f"unknown module(s) {', '.join(unknown)}; modules: {', '.join(modules)}", file=sys.stderr)
        return 2
    chosen = [modules[name] for name in wanted] if wanted else list(modules.values())
    if args.tests:
        tests = args.tests.split()
    equivalents = load_equivalents()
    started = time.monotonic()
    if not args.report_only:
        stage(chosen, tests, deselect, args.tests_from.resolve() if args.tests_from else None)
        print(f"mutmut over {', '.join(m.name for m in chosen)} with {len(tests)} test files, {args.jobs} at once "
              f"(log: {STAGE.relative_to(ROOT) / 'mutmut.log'}) ...", flush=True)
        code = run_mutmut(chosen, args.jobs, args.mutants.split() or None)
        if code != 0:
            print((STAGE / "mutmut.log").read_text(encoding="utf-8", errors="replace")[-3000:])
            print(f"mutmut failed (exit {code}); see {STAGE / 'mutmut.log'}", file=sys.stderr)
            return 1
    tallies, used = collect(chosen, equivalents)
    text = report(tallies, equivalents, used, full_run=not wanted and not args.tests and not args.mutants, seconds=time.monotonic() - started)
    (STAGE / "report.txt").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
