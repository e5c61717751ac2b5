"""Gradescope: `python -m autograder gradescope LAB --out FILE.zip` and what runs inside the bundle.

The bundle (unpacked by Gradescope into /autograder/source) holds:
  setup.sh         installs Python, bubblewrap and the pinned packages once per image
  run_autograder   grades /autograder/submission with the same batch grader and
                   writes /autograder/results/results.json
  requirements.txt the pins needed to run students' code (from the project's requirements.txt)
  python/autograder/            a copy of this package (exercise definitions included)
  python/autograder_bundle.json the lab, the seed of the hidden cases, the time limit

`run_autograder` honours AUTOGRADER_ROOT (default /autograder) and
AUTOGRADER_PYTHON, so a test can run it against a simulated tree.
"""
from __future__ import annotations

import argparse
import json
import secrets
import shutil
import stat
import sys
import tempfile
import zipfile
from pathlib import Path

from .. import i18n
from ..labs import LAB_IDS, UnknownLab, get_lab
from .submissions import UsageError

PACKAGE = Path(__file__).resolve().parents[1]  # .../autograder
CONFIG_NAME = "autograder_bundle.json"
NEEDED = ("torch", "numpy", "matplotlib", "babel")  # what students' notebooks and the messages need; not the rest of the book

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
# bubblewrap is the sandbox; without it (or where the container forbids it) the grader falls back and says so.
apt-get install -y --no-install-recommends bubblewrap || true
PY="$(command -v python3.11 || command -v python3)"
"$PY" -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
# torch from the default index is large; add your CPU-only index with --extra-index-url if you have one.
/autograder/venv/bin/pip install -r /autograder/source/requirements.txt
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade it, write results/results.json.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
# The exercise definitions and the seed are for the grader only: students' code runs under other uids.
chmod -R go-rwx "$ROOT/source" 2>/dev/null || true
export PYTHONPATH="$ROOT/source/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m autograder.grader.gradescope run --root "$ROOT"
"""


def _requirements() -> str:
    project = PACKAGE.parents[1] / "requirements.txt"
    lines = ["# Pinned as in the lab book's requirements.txt."]
    if project.exists():
        for line in project.read_text().splitlines():
            name = line.split("==")[0].strip().lower()
            if name in NEEDED:
                lines.append(line.strip())
    else:  # a bundle built from a bundle: keep what it had
        bundled = PACKAGE.parent.parent / "requirements.txt"
        if bundled.exists():
            return bundled.read_text()
        lines += list(NEEDED)
    return "\n".join(lines) + "\n"


def build_bundle(lab: str, out: Path, seed: str | None = None, timeout: float = 10.0) -> Path:
    try:
        get_lab(lab)
    except UnknownLab:
        raise UsageError(f"unknown lab {lab!r}; labs: {', '.join(LAB_IDS)}") from None
    if seed is None:
        seed_value = secrets.randbits(48)
    else:
        try:
            seed_value = int(seed, 0)
        except ValueError:
            raise UsageError(f"--seed must be an integer, not {seed!r}") from None
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {"lab": lab, "seed": seed_value, "timeout": timeout}

    def add(archive: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
        info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, text)

    with zipfile.ZipFile(out, "w") as archive:
        add(archive, "setup.sh", SETUP_SH, executable=True)
        add(archive, "run_autograder", RUN_AUTOGRADER, executable=True)
        add(archive, "requirements.txt", _requirements())
        add(archive, f"python/{CONFIG_NAME}", json.dumps(config, indent=1) + "\n")
        for path in sorted(PACKAGE.rglob("*")):
            # the code and its message catalogues (locale/<lang>/LC_MESSAGES/*.po, languages.toml)
            if "__pycache__" in path.parts or path.suffix not in (".py", ".po", ".toml"):
                continue
            add(archive, f"python/autograder/{path.relative_to(PACKAGE).as_posix()}", path.read_text())
    return out


# ---------------------------------------------------------------- inside Gradescope
def _student_id(root: Path, fallback: str) -> str:
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text())
        user = (metadata.get("users") or [{}])[0]
        for key in ("sid", "email", "name"):
            if user.get(key):
                return str(user[key])
    except (OSError, ValueError, AttributeError, IndexError):
        pass
    return fallback


def submission_seed(bundle_seed: int, root: Path) -> int:
    """The hidden cases' seed of one Gradescope submission: the bundle's seed and the submission's id.

    Gradescope shows the student the feedback of every resubmission, so a
    resubmission gets other hidden inputs (the feedback never names them
    either); every submission's seed is recorded with its results. Without a
    submission id (a local run), a fresh random seed.
    """
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text())
        submission = str(metadata.get("id") or metadata.get("submission_id") or "")
    except (OSError, ValueError, AttributeError):
        submission = ""
    if not submission:
        return secrets.randbits(48)
    import hashlib

    digest = hashlib.sha256(f"{bundle_seed}\x00gradescope\x00{submission}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def _find_notebook(folder: Path, lab: str) -> Path | None:
    notebooks = sorted(p for p in folder.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts and not p.name.startswith("."))
    preferred = [p for p in notebooks if p.stem.lower().startswith(lab.lower())]
    return (preferred or notebooks or [None])[0]


def results_json(entry: dict | None, lab: str, message: str = "") -> dict:
    """Gradescope's results.json from one gradebook entry."""
    if entry is None:
        return {"score": 0.0, "output": message, "tests": [], "stdout_visibility": "hidden"}
    tests = [{"name": exercise_id, "score": item["points"], "max_score": item["max_points"],
              "status": "passed" if item["points"] >= item["max_points"] else "failed",
              "output": item["feedback"], "visibility": "visible"}
             for exercise_id, item in entry["exercises"].items()]
    lang = entry.get("lang") or i18n.DEFAULT_LANG
    output = [i18n.t("grader.fb.score", lang, points=entry["score"], max_points=entry["max_score"])]
    if entry.get("reason"):
        output.append(entry["reason"])
    output += [cell["text"] for cell in entry.get("cells", [])]
    return {"score": entry["score"], "output": "\n".join(output), "tests": tests,
            "stdout_visibility": "hidden"}


