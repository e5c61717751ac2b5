"""Finding submissions and reading them, robust to whatever students hand in.

A PATH on the command line is a notebook or a folder. In a folder, every
`*.ipynb` is one submission and its stem is the student id; the nbgrader layout
`DIR/<student>/<lab>/*.ipynb` is understood too. Reading never raises: a file
that is not a notebook becomes an `invalid` submission with a reason code.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import i18n

MAX_BYTES = 20 << 20  # a notebook with outputs is rarely above a few MB
MAX_CODE_CHARS = 2 << 20
MAX_CELLS = 2000
CELL_MAGIC_KEEP = ("time", "timeit", "capture", "prun")  # `%%time` and friends: run the body


class UsageError(Exception):
    """The instructor's call is wrong (unknown lab, missing path): exit status 2."""


@dataclass
class Submission:
    student: str
    path: Path
    digest: str = ""
    # filled by read():
    cells: list[str] = field(default_factory=list)
    lang: str | None = None
    invalid: str | None = None  # reason code
    invalid_params: dict = field(default_factory=dict)
    dropped_cells: list[int] = field(default_factory=list)  # cell magics that cannot run (%%bash...)


@dataclass
class Discovery:
    submissions: list[Submission]
    notes: list[str] = field(default_factory=list)


def _nbgrader_notebooks(folder: Path, lab: str) -> list[tuple[str, list[Path]]]:
    """DIR/<student>/<lab>/*.ipynb (the lab folder matched without regard to case)."""
    found = []
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        lab_dirs = [p for p in student_dir.iterdir() if p.is_dir() and p.name.lower() == lab.lower()]
        for lab_dir in lab_dirs:
            notebooks = sorted(p for p in lab_dir.glob("*.ipynb") if not p.name.startswith("."))
            if notebooks:
                found.append((student_dir.name, notebooks))
    return found


def discover(paths: list[str | Path], lab: str) -> Discovery:
    """Every submission under `paths`, each once; UsageError when a path does not exist."""
    pairs: list[tuple[str, Path]] = []
    notes: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"no such file or folder: {raw}")
        if path.is_file():
            pairs.append((path.stem, path))
            continue
        if not path.is_dir():
            raise UsageError(f"not a notebook or a folder: {raw}")
        direct = sorted(p for p in path.glob("*.ipynb") if p.is_file() and not p.name.startswith("."))
        other = [p for p in direct if _other_lab(p.stem, lab)]
        if other:
            notes.append(f"skipped {len(other)} notebooks of other labs in {raw}: "
                         + ", ".join(p.name for p in other[:5]) + (" ..." if len(other) > 5 else ""))
        pairs += [(p.stem, p) for p in direct if p not in other]
        for student, notebooks in _nbgrader_notebooks(path, lab):
            if len(notebooks) > 1:
                preferred = [p for p in notebooks if p.stem.lower().startswith(lab.lower())]
                if len(preferred) == 1:
                    notebooks = preferred
                else:
                    notes.append(f"{student}: several notebooks in {notebooks[0].parent}; graded {notebooks[0].name}")
            pairs.append((student, notebooks[0]))
    seen_paths: set[Path] = set()
    taken: dict[str, int] = {}
    submissions = []
    for student, path in pairs:
        resolved = path.resolve()
        if resolved in seen_paths:
            continue  # the same file named twice on the command line
        seen_paths.add(resolved)
        name = student
        if name in taken:
            taken[name] += 1
            name = f"{student}-{taken[student]}"
            while name in taken:
                taken[student] += 1
                name = f"{student}-{taken[student]}"
            notes.append(f"two submissions are both called {student!r}: {path} is graded as {name!r}")
        taken.setdefault(name, 1)
        submissions.append(Submission(name, path))
    return Discovery(submissions, notes)


_LAB_FILE = re.compile(r"^(lab\d\d)(?:_|$)", re.IGNORECASE)


def _other_lab(stem: str, lab: str) -> bool:
    """`lab03_multi_head.ipynb` in a folder graded as lab00 is another lab's notebook, not a student's."""
    match = _LAB_FILE.match(stem)
    return bool(match) and match.group(1).lower() != lab.lower()


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        return f"unreadable:{error.errno}"
    return digest.hexdigest()


def _lang_from_path(path: Path) -> str | None:
    for part in reversed(path.resolve().parts[:-1]):
        if part in i18n.LANGS:
            return part
    return None


