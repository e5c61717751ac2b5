"""`release --install-url`: the first code cell that installs the release where it is missing (Colab).

The cell is checked by running its code with a stand-in for IPython's `get_ipython()` that records the
magic it is asked to run: nothing where `autograder` imports, pip with the published address where it
does not. What pip then does on a Colab-like Python is the hand check in the README ("On Colab").
"""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from autograder.release import bundle as release
from release_bundle import ROOT

URL = "https://github.com/course-org/attention-release/archive/refs/heads/main.zip"

RUN_CELL = r'''
import json, sys
calls = []
class Shell:
    def run_line_magic(self, name, line):
        calls.append([name, line])
get_ipython = lambda: Shell()
exec(sys.stdin.read())
print(json.dumps(calls))
'''


def magic_calls(source: str, with_package: bool) -> list[list[str]]:
    """The magics the cell asks for, run by a Python that can or cannot import `autograder`."""
    # -S leaves out site-packages, where this venv's editable install makes `autograder` importable
    flags, path = (["-I"], [str(ROOT / "shared")]) if with_package else (["-I", "-S"], [])
    code = f"import sys; sys.path[:0] = {path!r}\n" + RUN_CELL
    done = subprocess.run([sys.executable, *flags, "-c", code], input=source, capture_output=True, text=True,
                          timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("colab") / "release"
    release.build(out, labs={"lab00", "lab01"}, chapters={"02"}, install_url=URL)
    return out


def test_every_notebook_gets_the_same_install_cell_before_its_first_code_cell(released):
    notebooks = sorted(released.glob("*/*/*.ipynb"))
    assert len(notebooks) == 3 * 4  # two labs and one chapter, four languages
    sources = set()
    for path in notebooks:
        cells = nbformat.read(path, as_version=4).cells
        code = [n for n, cell in enumerate(cells) if cell.cell_type == "code"]
        assert cells[code[0]].id == release.INSTALL_CELL_ID, path
        assert all(cell.cell_type == "markdown" for cell in cells[:code[0]]), path
        assert sum(cell.id == release.INSTALL_CELL_ID for cell in cells) == 1, path
        sources.add(cells[code[0]].source)
    assert len(sources) == 1  # code cells stay identical across languages


def test_without_the_option_no_notebook_has_the_cell(tmp_path):
    out = tmp_path / "release"
    release.build(out, labs={"lab01"}, chapters={"02"})
    for path in out.glob("*/*/*.ipynb"):
        assert all(cell.id != release.INSTALL_CELL_ID for cell in nbformat.read(path, as_version=4).cells), path


def test_the_cell_installs_from_the_address_only_where_the_package_is_missing(released):
    source = release.install_cell(URL).source
    assert magic_calls(source, with_package=False) == [["pip", f"install --quiet {URL}"]]
    assert magic_calls(source, with_package=True) == []


@pytest.mark.parametrize("url", ["https://host/release.zip?dl=1", "https://host/a b.zip", "https://host/x.zip;rm -rf ~",
                                 "ftp://host/release.zip", "https://host/'quoted'.zip", "release.zip"])
def test_an_address_a_shell_would_read_is_refused_before_anything_is_written(tmp_path, url):
    out = tmp_path / "release"
    with pytest.raises(SystemExit, match="--install-url"):
        release.build(out, labs={"lab01"}, install_url=url)
    assert not out.exists()
