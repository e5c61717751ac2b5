"""The book's kernel: IPython's own, reporting its Python version as major.minor (`python -m labbook.kernel`).

Why: when JupyterLab connects a notebook to a kernel it writes the kernel's `language_info` into the
notebook's metadata, and the notebook counts as modified unless the value is the one stored (JupyterLab
4's YNotebook.setMetadata returns early only on a deep-equal value). IPython's kernel reports the full
version ("3.11.7"), which no committed notebook can know for every reader's machine, so a chapter opened
from a feedback link was "modified" at once and asked to be saved on closing. This kernel reports
`LANGUAGE_INFO`, the same on every 3.11.x, and the build stores exactly that in every notebook.

`make setup` installs the kernel spec `causal-attention` to run this module (`--point-spec`).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ipykernel.ipkernel import IPythonKernel

LANGUAGE_INFO = {**IPythonKernel.language_info, "version": f"{sys.version_info[0]}.{sys.version_info[1]}"}


class BookKernel(IPythonKernel):
    language_info = LANGUAGE_INFO


def point_spec(kernel_json: Path) -> None:
    """Make an installed kernel spec (ipykernel's, from `ipykernel install`) start this kernel."""
    spec = json.loads(kernel_json.read_text(encoding="utf-8"))
    spec["argv"] = ["labbook.kernel" if part == "ipykernel_launcher" else part for part in spec["argv"]]
    kernel_json.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    if sys.argv[1:2] == ["--point-spec"]:
        point_spec(Path(sys.argv[2]))
        return
    # as ipykernel_launcher: the working folder leaves sys.path while the kernel loads (IPython puts it back)
    if sys.path and sys.path[0] in ("", str(Path.cwd())):
        del sys.path[0]
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=BookKernel)


if __name__ == "__main__":
    main()
