"""Build the book: `python -m labbook.build [--force] [--jobs N] [NAME ...]`.

For every text source whose built notebook is missing or has other inputs,
execute it (in its own folder, so it knows its language) and write the
notebook; regenerate every lab from its solution; write index.ipynb. Up-to-date
notebooks are left alone, so a second run takes a second.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import nbformat
from nbclient import NotebookClient

from autograder.i18n import LANGS, LANGUAGE_NAMES as LANG_NAMES
from labbook.texts import tr
from labbook.notebooks import (
    KERNEL_NAME, KERNELSPEC, ROOT, Target, cell_inputs, coalesce_streams, headings, make_lab, read, read_source, targets, write,
)

INDEX = ROOT / "index.ipynb"
# Which library code each notebook was last executed with, on this machine only
# (not committed): a notebook whose inputs are unchanged is still re-executed
# after shared/ changed under it. A fresh clone has no stamps and trusts the
# committed notebooks (nbval in the tests checks their outputs).
STAMPS = ROOT / ".venv" / "build-stamps.json"


def library_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted((ROOT / "shared").rglob("*")):
        if path.suffix in {".py", ".js", ".css"} and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def load_stamps() -> dict[str, str]:
    try:
        return json.loads(STAMPS.read_text())
    except (OSError, ValueError):
        return {}


def save_stamps(stamps: dict[str, str]) -> None:
    if STAMPS.parent.exists():
        STAMPS.write_text(json.dumps(stamps, indent=1, sort_keys=True))


def is_stale(target: Target, stamps: dict[str, str] | None = None, library: str | None = None) -> bool:
    if not target.built.exists():
        return True
    if cell_inputs(read(target.built)) != cell_inputs(read_source(target)):
        return True
    stamp = (stamps or {}).get(str(target.built.relative_to(ROOT)))
    return stamp is not None and library is not None and stamp != library


def execute(target: Target) -> tuple[str, float]:
    started = time.perf_counter()
    notebook = read_source(target)
    target.built.parent.mkdir(parents=True, exist_ok=True)
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL_NAME,
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(target.built.parent)}},
    )
    client.execute()
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)  # nbclient may rewrite it while executing
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11"}
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    write(coalesce_streams(notebook), target.built)
    return str(target.built.relative_to(ROOT)), time.perf_counter() - started


def write_lab(target: Target) -> None:
    if target.lab is not None and target.built.exists():
        write(make_lab(read(target.built)), target.lab)


def title_of(target: Target) -> str:
    """The notebook's first-level heading, from its source (built or not)."""
    found = headings(read_source(target), 1)
    return found[0] if found else target.name


def make_index(all_targets: list[Target]) -> nbformat.NotebookNode:
    """The start page: every chapter, lab and solution in every language."""
    cells = [nbformat.v4.new_markdown_cell(
        "# Causal attention: a lab book\n\n"
        "Chapters explain, labs are graded exercises with instant `check` feedback, solutions are worked labs.\n"
        + " / ".join(tr("book.pick_language", lang) for lang in LANGS) + "\n\n"
        + " · ".join(f"[{LANG_NAMES[lang]}](#{LANG_NAMES[lang]})" for lang in LANGS)
    )]
    for lang in LANGS:
        lines = [f"## {LANG_NAMES[lang]}", ""]
        chapters = [t for t in all_targets if t.lang == lang and t.part == "course"]
        solutions = [t for t in all_targets if t.lang == lang and t.part == "solutions"]
        for target in chapters:
            lines.append(f"- [{title_of(target)}](course/{lang}/{target.name}.ipynb)")
        for target in solutions:
            lines.append(
                f"- [{title_of(target)}](labs/{lang}/{target.name}.ipynb) "
                f"([✔](solutions/{lang}/{target.name}.ipynb))"
            )
        cells.append(nbformat.v4.new_markdown_cell("\n".join(lines)))
    index = nbformat.v4.new_notebook(cells=cells)
    for number, cell in enumerate(index.cells):
        cell.id = f"index{number:02d}"
    index.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "lang": "mul"})
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only notebooks whose name contains one of these")
    parser.add_argument("--force", action="store_true", help="re-execute even up-to-date notebooks")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    all_targets = targets()
    chosen = [t for t in all_targets if not args.names or any(n in str(t.source) for n in args.names)]
    stamps, library = load_stamps(), library_hash()
    stale = [t for t in chosen if args.force or is_stale(t, stamps, library)]
    started = time.perf_counter()
    if stale:
        print(f"executing {len(stale)} notebook(s) with {args.jobs} job(s)", flush=True)
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for path, seconds in pool.map(execute, stale):
                stamps[path] = library
                save_stamps(stamps)
                print(f"  {path}: {seconds:.1f} s", flush=True)
    for target in chosen:
        # A notebook first seen fresh is taken to match today's library (nbval checks that).
        if target.built.exists():
            stamps.setdefault(str(target.built.relative_to(ROOT)), library)
    save_stamps(stamps)
    for target in all_targets:
        write_lab(target)
    write(make_index(all_targets), INDEX)
    print(f"book up to date ({len(all_targets)} sources, {len(stale)} executed) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
