"""The student release, built once per test process, and a fresh venv that has it installed.

The venv is new (`python -m venv --without-pip`); the bundle goes into its
site-packages with pip (no dependencies), and torch, numpy and matplotlib come
from the project's .venv through one path line (a `.pth` line adds a folder
without running that folder's own .pth files, so the repository's editable
`autograder` stays out). Scripts run there with `-I`: no PYTHONPATH, no repo.
"""
from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / "shared"


@functools.lru_cache(maxsize=None)
def bundle() -> Path:
    home = Path(tempfile.mkdtemp(prefix="labbook-release-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)  # the bundle, its zip and the venv
    out = home / "release"
    env = {**os.environ, "PYTHONPATH": str(SHARED), "LABBOOK_ROOT": str(ROOT)}
    subprocess.run([sys.executable, "-m", "autograder", "release", "--out", str(out), "--zip", str(out) + ".zip"],
                   check=True, env=env, cwd=ROOT, capture_output=True, text=True)
    return out


@functools.lru_cache(maxsize=None)
def venv() -> Path:
    """Path of the fresh venv's python."""
    home = bundle().parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True)
    python = home / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(bundle())], check=True, capture_output=True, text=True)
    return python


def run_in_venv(code: str, *args: str, env: dict | None = None, cwd: Path | None = None, timeout: int = 120):
    """Run `code` with the venv's python, isolated (-I); returns the completed process."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHONPATH", "LABBOOK"))}
    environment.update(env or {})
    return subprocess.run([str(venv()), "-I", "-c", code, *args], capture_output=True, text=True,
                          env=environment, cwd=cwd or bundle().parent, timeout=timeout)


def json_from(process) -> object:
    assert process.returncode == 0, process.stderr[-3000:]
    return json.loads(process.stdout.strip().splitlines()[-1])


@functools.lru_cache(maxsize=None)
def jupyter_path() -> Path:
    """A JUPYTER_PATH whose `python3` kernel is the fresh venv's python (isolated: -I, no PYTHONPATH)."""
    folder = bundle().parent / "jupyter"
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(venv()), "-I", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}))
    return folder
