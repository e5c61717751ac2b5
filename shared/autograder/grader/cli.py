"""`python -m autograder {grade,report,export,release,gradescope}`: the instructor's command line.

Exit status: 0 when the batch was graded (whatever the students' results),
2 when the call is wrong (unknown lab, missing path, bad option), 1 when the
grader itself could not work (the sandbox would not start), 130 on Ctrl-C.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..labs import LAB_IDS
from .batch import SEED_ENV, Options, run_batch
from .engine import TimeLimits
from .sandbox import SandboxError
from .submissions import MAX_BYTES, UsageError

REGRADE_ALL = "\x00all"  # --regrade given without a student

EPILOG = f"""\
hidden cases: besides the public cases that `check` shows, every exercise may
draw randomised cases from a seed. Pass --seed N or set {SEED_ENV}=N for
final grading and keep N secret; without either, a default seed fixed per lab
is used (anyone with this code can reproduce it) and the summary warns.
Hidden cases depend on the seed and the lab only: identical code gets identical points.
Feedback never names a hidden input; --reveal-hidden shows them after the deadline.

resuming: every finished submission is recorded in DIR/.autograder/records;
running the same command again grades only what has no record (a changed
file, another lab or another seed counts as new). --regrade ignores records;
--regrade STUDENT grades that student again. A run never drops the rows of
students it was not given (grades.csv keeps everyone graded into DIR).

