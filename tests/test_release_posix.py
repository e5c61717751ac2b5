"""Nothing a student imports needs a POSIX-only module (Windows has no resource, fcntl or termios).

In a subprocess those modules are made unimportable (sys.modules[name] = None)
before anything else is imported; then the student path is imported and one
`check` runs: the installed release, and the repository's own `autograder` and
labbook helpers as `make lab` uses them. The grader is Linux-only and is not
on the student path.
"""
from __future__ import annotations

import os
import subprocess
import sys

from release_bundle import ROOT, SHARED, json_from, run_in_venv

STUDENT_PATH = r'''
import json, sys
for name in ("resource", "fcntl", "termios"):
    sys.modules[name] = None
import matplotlib
matplotlib.use("Agg")
import autograder, autograder.notebook, autograder.runtime, autograder.exercise, autograder.i18n
from autograder import Lab
import labbook.show, labbook.texts, labbook.explorer, labbook.needs
import torch
def causal_mask(T):
    return torch.full((T, T), float("-inf")).triu(1)
result, = Lab("lab01", "en").results({"causal_mask": causal_mask}, only=["causal_mask"])
blocked = [name for name in ("resource", "fcntl", "termios") if sys.modules.get(name) is not None]
print(json.dumps({"status": result.status, "still_blocked": not blocked, "file": autograder.__file__}))
'''


def test_the_installed_release_imports_without_posix_modules():
    out = json_from(run_in_venv(STUDENT_PATH))
    assert out == {"status": "passed", "still_blocked": True, "file": out["file"]} and "/venv/" in out["file"]


def test_the_repository_student_path_imports_without_posix_modules():
    env = {**os.environ, "PYTHONPATH": str(SHARED)}
    run = subprocess.run([sys.executable, "-c", STUDENT_PATH], capture_output=True, text=True, env=env, cwd=ROOT)
    out = json_from(run)
    assert out["status"] == "passed" and out["still_blocked"] and out["file"].startswith(str(SHARED))


def test_blocking_bites_on_the_linux_only_grader_worker():
    code = "import sys\nsys.modules['resource'] = None\nimport autograder.grader._worker"
    env = {**os.environ, "PYTHONPATH": str(SHARED)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode != 0 and "resource" in run.stderr  # the block is real: the grader's worker needs resource
