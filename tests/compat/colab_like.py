"""A Colab-like run of a released lab (by hand, not in CI): the install cell, then `check`, on another Python.

Colab gives a Python with torch, numpy, matplotlib and ipykernel installed, and one notebook in /content.
This script builds the release with `--install-url` pointing at a local web server that serves its zip,
copies one lab alone into an empty folder, answers its first exercise with a classic slip, runs it with a kernel of the given venv (which must hold torch,
numpy, matplotlib, ipykernel, nbclient and nbformat, but not the lab book), and prints what the lab's
first `check` said and which packages the install added or changed.

    python3.12 -m venv /tmp/colab && /tmp/colab/bin/pip install torch numpy matplotlib ipykernel nbclient nbformat
    python tests/compat/colab_like.py /tmp/colab [labs/es/lab01_masks.ipynb]

Where a site-wide pip configuration caps torch (this machine's /etc/xdg/pip), run it with
PIP_CONFIG_FILE=/dev/null: the kernel's pip then sees PyPI as Colab's pip does, not the cap.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "colab-like"

RUN = r'''
import json, sys
import nbclient, nbformat
notebook = nbformat.read(sys.argv[1], as_version=4)
# a student's classic slip in lab01's first exercise: the diagonal blocked too
for cell in notebook.cells:
    if cell.cell_type == "code" and "def causal_mask(" in cell.source:
        lines = cell.source.splitlines()
        at = next(n for n, line in enumerate(lines) if "raise NotImplementedError" in line)
        lines[at] = '    return torch.full((T, T), float("-inf")).triu(diagonal=0)'
        cell.source = "\n".join(lines)
        break
client = nbclient.NotebookClient(notebook, kernel_name=sys.argv[2], allow_errors=True, timeout=600,
                                 resources={"metadata": {"path": sys.argv[3]}})
client.execute()
said = []
for cell in notebook.cells:
    if cell.cell_type == "code" and "lab.check(" in cell.source:
        for output in cell.get("outputs", []):
            said.append(output.get("text") or output.get("data", {}).get("text/plain", ""))
        break
install = next(c for c in notebook.cells if c.get("id") == "install-labbook")
errors = [o.get("ename") for o in install.get("outputs", []) if o.get("output_type") == "error"]
print(json.dumps({"first_check": said, "install_cell_errors": errors}))
'''


def packages(python: Path) -> dict[str, str]:
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                            text=True).stdout
    return {item["name"].lower(): item["version"] for item in json.loads(listed)}


def main(venv: str, lab: str = "labs/es/lab01_masks.ipynb") -> int:
    python = Path(venv).resolve() / "bin" / "python"
    subprocess.run([str(python), "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL], check=True,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(home / "served"))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/release.zip"
        (home / "served").mkdir()
        subprocess.run([sys.executable, "-m", "autograder", "release", "--out", str(home / "release"),
                        "--zip", str(home / "served" / "release.zip"), "--install-url", url], check=True, cwd=ROOT)
        content = home / "content"  # Colab's /content: the notebook alone
        content.mkdir()
        shutil.copy2(home / "release" / lab, content / Path(lab).name)
        before = packages(python)
        print(f"python {subprocess.run([str(python), '-V'], capture_output=True, text=True).stdout.strip()}; "
              f"torch {before.get('torch')}, numpy {before.get('numpy')}, matplotlib {before.get('matplotlib')}")
        # The notebook's language reaches the kernel as a Jupyter server hands it over (JPY_SESSION_NAME);
        # Colab's front-end hands over the notebook instead (tests/test_release_lang.py stands in for it).
        environment = {**os.environ, "JPY_SESSION_NAME": str(content / Path(lab).name)}
        done = subprocess.run([str(python), "-c", RUN, str(content / Path(lab).name), KERNEL, str(content)],
                              capture_output=True, text=True, timeout=1200, env=environment)
        server.shutdown()
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        result = json.loads(done.stdout.strip().splitlines()[-1])
        after = packages(python)
    added = {name: version for name, version in after.items() if name not in before}
    changed = {name: (before[name], after[name]) for name in before if name in after and after[name] != before[name]}
    print("install cell errors:", result["install_cell_errors"] or "none")
    print("first check said:", " | ".join(text.strip() for text in result["first_check"]))
    print("added:", added)
    print("changed:", changed or "nothing")
    ok = (not result["install_cell_errors"] and result["first_check"] and not changed
          and set(added) == {"causal-attention-labbook-student"})
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    raise SystemExit(main(*sys.argv[1:]))
