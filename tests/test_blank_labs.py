"""A blank lab runs top to bottom and every check says "not implemented yet", in its language.

The cells run in this process (no kernel) with the lab's folder as working
directory, exactly as JupyterLab would run them; nbval additionally runs every
lab in a real kernel (lax mode).
"""
import contextlib
import io
import os

import nbformat
import pytest

from autograder import i18n
from autograder.labs import get_lab

from labbook.notebooks import ROOT

LABS = sorted((ROOT / "labs").glob("*/*.ipynb"))


def run_blank(path, student_id=None):
    notebook = nbformat.read(path, as_version=4)
    namespace = {"__name__": "__main__"}
    output = io.StringIO()
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        with contextlib.redirect_stdout(output):
            for cell in notebook.cells:
                if cell.cell_type != "code":
                    continue
                source = cell.source
                if student_id is not None:
                    source = source.replace('STUDENT_ID = ""', f"STUDENT_ID = {student_id!r}")
                exec(compile(source, str(path), "exec"), namespace)
    finally:
        os.chdir(cwd)
    return notebook, output.getvalue()


@pytest.mark.parametrize("path", LABS, ids=[str(p.relative_to(ROOT)) for p in LABS])
def test_blank_lab_runs_and_scores_zero(path):
    notebook, printed = run_blank(path, student_id="s1234567")
    lang = notebook.metadata["lang"]
    spec = get_lab(path.stem[:5])
    for exercise in spec.exercises:
        key = "common.not_answered_value" if exercise.kind == "value" else "common.not_answered"
        not_yet = i18n.t(key, lang, name="X").split("X")[1][:25]
        assert f"⏳ {exercise.id}{not_yet}" in printed, f"{exercise.id}: {printed}"
    assert "❌" not in printed and "✅" not in printed
    assert i18n.t("common.total", lang, lab=spec.id, points=0, max_points=spec.max_score) in printed


def test_lab00_without_student_id_asks_for_it():
    for lang in i18n.LANGS:
        _, printed = run_blank(ROOT / "labs" / lang / "lab00_attention_by_hand.ipynb")
        assert i18n.t("lab00.no_student_id", lang) in printed
