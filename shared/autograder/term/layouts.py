"""How each LMS names what students hand in: which part of a name the LMS wrote, and who it says that is.

Every layout turns the files of one source (sources.Item) into Entries. An
entry carries the claims the LMS's own part of the name makes (the key:
Canvas's user id, Moodle's participant id, nbgrader's student folder, a flat
file's stem; and the name the LMS wrote), never anything the student chose
(the original file name that Canvas and Moodle append). identity.py decides,
against the roster, which student (if exactly one) the claims name. A
notebook whose name fits no pattern is reported as unparsed, never guessed.

- flat: `<student>.ipynb`
- nbgrader: `<student>/<lab folder>/*.ipynb` with `timestamp.txt`; the lab folder
  is the lab id or the assignment's name (`Lab 2`, `lab_02`, `Lab02`)
- canvas: `<name>[_LATE]_<user id>_<attachment id>_<file>` (lms/canvas.py), a repeated file
  name gets `-N` before its extension (`lab01-1.ipynb`); order: attachment id, then N
- moodle: `<Full Name>_<participant id>_assignsubmission_file_/<file>` (or, when
  downloaded without folders, `..._assignsubmission_file_<file>`; lms/moodle.py);
  order: the file's time, then its name
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..grader.submissions import UsageError
from . import files, names
from .lms import canvas, moodle
from .sources import Item

LAYOUTS = ("auto", "flat", "nbgrader", "canvas", "moodle")
LMS_LAYOUTS = ("canvas", "moodle", "nbgrader")
TIMESTAMP_BYTES = 200


@dataclass(frozen=True)
class Claim:
    key: str  # cleaned (names.ident)
    kind: str  # "lms_id" (canvas, moodle) | "student" (flat, nbgrader: a student id or an lms id)
    name: str = ""  # the name the LMS wrote (names.name), "" when none
    late: bool = False  # Canvas's _LATE_ in this reading
    blind: bool = False  # Moodle's blind marking: no name to check


@dataclass
class Entry:
    claims: list[Claim]  # one reading of the name, or (Canvas) every reading it allows, the LMS's own first
    item: Item
    order: tuple = ()
    timestamp: str | None = None  # the text of nbgrader's timestamp.txt (cleaned)
    timestamp_problem: str | None = None  # why timestamp.txt was not read
    # 0: the LMS's download; 1: handed in outside it and kept (an --extra folder, a kept copy); 2: given in
    # this run by itself. The highest rank counts: a file from outside the LMS replaces the LMS's.
    rank: int = 0

    @property
    def extra(self) -> bool:
        return self.rank > 0

    @property
    def source(self) -> str:
        return self.item.shown

    @property
    def key(self) -> str:
        """The key of the LMS's own reading of the name."""
        return self.claims[0].key

    @property
    def name(self) -> str:
        return self.claims[0].name

    @property
    def late(self) -> bool:
        return self.claims[0].late if self.claims else False


@dataclass
class Parsed:
    layout: str
    entries: list[Entry] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)  # notebooks whose name fits no pattern
    junk: list[str] = field(default_factory=list)  # other files, not notebooks
    notes: list[str] = field(default_factory=list)


def _is_notebook(name: str) -> bool:
    return name.lower().endswith(".ipynb")


def lab_folder_matches(folder: str, lab: str) -> bool:
    """`lab02`, `Lab 2`, `lab_02`, `LAB-02` all name lab02."""
    squeezed = re.sub(r"[\s_\-]+", "", folder.lower())
    match = re.fullmatch(r"lab0*(\d+)", squeezed)
    return bool(match) and int(match.group(1)) == int(lab[3:])


def _any_lab_folder(folder: str) -> bool:
    return bool(re.fullmatch(r"lab0*\d+", re.sub(r"[\s_\-]+", "", folder.lower())))


def fits(item: Item, lab: str) -> set[str]:
    """The layouts whose pattern this notebook's name fits."""
    parts = PurePosixPath(item.name).parts
    found = set()
    if moodle.prefix(parts[0]) is not None:
        found.add("moodle")
    if canvas.readings(parts[-1]):
        found.add("canvas")
    if len(parts) >= 3 and _any_lab_folder(parts[-2]):
        found.add("nbgrader")
    if len(parts) == 1 and not found:
        found.add("flat")
    return found


def detect(items: list[Item], lab: str) -> tuple[str | None, dict[str, int], int]:
    """(layout, notebooks each layout explains, notebooks): the LMS layout that explains most of the
    notebooks, else flat if it explains most, else None (the caller stops and asks for --layout).
    One Canvas-looking name among flat files does not make a Canvas download."""
    notebooks = [item for item in items if _is_notebook(item.name)]
    counts = {layout: 0 for layout in (*LMS_LAYOUTS, "flat")}
    for item in notebooks:
        for layout in fits(item, lab):
            counts[layout] += 1
    if not notebooks:
        return "flat", counts, 0
    best = max(LMS_LAYOUTS, key=lambda name: counts[name])
    if 2 * counts[best] > len(notebooks):
        return best, counts, len(notebooks)
    if 2 * counts["flat"] > len(notebooks):
        return "flat", counts, len(notebooks)
    return None, counts, len(notebooks)