def run(root: Path) -> int:
    from .batch import Options, run_batch
    from .engine import TimeLimits

    config = json.loads((Path(__file__).resolve().parents[2] / CONFIG_NAME).read_text())
    lab = config["lab"]
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    notebook = _find_notebook(root / "submission", lab)
    if notebook is None:
        message = "No .ipynb file was found in your submission: upload the lab's notebook."
        (results / "results.json").write_text(json.dumps(results_json(None, lab, message), ensure_ascii=False))
        return 0
    with tempfile.TemporaryDirectory(prefix="gradescope-") as work:
        work = Path(work)
        student = _student_id(root, notebook.stem)
        safe = "".join(c if c.isalnum() or c in "@._-" else "_" for c in student) or "student"
        staged = work / "submission" / f"{safe}.ipynb"
        staged.parent.mkdir()
        shutil.copyfile(notebook, staged)
        options = Options(lab=lab, paths=[str(staged.parent)], out=work / "out", jobs=1,
                          seed=str(submission_seed(int(config["seed"]), root)), quiet=True,
                          limits=TimeLimits(exercise=float(config.get("timeout", 10.0))))
        import io

        options.progress = io.StringIO()
        batch = run_batch(options)
        entry = batch.book["submissions"][0]
        (results / "results.json").write_text(json.dumps(results_json(entry, lab), ensure_ascii=False, indent=1))
        print(batch.summary())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.grader.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    inside = commands.add_parser("run", help="grade /autograder/submission (what run_autograder calls)")
    inside.add_argument("--root", type=Path, default=Path("/autograder"))
    args = parser.parse_args(argv)
    return run(args.root)


if __name__ == "__main__":
    sys.exit(main())
