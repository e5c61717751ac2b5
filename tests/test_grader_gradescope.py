"""The Gradescope bundle: build it, then run its run_autograder against a simulated /autograder tree."""
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from corpus.lab00 import answer_cells, answers, header, notebook

from autograder.labs import get_lab

LAB00_FULL = get_lab("lab00").max_score  # what an honest lab00 notebook earns

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradescope")
    zip_path = folder / "lab00.zip"
    run = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "lab00", "--out", str(zip_path),
                          "--seed", "4242"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return zip_path


def simulate(bundle: Path, tmp_path: Path, files: dict[str, bytes], sid: str | None = "s7654321") -> dict:
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # zipfile drops the modes: restore them as Gradescope's unzip does
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, stat.S_IMODE(mode))
    (root / "submission").mkdir()
    for name, data in files.items():
        (root / "submission" / name).write_bytes(data)
    if sid is not None:
        (root / "submission_metadata.json").write_text(json.dumps({"users": [{"sid": sid, "name": "Ana"}]}))
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_bundle_contents(bundle):
    with zipfile.ZipFile(bundle) as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("python/autograder_bundle.json"))
        requirements = archive.read("requirements.txt").decode()
        mode = archive.getinfo("run_autograder").external_attr >> 16
    assert {"setup.sh", "run_autograder", "requirements.txt", "python/autograder/__init__.py",
            "python/autograder/labs/lab00.py", "python/autograder/grader/_worker.py"} <= names
    assert config == {"lab": "lab00", "seed": 4242, "timeout": 10.0, "visibility": "visible"}
    assert "torch==" in requirements and "numpy==" in requirements and "jupyterlab" not in requirements
    assert mode & 0o111
    with zipfile.ZipFile(bundle) as archive:
        setup = archive.read("setup.sh").decode()
        assert "find_python.sh" in archive.namelist()
    # the image it is written for is named, and torch comes from PyTorch's CPU-only index
    assert "Ubuntu 22.04" in setup and "ppa:deadsnakes/ppa" in setup
    assert "--index-url https://download.pytorch.org/whl/cpu" in setup


def fake_python(folder: Path, name: str, version: str) -> Path:
    """A `python3` that says it is `version` (as `python -c 'print(...version_info...)'` would)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


def test_a_python_older_than_3_11_stops_the_build_with_a_clear_message(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as archive:
        archive.extract("find_python.sh", tmp_path)
    fake_python(tmp_path / "bin", "python3", "3.10")
    found = subprocess.run(["/bin/bash", str(tmp_path / "find_python.sh")], capture_output=True, text=True,
                           env={"PATH": str(tmp_path / "bin")}, timeout=30)
    assert found.returncode == 1 and found.stdout == ""
    assert "needs Python 3.11, 3.12 or 3.13" in found.stderr and "found: python3=3.10" in found.stderr
    assert "Ubuntu 22.04" in found.stderr
    newer = fake_python(tmp_path / "bin", "python3.12", "3.12")
    found = subprocess.run(["/bin/bash", str(tmp_path / "find_python.sh")], capture_output=True, text=True,
                           env={"PATH": str(tmp_path / "bin")}, timeout=30)
    assert found.returncode == 0 and found.stdout.strip() == str(newer)


def test_run_autograder_on_a_wrong_python_says_so(bundle, tmp_path):
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    env = {**os.environ, "AUTOGRADER_ROOT": str(root),
           "AUTOGRADER_PYTHON": str(fake_python(tmp_path / "bin", "python3", "3.10"))}
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode != 0 and "needs Python 3.11-3.13" in run.stderr and "is 3.10" in run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "needs Python 3.11-3.13" in results["output"]


@pytest.fixture(scope="module")
def after_published(tmp_path_factory):
    zip_path = tmp_path_factory.mktemp("gradescope_hidden") / "lab00.zip"
    run = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "lab00", "--out", str(zip_path),
                          "--seed", "4242", "--visibility", "after_published"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Ubuntu 22.04" in run.stdout
    return zip_path


def test_the_notebook_that_is_this_lab_is_graded_and_the_others_are_named(after_published, tmp_path):
    sid = "s7654321"
    final = notebook([header(sid), *answer_cells(answers(sid))])
    final["metadata"]["labbook"] = {"lab": "lab00"}
    scratch = notebook([header(sid)])  # first by name, no metadata: a draft, never graded in its place
    results = simulate(after_published, tmp_path, {"a_scratch.ipynb": json.dumps(scratch).encode(),
                                                   "zz_final.ipynb": json.dumps(final).encode()}, sid=sid)
    assert results["score"] == LAB00_FULL
    assert "Graded: zz_final.ipynb." in results["output"] and "a_scratch.ipynb" in results["output"]
    assert "Not graded" in results["output"]
    # every test's result includes hidden cases: shown only once the instructor publishes the grades
    assert {t["visibility"] for t in results["tests"]} == {"after_published"}


def test_run_autograder_writes_gradescope_results(bundle, tmp_path):
    sid = "s7654321"
    nb = notebook([header(sid), *answer_cells(answers(sid))])
    results = simulate(bundle, tmp_path, {"my lab.ipynb": json.dumps(nb).encode()}, sid=sid)
    assert results["score"] == LAB00_FULL
    assert [t["name"] for t in results["tests"]] == ["qk_scores", "scaled_scores", "causal_mask_T4",
                                                      "attention_weights", "attention_output"]
    assert all(t["score"] == t["max_score"] > 0 and t["status"] == "passed" for t in results["tests"])
    assert "10/10" in results["output"]


def test_run_autograder_on_a_broken_upload(bundle, tmp_path):
    results = simulate(bundle, tmp_path, {"lab00.ipynb": b"%PDF-1.4 not a notebook"})
    assert results["score"] == 0
    assert all(t["score"] == 0 for t in results["tests"])
    assert "not a Jupyter notebook" in results["output"]


def test_run_autograder_without_a_notebook(bundle, tmp_path):
    results = simulate(bundle, tmp_path, {"answers.txt": b"42"}, sid=None)
    assert results["score"] == 0 and "No .ipynb file" in results["output"]
