"""The files under each PATH, from a folder or read directly from a zip, with nothing written outside --out.

Each PATH is a source: an LMS download (a zip or a folder) or a notebook given by itself.
A zip is never extracted as it stands: each member is checked (no absolute
name, no `..`, no link, a size cap per file and for the whole archive, read
with a bound whatever its header claims) and copied into the gradebook's own
staging folder under a name of ours. A refused member is reported, not fatal.
Names are kept as found for the layouts to parse, and shown only cleaned.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..grader.submissions import MAX_BYTES, UsageError
from . import files, names

MAX_ARCHIVE_BYTES = 4 << 30  # uncompressed, all members together
MAX_MEMBERS = 100_000
MAX_DEPTH = 6
STATE_DIR = ".autograder"  # the gradebook's state folder (the engine's name for it)


@dataclass
class Item:
    """One file: its name as the layout sees it (relative, posix, as found) and where its bytes are on disk."""

    name: str
    path: Path | None  # None: not copied out of its zip (not a notebook); still seen by the layout
    root: Path  # the folder the engine opens `path` from (no link below it is followed)
    container: str  # the PATH given, cleaned for display
    order: float = 0.0  # modification time: the layout's tie-breaker
    size: int = 0

    @property
    def shown(self) -> str:
        return f"{self.container}: {names.shown(self.name)}" if self.container else names.shown(self.name)


@dataclass
class Source:
    path: Path
    kind: str  # "download" (a zip or a folder from an LMS) | "file" (a notebook given by itself)
    items: list[Item] = field(default_factory=list)

    @property
    def shown(self) -> str:
        return names.shown(self.path)


@dataclass
class Found:
    sources: list[Source] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "<container>: <member>: <reason>"

    @property
    def items(self) -> list[Item]:
        return [item for source in self.sources for item in source.items]


def collect(paths: list, out: Path, max_bytes: int = MAX_BYTES) -> Found:
    found = Found()
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"no such file or folder: {names.shown(raw)}")
        if path.is_dir():
            source = Source(path, "download")
            _walk(path, source, found)
        elif files.is_regular(path) and zipfile.is_zipfile(path):
            source = Source(path, "download")
            _unzip(path, out, source, found, max_bytes)
        else:
            # a notebook (or a FIFO, a device: the engine's reader makes it an `unreadable` row, never waits on it)
            info = path.lstat()
            source = Source(path, "file", [Item(path.name, path, path.parent, names.shown(raw), info.st_mtime,
                                               info.st_size)])
        found.sources.append(source)
    return found


def _walk(folder: Path, source: Source, found: Found) -> None:
    count = 0
    shown = names.shown(folder)
    for current, dirs, file_names in os.walk(folder, followlinks=False):
        here = Path(current)
        depth = len(here.relative_to(folder).parts)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
        links = [d for d in dirs if (here / d).is_symlink()]
        dirs[:] = [d for d in dirs if d not in links]
        if depth >= MAX_DEPTH:
            found.refused.append(f"{names.shown(here)}: deeper than {MAX_DEPTH} folders, not looked into")
            dirs[:] = []
        for name in sorted(file_names) + links:
            if name.startswith("."):
                continue
            count += 1
            if count > MAX_MEMBERS:
                found.refused.append(f"{shown}: more than {MAX_MEMBERS} files, the rest not looked at")
                return
            path = here / name
            try:
                info = path.lstat()
            except OSError:
                continue
            relative = path.relative_to(folder).as_posix()
            source.items.append(Item(relative, path, folder, shown, info.st_mtime, info.st_size))


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "an absolute name"
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return "a name that climbs out of the archive (..)"
    if "\x00" in name:
        return "a name with a NUL byte"
    return None


def staging_dir(out: Path, archive: Path) -> Path:
    digest = hashlib.sha256(str(archive.resolve()).encode()).hexdigest()[:12]
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in archive.stem[:40])
    return out / STATE_DIR / "staging" / f"{stem}-{digest}"


def _unzip(archive: Path, out: Path, source: Source, found: Found, max_bytes: int) -> None:
    container = names.shown(archive)
    try:
        bundle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise UsageError(f"zip {container}: cannot be read ({names.shown(error)})") from None
    staging = staging_dir(out, archive)
    files.private_dir(staging)
    total = 0
    with bundle:
        members = bundle.infolist()
        if len(members) > MAX_MEMBERS:
            found.refused.append(f"{container}: {len(members)} members, only the first {MAX_MEMBERS} looked at")
            members = members[:MAX_MEMBERS]
        for index, info in enumerate(members):
            if info.is_dir():
                continue
            name = info.filename.replace("\\", "/")
            shown = names.shown(name)
            problem = _member_problem(info)
            if problem:
                found.refused.append(f"{container}: {shown}: refused, {problem}")
                continue
            parts = PurePosixPath(name).parts
            if any(part.startswith(".") or part == "__MACOSX" for part in parts):
                found.refused.append(f"{container}: {shown}: skipped (system file, not a submission)")
                continue
            order = _zip_time(info)
            if info.file_size > max_bytes:
                found.refused.append(f"{container}: {shown}: refused, {info.file_size} bytes (more than {max_bytes})")
                continue
            if total + info.file_size > MAX_ARCHIVE_BYTES:
                found.refused.append(f"{container}: {shown}: refused, the archive unpacks to more than "
                                     f"{MAX_ARCHIVE_BYTES} bytes")
                continue
            try:
                with bundle.open(info) as stream:
                    data = stream.read(max_bytes + 1)  # the header's size may lie: never read more than this
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as error:
                found.refused.append(f"{container}: {shown}: cannot be read ({names.shown(error)})")
                continue
            if len(data) > max_bytes:
                found.refused.append(f"{container}: {shown}: refused, unpacks to more than {max_bytes} bytes")
                continue
            total += len(data)
            suffix = PurePosixPath(name).suffix.lower()
            target = staging / f"{index:06d}{suffix if suffix.isascii() and suffix[1:].isalnum() else ''}"
            files.write_private(target, data)
            source.items.append(Item(name, target, staging, container, order, len(data)))


def _zip_time(info: zipfile.ZipInfo) -> float:
    try:
        return _dt.datetime(*info.date_time).timestamp()
    except (ValueError, OverflowError):
        return 0.0
