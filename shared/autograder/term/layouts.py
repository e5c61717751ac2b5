"""How each LMS names what students hand in, and which file of a student counts.

Every layout turns the files found (sources.Item) into Entries: who handed in
(the LMS's id or the student id), which file, in which order, and what the
layout says about lateness. A notebook whose name fits no pattern is reported
as unparsed, never guessed.

- flat: `<student>.ipynb`
- nbgrader: `<student>/<lab folder>/*.ipynb` with `timestamp.txt`; the lab folder
  is the lab id or the assignment's name (`Lab 2`, `lab_02`, `Lab02`)
- canvas: `<name>[_LATE]_<user id>_<submission id>_<file>`, a repeated file name
  gets `-N` before its extension (`lab01-1.ipynb`); order: submission id, then N
- moodle: `<Full Name>_<participant id>_assignsubmission_file_/<file>` (or, when
  downloaded without folders, `..._assignsubmission_file_<file>`); order: the
  file's time, then its name
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..grader.submissions import UsageError
from .sources import Item

LAYOUTS = ("auto", "flat", "nbgrader", "canvas", "moodle")

CANVAS = re.compile(r"(?P<name>[^_/]+)_(?:(?P<late>LATE)_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)")
CANVAS_REPEAT = re.compile(r"(?P<stem>.*?)-(?P<n>\d+)")
MOODLE = re.compile(r"(?P<name>.+)_(?P<id>\d+)_assign(?:submission|feedback)_(?P<plugin>[a-z]+)_(?P<rest>.*)")


@dataclass
class Entry:
    key: str  # what the layout knows the student by: lms id (canvas, moodle) or the student id
    name: str  # the student's name as the LMS wrote it, if it did
    item: Item
    order: tuple = ()
    late: bool = False  # the LMS says so (Canvas _LATE_) without saying by how much
    timestamp: str | None = None  # the text of nbgrader's timestamp.txt
    timestamp_file: str | None = None

    @property
    def source(self) -> str:
        return f"{self.item.container}: {self.item.name}" if self.item.container else self.item.name


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


def parse(items: list[Item], layout: str, lab: str) -> Parsed:
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}; layouts: {', '.join(LAYOUTS)}")
    if layout == "auto":
        layout = detect(items, lab)
    return {"flat": _flat, "nbgrader": _nbgrader, "canvas": _canvas, "moodle": _moodle}[layout](items, lab)


def detect(items: list[Item], lab: str) -> str:
    """The layout most notebooks fit (flat when none fits another)."""
    counts = {"canvas": 0, "moodle": 0, "nbgrader": 0}
    for item in items:
        parts = PurePosixPath(item.name).parts
        if MOODLE.fullmatch(parts[0]):
            counts["moodle"] += 1
        elif CANVAS.fullmatch(parts[-1]) and _is_notebook(parts[-1]):
            counts["canvas"] += 1
        elif len(parts) >= 3 and lab_folder_matches(parts[-2], lab):
            counts["nbgrader"] += 1
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else "flat"


def _flat(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("flat")
    for item in items:
        parts = PurePosixPath(item.name).parts
        if not _is_notebook(item.name):
            parsed.junk.append(f"{item.container}: {item.name}")
        elif len(parts) != 1:
            parsed.unparsed.append(f"{item.container}: {item.name}")
        else:
            parsed.entries.append(Entry(PurePosixPath(item.name).stem, "", item, (item.order, item.name)))
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
            parsed.junk.append(f"{item.container}: {item.name}")
            continue
        # <student>/<lab folder>/<file>, possibly below a course folder (`submitted/`)
        if len(parts) < 3:
            parsed.unparsed.append(f"{item.container}: {item.name}")
            continue
        if not lab_folder_matches(parts[-2], lab):
            if any(re.fullmatch(r"lab0*\d+", re.sub(r"[\s_\-]+", "", p.lower())) for p in parts[-2:-1]):
                parsed.notes.append(f"{item.container}: {item.name}: in another lab's folder, not this lab's")
            else:
                parsed.unparsed.append(f"{item.container}: {item.name}")
            continue
        stamp = stamps.get(parts[:-1])
        text = _read_small(stamp) if stamp is not None else None
        # one submission per student and lab in nbgrader; several notebooks in it: the one named
        # after the lab counts, then the newest
        named = PurePosixPath(parts[-1]).stem.lower().startswith(lab)
        parsed.entries.append(Entry(parts[-3], "", item, (named, item.order, item.name), timestamp=text,
                                    timestamp_file=f"{item.container}: {stamp.name}" if stamp else None))
    return parsed


def _read_small(item: Item) -> str | None:
    if item.path is None:
        return None
    try:
        with open(item.path, "rb") as stream:
            return stream.read(200).decode("utf-8", errors="replace")
    except OSError:
        return None


def _canvas(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("canvas")
    for item in items:
        base = PurePosixPath(item.name).name
        match = CANVAS.fullmatch(base)
        if not match:
            (parsed.unparsed if _is_notebook(base) else parsed.junk).append(f"{item.container}: {item.name}")
            continue
        stem = PurePosixPath(match["file"]).stem
        repeat = CANVAS_REPEAT.fullmatch(stem)
        n = int(repeat["n"]) if repeat else 0
        # a student's non-notebook file (a PDF) is still theirs: graded, it becomes an invalid row
        parsed.entries.append(Entry(match["user"], match["name"], item, (int(match["submission"]), n, item.name),
                                    late=bool(match["late"])))
    return parsed


def _moodle(items: list[Item], lab: str) -> Parsed:
    parsed = Parsed("moodle")
    for item in items:
        parts = PurePosixPath(item.name).parts
        match = MOODLE.fullmatch(parts[0])
        if not match:
            (parsed.unparsed if _is_notebook(item.name) else parsed.junk).append(f"{item.container}: {item.name}")
            continue
        if match["plugin"] != "file":  # online text, comments: not a notebook hand-in
            parsed.junk.append(f"{item.container}: {item.name}")
            continue
        inner = "/".join(parts[1:]) if len(parts) > 1 else match["rest"]
        if not inner:
            parsed.unparsed.append(f"{item.container}: {item.name}")
            continue
        parsed.entries.append(Entry(match["id"], match["name"], item, (item.order, inner)))
    return parsed
