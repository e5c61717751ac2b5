"""`release --labs lab01,lab02 --chapters 00,01`: only those notebooks and those labs' check data, an index that
links only what is there, and `release` in the top-level help."""
import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.grader.cli import main

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "es", "de", "hi-Latn")


def autograder(*args):
    """The command line in this process (a fresh interpreter spends seconds importing torch)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as stop:  # argparse's --help, and release's refusals
            code = stop.code if isinstance(stop.code, int) else (print(stop.code, file=sys.stderr) or 1)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("partial") / "release"
    run = autograder("release", "--out", out, "--labs", "lab01,2", "--chapters", "00,1")
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_only_the_chosen_labs_and_chapters_ship(release):
    for lang in LANGS:
        labs = sorted(p.stem.split("_")[0] for p in (release / "labs" / lang).glob("*.ipynb"))
        chapters = sorted(p.stem.split("_")[0] for p in (release / "course" / lang).glob("*.ipynb"))
        assert labs == ["lab01", "lab02"] and chapters == ["00", "01"], lang
    data = release / "autograder" / "data"
    assert sorted(json.loads((data / "labs.json").read_text())) == ["lab01", "lab02"]  # no other lab's cases
    assert not (data / "lab03_decoders.json").exists()


def test_the_index_links_only_what_is_there(release):
    index = nbformat.read(release / "index.ipynb", as_version=4)
    links = re.findall(r"\]\(([^)#]+)\)", "\n".join(cell.source for cell in index.cells))
    assert links and all((release / link).is_file() for link in links)
    shipped = {p.relative_to(release).as_posix() for p in release.glob("*/*/*.ipynb")}
    assert shipped <= set(links)  # and every shipped notebook is listed
    assert not any("lab03" in link or "/02_" in link for link in links)


def test_an_unknown_lab_or_chapter_is_refused(tmp_path):
    for option, value in (("--labs", "lab09"), ("--chapters", "42")):
        run = autograder("release", "--out", tmp_path / "r", option, value)
        assert run.returncode != 0 and "release: no" in run.stderr and not (tmp_path / "r").exists()


def test_release_is_in_the_top_level_help():
    run = autograder("--help")
    commands = re.search(r"\{([a-z,]+)\}", run.stdout)
    assert run.returncode == 0 and commands and "release" in commands.group(1).split(",")
    assert re.search(r"^\s+release\s+build the student release", run.stdout, re.M)
