"""Finding submissions and reading them, robust to whatever students hand in.

A PATH on the command line is a notebook or a folder. In a folder, every
`*.ipynb` is one submission and its stem is the student id; the nbgrader layout
`DIR/<student>/<lab>/*.ipynb` is understood too. Reading never raises: a file
that is not a notebook becomes an `invalid` submission with a reason code.

Everything here runs in the grader's own process on text a student wrote, so
every step is linear in the input (no backtracking regular expressions) and
bounded by MAX_BYTES; every id or name taken from a file goes through
sanitize.text.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .. import i18n
from . import sanitize

MAX_BYTES = 20 << 20  # a notebook with outputs is rarely above a few MB
MAX_CODE_CHARS = 2 << 20
MAX_CELLS = 2000
MAX_STUDENT_ID = 200
CELL_MAGIC_KEEP = ("time", "timeit", "capture", "prun")  # `%%time` and friends: run the body


class UsageError(Exception):
    """The instructor's call is wrong (unknown lab, missing path): exit status 2."""


@dataclass
class Submission:
    student: str
    path: Path
    digest: str = ""
    # the PATH given on the command line that holds `path`: the instructor's, so links above it are fine
    root: Path | None = None
    # filled by read():
    cells: list[str] = field(default_factory=list)
    cell_numbers: list[int] = field(default_factory=list)  # per code cell, its number among all cells (1-based)
    lang: str | None = None
    lab: str | None = None  # the lab the notebook says it is, when it says
    lab_name: str | None = None  # its topic from the notebook's source file (`masks`), when known
    invalid: str | None = None  # reason code
    invalid_params: dict = field(default_factory=dict)
    dropped_cells: list[int] = field(default_factory=list)  # cell magics that cannot run (%%bash...)


@dataclass
class Discovery:
    submissions: list[Submission]
    notes: list[str] = field(default_factory=list)


def student_id(name: str) -> str:
    """A student id from a file or folder name: printable, one line, bounded."""
    return sanitize.text(name, MAX_STUDENT_ID, newlines=False)


def _lab_folders(student_dir: Path, lab: str) -> list[Path]:
    try:
        return [p for p in student_dir.iterdir() if p.is_dir() and p.name.lower() == lab.lower()]
    except OSError:
        return []


def _nbgrader_notebooks(folder: Path, lab: str) -> list[tuple[str, list[Path]]]:
    """DIR/<student>/<lab>/*.ipynb (the lab folder matched without regard to case)."""
    found = []
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for lab_dir in _lab_folders(student_dir, lab):
            notebooks = sorted(p for p in lab_dir.glob("*.ipynb") if not p.name.startswith("."))
            if notebooks:
                found.append((student_dir.name, notebooks))
    return found


def discover(paths: list[str | Path], lab: str) -> Discovery:
    """Every submission under `paths`, each once; UsageError when a path does not exist.

    Links are listed like files (reading refuses them unless told to follow
    them), so a link handed in is a row with a reason rather than silently missing.
    """
    found: list[tuple[str, Path, Path]] = []  # (student, notebook, the PATH given)
    notes: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"no such file or folder: {sanitize.text(str(raw), 300, newlines=False)}")
        if not path.is_dir():
            found.append((path.stem, path, path.parent))  # a FIFO or a device too: read() says unreadable
            continue
        # Anything named *.ipynb is a submission, whatever it is: a FIFO, a socket, a device, a folder
        # (unless it is an nbgrader student's): read() makes it an `unreadable` row, never a missing one.
        direct = sorted(p for p in path.glob("*.ipynb") if not p.name.startswith(".")
                        and (not p.is_dir() or not _lab_folders(p, lab)))
        other = [p for p in direct if _other_lab(p.stem, lab)]
        if other:
            # a flat folder names students by file: a file named after another lab is that lab's
            # handout, not a student (inside a student's own folder it is graded, and found wrong)
            notes.append(f"skipped {len(other)} notebooks of other labs in {student_id(str(raw))}: "
                         + ", ".join(student_id(p.name) for p in other[:5]) + (" ..." if len(other) > 5 else ""))
        found += [(p.stem, p, path) for p in direct if p not in other]
        for student, notebooks in _nbgrader_notebooks(path, lab):
            if len(notebooks) > 1:
                preferred = [p for p in notebooks if p.stem.lower().startswith(lab.lower())]
                if len(preferred) == 1:
                    notebooks = preferred
                else:
                    notes.append(f"{student_id(student)}: several notebooks in {student_id(str(notebooks[0].parent))}; "
                                 f"graded {student_id(notebooks[0].name)}")
            found.append((student, notebooks[0], path))
    seen_paths: set[str] = set()
    taken: dict[str, int] = {}
    submissions = []
    for raw_student, path, root in found:
        # the same file named twice on the command line counts once; two links to one file do not
        # (each is its own row: a link to a classmate's file must not take that classmate's place),
        # so below the PATH given nothing is resolved
        where = os.path.join(os.path.realpath(root), os.path.relpath(path, root))
        if where in seen_paths:
            continue
        seen_paths.add(where)
        student = student_id(raw_student)
        name = student
        if name in taken:
            taken[name] += 1
            name = f"{student}-{taken[student]}"
            while name in taken:
                taken[student] += 1
                name = f"{student}-{taken[student]}"
            notes.append(f"two submissions are both called {student!r}: {student_id(str(path))} is graded as {name!r}")
        taken.setdefault(name, 1)
        submissions.append(Submission(name, path, root=root))
    return Discovery(submissions, notes)


