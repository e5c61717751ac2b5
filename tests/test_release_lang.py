"""A notebook speaks the language of its own metadata wherever it is, with the standard python3 kernel.

Labs of the release are copied to a folder outside the repository whose name is
no language, and executed with nbclient and the kernel `python3` (the fresh
venv with the release installed). JPY_SESSION_NAME is set to the notebook's
path, as jupyter_server does when it starts a kernel for a notebook.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import nbformat
import pytest
from nbclient import NotebookClient

from release_bundle import bundle, jupyter_path

LAB00 = "lab00_attention_by_hand.ipynb"


def run_copy(tmp_path, monkeypatch, lang: str, session: bool) -> str:
    folder = tmp_path / "anywhere"
    folder.mkdir()
    copy = folder / LAB00
    shutil.copy2(bundle() / "labs" / lang / LAB00, copy)
    notebook = nbformat.read(copy, as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path()))
    monkeypatch.delenv("LABBOOK_LANG", raising=False)
    if session:
        monkeypatch.setenv("JPY_SESSION_NAME", str(copy))
    else:
        monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    NotebookClient(notebook, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))


# lab00's request for a student id, written out per language (not looked up in the catalogues under test)
ASK_ID = {"en": "✋ Type your student id in the first code cell",
          "es": "✋ Escribe tu identificador de estudiante en la primera celda de código",
          "de": "✋ Trage deine Matrikelnummer in die erste Codezelle ein",
          "hi-Latn": "✋ Sabse pehle wale code cell mein apna student id likho"}


@pytest.mark.parametrize("lang", ["es", "de", "hi-Latn"])
def test_a_copied_lab_answers_in_its_own_language(tmp_path, monkeypatch, lang):
    said = run_copy(tmp_path, monkeypatch, lang, session=True)
    assert ASK_ID[lang] in said, said
    assert ASK_ID["en"] not in said, said


def test_without_a_session_name_the_folder_decides(tmp_path, monkeypatch):
    said = run_copy(tmp_path, monkeypatch, "es", session=False)  # "anywhere" is no language: English
    assert ASK_ID["en"] in said, said


def test_the_notebook_path_comes_from_what_each_front_end_sets(tmp_path, monkeypatch):
    from autograder import notebook_lang

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    path = tmp_path / "x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(metadata={"lang": "de"}), path)
    main = sys.modules["__main__"]
    monkeypatch.setattr(main, "__vsc_ipynb_file__", str(path), raising=False)  # VS Code
    assert notebook_lang.metadata_lang() == "de"
    monkeypatch.delattr(main, "__vsc_ipynb_file__")
    monkeypatch.setattr(main, "__session__", path.name, raising=False)  # ipykernel, relative to the folder
    assert notebook_lang.metadata_lang(cwd=tmp_path) == "de"
    monkeypatch.delattr(main, "__session__")
    assert notebook_lang.metadata_lang(cwd=tmp_path) is None


def test_nbval_lax_passes_on_labs_of_the_release(tmp_path):
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    labs = [str(bundle() / "labs" / "de" / "lab01_masks.ipynb"), str(bundle() / "labs" / "hi-Latn" / "lab03_multi_head.ipynb")]
    env = {"JUPYTER_PATH": str(jupyter_path()), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:xdist", "-p", "no:cacheprovider",
                          "--nbval-lax", "--nbval-kernel-name", "python3", "-q", *labs],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, textwrap.shorten(run.stdout[-4000:], 4000)
    assert " passed" in run.stdout


def test_colab_hands_over_the_notebook_when_asked(monkeypatch):
    import types

    from autograder import notebook_lang

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    asked = []

    def blocking_request(kind, request="", timeout_sec=5):
        asked.append(kind)
        return {"ipynb": {"metadata": {"lang": "hi-Latn"}}}

    message = types.ModuleType("google.colab._message")
    message.blocking_request = blocking_request
    colab = types.ModuleType("google.colab")
    colab._message = message
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab._message", message)
    assert notebook_lang.metadata_lang() == "hi-Latn" and asked == ["get_ipynb"]


def test_the_release_speaks_the_same_hints_plurals_and_case_descriptions():
    """In the installed release (its messages dumped as JSON, no Babel): lab.hint in each language, the plural
    forms gettext's rules pick, and a case described in the reader's language, as the full autograder says them."""
    import json

    from autograder import Lab, i18n
    from release_bundle import json_from, run_in_venv

    code = textwrap.dedent('''
        import json
        from autograder import Lab, i18n
        from autograder.exercise import Feedback
        langs = ["en", "es", "de", "hi-Latn"]
        said = {
            "hints": {lang: Lab("lab01", lang=lang).hint("causal_mask") for lang in langs},
            "points": {lang: [i18n.tn("common.points", lang, n, points=0, max_points=n) for n in (0, 1, 2, 5)]
                       for lang in langs},
            "case": {lang: Feedback("lab03.case.no_mask", {}).render(lang) for lang in langs},
        }
        print(json.dumps(said))
    ''')
    said = json_from(run_in_venv(code))
    langs = ["en", "es", "de", "hi-Latn"]
    assert said["hints"] == {lang: Lab("lab01", lang=lang).hint("causal_mask") for lang in langs}
    assert said["points"] == {lang: [i18n.tn("common.points", lang, n, points=0, max_points=n) for n in (0, 1, 2, 5)]
                              for lang in langs}
    assert said["points"]["en"] == ["0/0 points", "0/1 point", "0/2 points", "0/5 points"]
    assert said["case"]["de"] == "„Decoder ohne Maske“" and json.dumps(said["case"]).count("no_mask") == 0
