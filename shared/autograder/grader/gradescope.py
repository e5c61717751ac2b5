"""Gradescope: `python -m autograder gradescope LAB --out FILE.zip` and what runs inside the bundle.

The bundle (unpacked by Gradescope into /autograder/source) holds:
  setup.sh         installs Python 3.11+, bubblewrap and the pinned packages (torch for CPU) once
                   per image; written for Gradescope's Ubuntu 22.04 base image
  find_python.sh   finds a Python 3.11-3.13, or stops the build saying what it found
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
from . import sanitize
from .submissions import UsageError

PACKAGE = Path(__file__).resolve().parents[1]  # .../autograder
CONFIG_NAME = "autograder_bundle.json"
NEEDED = ("torch", "numpy", "matplotlib", "babel")  # what students' notebooks and the messages need; not the rest of the book

BASE_IMAGE = "Gradescope's Ubuntu 22.04 base image"  # what setup.sh is written for (apt-get, deadsnakes)
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")  # Gradescope's test visibility
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

# Prints a Python 3.11-3.13 (the book's pins have no wheels for 3.10), or says what is wrong and fails.
FIND_PYTHON_SH = """#!/usr/bin/env bash
# The Python this autograder runs on: 3.11, 3.12 or 3.13 (numpy and torch as pinned need 3.11+).
seen=""
for candidate in python3.13 python3.12 python3.11 python3; do
    path="$(command -v "$candidate")" || continue
    version="$("$path" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || continue
    case "$version" in
        3.11|3.12|3.13) echo "$path"; exit 0 ;;
    esac
    seen="$seen $candidate=$version"
done
echo "autograder: this autograder needs Python 3.11, 3.12 or 3.13 (the pinned numpy and torch have no wheels" \\
     "for older ones); found:${seen:- no python3}. Build it on @BASE_IMAGE@: setup.sh installs python3.11" \\
     "from the deadsnakes PPA there." >&2
exit 1
"""

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image. Written for @BASE_IMAGE@, whose
# python3 is 3.10: Python 3.11 comes from the deadsnakes PPA; an image with python3.11+ uses its own.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
# bubblewrap is the sandbox; without it (or where the container forbids it) the grader falls back and says so.
apt-get install -y --no-install-recommends bubblewrap || true
if ! bash "$HERE/find_python.sh" >/dev/null 2>&1; then
    apt-get install -y --no-install-recommends software-properties-common gpg-agent
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
fi
PY="$(bash "$HERE/find_python.sh")"  # stops the build with its message when there is still none
"$PY" -m venv /autograder/venv
/autograder/venv/bin/pip install --upgrade pip
# CPU-only torch (no CUDA wheels on a grader without a GPU), then the other pins
/autograder/venv/bin/pip install --index-url @TORCH_INDEX@ "$(grep '^torch==' "$HERE/requirements.txt")"
/autograder/venv/bin/pip install -r "$HERE/requirements.txt"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade it, write results/results.json.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
VERSION="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"
case "$VERSION" in
    3.11|3.12|3.13) ;;
    *)
        MESSAGE="The autograder is misconfigured: it needs Python 3.11-3.13, but $PY is ${VERSION:-not runnable}. Build it on @BASE_IMAGE@ with its setup.sh."
        echo "autograder: $MESSAGE" >&2
        mkdir -p "$ROOT/results"
        printf '{"score": 0, "output": "%s", "tests": [], "stdout_visibility": "visible"}\\n' "$MESSAGE" \\
            > "$ROOT/results/results.json"
        exit 1 ;;
esac
# The exercise definitions and the seed are for the grader only: students' code runs under other uids.
chmod -R go-rwx "$ROOT/source" 2>/dev/null || true
export PYTHONPATH="$ROOT/source/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m autograder.grader.gradescope run --root "$ROOT"
"""


def _script(text: str) -> str:
    return text.replace("@BASE_IMAGE@", BASE_IMAGE).replace("@TORCH_INDEX@", TORCH_CPU_INDEX)


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


