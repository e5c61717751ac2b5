"""Build the book: `python -m labbook.build [--force] [--jobs N] [NAME ...]`.

For every text source whose built notebook is missing, has other cells, or
was executed with other code or messages than today's (the files and message
keys it used are recorded in it: labbook.dependencies), execute it in its own
folder and write the notebook; regenerate every lab from its solution; write
index.ipynb. Up-to-date notebooks are left alone, so a second run takes a
second, and outputs that differ only in timings keep their committed bytes.
"""
from __future__ import annotations

import argparse
import ast
import configparser
import functools
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat
from nbclient import NotebookClient

from autograder import i18n
from autograder.i18n import LANGS, LANGUAGE_NAMES as LANG_NAMES
from labbook import dependencies
from labbook.kernel import LANGUAGE_INFO
from labbook.texts import tr
from labbook.notebooks import (
    KERNEL_NAME, KERNELSPEC, ROOT, Target, cell_inputs, coalesce_streams, headings, make_lab, output_text, read, read_source,
    targets, write,
)

INDEX = ROOT / "index.ipynb"
def why_stale(target: Target) -> str | None:
    """Missing, its cells differ from the source, or a file or message it used changed (labbook.dependencies)."""
    if not target.built.exists():
        return "not built yet"
    built = read(target.built)
    if cell_inputs(built) != cell_inputs(read_source(target)):
        return f"{target.source.relative_to(ROOT)} changed"
    changed = dependencies.changed(built, ROOT)
    return ", ".join(changed) + " changed" if changed else None


def is_stale(target: Target) -> bool:
    return why_stale(target) is not None


def execute(target: Target, remeasure: bool = False) -> tuple[str, float]:
    started = time.perf_counter()
    notebook = read_source(target)
    notebook.cells.append(dependencies.probe_cell(ROOT))
    target.built.parent.mkdir(parents=True, exist_ok=True)
    # The kernel inherits these: it records the messages it shows, and figures carry no date.
    os.environ[i18n.TRACE_ENV] = "1"
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL_NAME,
        timeout=600,
        record_timing=False,
        resources={"metadata": {"path": str(target.built.parent)}},
    )
    client.execute()
    found = dependencies.read_probe(notebook.cells.pop())
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)  # nbclient may rewrite it while executing
    notebook.metadata["language_info"] = dict(LANGUAGE_INFO)  # what the book's kernel reports: see labbook.kernel
    notebook.metadata["labbook"]["depends"] = dependencies.record(found, target.lang, ROOT)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook = coalesce_streams(notebook)
    if target.built.exists():
        notebook = keep_unchanged_outputs(notebook, read(target.built), remeasure)
    write(notebook, target.built)
    return str(target.built.relative_to(ROOT)), time.perf_counter() - started


MEASURED = "nbval-ignore-output"  # a cell that prints measurements of this machine (chapter 09's timings)
WORD = re.compile(r"[^\W\d_]+")


def printed_words(outputs: list) -> list[str]:
    """The words a cell printed, in order, without its numbers: what its labels (catalogue) and code say."""
    return WORD.findall(output_text(outputs, ("text/plain", "text/markdown")))


def keep_unchanged_outputs(new: nbformat.NotebookNode, old: nbformat.NotebookNode,
                           remeasure: bool = False) -> nbformat.NotebookNode:
    """Keep a cell's committed outputs where the new ones differ only in what nbval sanitizes (timings,
    addresses), and those of an unchanged measuring cell unless `remeasure`: an unchanged notebook
    is rewritten byte for byte. A measuring cell whose words changed (a catalogue label it prints, or
    its language) takes its new outputs: the committed numbers would stand under yesterday's labels."""
    committed = {cell.get("id"): cell for cell in old.cells if cell.cell_type == "code"}
    for cell in new.cells:
        before = committed.get(cell.get("id"))
        if cell.cell_type != "code" or before is None or before.source != cell.source:
            continue
        measured = (MEASURED in cell.metadata.get("tags", []) and not remeasure
                    and printed_words(before.outputs) == printed_words(cell.outputs))
        if measured or sanitized(before.outputs) == sanitized(cell.outputs):
            cell.outputs = before.outputs
    return new


