"""What a built notebook depends on, so that the build re-executes it exactly when that changed.

While the build executes a notebook, its kernel records the message keys it
looks up (autograder.i18n, TRACE_ENV); after the last cell a probe lists the
book's own files it imported (shared/**.py, plus the data files a module names
in `BUILD_INPUTS`, such as the explorer's JavaScript). The build keeps both, with
a digest, in the notebook's metadata `labbook.depends`:

    {"files": {"shared/autograder/labs/lab02.py": "<hash of its bytes>", ...},
     "messages": {"lab02.no_mask": "<hash of its text in the notebook's language>", ...}}

So a points change in lab02.py re-executes the notebooks that imported lab02.py
(its solutions, and chapter 00 if it lists the points), a changed Spanish text
re-executes the Spanish notebooks that show it, and a change anywhere else in
shared/ re-executes nothing.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat

from autograder import i18n

MARKER = "LABBOOK-DEPENDENCIES "
# Run in the kernel after the notebook's last cell; never stored in the notebook.
PROBE = '''
import json as _json, sys as _sys
from pathlib import Path as _Path
_root = _Path(@ROOT@)
_files = set()
for _name, _module in list(_sys.modules.items()):
    _file = getattr(_module, "__file__", None) or ""
    if _name == "__main__":  # the kernel's own launcher (labbook.kernel), not what the notebook used
        continue
    if _file and _Path(_file).resolve().is_relative_to(_root / "shared"):
        _files.add(_Path(_file).resolve())
        _files.update(_Path(p).resolve() for p in getattr(_module, "BUILD_INPUTS", ()))
_i18n = _sys.modules.get("autograder.i18n")
print(@MARKER@ + _json.dumps({
    "files": sorted(p.relative_to(_root).as_posix() for p in _files),
    "messages": _i18n.used_keys() if _i18n else [],
}))
'''


def probe_cell(root: Path) -> nbformat.NotebookNode:
    code = PROBE.replace("@ROOT@", repr(str(root))).replace("@MARKER@", repr(MARKER))
    return nbformat.v4.new_code_cell(code, id="labbook-dependencies")


def read_probe(cell: nbformat.NotebookNode) -> dict:
    """The probe's report, from the output of its cell."""
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER):])
    raise RuntimeError(f"the dependency probe printed nothing: {cell.get('outputs')}")


def _short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def file_hash(name: str, root: Path) -> str:
    path = root / name
    return _short(path.read_bytes()) if path.exists() else "missing"


def message_hash(key: str, lang: str) -> str:
    try:
        return _short(i18n.text(key, lang).encode())
    except KeyError:
        return "missing"


def record(found: dict, lang: str, root: Path) -> dict:
    """What the probe found, each file and message with a hash of its current content."""
    return {"files": {name: file_hash(name, root) for name in sorted(found["files"])},
            "messages": {key: message_hash(key, lang) for key in sorted(found["messages"])}}


def changed(notebook: nbformat.NotebookNode, root: Path) -> list[str]:
    """What changed since the notebook was executed: files and messages by name (empty if nothing)."""
    depends = notebook.metadata.get("labbook", {}).get("depends")
    if not depends:
        return ["(no dependencies recorded)"]
    lang = notebook.metadata.get("lang", i18n.DEFAULT_LANG)
    return ([name for name, known in depends["files"].items() if file_hash(name, root) != known]
            + [f"message {key}" for key, known in depends["messages"].items() if message_hash(key, lang) != known])