def parse(items: list[Item], layout: str, lab: str) -> Parsed:
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}; layouts: {', '.join(LAYOUTS)}")
    if layout == "auto":
        chosen, counts, total = detect(items, lab)
        if chosen is None:
            raise UsageError(undecided_message(items[0].container if items else "", counts, total))
        layout = chosen
    return {"flat": _flat, "nbgrader": _nbgrader, "canvas": _canvas, "moodle": _moodle}[layout](items, lab)


def undecided_message(container: str, counts: dict[str, int], total: int) -> str:
    told = ", ".join(f"{layout} {counts[layout]}" for layout in (*LMS_LAYOUTS, "flat"))
    return (f"{container}: no layout explains most of its {total} notebooks (names that fit each: {told}); "
            "this may be a mix of downloads or a folder of other files. Pass --layout canvas|moodle|nbgrader|flat "
            "to say how the files are named")


def _flat(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("flat")
    for item in items:
        parts = PurePosixPath(item.name).parts
        if not _is_notebook(item.name):
            parsed.junk.append(item.shown)
        elif len(parts) != 1:
            parsed.unparsed.append(item.shown)
        else:
            key = names.ident(PurePosixPath(item.name).stem)
            parsed.entries.append(Entry([Claim(key, "student")], item, (0, item.order, item.name)))
    return parsed


def _nbgrader(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("nbgrader")
    stamps: dict[tuple[str, ...], Item] = {}
    for item in items:
        parts = PurePosixPath(item.name).parts
        if parts[-1] == "timestamp.txt" and len(parts) >= 3:
            stamps[parts[:-1]] = item
    for item in items:
        parts = PurePosixPath(item.name).parts
        if parts[-1] == "timestamp.txt":
            continue
        if not _is_notebook(item.name):
            parsed.junk.append(item.shown)
            continue
        # <student>/<lab folder>/<file>, possibly below a course folder (`submitted/`)
        if len(parts) < 3:
            parsed.unparsed.append(item.shown)
            continue
        if not lab_folder_matches(parts[-2], lab):
            if _any_lab_folder(parts[-2]):
                parsed.notes.append(f"{item.shown}: in another lab's folder, not this lab's")
            else:
                parsed.unparsed.append(item.shown)
            continue
        stamp = stamps.get(parts[:-1])
        text, problem = _read_stamp(stamp) if stamp is not None else (None, None)
        # one submission per student and lab in nbgrader; several notebooks in it: the one named
        # after the lab counts, then the newest
        named = PurePosixPath(parts[-1]).stem.lower().startswith(lab)
        parsed.entries.append(Entry([Claim(names.ident(parts[-3]), "student")], item, (0, named, item.order, item.name),
                                    timestamp=text, timestamp_problem=problem))
    return parsed


def _read_stamp(item: Item) -> tuple[str | None, str | None]:
    """(text, None) of a timestamp.txt, or (None, why not): a FIFO, a device or a link is never opened."""
    if item.path is None:
        return None, "not readable"
    try:
        data = files.read_regular(item.path, item.root, TIMESTAMP_BYTES)
    except files.Refused as refused:
        return None, f"{item.shown}: not read ({refused})"
    return names.name(data.decode("utf-8", errors="replace"), 100), None


def _canvas(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("canvas")
    for item in items:
        base = PurePosixPath(item.name).name
        found = canvas.readings(base)
        if not found:
            (parsed.unparsed if _is_notebook(base) else parsed.junk).append(item.shown)
            if canvas.is_anonymous(base) and _is_notebook(base):
                parsed.notes.append(f"{item.shown}: Canvas's anonymous grading names no student; download the "
                                    "submissions after Canvas shows the names again")
            continue
        claims = [Claim(names.ident(r.user), "lms_id", names.name(r.name), r.late) for r in found]
        first = found[0]
        # a student's non-notebook file (a PDF) is still theirs: graded, it becomes an invalid row
        parsed.entries.append(Entry(claims, item, (0, first.attachment, canvas.repeat_number(first.file), item.name)))
    return parsed


def _moodle(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("moodle")
    for item in items:
        parts = PurePosixPath(item.name).parts
        found = moodle.prefix(parts[0])
        if found is None:
            (parsed.unparsed if _is_notebook(item.name) else parsed.junk).append(item.shown)
            continue
        if found.plugin != "file":  # online text, comments: not a notebook hand-in
            parsed.junk.append(item.shown)
            continue
        inner = "/".join(parts[1:]) if len(parts) > 1 else found.rest
        if not inner:
            parsed.unparsed.append(item.shown)
            continue
        claim = Claim(names.ident(found.participant), "lms_id", names.name(found.name), blind=moodle.is_blind(found.name))
        parsed.entries.append(Entry([claim], item, (0, item.order, inner)))
    return parsed