def read(submission: Submission, max_bytes: int = MAX_BYTES) -> Submission:
    """Fill cells and lang, or set `invalid` with a reason code. Never raises."""
    path = submission.path
    try:
        size = path.stat().st_size
    except OSError as error:
        return _invalid(submission, "unreadable", error=error.strerror or str(error))
    if size == 0:
        return _invalid(submission, "empty")
    if size > max_bytes:
        return _invalid(submission, "too_large", size_mb=f"{size / 2**20:.1f}", max_mb=f"{max_bytes / 2**20:.0f}")
    try:
        raw = path.read_bytes()
    except OSError as error:
        return _invalid(submission, "unreadable", error=error.strerror or str(error))
    if b"\x00" in raw[:4096] and not raw.lstrip().startswith((b"{", b"\xef\xbb\xbf{")):
        return _invalid(submission, "binary")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _invalid(submission, "binary")
    if not text.strip():
        return _invalid(submission, "empty")
    try:
        notebook = json.loads(text)
    except RecursionError:
        return _invalid(submission, "not_json", detail="nested too deeply")
    except ValueError as error:
        message = str(error)
        truncated = getattr(error, "pos", 0) >= len(text.rstrip()) - 1 or message.startswith("Unterminated string")
        return _invalid(submission, "truncated" if truncated and text.lstrip().startswith("{") else "not_json",
                        detail=message[:120])
    cells = _code_cells(notebook)
    if cells is None:
        return _invalid(submission, "not_notebook")
    if len(cells) > MAX_CELLS or sum(len(c) for c in cells) > MAX_CODE_CHARS:
        return _invalid(submission, "too_much_code")
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    lang = metadata.get("lang") if isinstance(metadata.get("lang"), str) else None
    submission.lang = i18n.normalise_lang(lang) if lang else _lang_from_path(path)
    submission.cells = []
    for index, source in enumerate(cells):
        python, runnable = strip_magics(source)
        if not runnable:
            submission.dropped_cells.append(index)
            python = ""
        submission.cells.append(python)
    return submission


def _invalid(submission: Submission, reason: str, **params) -> Submission:
    submission.invalid = reason
    submission.invalid_params = {k: str(v) for k, v in params.items()}
    return submission


def _source_text(source) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def _code_cells(notebook) -> list[str] | None:
    """Sources of the code cells (nbformat 4, or 3's worksheets), or None if this is no notebook."""
    if not isinstance(notebook, dict):
        return None
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                 for cell in sheet.get("cells", []) if isinstance(cell, dict)]
        cells = [dict(cell, source=cell.get("input", "")) for cell in cells]
    if not isinstance(cells, list):
        return None
    if "nbformat" not in notebook and "metadata" not in notebook:
        return None
    sources = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _source_text(cell.get("source", ""))
        sources.append(text if text is not None else "")
    return sources


_LINE_MAGIC = re.compile(r"^(?P<indent>[ \t]*)(?:[\w.\[\], ]+\s*=\s*)?[%!]")
_TIME_MAGIC = re.compile(r"^(?P<indent>[ \t]*)%time\s+(?P<code>.+)$")
_HELP = re.compile(r"^(?P<indent>[ \t]*)[\w.]+\?\??\s*$|^(?P<indent2>[ \t]*)\?\??[\w.]+\s*$")


def strip_magics(source: str) -> tuple[str, bool]:
    """IPython-only syntax out: (plain Python, whether the cell is meant to run as Python).

    `%%time` and similar cell magics keep their body; other cell magics
    (`%%bash`, `%%writefile`...) make the cell not Python at all. A line magic
    or shell line becomes `pass` at the same indentation, so blocks stay valid;
    `%time stmt` keeps `stmt`.
    """
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split()[0] if lines[first].lstrip()[2:].split() else ""
        if magic not in CELL_MAGIC_KEEP:
            return "", False
        lines = lines[:first] + lines[first + 1:]
    out = []
    for line in lines:
        timed = _TIME_MAGIC.match(line)
        if timed:
            out.append(timed.group("indent") + timed.group("code"))
        elif _LINE_MAGIC.match(line) and not _is_python_modulo(line):
            out.append(_LINE_MAGIC.match(line).group("indent") + "pass")
        elif _HELP.match(line):
            match = _HELP.match(line)
            out.append((match.group("indent") or match.group("indent2") or "") + "pass")
        else:
            out.append(line)
    return "\n".join(out) + ("\n" if source.endswith("\n") else ""), True


def _is_python_modulo(line: str) -> bool:
    """`x = a % b` is Python: only a line that STARTS with % or ! after an optional `name =` is a magic."""
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")):
        return stripped.startswith("!=")
    target, _, rest = stripped.partition("=")
    return not rest.lstrip().startswith(("%", "!")) or rest.lstrip().startswith("!=")
