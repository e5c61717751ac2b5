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


# What a blank lab prints, per language, written out here (not looked up in the catalogues under test):
# an exercise's function not implemented yet, a typed value not answered yet, the total, lab00's id request.
NOT_YET = {
    "en": (": not implemented yet.", ": not answered yet."),
    "es": (": todavía sin implementar.", ": todavía sin responder."),
    "de": (": noch nicht implementiert.", ": noch nicht beantwortet."),
    "hi-Latn": (": abhi implement nahi hua.", ": abhi answer nahi diya."),
}
TOTAL = {"en": "Total for {lab}: 0/{max:g} points.", "es": "Total del {lab}: 0/{max:g} puntos.",
         "de": "Summe für {lab}: 0/{max:g} Punkte.", "hi-Latn": "{lab} ka total: 0/{max:g} points."}
ASK_ID = {"en": "✋ Type your student id in the first code cell",
          "es": "✋ Escribe tu identificador de estudiante en la primera celda de código",
          "de": "✋ Trage deine Matrikelnummer in die erste Codezelle ein",
          "hi-Latn": "✋ Sabse pehle wale code cell mein apna student id likho"}


def test_the_expected_texts_cover_every_language():
    assert set(NOT_YET) == set(TOTAL) == set(ASK_ID) == set(i18n.LANGS)


@pytest.mark.parametrize("path", LABS, ids=[str(p.relative_to(ROOT)) for p in LABS])
def test_blank_lab_runs_and_scores_zero(path):
    notebook, printed = run_blank(path, student_id="s1234567")
    lang = notebook.metadata["lang"]
    spec = get_lab(path.stem[:5])
    for exercise in spec.exercises:
        not_yet = NOT_YET[lang][1 if exercise.kind == "value" else 0]
        assert f"⏳ {exercise.id}{not_yet}" in printed, f"{exercise.id}: {printed}"
    assert "❌" not in printed and "✅" not in printed
    assert TOTAL[lang].format(lab=spec.id, max=spec.max_score) in printed, printed


def test_lab00_without_student_id_asks_for_it():
    for lang in i18n.LANGS:
        _, printed = run_blank(ROOT / "labs" / lang / "lab00_attention_by_hand.ipynb")
        assert ASK_ID[lang] in printed, (lang, printed)
