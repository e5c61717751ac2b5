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

`--labs lab01,lab02` releases only those labs (their check data included, no
other lab's) and `--chapters 00,01,...` only those chapters (default: every
chapter); the index lists only what was released, so a term can release week
by week into the same folder.
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
SHARED_MODULES = ("exercise.py", "runtime.py", "notebook_lang.py", "plurals.py", "evidence.py", "grading.py",
                  "notebook.py",
                  "book_links.py",  # the same file serves the full and the student package
                  # the labs' judges: judging only, no reference code and no case generator
                  "labs/judging.py", "labs/judging02.py", "labs/judging03.py", "labs/judging04.py")
LABBOOK_MODULES = ("show.py", "describe.py", "explorer.py", "needs.py")
STANDARD_KERNEL = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
MARKER = ".labbook-student-release"


def repo_root() -> Path:
    from labbook.notebooks import ROOT

    return ROOT


def student_notebook(path: Path, install_url: str | None = None) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = dict(STANDARD_KERNEL)
    if install_url is not None:
        first_code = next((n for n, cell in enumerate(notebook.cells) if cell.cell_type == "code"), len(notebook.cells))
        notebook.cells.insert(first_code, install_cell(install_url))
    return notebook


INSTALL_CELL_ID = "install-labbook"


def install_cell(url: str) -> nbformat.NotebookNode:
    """A first code cell for Colab (or any Jupyter without the package): pip installs the release from `url`.

    Where the package is installed (the release's venv, a hub image) it does nothing, so the same notebook
    serves everywhere; the grader skips it too (its get_ipython does nothing). pip's magic, not `!pip`,
    installs into the kernel's own Python; the release declares lower bounds only, so on Colab pip adds
    this package and leaves Colab's torch, numpy and matplotlib as they are.
    """
    # pip's magic hands its line to a shell: only characters no shell reads specially
    if not re.fullmatch(r"(https?|file)://[A-Za-z0-9._~:/@%+=,-]+", url):
        raise SystemExit(f"release: --install-url must be an http(s):// or file:// address of letters, digits "
                         f"and . _ ~ : / @ % + = , - only (no ? & spaces or quotes), got {url!r}")
    cell = nbformat.v4.new_code_cell(
        "# Colab, or a Jupyter without this lab book: install it (where it is installed, this does nothing).\n"
        "import importlib\n"
        "import importlib.util\n"
        "\n"
        'if importlib.util.find_spec("autograder") is None:\n'
        f'    get_ipython().run_line_magic("pip", "install --quiet {url}")\n'
        "    importlib.invalidate_caches()")
    cell.id = INSTALL_CELL_ID
    return cell


def first_heading(notebook: nbformat.NotebookNode, fallback: str) -> str:
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, re.M)
            if match:
                return match.group(1).strip()
    return fallback


def _chosen(path: Path, part: str, labs: set[str] | None, chapters: set[str] | None) -> bool:
    """Whether a notebook is released: `labNN_*` by its lab id, a chapter `NN_*` by its number."""
    if part == "labs":
        return labs is None or path.stem.split("_")[0] in labs
    return chapters is None or path.stem.split("_")[0] in chapters


def copy_notebooks(root: Path, out: Path, labs: set[str] | None = None, chapters: set[str] | None = None,
                   install_url: str | None = None) -> dict[str, list[tuple[str, str]]]:
    """course/ and labs/ in every language; returns {lang: [(relative path, title)]} for the index."""
    listed: dict[str, list[tuple[str, str]]] = {lang: [] for lang in i18n.LANGS}
    for part in ("course", "labs"):
        for lang in i18n.LANGS:
            (out / part / lang).mkdir(parents=True, exist_ok=True)
            for path in sorted((root / part / lang).glob("*.ipynb")):
                if not _chosen(path, part, labs, chapters):
                    continue
                notebook = student_notebook(path, install_url)
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


