"""The student set, the release's hub recipe and Binder's postBuild name the same pins and kernel.

A test here fails when requirements-student.txt, requirements.txt, the lock,
the release's requirements.txt / environment.yml / pyproject.toml disagree on
a version, or when a recipe file does not parse.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from labbook.notebooks import KERNEL_NAME, ROOT
from release_bundle import bundle, run_in_venv
from test_environment import pins, requirements


VERIFIED = ROOT / "tests" / "compat" / "verified.toml"  # figures of tests/compat/verify_versions.py runs


def student_pins() -> dict[str, str]:
    return pins((ROOT / "requirements-student.txt").read_text().splitlines())


def yml_pins(path) -> tuple[dict[str, str], list[str]]:
    env = yaml.safe_load(path.read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    return pins(pip_section), python


def test_the_student_set_is_a_slim_part_of_the_full_set():
    full, slim = requirements(), student_pins()
    assert slim["torch"] == "2.13.0"
    assert {name: full.get(name) for name in slim} == slim  # the same versions as the full set
    assert not {"pytest", "nbval", "jupytext", "playwright", "transformers"} & set(slim)


def test_the_lock_admits_the_student_set():
    lock = pins((ROOT / "requirements-lock.txt").read_text().splitlines())
    assert {name: lock.get(name) for name in student_pins()} == student_pins()


def test_the_release_names_the_student_pins_everywhere():
    slim = student_pins()
    assert pins((bundle() / "requirements.txt").read_text().splitlines()) == slim
    hub, python = yml_pins(bundle() / "environment.yml")
    assert hub == slim
    assert python and re.fullmatch(r"python=3\.1[123]", python[0])
    project = tomllib.loads((bundle() / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    assert all(Version(slim[name]) in SpecifierSet(spec) for name, spec in declared_ranges().items())


def declared_ranges() -> dict[str, str]:
    """name -> specifier of the student package's runtime dependencies (pyproject.toml of the release)."""
    project = tomllib.loads((bundle() / "pyproject.toml").read_text())["project"]
    return {Requirement(text).name: str(Requirement(text).specifier) for text in project["dependencies"]}


def test_the_package_declares_lower_bounds_each_verified_by_hand():
    """No exact pin: each bound is the oldest version verified (tests/compat/verify_versions.py), and the
    newest verified is at least the book's own pin."""
    verified = tomllib.loads(VERIFIED.read_text())
    ranges = declared_ranges()
    assert set(ranges) == {"torch", "numpy", "matplotlib"}
    for name, spec in ranges.items():
        assert spec == f">={verified['oldest'][name]}", (name, spec)
        assert Version(verified["oldest"][name]) <= Version(student_pins()[name]) <= Version(verified["newest"][name])
    for end in verified:
        passed = re.fullmatch(r"(\d+) passed(, \d+ warnings?)? in [\d.]+s", verified[end]["pytest"])
        assert passed and int(passed[1]) >= 800, (end, verified[end]["pytest"])  # the whole set ran, none failed


INSTALL_REPORT = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation",
                  "--report"]


def dry_run(folder, report) -> subprocess.CompletedProcess:
    return subprocess.run([*INSTALL_REPORT, str(report), str(folder)], capture_output=True, text=True, timeout=300)


def package_copy(tmp_path, dependencies: str | None = None):
    """The release's installable part in a folder of its own (pip's metadata step writes into it)."""
    folder = tmp_path / "release"
    for part in ("autograder", "labbook"):
        shutil.copytree(bundle() / part, folder / part)
    text = (bundle() / "pyproject.toml").read_text()
    if dependencies is not None:
        text = re.sub(r"(?m)^dependencies = \[.*\]$", f"dependencies = [{dependencies}]", text)
    (folder / "pyproject.toml").write_text(text)
    return folder


def test_installing_the_release_beside_an_admitted_torch_changes_no_installed_package(tmp_path):
    # This process's venv holds the book's torch, numpy and matplotlib, all admitted: pip, offline, must plan
    # to install the release's own package and nothing else (no torch download, no numpy swap).
    done = dry_run(package_copy(tmp_path), tmp_path / "report.json")
    assert done.returncode == 0, done.stderr[-2000:]
    planned = [item["metadata"]["name"] for item in json.loads((tmp_path / "report.json").read_text())["install"]]
    assert planned == ["causal-attention-labbook-student"]


def test_the_dry_run_sees_a_pin_that_would_replace_the_installed_torch(tmp_path):
    # the old declaration (an exact pin of another torch) is what the test above must catch
    done = dry_run(package_copy(tmp_path, '"torch==2.12.0", "numpy>=1.26.4"'), tmp_path / "report.json")
    assert done.returncode != 0 and "depends on torch==2.12.0" in done.stdout + done.stderr, done.stderr[-2000:]


def test_the_repository_admits_python_3_11_to_3_13():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11,<3.14"
    makefile = (ROOT / "Makefile").read_text()
    assert "command -v python3.11 || command -v python3.13 || command -v python3.12" in makefile
    assert "assert sys.version_info[:2] == (3, 11)" not in makefile


@pytest.mark.parametrize("path", ["postBuild", "release/postBuild"])
def test_post_build_scripts_parse_and_do_what_their_image_needs(path):
    script = (bundle() / "postBuild") if path.startswith("release/") else (ROOT / "postBuild")
    assert script.stat().st_mode & 0o111, "repo2docker runs postBuild only when it is executable"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    text = script.read_text()
    if path.startswith("release/"):
        assert "pip install --no-deps ." in text
    else:
        assert f"--name {KERNEL_NAME}" in text


def test_binder_of_the_repository_uses_the_root_files():
    # repo2docker ignores the root's environment.yml and postBuild once a binder/ folder exists
    assert not (ROOT / "binder").exists() and not (bundle() / "binder").exists()
    assert (ROOT / "environment.yml").is_file()


NO_TRANSFORMERS = r'''
import sys
sys.modules["transformers"] = None  # as in the slim student set
from labbook.needs import need
try:
    need(sys.argv[1])
except ModuleNotFoundError as error:
    print(error)
'''


def test_a_chapter_cell_without_transformers_says_what_to_install():
    pin = f"transformers=={requirements()['transformers']}"
    chapters = [path for path in (ROOT / "sources" / "course").glob("*/*.md") if "from transformers" in path.read_text()
                or "import transformers" in path.read_text()]
    assert chapters, "no chapter shows transformers?"
    for path in chapters:
        assert f'need("{pin}")' in path.read_text(), path
    said = run_in_venv(NO_TRANSFORMERS, pin).stdout
    assert f"pip install {pin}" in said


def test_the_readme_gives_the_verified_figures():
    verified = tomllib.loads(VERIFIED.read_text())
    readme = (ROOT / "README.md").read_text()
    assert {"oldest", "newest"} <= set(verified)
    for figures in verified.values():
        row = re.search(rf"^\| {re.escape(figures['label'])} \| (.+) \|$", readme, re.M)
        assert row, figures["label"]
        assert [cell.strip() for cell in row[1].split("|")] == [
            figures["python"], figures["torch"], figures["numpy"], figures["matplotlib"], figures["pytest"]]
    bounds = ", ".join(f"`{name}>={verified['oldest'][name]}`" for name in ("torch", "numpy", "matplotlib"))
    assert bounds in " ".join(readme.split())