def build_bundle(lab: str, out: Path, seed: str | None = None, timeout: float = 10.0,
                 visibility: str = "visible") -> Path:
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
    if visibility not in VISIBILITIES:
        raise UsageError(f"--visibility {visibility!r}: one of {', '.join(VISIBILITIES)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    config = {"lab": lab, "seed": seed_value, "timeout": timeout, "visibility": visibility}

    def add(archive: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
        info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, text)

    with zipfile.ZipFile(out, "w") as archive:
        add(archive, "setup.sh", _script(SETUP_SH), executable=True)
        add(archive, "find_python.sh", _script(FIND_PYTHON_SH), executable=True)
        add(archive, "run_autograder", _script(RUN_AUTOGRADER), executable=True)
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


NOTEBOOK_BYTES = 64 << 20  # a notebook's metadata is read only from files up to this size


def _labbook_lab(path: Path) -> str | None:
    """The lab a notebook says it is (metadata.labbook.lab), or None: never an error, whatever the file."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > NOTEBOOK_BYTES:
            return None
        metadata = json.loads(path.read_bytes()).get("metadata", {})
        lab = metadata.get("labbook", {}).get("lab")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return lab if isinstance(lab, str) else None


def choose_notebook(folder: Path, lab: str) -> tuple[Path | None, list[Path]]:
    """The notebook of an upload that is this lab, and the others (not graded).

    By the notebook's own metadata (`labbook.lab`), then by a name that starts with the lab id, then
    the newest; a draft uploaded beside the final notebook is never graded in its place by name order."""
    notebooks = sorted(p for p in folder.rglob("*.ipynb")
                       if ".ipynb_checkpoints" not in p.parts and not p.name.startswith("."))
    if not notebooks:
        return None, []

    def rank(path: Path) -> tuple:
        try:
            modified = path.stat().st_mtime
        except OSError:
            modified = 0.0
        return (_labbook_lab(path) == lab, path.stem.lower().startswith(lab.lower()), modified, path.name)

    chosen = max(notebooks, key=rank)
    return chosen, [p for p in notebooks if p != chosen]


def results_json(entry: dict | None, lab: str, message: str = "", visibility: str = "visible",
                 graded: str = "", ignored: list[str] | None = None) -> dict:
    """Gradescope's results.json from one gradebook entry. Every test's score includes the hidden cases,
    so `visibility` (after_published: only once the instructor publishes the grades) applies to each."""
    if entry is None:
        return {"score": 0.0, "output": message, "tests": [], "stdout_visibility": "hidden"}
    tests = [{"name": exercise_id, "score": item["points"], "max_score": item["max_points"],
              "status": "passed" if item["points"] >= item["max_points"] else "failed",
              "output": item["feedback"], "visibility": visibility}
             for exercise_id, item in entry["exercises"].items()]
    lang = entry.get("lang") or i18n.DEFAULT_LANG
    output = [i18n.tn("grader.fb.score", lang, entry["max_score"], points=entry["score"], max_points=entry["max_score"])]
    if graded:
        output.append(i18n.t("grader.gs.graded_file", lang, file=graded))
    if ignored:
        output.append(i18n.t("grader.gs.ignored_files", lang, files=", ".join(ignored), lab=lab))
    if entry.get("reason"):
        output.append(entry["reason"])
    output += [cell["text"] for cell in entry.get("cells", [])]
    return {"score": entry["score"], "output": "\n".join(output), "tests": tests, "visibility": visibility,
            "stdout_visibility": "hidden"}


def run(root: Path) -> int:
    from .batch import Options, run_batch
    from .engine import TimeLimits

    config = json.loads((Path(__file__).resolve().parents[2] / CONFIG_NAME).read_text())
    lab = config["lab"]
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    notebook, others = choose_notebook(root / "submission", lab)
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
        shown = [sanitize.text(p.relative_to(root / "submission").as_posix(), 200, newlines=False)
                 for p in (notebook, *others)]
        result = results_json(entry, lab, visibility=config.get("visibility", "visible"), graded=shown[0],
                              ignored=shown[1:])
        (results / "results.json").write_text(json.dumps(result, ensure_ascii=False, indent=1))
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