_LAB_FILE = re.compile(r"(lab[0-9][0-9])(?:_|$)", re.IGNORECASE)
_LAB_CALL = re.compile(r"""\bLab\(\s*["'](lab[0-9][0-9])["']""")  # lab = Lab("lab02") opens every lab
_LAB_ID = re.compile(r"lab[0-9][0-9]")


def _other_lab(stem: str, lab: str) -> bool:
    """`lab03_multi_head.ipynb` in a folder graded as lab00 is another lab's notebook, not a student's."""
    match = _LAB_FILE.match(stem[:6])
    return bool(match) and match.group(1).lower() != lab.lower()


def _lang_from_path(path: Path) -> str | None:
    for part in reversed(path.resolve().parts[:-1]):
        if part in i18n.LANGS:
            return part
    return None


class _Refused(Exception):
    def __init__(self, reason: str, **params):
        super().__init__(reason)
        self.reason, self.params = reason, params


def _open(submission: Submission, follow_symlinks: bool) -> int:
    """A read-only descriptor of the submission's file, never through a link unless `follow_symlinks`.

    Each folder below the PATH given is opened relative to the one above it
    with O_NOFOLLOW, so no link anywhere on the way is followed, and nothing
    can be swapped between the check and the open.
    """
    path = submission.path
    if follow_symlinks or submission.root is None:
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
        try:
            return os.open(path, flags)
        except OSError as error:
            if error.errno == errno.ELOOP and not follow_symlinks:
                raise _Refused("symlink") from None
            raise
    parts = Path(os.path.relpath(path, submission.root)).parts
    if not parts or parts[0] == os.pardir:
        raise _Refused("unreadable", error="outside the folder given")
    fd = os.open(submission.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                opened = os.open(part, flags, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    raise _Refused("symlink") from None
                raise
            if last:
                return opened
            os.close(fd)
            fd = opened
    finally:
        os.close(fd)
    raise AssertionError("unreachable")


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _read_bytes(submission: Submission, max_bytes: int, follow_symlinks: bool) -> bytes:
    """The file's bytes, read once and at most max_bytes + 1 of them; sets the digest of exactly those."""
    try:
        fd = _open(submission, follow_symlinks)
    except _Refused as refused:
        submission.digest = refused.reason
        raise
    except OSError as error:
        submission.digest = f"unreadable:{error.errno}"
        raise _Refused("unreadable", error=error.strerror or str(error)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            submission.digest = "not_a_file"
            raise _Refused("unreadable", error="not a regular file")
        if info.st_size > max_bytes:
            submission.digest = f"too_large:{info.st_size}"
            raise _Refused("too_large", size_mb=f"{info.st_size / 2**20:.1f}", max_mb=f"{max_bytes / 2**20:.0f}")
        chunks, total = [], 0
        while total <= max_bytes:
            try:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            except OSError as error:
                submission.digest = f"unreadable:{error.errno}"
                raise _Refused("unreadable", error=error.strerror or str(error)) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    submission.digest = hashlib.sha256(raw).hexdigest()
    if len(raw) > max_bytes:  # it grew after fstat
        raise _Refused("too_large", size_mb=f"{len(raw) / 2**20:.1f}+", max_mb=f"{max_bytes / 2**20:.0f}")
    return raw


def read(submission: Submission, max_bytes: int = MAX_BYTES, follow_symlinks: bool = False) -> Submission:
    """Fill digest, cells, cell numbers, lang and lab, or set `invalid` with a reason code. Never raises.

    The file is read once: the digest (the record's key) and the grade come
    from the same bytes.
    """
    try:
        raw = _read_bytes(submission, max_bytes, follow_symlinks)
    except _Refused as refused:
        return _invalid(submission, refused.reason, **refused.params)
    if not raw:
        return _invalid(submission, "empty")
    if b"\x00" in raw[:4096] and not raw.lstrip().startswith((b"{", b"\xef\xbb\xbf{")):
        return _invalid(submission, "binary")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _invalid(submission, "binary")
    if not text.strip():
        return _invalid(submission, "empty")
    try:
        notebook = json.loads(text)  # linear; the size is bounded above
    except RecursionError:
        return _invalid(submission, "not_json", detail="nested too deeply")
    except ValueError as error:
        message = str(error)
        truncated = getattr(error, "pos", 0) >= len(text.rstrip()) - 1 or message.startswith("Unterminated string")
        return _invalid(submission, "truncated" if truncated and text.lstrip().startswith("{") else "not_json",
                        detail=message[:120])
    found = _code_cells(notebook)
    if found is None:
        return _invalid(submission, "not_notebook")
    cells = [source for _, source in found]
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    submission.lab, submission.lab_name = _lab_of(metadata, cells, submission.path)
    if len(cells) > MAX_CELLS or sum(len(c) for c in cells) > MAX_CODE_CHARS:
        return _invalid(submission, "too_much_code")
    lang = metadata.get("lang") if isinstance(metadata.get("lang"), str) else None
    submission.lang = i18n.normalise_lang(sanitize.text(lang, 40, newlines=False)) if lang \
        else _lang_from_path(submission.path)
    submission.cells = []
    submission.cell_numbers = [position for position, _ in found]
    for index, source in enumerate(cells):
        python, runnable = strip_magics(source)
        if not runnable:
            submission.dropped_cells.append(index)
            python = ""
        submission.cells.append(python)
    return submission


def _lab_of(metadata: dict, cells: list[str], path: Path) -> tuple[str | None, str | None]:
    """(lab id, topic) the notebook says it is: metadata.labbook.lab, else the name of its source
    file (`.../lab01_masks.md`), else a `Lab("lab01")` call in its code, else its own file name."""
    labbook = metadata.get("labbook") if isinstance(metadata.get("labbook"), dict) else {}
    lab = labbook.get("lab")
    lab = lab.lower() if isinstance(lab, str) and len(lab) == 5 and _LAB_ID.fullmatch(lab.lower()) else None
    name = None
    source = labbook.get("source")
    if isinstance(source, str):
        stem = source[-300:].replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        match = _LAB_FILE.match(stem)
        if match:
            if lab is None or lab == match.group(1).lower():
                name = sanitize.text(stem[match.end():].replace("_", " ").strip(), 60, newlines=False) or None
            lab = lab or match.group(1).lower()
    if lab is None:
        for source_text in cells:
            if "Lab(" in source_text:
                match = _LAB_CALL.search(source_text)
                if match:
                    lab = match.group(1).lower()
                    break
    if lab is None:
        match = _LAB_FILE.match(path.stem[:6])
        lab = match.group(1).lower() if match else None
    return lab, name


def _invalid(submission: Submission, reason: str, **params) -> Submission:
    submission.invalid = reason
    submission.invalid_params = {k: sanitize.text(str(v), 300, newlines=False) for k, v in params.items()}
    return submission


def _source_text(source) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    return None


def _code_cells(notebook) -> list[tuple[int, str]] | None:
    """(number among all cells, 1-based as Jupyter counts; source) of each code cell (nbformat 4,
    or 3's worksheets), or None if this is no notebook."""
    if not isinstance(notebook, dict):
        return None
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        cells = [cell for sheet in notebook["worksheets"] if isinstance(sheet, dict)
                 and isinstance(sheet.get("cells", []), list) for cell in sheet.get("cells", [])]
        cells = [dict(cell, source=cell.get("input", "")) if isinstance(cell, dict) else cell for cell in cells]
    if not isinstance(cells, list):
        return None
    if "nbformat" not in notebook and "metadata" not in notebook:
        return None
    sources = []
    for position, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _source_text(cell.get("source", ""))
        sources.append((position, text if text is not None else ""))
    return sources


# ---------------------------------------------------------------- IPython syntax, by plain scanning
# Every test below is a left-to-right scan or an unambiguous character class: a student's line of a
# million spaces costs a million steps, never a backtracking search.
_TARGET = re.compile(r"[\w.\[\], ]+")  # what `files = !ls` may assign to
_NAME = re.compile(r"[\w.]+")  # what `name?` may ask about


def _split_indent(line: str) -> tuple[str, str]:
    rest = line.lstrip(" \t")
    return line[:len(line) - len(rest)], rest


def _time_magic(indent: str, rest: str) -> str | None:
    """`%time stmt` -> `stmt` (at the same indentation), else None."""
    if not rest.startswith("%time"):
        return None
    after = rest[5:]
    code = after.lstrip()
    gap = len(after) - len(code)
    if gap == 0:
        return None  # %timeit, %timer...
    if code:
        return indent + code
    # only whitespace after `%time `: the statement is the last of those characters, as before
    return indent + after[-1:] if gap >= 2 else None


def _line_magic_indent(indent: str, rest: str) -> str | None:
    """The indentation of a line magic or shell line (`%cd x`, `!ls`, `files = !ls`), else None."""
    if rest.startswith(("%", "!")):
        return indent
    equals = rest.find("=")
    if equals < 0:
        return None
    target = rest[:equals].rstrip()  # the target, then any whitespace before `=`
    if not target:
        # `  = !x`: the last space of the indentation counts as the assignment's target (as the
        # former regular expression read it; such a line is no valid Python anyway)
        cut = indent.rfind(" ")
        if cut < 0:
            return None
        indent = indent[:cut]
    elif not _TARGET.fullmatch(target):
        return None
    value = rest[equals + 1:].lstrip()
    return indent if value.startswith(("%", "!")) else None


def _help_indent(indent: str, rest: str) -> str | None:
    """The indentation of `name?`, `name??`, `?name` or `??name`, else None."""
    body = rest.rstrip()
    if not body:
        return None
    if body.endswith("??") and len(body) > 2 and _NAME.fullmatch(body[:-2]):
        return indent
    if body.endswith("?") and len(body) > 1 and _NAME.fullmatch(body[:-1]):
        return indent
    if body.startswith("??") and len(body) > 2 and _NAME.fullmatch(body[2:]):
        return indent
    if body.startswith("?") and len(body) > 1 and _NAME.fullmatch(body[1:]):
        return indent
    return None


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
        words = lines[first].lstrip()[2:].split(maxsplit=1)
        if (words[0] if words else "") not in CELL_MAGIC_KEEP:
            return "", False
        lines = lines[:first] + lines[first + 1:]
    out = []
    for line in lines:
        indent, rest = _split_indent(line)
        if "%" not in rest and "!" not in rest and "?" not in rest:
            out.append(line)  # the usual line: plain Python
            continue
        timed = _time_magic(indent, rest)
        if timed is not None:
            out.append(timed)
            continue
        magic = _line_magic_indent(indent, rest)
        if magic is not None and not _is_python_modulo(line):
            out.append(magic + "pass")
            continue
        asked = _help_indent(indent, rest)
        out.append(asked + "pass" if asked is not None else line)
    return "\n".join(out) + ("\n" if source.endswith("\n") else ""), True


def _is_python_modulo(line: str) -> bool:
    """`x = a % b` is Python: only a line that STARTS with % or ! after an optional `name =` is a magic."""
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")):
        return stripped.startswith("!=")
    target, _, rest = stripped.partition("=")
    return not rest.lstrip().startswith(("%", "!")) or rest.lstrip().startswith("!=")
