"""Throughput of the batch grader, and of `nbgrader autograde` on the same submissions.

    .venv/bin/python benchmarks/grading_throughput.py [LAB] [-n N] [--jobs J] [--nbgrader auto|off|PATH]

LAB defaults to lab02 when it exists, else lab00. N submissions are generated
from the lab's English solution: half of them correct, a quarter with one
exercise made wrong (its function's output perturbed, or its value shifted),
a quarter blank (the lab as handed out). They are graded by
`python -m autograder grade` (in-process, so that start-up and steady state
can be told apart) and the submissions per second are printed.

With the optional bench dependencies (`pip install -r requirements-bench.txt`,
which brings nbgrader) the same files are also graded by `nbgrader autograde`
in a temporary course directory (one kernel per notebook, as nbgrader does),
on the first --nbgrader-n of them, and the ratio of the two rates is printed.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from autograder.grader.batch import Options, run_batch  # noqa: E402
from autograder.labs import LAB_IDS, get_lab  # noqa: E402

PERTURB = '''
def _perturbed(value):
    import torch
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return ~value
        return value + 0.5 if value.is_floating_point() else value + 1
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 0.5
    if isinstance(value, (list, tuple)):
        return type(value)(_perturbed(v) for v in value)
    return value


_target = {name!r}
_original = globals().get(_target)
if isinstance(_original, type):
    _Base = _original
    class _Wrong(_Base):
        def forward(self, *args, **kwargs):
            return _perturbed(super().forward(*args, **kwargs))
    _Wrong.__name__ = _Base.__name__
    globals()[_target] = _Wrong
elif callable(_original):
    globals()[_target] = (lambda f: lambda *a, **k: _perturbed(f(*a, **k)))(_original)
elif _original is not None:
    globals()[_target] = _perturbed(_original)
'''


def lab_notebooks(lab: str) -> tuple[Path, Path | None]:
    solutions = sorted((ROOT / "solutions" / "en").glob(f"{lab}_*.ipynb"))
    if not solutions:
        raise SystemExit(f"no solution notebook for {lab} in solutions/en")
    blank = ROOT / "labs" / "en" / solutions[0].name
    return solutions[0], blank if blank.exists() else None


def with_nbgrader_metadata(notebook: dict) -> dict:
    """Mark the check cells as nbgrader test cells (the solution cells as solution cells)."""
    notebook = json.loads(json.dumps(notebook))
    for index, cell in enumerate(notebook["cells"]):
        source = "".join(cell.get("source", ""))
        grade_id = f"cell{index}"
        if cell["cell_type"] != "code":
            continue
        if source.lstrip().startswith("lab.check("):
            meta = {"grade": True, "grade_id": grade_id, "locked": True, "points": 1, "schema_version": 3,
                    "solution": False, "task": False}
        else:
            meta = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                    "solution": True, "task": False}
        cell.setdefault("metadata", {})["nbgrader"] = meta
        cell["outputs"], cell["execution_count"] = [], None
    return notebook


def generate(lab: str, n: int, folder: Path) -> dict:
    """N submissions in `folder` (student0000.ipynb ...); returns the nbgrader-ready source notebook."""
    solution_path, blank_path = lab_notebooks(lab)
    solution = with_nbgrader_metadata(json.loads(solution_path.read_text()))
    blank = with_nbgrader_metadata(json.loads(blank_path.read_text())) if blank_path else None
    exercises = [exercise.id for exercise in get_lab(lab).exercises]
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        kind = ("correct", "wrong", "correct", "blank")[i % 4]
        if kind == "blank" and blank is None:
            kind = "wrong"
        notebook = json.loads(json.dumps(blank if kind == "blank" else solution))
        if kind == "wrong":
            target = exercises[(i // 4) % len(exercises)]
            notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": PERTURB.replace("{name!r}", repr(target))})
        (folder / f"student{i:04d}.ipynb").write_text(json.dumps(notebook))
    return solution


def run_ours(lab: str, folder: Path, out: Path, jobs: int | None, seed: int, sandbox: str = "auto") -> dict:
    options = Options(lab=lab, paths=[str(folder)], out=out, jobs=jobs, seed=str(seed), regrade=True,
                      progress=io.StringIO(), sandbox=sandbox)
    started = time.monotonic()
    cpu_before = _cpu()
    result = run_batch(options)
    elapsed = time.monotonic() - started
    # the grader's own CPU, plus the sandboxes' (their start-up, paid once per batch, left out)
    cpu = _cpu() - cpu_before + result.sandbox_cpu - result.startup_cpu
    entries = result.book["submissions"]
    durations = sorted(e["duration"] for e in entries)
    statuses = {s: sum(e["status"] == s for e in entries) for s in ("graded", "invalid", "timeout", "error")}
    return {
        "n": len(entries),
        "elapsed": elapsed,
        "startup": result.startup,
        "rate": len(entries) / elapsed,
        "steady_rate": len(entries) / max(elapsed - result.startup, 1e-9),
        "median_submission": durations[len(durations) // 2],
        "mean_score": sum(e["score"] for e in entries) / len(entries),
        "statuses": statuses,
        "sandbox": result.sandbox.mode if result.sandbox else "?",
        "cpu_per_submission": cpu / len(entries),
        "student_cpu_per_submission": sum(r.get("cpu", 0.0) for r in result.records) / len(entries),
    }


def _cpu() -> float:
    """CPU seconds of this process (all its threads)."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def find_nbgrader(choice: str) -> str | None:
    if choice == "off":
        return None
    if choice != "auto":
        return choice
    beside = Path(sys.executable).parent / "nbgrader"
    return str(beside) if beside.exists() else shutil.which("nbgrader")


