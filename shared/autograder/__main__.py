"""`python -m autograder grade LAB PATH ... --out DIR`: the instructor's batch grader (see grader/cli.py).
`python -m autograder release --out DIR [--zip FILE]`: the student release (see release/bundle.py)."""
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["release"]:
        from .release.bundle import main as release_main

        sys.exit(release_main(sys.argv[2:]))
    from .grader.cli import main

    sys.exit(main())
