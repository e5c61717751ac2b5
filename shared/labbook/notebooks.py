"""Where notebooks come from: text sources, built notebooks, labs cut from solutions.

Layout (one rule for every notebook):
    sources/course/<lang>/<name>.md     -> course/<lang>/<name>.ipynb      (executed)
    sources/solutions/<lang>/<name>.md  -> solutions/<lang>/<name>.ipynb   (executed)
                                        -> labs/<lang>/<name>.ipynb        (solutions cut, no outputs)

Sources are MyST markdown notebooks (jupytext `md:myst`). In a solution, code
between `# BEGIN SOLUTION` and `# END SOLUTION` is replaced in the lab by the
region's `# STUB: ...` lines (prefix removed), or by
`raise NotImplementedError("Your code here")`; cells tagged `solution-only` are
dropped from the lab.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat

from autograder.i18n import LANGS

# The book's root: this checkout (shared/labbook/ is two levels down), unless
# LABBOOK_ROOT names another one (tests/conftest.py sets it to the tree under test).
ROOT = Path(os.environ.get("LABBOOK_ROOT") or Path(__file__).resolve().parents[2]).resolve()
KERNEL_NAME = "causal-attention"
KERNELSPEC = {"name": KERNEL_NAME, "display_name": "Causal attention (.venv)", "language": "python"}
SOURCE_FORMAT = "md:myst"

BEGIN = re.compile(r"^(?P<indent>\s*)# BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
STUB = re.compile(r"^(?P<indent>\s*)# STUB: ?(?P<code>.*)$")
SOLUTION_ONLY = "solution-only"


@dataclass(frozen=True)
class Target:
    source: Path  # sources/<part>/<lang>/<name>.md
    part: str  # "course" or "solutions"
    lang: str
    name: str

    @property
    def built(self) -> Path:
        return ROOT / self.part / self.lang / f"{self.name}.ipynb"

    @property
    def lab(self) -> Path | None:
        return ROOT / "labs" / self.lang / f"{self.name}.ipynb" if self.part == "solutions" else None

    @property
    def kind(self) -> str:
        return "chapter" if self.part == "course" else "solution"


def targets(root: Path = ROOT) -> list[Target]:
    found = []
    for part in ("course", "solutions"):
        for lang in LANGS:
            for source in sorted((root / "sources" / part / lang).glob("*.md")):
                found.append(Target(source, part, lang, source.stem))
    return found


def lab_id(name: str) -> str | None:
    """`lab02` for `lab02_causal_attention`: the id the grader checks a submission against."""
    match = re.match(r"(lab\d\d)(?:_|$)", name)
    return match.group(1) if match else None


def read_source(target: Target) -> nbformat.NotebookNode:
    """The source as an unexecuted notebook with the book's metadata and stable cell ids."""
    notebook = jupytext.reads(target.source.read_text(encoding="utf-8"), fmt=SOURCE_FORMAT)
    notebook.metadata = nbformat.from_dict({
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "lang": target.lang,
        "labbook": {
            "kind": target.kind,
            "source": target.source.relative_to(ROOT).as_posix() if target.source.is_relative_to(ROOT) else target.source.name,
            **({"lab": lab_id(target.name)} if target.part == "solutions" and lab_id(target.name) else {}),
        },
    })
    for index, cell in enumerate(notebook.cells):
        cell.id = f"c{index:03d}"
        cell.metadata.pop("lines_to_next_cell", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    return notebook


def cut_solution(code: str) -> str:
    """Replace every solution region by its stub."""
    out: list[str] = []
    lines = code.split("\n")
    i = 0
    while i < len(lines):
        begin = BEGIN.match(lines[i])
        if not begin:
            out.append(lines[i])
            i += 1
            continue
        indent = begin.group("indent")
        stubs: list[str] = []
        i += 1
        while i < len(lines) and not END.match(lines[i]):
            stub = STUB.match(lines[i])
            if stub:
                stubs.append(stub.group("indent") + stub.group("code"))
            i += 1
        if i == len(lines):
            raise ValueError("# BEGIN SOLUTION without # END SOLUTION")
        i += 1  # skip END
        out.extend(stubs or [indent + 'raise NotImplementedError("Your code here")'])
    return "\n".join(out)


def make_lab(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student's lab: solution regions cut, solution-only cells dropped, no outputs."""
    lab = nbformat.from_dict(solution)
    cells = []
    for cell in lab.cells:
        if SOLUTION_ONLY in cell.metadata.get("tags", []):
            continue
        if cell.cell_type == "code":
            cell.source = cut_solution(cell.source)
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    lab.cells = cells
    lab.metadata = nbformat.from_dict(dict(solution.metadata))
    # what the solution was executed with is no business of the student's copy
    labbook = {k: v for k, v in solution.metadata.get("labbook", {}).items() if k != "depends"}
    lab.metadata["labbook"] = {**labbook, "kind": "lab"}
    return lab


def cell_inputs(notebook: nbformat.NotebookNode) -> list[tuple[str, str, tuple[str, ...]]]:
    """What an author controls: type, source and tags of each cell."""
    return [
        (cell.cell_type, cell.source, tuple(cell.metadata.get("tags", [])))
        for cell in notebook.cells
    ]


def code_cells(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def headings(notebook: nbformat.NotebookNode, level: int) -> list[str]:
    prefix = "#" * level + " "
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        in_fence = False
        for line in cell.source.splitlines():
            if line.startswith("```"):
                in_fence = not in_fence
            if not in_fence and line.startswith(prefix):
                found.append(line[len(prefix):].strip())
    return found


def coalesce_streams(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Merge consecutive stdout (or stderr) chunks of a cell into one output.

    How a kernel splits a cell's printing into messages depends on timing, so
    without this a re-executed notebook differs from the committed one in
    nothing but its chunking (nbval merges them the same way before comparing).
    """
    for cell in notebook.cells:
        merged = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (output.get("output_type") == "stream" and previous is not None
                    and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
                previous["text"] = previous["text"] + output["text"]
            else:
                merged.append(output)
        if "outputs" in cell:
            cell.outputs = merged
    return notebook


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


@functools.lru_cache(maxsize=None)
def read_built(path: Path) -> nbformat.NotebookNode:
    """A built notebook, read once per process for the checks that only look at it (glossary, coverage):
    never change what it returns."""
    return read(path)


def output_text(outputs: list, kinds: tuple[str, ...] = ("text/plain",)) -> str:
    """What a code cell's outputs say as text: its streams, and of its display data the given kinds."""
    return "".join(output.get("text", "") if output.get("output_type") == "stream"
                   else "".join(output.get("data", {}).get(kind, "") for kind in kinds) for output in outputs)


def write(notebook: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(notebook) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
