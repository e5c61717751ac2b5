"""`python -m autograder COMMAND`: grade, report, export, release, gradescope (see grader/cli.py)."""
import sys

if __name__ == "__main__":
    from .grader.cli import main

    sys.exit(main())
