"""The student set, the release's hub recipe and Binder's postBuild name the same pins and kernel.

A test here fails when requirements-student.txt, requirements.txt, the lock,
the release's requirements.txt / environment.yml / pyproject.toml disagree on
a version, or when a recipe file does not parse.
"""
from __future__ import annotations

import re
import subprocess
import tomllib

import pytest
import yaml

from labbook.notebooks import KERNEL_NAME, ROOT
from release_bundle import bundle, run_in_venv
from test_environment import pins, requirements


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
    declared = pins(project["dependencies"])
    assert declared and {name: slim.get(name) for name in declared} == declared


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