sandbox: with bubblewrap (apt-get install bubblewrap) student code sees no
network, no repository, no solutions and no gradebook; without it the grader
falls back to rlimits and a fresh process per submission (and, as root, a
private mount namespace, no network and a uid per submission) and says so.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description="The lab book's instructor tools, in a term's order: release the labs to students, grade "
                    "the submissions in a sandbox, report on the class, export grades and feedback to the LMS; "
                    "or build a Gradescope autograder. `python -m autograder COMMAND --help` for each.")
    commands = parser.add_subparsers(dest="command", required=True)

    grade = commands.add_parser("grade", help="grade a batch of submitted notebooks", epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    grade.add_argument("lab", metavar="LAB", help=f"lab id ({', '.join(LAB_IDS)})")
    grade.add_argument("paths", metavar="PATH", nargs="+",
                       help="a notebook, or a folder of notebooks (student id = file stem), "
                            "or an nbgrader folder DIR/<student>/<lab>/*.ipynb")
    grade.add_argument("--out", required=True, type=Path, metavar="DIR", help="where the gradebook goes")
    grade.add_argument("--jobs", type=int, default=None, metavar="N", help="parallel workers (default: cores)")
    grade.add_argument("--lang", default=None, metavar="xx",
                       help="feedback language for everyone (default: each notebook's own)")
    grade.add_argument("--seed", default=None, metavar="N", help=f"seed of the hidden cases (or ${SEED_ENV})")
    grade.add_argument("--timeout", type=float, default=TimeLimits.exercise, metavar="S",
                       help="time limit per exercise, in seconds (default %(default)s)")
    grade.add_argument("--cell-timeout", type=float, default=TimeLimits.cell, metavar="S",
                       help="time limit per notebook cell (default %(default)s)")
    grade.add_argument("--submission-timeout", type=float, default=TimeLimits.submission, metavar="S",
                       help="time limit for a whole submission (default %(default)s)")
    grade.add_argument("--memory-mb", type=int, default=2048, metavar="MB",
                       help="RLIMIT_DATA of the student's process (default %(default)s)")
    grade.add_argument("--max-mb", type=float, default=MAX_BYTES / 2**20, metavar="MB",
                       help="larger notebook files are invalid (default %(default)s)")
    grade.add_argument("--sandbox", choices=("auto", "bwrap", "fallback"), default="auto",
                       help="auto: bwrap when it works here, else the fallback (default)")
    grade.add_argument("--regrade", nargs="?", action="append", const=REGRADE_ALL, metavar="STUDENT",
                       help="without a value: ignore earlier records, grade everything again; "
                            "--regrade STUDENT (repeatable): grade that student again and keep every other row")
    term = grade.add_argument_group("a term (roster, LMS layouts, lateness, overrides; see the grader's README)")
    term.add_argument("--roster", type=Path, metavar="ROSTER.csv",
                      help="the class list as the LMS gives it: Canvas's gradebook export, Moodle's grading worksheet "
                           "or participants download, or student[,name,email,lms_id,extension_days,section,login]; "
                           "one row per student in the gradebook")
    term.add_argument("--layout", default=None, metavar="LAYOUT",
                      help="auto|flat|nbgrader|canvas|moodle: how the files are named (default auto: the layout that "
                           "explains most notebooks of each download, else the run stops and asks)")
    term.add_argument("--due", default=None, metavar="ISO", help="due time with offset, e.g. 2026-12-10T23:59:00+01:00")
    term.add_argument("--late-per-day", default=None, metavar="PERCENT",
                      help="penalty per started late day, percent of the raw score (default 0)")
    term.add_argument("--late-cap", default=None, metavar="PERCENT", help="the late penalty at most (default 100)")
    term.add_argument("--overrides", action="append", type=Path, default=[], metavar="OVERRIDES.csv",
                      help="student,exercise,points,reason lines applied after grading (repeatable); kept and "
                           "accumulated: a later run adds files, the same file given again is read again")
    term.add_argument("--drop-overrides", action="append", default=[], metavar="FILE",
                      help="stop applying a kept overrides file (its path or name; repeatable)")
    term.add_argument("--lms-timezone", default=None, metavar="ZONE",
                      help="zone of the times the LMS writes without one (Moodle's worksheet), e.g. Europe/Berlin "
                           "(default: the offset of --due)")
    term.add_argument("--submission-times", action="append", type=Path, default=[], metavar="FILE",
                      help="hand-in times: Canvas's /api/v1/courses/C/assignments/A/submissions answer (JSON; "
                           "repeat for each page), or a CSV student,submitted_at; kept for later runs")
    term.add_argument("--extra", action="append", type=Path, default=[], metavar="FOLDER",
                      help="a folder of <student>.ipynb handed in outside the LMS (kept; its files count instead of "
                           "the LMS's). A notebook given as a PATH next to a download is such a file too")
    term.add_argument("--drop-extra", action="append", default=[], metavar="STUDENT|FOLDER",
                      help="forget a kept file handed in outside the LMS (by student id) or a kept --extra folder")
    term.add_argument("--allow-unmatched", action="store_true",
                      help="write the gradebook even when most notebooks fit no pattern or name nobody on the roster")
    term.add_argument("--penalise-forbidden", action=argparse.BooleanOptionalAction, default=None,
                      help="an exercise that uses an API it forbids gets 0 points (default: only flagged; "
                           "kept for later runs, --no-penalise-forbidden to stop)")

    release = commands.add_parser("release", add_help=False,
                                  help="build the student release: chapters, labs, check-only package "
                                       "(--labs, --chapters to release part of the book)")
    release.add_argument("release_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    export = commands.add_parser("export", help="grades for an LMS import, and the feedback as one zip")
    export.add_argument("dir", metavar="DIR", type=Path, help="a gradebook folder (grade --out DIR)")
    export.add_argument("--to", required=True, choices=("canvas", "moodle", "csv"))
    export.add_argument("--out", required=True, type=Path, metavar="FILE")
    export.add_argument("--assignment", default=None, metavar="NAME",
                        help="the gradebook column to fill, as the LMS's gradebook export names it (Canvas: "
                             "'Lab 2: Causal attention (48212)'); default for Canvas: the roster export's column "
                             "that names this lab")
    export.add_argument("--missing", choices=("zero", "empty"), default="zero",
                        help="a student who handed in nothing: 0, or an empty cell (Canvas keeps what it has and "
                             "its missing policy applies; Moodle: no grade) (default zero)")
    export.add_argument("--lang", default="en", metavar="xx",
                        help="language of the instructor's columns (csv notes); students' feedback stays in theirs")

    status = commands.add_parser("status", help="what a term's gradebook keeps: roster, policy, seed fingerprint, "
                                                "overrides, sources, counts")
    status.add_argument("dir", metavar="DIR", type=Path)

    report = commands.add_parser("report", help="the class report, DIR/report.html")
    report.add_argument("dir", metavar="DIR", type=Path)
    report.add_argument("--lang", default="en", metavar="xx", help="en, es, de or hi-Latn (default en)")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument("--reveal-hidden", action="store_true",
                       help="feedback names the hidden cases' inputs (after the deadline; nothing is graded again)")
    grade.add_argument("--book-url", default=None, metavar="URL",
                       help="where the HTML edition (make html) is published: chapter references in the feedback "
                            "files become links to URL/course/<lang>/NN_name.html (default: plain text)")
    grade.add_argument("--follow-symlinks", action="store_true",
                       help="grade notebooks reached through symbolic links (default: each is an invalid row)")

    bundle = commands.add_parser("gradescope", help="build a Gradescope autograder bundle (.zip)")
    bundle.add_argument("lab", metavar="LAB")
    bundle.add_argument("--out", required=True, type=Path, metavar="FILE.zip")
    bundle.add_argument("--seed", default=None, metavar="N",
                        help="seed of the hidden cases baked into the bundle (default: a new random one)")
    bundle.add_argument("--timeout", type=float, default=TimeLimits.exercise, metavar="S")
    bundle.add_argument("--visibility", choices=("visible", "hidden", "after_due_date", "after_published"),
                        default="visible",
                        help="when students see each exercise's result, which includes the hidden cases "
                             "(after_published: once you publish the grades; default visible)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["release"]:  # its own parser (release/bundle.py); listed in ours for the help
        from ..release.bundle import main as release_main

        return release_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        if args.command == "grade":
            return _grade(args)
        if args.command in ("export", "report", "status"):
            # the one place that wires the term's course management to the command line
            from ..term import cli as term_cli

            return term_cli.main(args)
        if args.command == "gradescope":
            from .gradescope import BASE_IMAGE, build_bundle

            path = build_bundle(args.lab, args.out, seed=args.seed, timeout=args.timeout, visibility=args.visibility)
            print(f"Gradescope bundle for {args.lab}: {path} (base image: {BASE_IMAGE}; setup.sh installs "
                  "Python 3.11 and CPU-only torch)")
            return 0
    except UsageError as error:
        print(f"autograder: error: {error}", file=sys.stderr)
        return 2
    except SandboxError as error:
        print(f"autograder: the sandbox failed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nautograder: interrupted; finished submissions are recorded, run the same command to go on.",
              file=sys.stderr)
        return 130
    return 2


def _is_term(args) -> bool:
    """A term's options, a zip, or a DIR graded as a term before: the term's gradebook (one row per student)."""
    import zipfile

    if any(getattr(args, name) not in (None, []) for name in
           ("roster", "layout", "due", "late_per_day", "late_cap", "overrides", "penalise_forbidden", "drop_overrides",
            "lms_timezone", "submission_times", "extra", "drop_extra")) or args.allow_unmatched:
        return True
    if any(Path(p).is_file() and zipfile.is_zipfile(p) for p in args.paths):
        return True
    return (args.out / ".autograder" / "term" / "settings.json").is_file()


def _grade(args) -> int:
    for name in ("timeout", "cell_timeout", "submission_timeout"):
        if getattr(args, name) <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    options = Options(
        lab=args.lab,
        paths=args.paths,
        out=args.out,
        jobs=args.jobs,
        lang=args.lang,
        seed=args.seed,
        sandbox=args.sandbox,
        limits=TimeLimits(exercise=args.timeout, cell=args.cell_timeout, submission=args.submission_timeout),
        memory_mb=args.memory_mb,
        max_bytes=int(args.max_mb * 2**20),
        regrade=REGRADE_ALL in (args.regrade or []),
        regrade_students=frozenset(s for s in (args.regrade or []) if s != REGRADE_ALL),
        quiet=args.quiet,
        follow_symlinks=args.follow_symlinks,
        reveal_hidden=args.reveal_hidden,
        book_url=args.book_url,
    )
    if args.quiet:
        import io

        options.progress = io.StringIO()
    if _is_term(args):
        from ..term import cli as term_cli

        return term_cli.grade(args, options)
    result = run_batch(options)
    print(result.summary())
    print(f"Gradebook: {args.out / 'grades.json'}, {args.out / 'grades.csv'}, {args.out / 'feedback'}/")
    return 0
