"""`python -m autograder ARGS` through the command line's own main() in the test's process (no new interpreter)."""
from __future__ import annotations


class Ran:
    """What a run printed and its exit code, as subprocess.run gives them."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_here(capsys, *args, check=True) -> Ran:
    from autograder.grader import cli

    capsys.readouterr()  # what the test printed before is not this run's
    code = cli.main([str(a) for a in args])
    printed = capsys.readouterr()
    if check:
        assert code == 0, printed.out + printed.err
    return Ran(code, printed.out, printed.err)
