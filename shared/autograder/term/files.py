"""Opening a file a student (or an LMS download) supplied, and writing the term's own private files.

A student-supplied file (nbgrader's `timestamp.txt`, a notebook read for its
hand-graded answers, a file inside a download folder) is opened the way the
engine opens notebooks (grader/submissions.py): each folder below the PATH
the instructor gave is opened relative to the one above it with O_NOFOLLOW,
the file itself with O_NONBLOCK | O_NOFOLLOW, and it is read only if fstat
says it is a regular file, at most `limit` bytes. A FIFO, a device, a socket
or a link is refused with a reason, never waited on, never followed.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..grader.private_files import private_dir, write_bytes_atomic  # noqa: F401  (files.private_dir is the term's)


class Refused(Exception):
    """Why a student-supplied file was not read (a short English reason for the instructor)."""


def _open_below(path: Path, root: Path | None) -> int:
    if root is None:
        try:
            return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as error:
            raise Refused("a symbolic link" if error.errno == errno.ELOOP else (error.strerror or str(error))) from None
    parts = Path(os.path.relpath(path, root)).parts
    if not parts or parts[0] == os.pardir:
        raise Refused("outside the folder given")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise Refused(error.strerror or str(error)) from None
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                opened = os.open(part, flags, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused("a symbolic link, or below one") from None
                raise Refused(error.strerror or str(error)) from None
            if last:
                return opened
            os.close(fd)
            fd = opened
    finally:
        os.close(fd)
    raise Refused("no file")


def read_regular(path: Path, root: Path | None, limit: int) -> bytes:
    """At most `limit` bytes of a regular file, never through a link, never blocking; Refused otherwise."""
    fd = _open_below(Path(path), Path(root) if root is not None else None)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > limit:
            raise Refused(f"{info.st_size} bytes, more than {limit}")
        chunks, total = [], 0
        while total <= limit:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            except OSError as error:
                raise Refused(error.strerror or str(error)) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > limit:
        raise Refused(f"more than {limit} bytes")
    return b"".join(chunks)


def is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# ---------------------------------------------------------------- the term's own files
def write_private(path: Path, data: bytes | str) -> None:
    """`data` written whole or not at all, 0600 (grades and submissions are personal data)."""
    write_bytes_atomic(path, data.encode("utf-8", errors="replace") if isinstance(data, str) else data)
