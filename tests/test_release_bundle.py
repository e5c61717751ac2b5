"""What the student release holds, and what it must never hold.

The bundle is built once (release_bundle.bundle()) from this tree. Solution
code is what sits between `# BEGIN SOLUTION` and `# END SOLUTION`, or in cells
tagged solution-only, in the built solutions of every language.
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.labs import LAB_IDS, get_lab
from labbook.notebooks import BEGIN, END, SOLUTION_ONLY
from release_bundle import ROOT, bundle, json_from, run_in_venv

WINDOW = 3  # consecutive code lines


def code_lines(text: str) -> list[str]:
    """Meaningful lines: stripped, no blank or comment-only lines."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def solution_regions() -> list[list[str]]:
    regions = []
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            if SOLUTION_ONLY in cell.metadata.get("tags", []):
                regions.append(code_lines(cell.source))
                continue
            inside: list[str] | None = None
            for line in cell.source.splitlines():
                if BEGIN.match(line):
                    inside = []
                elif END.match(line) and inside is not None:
                    regions.append(code_lines("\n".join(inside)))
                    inside = None
                elif inside is not None:
                    inside.append(line)
    return [region for region in regions if len(region) >= WINDOW]


def windows(lines: list[str]) -> set[tuple[str, ...]]:
    return {tuple(lines[n:n + WINDOW]) for n in range(len(lines) - WINDOW + 1)}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def texts_of(path: Path) -> list[str]:
    """The file's text as a reader or a program would see it: JSON strings unescaped, one by one."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".json", ".ipynb"):
        return _strings(json.loads(raw))
    return [raw]


def solution_windows_in(folder: Path) -> list[tuple[str, tuple[str, ...]]]:
    wanted = set().union(*(windows(region) for region in solution_regions()))
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".zip"):
        for text in texts_of(path):
            for window in windows(code_lines(text)) & wanted:
                found.append((str(path.relative_to(folder)), window))
    return found


def test_there_is_solution_code_to_look_for():
    regions = solution_regions()
    assert len(regions) >= 10 and sum(len(r) for r in regions) > 100


def test_no_file_holds_three_consecutive_lines_of_a_solution():
    assert solution_windows_in(bundle()) == []


def test_the_scan_finds_a_solution_pasted_into_a_file(tmp_path):
    region = solution_regions()[0]
    (tmp_path / "sneaky.json").write_text(json.dumps({"code": "\n".join(region)}))
    assert solution_windows_in(tmp_path)


def test_no_path_is_named_like_solutions():
    names = [p.relative_to(bundle()) for p in bundle().rglob("*")]
    assert names and not [p for p in names if re.search(r"solution", str(p), re.I)]


def test_no_reference_code_no_grader_no_hidden_cases():
    modules = sorted(str(p.relative_to(bundle())) for p in bundle().rglob("*.py"))
    assert modules == sorted([
        "autograder/__init__.py", "autograder/book_links.py", "autograder/evidence.py", "autograder/exercise.py", "autograder/grading.py", "autograder/hand.py", "autograder/i18n.py",
        "autograder/labs/__init__.py", "autograder/labs/judging.py", "autograder/labs/judging02.py",
        "autograder/labs/judging03.py", "autograder/labs/judging04.py", "autograder/labs/lab03.py", "autograder/notebook.py",
        "autograder/notebook_lang.py", "autograder/plurals.py", "autograder/replay.py", "autograder/runtime.py",
        "labbook/__init__.py", "labbook/describe.py", "labbook/explorer.py", "labbook/needs.py", "labbook/show.py", "labbook/texts.py"])
    recorded = json.loads((bundle() / "autograder" / "data" / "labs.json").read_text(encoding="utf-8"))
    for lab_id in LAB_IDS:
        spec = get_lab(lab_id)
        for exercise, data in zip(spec.exercises, recorded[lab_id]["exercises"]):
            ctx = {"variant": None} if lab_id == "lab00" else {}
            public = [case.call for case in exercise.cases(ctx, None) if case.public]
            hidden = [case.call for case in exercise.cases(ctx, 12345) if not case.public]
            shipped = [case["call"] for case in data.get("cases", [])]
            assert shipped == ([] if lab_id == "lab00" else public)
            # lab01's hidden set is every size of the taught range, public sizes included: same call, same data
            assert not [call for call in hidden if call in shipped and call not in public]
    assert "seed" not in json.dumps([data.get("mode") for lab in recorded.values() for data in lab["exercises"]])


def test_the_chapters_are_the_executed_ones():
    chapters = sorted((ROOT / "course").glob("*/*.ipynb"))
    assert len(chapters) >= 40
    for path in chapters:
        shipped = nbformat.read(bundle() / path.relative_to(ROOT), as_version=4)
        built = nbformat.read(path, as_version=4)
        assert [c.get("outputs") for c in shipped.cells] == [c.get("outputs") for c in built.cells], path
        assert [c.source for c in shipped.cells] == [c.source for c in built.cells], path
        assert shipped.metadata["kernelspec"]["name"] == "python3"
        assert shipped.metadata["lang"] == built.metadata["lang"]
    assert any(c.get("outputs") for c in shipped.cells)
    for lang in ("en", "es", "de", "hi-Latn"):
        assert (bundle() / "course" / lang / "glossary.md").is_file()
        shipped = sorted(p.name for p in (bundle() / "labs" / lang).glob("lab*.ipynb"))
        assert shipped == sorted(p.name for p in (ROOT / "labs" / lang).glob("lab*.ipynb")), lang


def test_the_zip_holds_the_same_files():
    with zipfile.ZipFile(str(bundle()) + ".zip") as archive:
        zipped = {name.split("/", 1)[1] for name in archive.namelist()}
    assert zipped == {str(p.relative_to(bundle())) for p in bundle().rglob("*") if p.is_file()}


def test_the_release_refuses_to_overwrite_a_folder_it_did_not_make(tmp_path):
    from autograder.release.bundle import build

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        build(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


CHECK_SOLUTION = r'''
import contextlib, io, json, sys
import nbformat
import autograder
from autograder import Lab
out = {"file": autograder.__file__}
for lab_id, path in json.loads(sys.argv[1]).items():
    ns = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and not cell.source.strip().startswith(("lab.check(", "lab.hand_in(", "lab.show_problem(")):
                exec(cell.source, ns)
    out[lab_id] = [(r.exercise, r.status, r.points, r.max_points) for r in Lab(lab_id, "en").results(ns)]
try:
    import autograder.grader
    out["grader"] = True
except ImportError:
    out["grader"] = False
print(json.dumps(out))
'''


def test_the_installed_release_passes_every_solution_and_has_no_grader():
    solutions = {path.stem[:5]: str(path) for path in sorted((ROOT / "solutions" / "en").glob("lab0*.ipynb"))}
    out = json_from(run_in_venv(CHECK_SOLUTION, json.dumps(solutions)))
    assert "/venv/" in out.pop("file") and out.pop("grader") is False
    assert set(out) == set(LAB_IDS)
    for lab_id, results in out.items():
        assert results and all(status == "passed" and points == top for _, status, points, top in results), results


def test_the_index_links_every_chapter_and_lab_and_nothing_missing():
    index = nbformat.read(bundle() / "index.ipynb", as_version=4)
    links = re.findall(r"\]\(([^)#]+)\)", "\n".join(cell.source for cell in index.cells))
    assert all((bundle() / link).is_file() for link in links), [link for link in links if not (bundle() / link).is_file()]
    notebooks = {str(p.relative_to(bundle())) for p in bundle().glob("*/*/*.ipynb")}
    assert notebooks and notebooks <= set(links)


def test_the_students_readme_needs_python_only():
    readme = (bundle() / "README.md").read_text(encoding="utf-8")
    for step in ("-m venv .venv", "-m pip install -r requirements.txt", "-m pip install .", "-m jupyter lab index.ipynb",
                 ".venv\\Scripts\\python"):
        assert step in readme
    assert "make " not in readme.replace("no `make`", "")


def test_the_release_stops_at_an_exercise_it_cannot_replay(monkeypatch):
    from autograder.exercise import Exercise
    from autograder.labs import LabSpec
    from autograder.release import replay

    class Unknown(Exercise):
        id = "unknown"

    monkeypatch.setattr(replay, "get_lab", lambda lab_id: LabSpec(id=lab_id, exercises=[Unknown()]))
    with pytest.raises(SystemExit, match="no recorder for lab01.unknown"):
        replay.record_lab("lab01")


DRAW = r'''
import matplotlib
matplotlib.use("Agg")
import numpy as np
from matplotlib import pyplot as plt
import labbook.show as show
show.heatmap(np.array([[1.0, 0.0], [0.25, 0.75]]), "ch03.weights", ax=plt.subplots()[1])
shown = show.figure(plt.gcf(), "es")
print(shown.description.alt)
'''


def test_the_release_draws_a_figure_with_its_description_in_the_readers_language():
    # the chapters' figures go through labbook.show and labbook.describe, with the release's own i18n
    done = run_in_venv(DRAW)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "0,25" in done.stdout and "0,75" in done.stdout and "0.25" not in done.stdout, done.stdout
