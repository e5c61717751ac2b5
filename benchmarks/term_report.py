"""A term of N students (default 300): grade once, then time the class report and a rerun with overrides.

    .venv/bin/python benchmarks/term_report.py [-n N] [--jobs J] [--keep DIR]

The term is corpus/term.py's generated Canvas download of lab01 (non-submitters,
resubmissions, late and extended students, wrong-lab files, an identical pair).
Printed, in seconds: the first grading, `report DIR`, and a rerun of `grade`
with an overrides file of one line per tenth student (every record reused:
what an instructor waits for after fixing a grade).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from corpus import term as T  # noqa: E402


def timed(*args) -> float:
    begun = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{result.stdout}{result.stderr}")
    return time.monotonic() - begun


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.keep or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        term = T.make_term(args.n)
        (work / "roster.csv").write_text(term.roster_csv())
        T.canvas_zip(term, work / "submissions.zip")
        lines = ["student,exercise,points,reason"]
        lines += [f"{s.student},causal_mask,2,regraded by hand" for s in term.students[::10]]
        (work / "overrides.csv").write_text("\n".join(lines) + "\n")
        common = ["--out", work / "out", "--roster", work / "roster.csv", "--due", T.DUE, "--late-per-day", "10",
                  "--jobs", args.jobs, "--seed", "7", "--quiet"]
        grading = timed("grade", T.LAB, work / "submissions.zip", *common)
        report = timed("report", work / "out")
        rerun = timed("grade", T.LAB, work / "submissions.zip", *common, "--overrides", work / "overrides.csv")
        report_again = timed("report", work / "out")
        print(f"students: {args.n}")
        print(f"first grading: {grading:.2f} s")
        print(f"report: {report:.2f} s")
        print(f"rerun with {len(lines) - 1} overrides (all records reused): {rerun:.2f} s")
        print(f"report after the rerun: {report_again:.2f} s")
        print(f"report size: {(work / 'out' / 'report.html').stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