def stale_words(cell: nbformat.NotebookNode, lang: str) -> list[str]:
    """Words a measuring cell's stored outputs show that neither today's catalogue texts of the keys it
    names (`tr("ch09.time_cols")`) nor its code's own strings produce: labels kept from an older run."""
    keys = re.findall(r"""\btr\(\s*["']([\w.]+)["']""", cell.source)
    # tr(f"ch09.{name}"): any key the literal part begins
    prefixes = re.findall(r"""\btr\(\s*f["']([\w.]*)\{""", cell.source)
    keys += [key for key in i18n.keys() for prefix in prefixes if prefix and key.startswith(prefix)]
    allowed = set(PYTHON_WORDS)
    for key in keys:
        allowed.update(WORD.findall(i18n.text(key, lang)))
    allowed.update(WORD.findall(" ".join(_string_constants(cell.source))))
    return [word for word in printed_words(cell.get("outputs", [])) if word not in allowed]


PYTHON_WORDS = ("None", "True", "False", "nan", "inf", "e")  # what print() writes for values, 1e-05 included


def _string_constants(code: str) -> list[str]:
    """The string literals of a cell's code, the literal parts of f-strings included."""
    return [node.value for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def sanitized(outputs: list) -> str:
    text = json.dumps(outputs, sort_keys=True)
    for pattern, replacement in SANITIZE:
        text = pattern.sub(replacement, text)
    return text


# nbval-sanitize.cfg sections that only nbval applies: a figure whose pixels changed is written anew
NBVAL_ONLY = {"figure pixels"}


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    """The patterns of nbval-sanitize.cfg, which the tests use to compare outputs."""
    parser = configparser.ConfigParser()
    parser.read(ROOT / "nbval-sanitize.cfg", encoding="utf-8")
    return [(re.compile(parser[name]["regex"]), parser[name]["replace"]) for name in parser.sections()
            if name not in NBVAL_ONLY]


SANITIZE = _sanitizers()


def store_language_info(target: Target) -> None:
    """Give a built notebook the language_info the book's kernel reports, without executing it: JupyterLab
    marks a notebook modified when its kernel reports another one (labbook.kernel). Rewrites nothing when the
    notebook has it already."""
    if target.built.exists():
        notebook = read(target.built)
        if notebook.metadata.get("language_info") != LANGUAGE_INFO:
            notebook.metadata["language_info"] = dict(LANGUAGE_INFO)
            write(notebook, target.built)


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
    index.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO),
                                         "lang": "mul"})
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only notebooks whose name contains one of these")
    parser.add_argument("--force", action="store_true", help="re-execute even up-to-date notebooks")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dry-run", action="store_true", help="only list what would be executed, and why")
    parser.add_argument("--remeasure", action="store_true",
                        help=f"write new outputs of cells tagged {MEASURED} (timings) even where their code is unchanged")
    args = parser.parse_args(argv)

    all_targets = targets()
    chosen = [t for t in all_targets if not args.names or any(n in str(t.source) for n in args.names)]
    stale = [t for t in chosen if args.force or is_stale(t)]
    if args.dry_run:
        for target in stale:
            print(f"{target.built.relative_to(ROOT)}: {why_stale(target) or 'forced'}")
        print(f"{len(stale)} of {len(chosen)} notebook(s) would be executed")
        return 0
    started = time.perf_counter()
    if stale:
        print(f"executing {len(stale)} notebook(s) with {args.jobs} job(s)", flush=True)
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for path, seconds in pool.map(functools.partial(execute, remeasure=args.remeasure), stale):
                print(f"  {path}: {seconds:.1f} s", flush=True)
    for target in all_targets:
        store_language_info(target)
        write_lab(target)
    write(make_index(all_targets), INDEX)
    print(f"book up to date ({len(all_targets)} sources, {len(stale)} executed) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
