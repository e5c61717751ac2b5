"""Run the release's proof on the torch, numpy and matplotlib of another venv (by hand, not in CI).

The student release declares lower bounds only (release/student/pyproject.toml.in). This script proves a
pair of bounds: given a venv that already holds the torch, numpy and matplotlib to check, it adds the rest
of the book's tools without touching those three, then runs with that venv's Python the tests that exercise
`check`, the release parity corpus and the grader. It prints the versions and pytest's summary line, which
go into tests/compat/verified.toml (tests/test_release_recipes.py ties the declared bounds to that file).

    python3.11 -m venv /tmp/old && /tmp/old/bin/pip install torch==2.5.1 numpy==1.26.4 matplotlib==3.8.4
    python tests/compat/verify_versions.py /tmp/old

Pulling torch other than the book's pin downloads a CUDA build of several GB: never run this in CI.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KEPT = ("torch", "numpy", "matplotlib")  # the versions under test: nothing below may change them
# The tests that run `check` (the labs' own tests grade through it), the release's check against the
# repository's on the whole wrong-answer corpus in four languages, lab00's release check, and the grader.
TESTS = ["tests/test_lab00.py", "tests/test_lab01.py", "tests/test_lab02.py", "tests/test_lab03.py",
         "tests/test_lab04.py", "tests/test_lab05.py", "tests/test_release_parity.py", "tests/test_release_hand.py",
         "tests/test_grader_labs.py", "tests/test_grader_corpus.py", "tests/test_hidden_feedback.py"]


def versions(python: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m, sys; print(sys.version.split()[0]); "
            f"[print(m.version(n)) for n in {KEPT!r}]")
    lines = subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return dict(zip(("python", *KEPT), lines))


def without_kept(path: Path, into: Path) -> Path:
    """`path`'s requirement lines without torch, numpy and matplotlib (their version is the one under test)."""
    lines = [line for line in path.read_text().splitlines()
             if line.split("==")[0].split(">=")[0].strip().lower() not in KEPT]
    into.write_text("\n".join(lines) + "\n")
    return into


def main(venv: str) -> int:
    python = Path(venv).resolve() / "bin" / "python"
    before = versions(python)
    print("under test:", before, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        requirements = without_kept(ROOT / "requirements.txt", Path(tmp) / "requirements.txt")
        lock = without_kept(ROOT / "requirements-lock.txt", Path(tmp) / "lock.txt")
        # the pins of torch, numpy and matplotlib themselves are constraints too, as the installed versions
        kept = Path(tmp) / "kept.txt"
        kept.write_text("".join(f"{name}=={before[name]}\n" for name in KEPT))
        # setuptools as the book's venv has it: the release tests install the release without build isolation
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(requirements), "setuptools>=70.1",
                        "-c", str(lock), "-c", str(kept)], check=True)
    # the book's packages as the editable install makes them importable, without building anything
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "causal_attention_labbook.pth").write_text(str(ROOT / "shared") + "\n")
    after = versions(python)
    if after != before:
        print(f"the tools changed the versions under test: {before} -> {after}", file=sys.stderr)
        return 2
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHONPATH")}
    # transformers (an authoring tool the student set leaves out) needs a newer torch than the oldest admitted
    result = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                             "-k", "not transformers", *TESTS],
                            cwd=ROOT, env=environment)
    print("versions:", after)
    return result.returncode


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    raise SystemExit(main(sys.argv[1]))
