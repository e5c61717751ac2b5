"""AUTHORING.md is executed: every worked example runs on a fresh copy of the book, so the guide cannot rot.

Each `## ` section of the guide runs in its own copy, block by block (see the
guide's first paragraph for what each kind of block does).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "AUTHORING.md"
COPIED = ["shared", "sources", "course", "solutions", "labs", "index.ipynb", "nbval-sanitize.cfg"]


def sections() -> dict[str, list[tuple[str, str]]]:
    """{section title: [(kind, body), ...]} for the `## ` sections that hold blocks (fences may nest, ```` in ```)."""
    found: dict[str, list[tuple[str, str]]] = {}
    title, fence, kind, body = None, None, "", []
    for line in GUIDE.read_text(encoding="utf-8").splitlines(keepends=True):
        if fence is None:
            opening = re.match(r"^(`{3,})(\S*)", line)
            if opening:
                fence, kind, body = opening.group(1), opening.group(2) or "text", []
            elif line.startswith("## "):
                title = line[3:].strip()
            continue
        if re.fullmatch(re.escape(fence) + r"\s*", line.rstrip("\n")):
            found.setdefault(title, []).append((kind, "".join(body)))
            fence = None
        else:
            body.append(line)
    return {name: blocks for name, blocks in found.items() if name and any(k != "text" for k, _ in blocks)}


SECTIONS = sections()


@pytest.fixture
def book_copy(tmp_path):
    for name in COPIED:
        source, target = ROOT / name, tmp_path / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    return tmp_path


def environment(root: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(root / "shared"), "LABBOOK_ROOT": str(root),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "LABBOOK_LANG": ""}


def named_file(body: str) -> tuple[str | None, str]:
    first, _, rest = body.partition("\n")
    match = re.fullmatch(r"(?:#|<!--)\s*file:\s*(\S+)\s*(?:-->)?", first.strip())
    return (match.group(1), rest) if match else (None, body)


def fill_messages(root: Path, body: str) -> None:
    first, _, rest = body.partition("\n")
    path = root / first.lstrip("# ").strip()
    with open(path, "rb") as handle:
        catalog = read_po(handle)
    for key, text in re.findall(r'^msgid "(.*)"\nmsgstr "(.*)"$', rest, re.M):
        assert key in catalog, f"{path.name} has no {key}: run the update step before"
        catalog[key].string = text.replace('\\"', '"')
    with open(path, "wb") as handle:
        write_po(handle, catalog, width=100, sort_output=True, include_lineno=False, ignore_obsolete=True)


def run(root: Path, kind: str, body: str) -> str:
    if kind == "diff":
        done = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], input=body, text=True, cwd=root,
                              capture_output=True)
        assert done.returncode == 0, f"the guide's diff no longer applies:\n{done.stderr}\n{body}"
        return ""
    if kind == "po":
        fill_messages(root, body)
        return ""
    path, content = named_file(body)
    if path is not None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")
        return ""
    command = ["bash", "-e", "-c", body] if kind == "bash" else [sys.executable, "-c", body]
    done = subprocess.run(command, cwd=root, env=environment(root), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the guide's {kind} block failed:\n{body}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_the_worked_example_runs(title, book_copy):
    output = ""
    for kind, body in SECTIONS[title]:
        if kind == "text":
            missing = [line for line in body.splitlines() if line.strip() and line.strip() not in output]
            assert not missing, f"{title}: the output lacks {missing}\n--- output:\n{output}"
            continue
        if kind in ("markdown",) and named_file(body)[0] is None:
            continue
        output = run(book_copy, kind, body)


def test_the_guide_covers_every_task():
    assert {"Add a diagnosis", "Add an exercise", "Add a lab", "Add a chapter", "Add a language",
            "Change an exercise's points"} <= set(SECTIONS)