def write_packages(root: Path, out: Path, labs: set[str] | None = None) -> None:
    shutil.copytree(STUDENT / "autograder", out / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    for name in SHARED_MODULES:
        shutil.copy2(PACKAGE / name, out / "autograder" / name)
    shutil.copytree(STUDENT / "labbook", out / "labbook", ignore=shutil.ignore_patterns("__pycache__"))
    for name in LABBOOK_MODULES:
        shutil.copy2(SHARED / "labbook" / name, out / "labbook" / name)
    shutil.copytree(SHARED / "labbook" / "explorer", out / "labbook" / "explorer")
    data = out / "autograder" / "data"
    data.mkdir()
    # only the released labs' check data: a lab not released yet ships none of its public cases
    replay.dump(data / "labs.json", {lab: record for lab, record in replay.record_all().items()
                                     if labs is None or lab in labs})
    replay.dump(data / "messages.json", replay.messages())
    if labs is None or "lab03" in labs:
        replay.dump(data / "lab03_decoders.json", replay.public_decoders())


def write_files(root: Path, out: Path) -> None:
    shutil.copy2(root / "requirements-student.txt", out / "requirements.txt")
    shutil.copy2(STUDENT / "README.md", out / "README.md")
    pins = [line.strip() for line in (root / "requirements-student.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    # the package declares ranges (pyproject.toml.in); requirements.txt and the hub recipe keep the exact pins
    shutil.copy2(STUDENT / "pyproject.toml.in", out / "pyproject.toml")
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


def parse_choice(text: str | None, known: list[str], what: str) -> set[str] | None:
    """`lab01,lab02` or `00,01` (a lab also as `1`, a chapter as `1`): the set, or None for all."""
    if text is None:
        return None
    chosen = set()
    for item in filter(None, (part.strip() for part in text.split(","))):
        name = item.lower()
        if what == "lab":
            name = f"lab{int(name[3:] if name.startswith('lab') else name):02d}" if (
                name.removeprefix("lab").isdigit()) else name
        elif name.isdigit():
            name = f"{int(name):02d}"
        if name not in known:
            raise SystemExit(f"release: no {what} {item!r}; {what}s: {', '.join(known)}")
        chosen.add(name)
    if not chosen:
        raise SystemExit(f"release: --{what}s names no {what}")
    return chosen


def available(root: Path) -> tuple[list[str], list[str]]:
    """(lab ids, chapter numbers) of the book, from the English folders (every language has the same files)."""
    labs = sorted({path.stem.split("_")[0] for path in (root / "labs" / "en").glob("lab*.ipynb")})
    chapters = sorted({path.stem.split("_")[0] for path in (root / "course" / "en").glob("[0-9][0-9]_*.ipynb")})
    return labs, chapters


def build(out: Path, zip_file: Path | None = None, root: Path | None = None, labs: set[str] | None = None,
          chapters: set[str] | None = None, install_url: str | None = None) -> dict:
    root = root or repo_root()
    if install_url is not None:
        install_cell(install_url)  # refuses a bad address before anything is written
    out = out.resolve()
    if out.exists():
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise SystemExit(f"{out} is not empty and is not a previous release: choose another --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    listed = copy_notebooks(root, out, labs, chapters, install_url)
    write_index(listed, out)
    write_packages(root, out, labs)
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
    parser.add_argument("--labs", default=None, metavar="lab01,lab02",
                        help="release only these labs (default: every lab)")
    parser.add_argument("--chapters", default=None, metavar="00,01,...",
                        help="release only these chapters (default: every chapter)")
    parser.add_argument("--install-url", default=None, metavar="URL",
                        help="where you publish this release (its zip, or a git host's archive of it): every "
                             "notebook gets a first code cell that pip installs it from there when the "
                             "package is missing (Colab); elsewhere the cell does nothing")
    args = parser.parse_args(argv)
    known_labs, known_chapters = available(repo_root())
    summary = build(args.out, args.zip, labs=parse_choice(args.labs, known_labs, "lab"),
                    chapters=parse_choice(args.chapters, known_chapters, "chapter"), install_url=args.install_url)
    print(f"release: {summary['files']} files, {summary['bytes'] / 1e6:.1f} MB in {args.out}"
          + (f"; zip {args.zip}" if args.zip else ""))
    return 0
