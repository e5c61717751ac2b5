"""The term's commands, called by the grader's command line (its only link to this package)."""
from __future__ import annotations

import sys

from ..grader.submissions import UsageError
from .run import TermOptions, grade_term


def grade(args, options) -> int:
    result = grade_term(TermOptions(
        options, roster=args.roster, layout=args.layout, due=args.due, late_per_day=args.late_per_day,
        late_cap=args.late_cap, overrides=list(args.overrides), drop_overrides=list(args.drop_overrides),
        penalise_forbidden=args.penalise_forbidden, lms_timezone=args.lms_timezone,
        submission_times=list(args.submission_times), extra=list(args.extra), drop_extra=list(args.drop_extra),
        allow_unmatched=args.allow_unmatched))
    print(result.summary())
    print(f"Gradebook: {args.out / 'grades.json'}, {args.out / 'grades.csv'}, {args.out / 'feedback'}/; "
          f"files not counted for any student: {args.out / 'unmatched.csv'}")
    return 0


def main(args) -> int:
    if args.command == "status":
        from .status import status_text

        print(status_text(args.dir))
        return 0
    if not (args.dir / "grades.json").is_file():
        raise UsageError(f"{args.dir}: no grades.json (grade LAB PATH --out {args.dir} first)")
    if args.command == "export":
        from .export import export

        exported = export(args.dir, args.to, args.out, args.assignment, args.missing, args.lang)
        for message in exported.messages:
            print(message)
        print("Wrote " + ", ".join(str(path) for path in exported.paths))
        return 0
    if args.command == "report":
        from .report import write_report

        path = write_report(args.dir, args.lang)
        print(f"Class report: {path}")
        return 0
    print(f"autograder: unknown command {args.command}", file=sys.stderr)
    return 2
