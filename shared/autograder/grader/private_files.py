"""Private files: folders only their owner can enter, files written whole or not at all.

Grades, records, feedback and staged submissions are personal data. The gradebook and the term's
intake both write them this way; this module is the one place that knows how.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def private_dir(path: Path, existing_too: bool = True) -> Path:
    """`path` as a folder only its owner can enter (0700); an existing one is left alone unless `existing_too`."""
    existed = path.is_dir()
    if not existed:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not existed or existing_too:
        os.chmod(path, 0o700)  # mkdir's mode goes through the umask
    return path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Bytes written whole or not at all, 0600: a reader sees the old file or the new one, never half."""
    if not path.parent.is_dir():
        private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o600)  # mkstemp's mode already; said again because it is the point
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