def run_nbgrader(nbgrader: str, lab: str, source: dict, folder: Path, n: int, work: Path) -> dict:
    course = work / "course"
    name = lab_notebooks(lab)[0].name
    (course / "source" / lab).mkdir(parents=True)
    (course / "source" / lab / name).write_text(json.dumps(source))
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_assignments = [dict(name={lab!r})]\n"
        "c.ExecutePreprocessor.timeout = 120\n"
        "c.ClearSolutions.enforce_metadata = False\n"
    )
    env = dict(os.environ)
    env["JUPYTER_PATH"] = str(ROOT / ".venv" / "share" / "jupyter") + os.pathsep + env.get("JUPYTER_PATH", "")
    env["PATH"] = str(Path(nbgrader).parent) + os.pathsep + env.get("PATH", "")

    def nb(*args):
        done = subprocess.run([nbgrader, *args], cwd=course, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done

    nb("generate_assignment", lab, "--force")
    students = sorted(folder.glob("*.ipynb"))[:n]
    for path in students:
        target = course / "submitted" / path.stem / lab
        target.mkdir(parents=True)
        shutil.copyfile(path, target / name)
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    nb("autograde", lab, "--force")
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)  # nbgrader and its kernels
    graded = len(list((course / "autograded").glob(f"*/{lab}/{name}")))
    return {"n": len(students), "graded": graded, "elapsed": elapsed, "rate": len(students) / elapsed,
            "cpu_per_submission": cpu / len(students)}


def time_per_exercise(lab: str, seed: int) -> dict[str, tuple[float, int]]:
    """Seconds to run and judge each exercise of the English solution on all its cases, and how many."""
    import nbformat

    from autograder.grader.engine import case_seed
    from autograder.grading import grade_exercise, read_context
    from autograder.runtime import run_call

    spec = get_lab(lab)
    notebook = nbformat.read(next((ROOT / "solutions" / "en").glob(f"{lab}_*.ipynb")), as_version=4)
    namespace: dict = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(ROOT / "solutions" / "en")
    try:
        for cell in notebook.cells:
            if cell.cell_type == "code" and "lab.check" not in cell.source and "hand_in" not in cell.source:
                exec(compile(cell.source, "<solution>", "exec"), namespace)
    finally:
        os.chdir(cwd)

    def call(spec_: dict) -> dict:
        return run_call(namespace, spec_)

    ctx, _ = read_context(spec, call)
    hidden = case_seed(seed, lab)
    timings = {}
    for exercise in spec.exercises:
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            grade_exercise(exercise, ctx, call, hidden)
            best = min(best, time.perf_counter() - started)
        timings[exercise.id] = (best, len(exercise.cases(ctx, hidden)))
    return timings


def main(argv: list[str] | None = None) -> int:
    default_lab = "lab02" if "lab02" in LAB_IDS else "lab00"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lab", nargs="?", default=default_lab, choices=LAB_IDS)
    parser.add_argument("-n", type=int, default=200, help="submissions to generate (default %(default)s)")
    parser.add_argument("--jobs", type=int, default=None, help="grader jobs (default: cores)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "fallback"), default="auto")
    parser.add_argument("--nbgrader", default="auto", help="auto | off | path to the nbgrader executable")
    parser.add_argument("--nbgrader-n", type=int, default=10, help="submissions nbgrader grades (default %(default)s)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated files here")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="grading-bench-")) if args.keep is None else args.keep
    try:
        folder = work / "submissions"
        source = generate(args.lab, args.n, folder)
        ours = run_ours(args.lab, folder, work / "out", args.jobs, args.seed, args.sandbox)
        print(f"{args.lab}: {ours['n']} submissions ({ours['statuses']}, mean score {ours['mean_score']:.2f}), "
              f"sandbox {ours['sandbox']}, {os.cpu_count()} cores")
        print(f"autograder: {ours['elapsed']:.2f} s in all = {ours['rate']:.1f} submissions/s; "
              f"after the {ours['startup']:.2f} s start-up of the warm workers {ours['steady_rate']:.1f} submissions/s; "
              f"median {ours['median_submission'] * 1000:.0f} ms per submission")
        cores = len(os.sched_getaffinity(0))
        print(f"CPU per submission: {ours['cpu_per_submission'] * 1000:.0f} ms in all (students' processes "
              f"{ours['student_cpu_per_submission'] * 1000:.0f} ms), so {cores} idle cores grade about "
              f"{cores / ours['cpu_per_submission']:.0f} submissions/s")
        per_exercise = time_per_exercise(args.lab, args.seed)
        print("time per exercise (the solution, public and hidden cases, in-process, best of 5): "
              + ", ".join(f"{name} {seconds * 1000:.1f} ms ({cases} cases)" for name, (seconds, cases) in per_exercise.items()))
        nbgrader = find_nbgrader(args.nbgrader)
        if nbgrader is None:
            print("nbgrader: not installed (pip install -r requirements-bench.txt), no comparison")
            return 0
        theirs = run_nbgrader(nbgrader, args.lab, source, folder, min(args.nbgrader_n, args.n), work / "nbgrader")
        print(f"nbgrader autograde: {theirs['n']} submissions ({theirs['graded']} autograded) in "
              f"{theirs['elapsed']:.2f} s = {theirs['rate']:.2f} submissions/s "
              f"({theirs['elapsed'] / theirs['n']:.2f} s per submission, "
              f"{theirs['cpu_per_submission'] * 1000:.0f} ms CPU per submission)")
        print(f"ratio: {ours['rate'] / theirs['rate']:.0f}x nbgrader's rate "
              f"({ours['steady_rate'] / theirs['rate']:.0f}x after start-up; "
              f"{theirs['cpu_per_submission'] / ours['cpu_per_submission']:.0f}x less CPU per submission)")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
