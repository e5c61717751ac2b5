"""Build the student release: chapters (executed), labs, index, check-only package, data, README.

Layout of DIR (a folder that `pip install DIR` installs and that a JupyterHub
can pull as a repository with nbgitpuller):

    index.ipynb  README.md  requirements.txt  pyproject.toml
    course/<lang>/*.ipynb, glossary.md      the executed chapters
    labs/<lang>/*.ipynb                     the labs (no solutions, no outputs)
    autograder/                             check-only package + data/*.json
    labbook/                                the display helpers chapters import

Notebooks name the standard `python3` kernel, so any Jupyter with the packages
opens them (the repository's notebooks name the project's `causal-attention`).
"""
from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import nbformat

from .. import i18n
from . import replay

PACKAGE = Path(__file__).resolve().parents[1]  # shared/autograder
SHARED = PACKAGE.parent
STUDENT = Path(__file__).resolve().parent / "student"
SHARED_MODULES = ("exercise.py", "runtime.py", "notebook_lang.py", "evidence.py", "grading.py", "notebook.py",
                  "book_links.py")  # the same file serves the full and the student package
LABBOOK_MODULES = ("show.py", "explorer.py", "needs.py")
STANDARD_KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
MARKER = ".labbook-student-release"


def repo_root() -> Path:
    from labbook.notebooks import ROOT

    return ROOT


def student_notebook(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = dict(STANDARD_KERNEL)
    return notebook


def first_heading(notebook: nbformat.NotebookNode, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.M)
            if match:
                return match.group(1).strip()
    return fallback


def copy_notebooks(root: Path, out: Path) -> dict[str, list[tuple[str, str]]]:
    """course/ and labs/ in every language; returns {lang: [(relative path, title)]} for the index."""
    listed: dict[str, list[tuple[str, str]]] = {lang: [] for lang in i18n.LANGS}
    for part in ("course", "labs"):
        for lang in i18n.LANGS:
            (out / part / lang).mkdir(parents=True, exist_ok=True)
            for path in sorted((root / part / lang).glob("*.ipynb")):
                notebook = student_notebook(path)
                nbformat.write(notebook, out / part / lang / path.name)
                listed[lang].append((f"{part}/{lang}/{path.name}", first_heading(notebook, path.stem)))
            for extra in sorted((root / part / lang).glob("*.md")):  # the glossary
                shutil.copy2(extra, out / part / lang / extra.name)
                listed[lang].append((f"{part}/{lang}/{extra.name}", extra.stem))
    return listed


def write_index(listed: dict, out: Path) -> None:
    cells = [nbformat.v4.new_markdown_cell(
        "# Causal attention: a lab book\n\n"
        "Pick your language. / Elige tu idioma. / Wähle deine Sprache. / Apni language chuno.\n\n"
        + " · ".join(f"[{i18n.LANGUAGE_NAMES.get(lang, lang)}](#{i18n.LANGUAGE_NAMES.get(lang, lang)})" for lang in listed))]
    for lang, entries in listed.items():
        lines = [f"## {i18n.LANGUAGE_NAMES.get(lang, lang)}", ""] + [f"- [{title}]({path})" for path, title in entries]
        cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    index = nbformat.v4.new_notebook(cells=cells)
    for number, cell in enumerate(index.cells):
        cell.id = f"index{number:02d}"
    index.metadata = nbformat.from_dict({"kernelspec": dict(STANDARD_KERNEL), "lang": "mul"})
    nbformat.write(index, out / "index.ipynb")


def write_packages(root: Path, out: Path) -> None:
    shutil.copytree(STUDENT / "autograder", out / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    for name in SHARED_MODULES:
        shutil.copy2(PACKAGE / name, out / "autograder" / name)
    shutil.copytree(STUDENT / "labbook", out / "labbook", ignore=shutil.ignore_patterns("__pycache__"))
    for name in LABBOOK_MODULES:
        shutil.copy2(SHARED / "labbook" / name, out / "labbook" / name)
    shutil.copytree(SHARED / "labbook" / "explorer", out / "labbook" / "explorer")
    data = out / "autograder" / "data"
    data.mkdir()
    replay.dump(data / "labs.json", replay.record_all())
    replay.dump(data / "messages.json", replay.messages())
    replay.dump(data / "lab03_decoders.json", replay.public_decoders())


def write_files(root: Path, out: Path) -> None:
    shutil.copy2(root / "requirements-student.txt", out / "requirements.txt")
    shutil.copy2(STUDENT / "README.md", out / "README.md")
    pins = [line.strip() for line in (root / "requirements-student.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    runtime = [pin for pin in pins if pin.split("==")[0] in ("torch", "numpy", "matplotlib")]
    pyproject = (STUDENT / "pyproject.toml.in").read_text(encoding="utf-8")
    (out / "pyproject.toml").write_text(
        pyproject.replace("@DEPENDENCIES@", ", ".join(f'"{pin}"' for pin in runtime)), encoding="utf-8")
    shutil.copy2(STUDENT / "postBuild", out / "postBuild")
    (out / "environment.yml").write_text(environment_yml(pins), encoding="utf-8")
    (out / MARKER).write_text("Built by `python -m autograder release`; rebuilt from scratch each time.\n")


def environment_yml(pins: list[str]) -> str:
    """The hub image's recipe (repo2docker, Binder): the same pins as requirements.txt, via pip."""
    lines = ["# repo2docker / Binder: the student set, the same pins as requirements.txt; postBuild installs",
             "# the check-only package. Notebooks use the standard python3 kernel.",
             "name: causal-attention-student", "channels:", "  - conda-forge", "dependencies:",
             "  - python=3.12", "  - pip", "  - pip:"]
    return "\n".join(lines + [f"      - {pin}" for pin in pins]) + "\n"


def build(out: Path, zip_file: Path | None = None, root: Path | None = None) -> dict:
    root = root or repo_root()
    out = out.resolve()
    if out.exists():
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise SystemExit(f"{out} is not empty and is not a previous release: choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    listed = copy_notebooks(root, out)
    write_index(listed, out)
    write_packages(root, out)
    write_files(root, out)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    if zip_file is not None:
        zip_file = zip_file.resolve()
        zip_file.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(zip_file, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, Path(out.name) / path.relative_to(out))
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder release",
                                     description="Build the student release (no solutions, check-only package).")
    parser.add_argument("--out", type=Path, required=True, help="folder to (re)create")
    parser.add_argument("--zip", type=Path, default=None, help="also write this .zip (for an LMS upload)")
    args = parser.parse_args(argv)
    summary = build(args.out, args.zip)
    print(f"release: {summary['files']} files, {summary['bytes'] / 1e6:.1f} MB in {args.out}"
          + (f"; zip {args.zip}" if args.zip else ""))
    return 0
