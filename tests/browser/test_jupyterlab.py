"""The student's path in a real JupyterLab, driven by Chromium.

One JupyterLab server for the module (xdist --dist loadscope keeps the module on
one worker), started from the venv on a free localhost port with a token, no
browser, serving a temporary folder that holds copies of the notebooks (the
committed files are never touched). Each test opens its notebook in a fresh
workspace.

1. labs/es/lab01_masks.ipynb: type a correct `causal_mask` into its cell, run it
   and its check cell, read the Spanish success line; then type a version that
   masks the diagonal and read the diagnosis, then follow its link to the
   chapter section it names. The expected lines are what
   `lab.check` prints for the same code, computed here with the autograder.
   (Until lab01 exists, the same path runs on lab00's `causal_mask_T4`.)
2. A chapter in hi-Latn (02 if it has the mask explorer, else 03): clear the
   outputs, run all cells, assert no error output, that every figure rendered,
   and that any explorer came alive.
Screenshots of every state go to artifacts/browser/.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from browser_support import ROOT, TIMEOUT_MS, copy_into

VENV_BIN = Path(sys.executable).parent
RUN_TIMEOUT_MS = 240_000  # a whole chapter on a busy machine
MINIMAL_LANGUAGE_INFO = "old_language_info.ipynb"


# ---------------------------------------------------------------- what the student types
@dataclass(frozen=True)
class LabCase:
    notebook: str  # path in the repository
    lab: str
    exercise: str
    marker: str  # text of the blank lab's answer cell
    correct: str  # what the student types into it
    wrong: str  # a typical slip
    namespace: str = ""  # what the cells above define that the check needs
    setup: tuple[str, str] | None = None  # (marker, full text) of a cell to fill in first

    @property
    def exists(self) -> bool:
        return (ROOT / self.notebook).exists()


CAUSAL_MASK = '''import torch


def causal_mask(T: int) -> torch.Tensor:
    """0.0 where key j <= query i, -inf where j > i."""
    return torch.full((T, T), float("-inf")).triu(diagonal=1)
'''
LAB01 = LabCase(
    notebook="labs/es/lab01_masks.ipynb", lab="lab01", exercise="causal_mask", marker="def causal_mask(",
    correct=CAUSAL_MASK, wrong=CAUSAL_MASK.replace("diagonal=1", "diagonal=0"),
)
MASK_T4 = "causal_mask_T4 = [\n    [0, -inf, -inf, -inf],\n    [0, 0, -inf, -inf],\n    [0, 0, 0, -inf],\n    [0, 0, 0, 0],\n]"
MASK_T4_DIAGONAL = ("causal_mask_T4 = [\n    [-inf, -inf, -inf, -inf],\n    [0, -inf, -inf, -inf],\n"
                    "    [0, 0, -inf, -inf],\n    [0, 0, 0, -inf],\n]")
LAB00 = LabCase(
    notebook="labs/es/lab00_attention_by_hand.ipynb", lab="lab00", exercise="causal_mask_T4",
    marker="causal_mask_T4 = ...", correct=MASK_T4, wrong=MASK_T4_DIAGONAL,
    namespace='inf = float("inf")\nSTUDENT_ID = "s-browser"\n',
    setup=('STUDENT_ID = ""', 'from autograder import Lab\n\nlab = Lab("lab00")\ninf = float("inf")\n\n'
                              'STUDENT_ID = "s-browser"\nlab.show_problem()'),
)


def lab_case() -> LabCase:
    """lab01 as the issue asks; lab00's mask exercise while lab01 is not built yet."""
    return LAB01 if LAB01.exists else LAB00


def expected_feedback(case: LabCase, code: str) -> str:
    """The line `lab.check(exercise)` prints in Spanish for this code."""
    from autograder import Lab

    namespace: dict = {}
    exec(compile(case.namespace + code, "<typed>", "exec"), namespace)  # noqa: S102 (our own test code)
    lab = Lab(case.lab, lang="es")
    (result,) = lab.results(namespace, only=[case.exercise])
    return lab._line(result)


def hi_latn_chapter() -> str:
    """Chapter 02 in hi-Latn when it shows the mask explorer, else chapter 03."""
    candidate = ROOT / "course/hi-Latn/02_causal_mask.ipynb"
    if candidate.exists() and explorer_outputs(candidate):
        return "course/hi-Latn/02_causal_mask.ipynb"
    return "course/hi-Latn/03_worked_example.ipynb"


def explorer_outputs(path: Path) -> int:
    notebook = nbformat.read(path, as_version=4)
    return sum('class="lbx"' in output.get("data", {}).get("text/html", "")
               for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs)


def figures(path: Path) -> int:
    """Figures stored as PNG, and figures shown with their description (an <img> inside HTML)."""
    notebook = nbformat.read(path, as_version=4)
    return sum("image/png" in output.get("data", {}) or output.get("data", {}).get("text/html", "").count("<img ")
               for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs)


EXPLORER_NOTEBOOK = "course/hi-Latn/explorer_check.ipynb"
EXPLORER_CELL = "from labbook.explorer import explorer\n\nexplorer(T=5)"


def write_explorer_notebook(path: Path) -> None:
    """A notebook whose stored output is the explorer, as a chapter carries it (not trusted here)."""
    from labbook.explorer import explorer

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(EXPLORER_CELL)])
    notebook.cells[0].id = "explorer"
    notebook.cells[0].execution_count = 1
    bundle = explorer(T=5, lang="hi-Latn")._repr_mimebundle_()
    notebook.cells[0].outputs = [nbformat.v4.new_output("execute_result", data=bundle, execution_count=1)]
    notebook.metadata = {"kernelspec": {"name": "causal-attention", "display_name": "Causal attention (.venv)",
                                        "language": "python"}, "language_info": {"name": "python"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


# ---------------------------------------------------------------- the server
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    def __init__(self, root: Path, home: Path):
        self.root, self.token = root, secrets.token_hex(16)
        settings = home / "settings"
        for plugin, values in {
            "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
            # every cell in the DOM: no virtual scrolling that hides cells from the test
            "notebook-extension/tracker": {"windowingMode": "none"},
        }.items():
            path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        self.env = {key: value for key, value in os.environ.items() if key != "LABBOOK_LANG"}
        self.env.update({
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "PYTHONUNBUFFERED": "1",
        })
        self.log = home / "jupyterlab.log"
        self.process: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        for _attempt in range(3):  # the free port may be taken between choosing and binding it
            self.port = free_port()
            command = [
                str(VENV_BIN / "jupyter"), "lab", "--no-browser", f"--port={self.port}", "--ServerApp.port_retries=0",
                "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly",
            ]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                command.append("--allow-root")
            self.process = subprocess.Popen(command, cwd=self.root, env=self.env, stdout=self.log.open("ab"),
                                            stderr=subprocess.STDOUT, start_new_session=True)
            if self.wait_ready():
                return
            self.stop()
        raise RuntimeError(f"JupyterLab did not start; log:\n{self.log.read_text()[-3000:]}")

    def wait_ready(self, seconds: float = 120) -> bool:
        """Until the server answers /api/status (or the process died)."""
        import time

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.process.wait(timeout=0.25)  # returns only if the server exited
                return False
            except subprocess.TimeoutExpired:
                pass
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2) as reply:
                    if reply.status == 200:
                        return True
            except OSError:
                continue
        return False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str, workspace: str) -> str:
        return f"{self.base}/lab/workspaces/{workspace}/tree/{path}?reset&token={self.token}"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def lab_server(browser, tmp_path_factory):
    """JupyterLab serving copies of the notebooks these tests open."""
    root = tmp_path_factory.mktemp("jupyterlab-root")
    copy_into(root, lab_case().notebook)
    for chapter in sorted((ROOT / "course" / "es").glob("[0-9][0-9]_*.ipynb")):  # what the feedback links to
        copy_into(root, str(chapter.relative_to(ROOT)))
    copy_into(root, hi_latn_chapter())
    write_explorer_notebook(root / EXPLORER_NOTEBOOK)
    # chapter 02 as the build stored it before labbook.kernel: JupyterLab marks it modified on opening
    chapter = nbformat.read(ROOT / "course" / "es" / "02_causal_mask.ipynb", as_version=4)
    chapter.metadata["language_info"] = {"name": "python", "version": "3.11"}
    nbformat.write(chapter, root / MINIMAL_LANGUAGE_INFO)
    server = JupyterLab(root, tmp_path_factory.mktemp("jupyterlab-home"))
    server.start()
    yield server
    server.stop()


# ---------------------------------------------------------------- page helpers
def open_notebook(page, server: JupyterLab, path: str, workspace: str):
    from playwright.sync_api import expect

    page.goto(server.url(path, workspace))
    panel = page.locator(".jp-NotebookPanel")
    expect(panel).to_have_count(1, timeout=TIMEOUT_MS)
    # the kernel is up: its status goes initializing -> connecting -> idle (the indicator may say idle
    # for an instant before it starts), so wait for the status bar's "<kernel> | Idle" too
    expect(page.locator(".jp-StatusBar-TextItem").filter(has_text=re.compile(r"\| Idle$"))).to_have_count(
        1, timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "idle",
                                                                                timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-Notebook .jp-Cell").first).to_be_visible()
    return panel


def cell_index(panel, text: str) -> int:
    from playwright.sync_api import expect

    cells = panel.locator(".jp-Notebook .jp-Cell")
    expect(cells.filter(has_text=text).first).to_be_attached()
    index = cells.evaluate_all("(cells, text) => cells.findIndex(c => c.textContent.includes(text))", text)
    assert index >= 0, f"no cell contains {text!r}"
    return index


def type_into(page, cell, code: str) -> None:
    """Replace the cell's text with `code`, as typed (inserted as text, so no auto-indent doubles it)."""
    from playwright.sync_api import expect

    editor = cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)
    expect(editor).to_have_text(code.replace("\n", ""), use_inner_text=False)


def activate(panel) -> None:
    """Make the notebook the current widget, so that menu commands apply to it (command mode)."""
    from playwright.sync_api import expect

    panel.locator(".jp-Notebook .jp-Cell .jp-InputPrompt").first.click()
    expect(panel.locator(".jp-Notebook")).to_have_class(re.compile(r"\bjp-mod-commandMode\b"))


def run_menu(page, command: str) -> None:
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator(f'li[data-command="{command}"]').click()


def numbered(cell):
    from playwright.sync_api import expect

    expect(cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=RUN_TIMEOUT_MS)


def shoot(page, cell, path: Path) -> None:
    cell.scroll_into_view_if_needed()
    page.screenshot(path=str(path))


# ---------------------------------------------------------------- the tests
def test_lab_check_in_spanish(page, page_log, lab_server, artifacts):
    from playwright.sync_api import expect

    case = lab_case()
    panel = open_notebook(page, lab_server, case.notebook, "lab-es")
    cells = panel.locator(".jp-Notebook .jp-Cell")
    if case.setup:
        setup = cells.nth(cell_index(panel, case.setup[0]))
        type_into(page, setup, case.setup[1])
    answer_at = cell_index(panel, case.marker)
    answer = cells.nth(answer_at)
    check_at = answer_at + 1 + cell_index_after(panel, answer_at, f'lab.check("{case.exercise}")')
    check = cells.nth(check_at)
    name = Path(case.notebook).stem

    # 1. a correct answer: run the cells above, then the answer and its check cell (Shift+Enter twice)
    type_into(page, answer, case.correct)
    run_menu(page, "notebook:run-all-above")
    numbered(cells.nth(last_code_cell_before(panel, answer_at)))
    answer.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")
    success = expected_feedback(case, case.correct)
    assert success.startswith("✅"), success
    expect(check.locator(".jp-OutputArea-output")).to_contain_text(success, timeout=RUN_TIMEOUT_MS)
    shoot(page, check, artifacts / f"{name}_es_1_correct.png")

    # 2. the diagonal masked too: the diagnosis, in Spanish
    type_into(page, answer, case.wrong)
    answer.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")
    diagnosis = expected_feedback(case, case.wrong)
    assert diagnosis.startswith("❌") and "diagonal" in diagnosis, diagnosis
    expect(check.locator(".jp-OutputArea-output")).to_contain_text(diagnosis, timeout=RUN_TIMEOUT_MS)
    shoot(page, check, artifacts / f"{name}_es_2_diagonal.png")
    # the feedback says it is Spanish, and in a narrow cell its lines break between words only (JupyterLab's
    # <pre> style breaks anywhere: "Consu|lta")
    feedback = check.locator(".jp-OutputArea-output .autograder-feedback")
    expect(feedback).to_have_attribute("lang", "es")
    feedback.evaluate("element => { element.style.width = '14em'; }")
    breaks = feedback.evaluate(LINE_BREAKS)
    assert len(breaks) >= 5, breaks  # it does wrap
    assert [pair for pair in breaks if not pair[0].isspace() and pair[0] not in "-/"] == [], breaks
    # the measure sees a split word: with the <pre> style's break-all, some line starts inside one
    feedback.evaluate("element => { element.style.wordBreak = 'break-all'; }")
    assert any(a.isalpha() and b.isalpha() for a, b in feedback.evaluate(LINE_BREAKS))
    feedback.evaluate("element => { element.style.width = ''; element.style.wordBreak = ''; }")

    # 3. the chapter the diagnosis names is a link: it opens that chapter, at the section it names
    link = check.locator(".jp-OutputArea-output a.book-ref").first
    expect(link).to_be_visible(timeout=TIMEOUT_MS)
    href = link.get_attribute("href")
    chapter, fragment = Path(unquote(urlparse(href).path)).name, unquote(urlparse(href).fragment)
    # JupyterLab resolves the relative link against the lab's folder (labs/es/) into its own files URL
    assert "/files/course/es/" in urlparse(href).path and fragment, href
    link.click()
    expect(page.locator('.lm-TabBar-tab[data-type="document-title"].lm-mod-current')).to_contain_text(
        chapter, timeout=TIMEOUT_MS)
    # The fragment is a heading of that chapter: JupyterLab 4 keeps a heading's anchor in data-jupyter-id.
    # (JupyterLab 4.6 opens the chapter at its top: it scrolls to no fragment of another notebook here,
    # not even for its own Markdown links; the HTML edition's links do land on the section.)
    heading = page.locator(f'.jp-NotebookPanel:visible h2[data-jupyter-id="{fragment}"]')
    expect(heading).to_have_count(1, timeout=TIMEOUT_MS)
    page.screenshot(path=str(artifacts / f"{name}_es_3_chapter_link.png"))

    # 4. the chapter is not "modified" once its kernel has started: JupyterLab writes the kernel's
    # language_info into the notebook and marks it dirty unless that is the value stored (labbook.kernel).
    # The same chapter stored with the old, shorter language_info, opened after it, turns dirty: by then the
    # first chapter's kernel has long reported, so a clean first tab is no check made too early.
    tab = page.locator('.lm-TabBar-tab[data-type="document-title"]')
    chapter_tab = tab.filter(has_text=chapter)
    expect(page.locator(".jp-StatusBar-TextItem").filter(has_text=re.compile(r"\| Idle$"))).to_have_count(
        1, timeout=TIMEOUT_MS)
    page.get_by_role("menuitem", name="File", exact=True).click()
    page.locator('li[data-command="filebrowser:open-path"]').click()
    page.locator(".jp-Dialog input").fill(MINIMAL_LANGUAGE_INFO)
    page.keyboard.press("Enter")
    expect(tab.filter(has_text=MINIMAL_LANGUAGE_INFO)).to_have_class(re.compile(r"\bjp-mod-dirty\b"),
                                                                     timeout=TIMEOUT_MS)
    expect(chapter_tab).not_to_have_class(re.compile(r"\bjp-mod-dirty\b"))
    page.screenshot(path=str(artifacts / f"{name}_es_4_chapter_not_modified.png"))

    assert not page_log.errors, page_log.errors
    assert all(url.startswith((lab_server.base, "data:", "blob:")) for url in page_log.requests), \
        [url for url in page_log.requests if not url.startswith(lab_server.base)]


# Where the lines of an element's text break: [previous character, first character of the new line] for each
# line after the first, from the boxes Chromium laid the characters out in.
LINE_BREAKS = """element => {
  const breaks = [], walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let top = null, previous = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (box && box.width > 0) {
        if (top !== null && box.top > top + 2) breaks.push([previous, node.data[i]]);
        top = box.top;
      }
      previous = node.data[i];
    }
  }
  return breaks;
}"""


def cell_index_after(panel, start: int, text: str) -> int:
    """How many cells after cell `start` the first cell containing `text` comes (0 = the next one)."""
    index = panel.locator(".jp-Notebook .jp-Cell").evaluate_all(
        "(cells, [start, text]) => cells.slice(start + 1).findIndex(c => c.textContent.includes(text))",
        [start, text])
    assert index >= 0, f"no cell after {start} contains {text!r}"
    return index


def last_code_cell_before(panel, index: int) -> int:
    found = panel.locator(".jp-Notebook .jp-Cell").evaluate_all(
        "(cells, index) => cells.slice(0, index).map(c => c.classList.contains('jp-CodeCell')).lastIndexOf(true)",
        index)
    assert found >= 0, "no code cell above the answer"
    return found


def wait_or_shoot(page, shot: Path, function: str, arg) -> None:
    """page.wait_for_function, with a screenshot of the page when it times out."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(function, arg=arg, timeout=RUN_TIMEOUT_MS)
    except PlaywrightTimeout:
        page.screenshot(path=str(shot))
        raise


def test_hi_latn_chapter_runs(page, page_log, lab_server, artifacts):
    from playwright.sync_api import expect

    path = hi_latn_chapter()
    panel = open_notebook(page, lab_server, path, "chapter-hi")
    count = sum(cell.cell_type == "code" for cell in nbformat.read(ROOT / path, as_version=4).cells)
    expect(panel.locator(".jp-Notebook .jp-CodeCell")).to_have_count(count)  # all cells are on the page
    # start from a notebook without outputs, so that everything checked below comes from this run
    activate(panel)
    page.get_by_role("menuitem", name="Edit", exact=True).click()
    page.locator('li[data-command="editmenu:clear-all"]').click()
    expect(panel.locator(".jp-OutputArea-output")).to_have_count(0)
    run_menu(page, "runmenu:run-all")
    # done when every code cell has its number, or when a cell failed (Run All stops there)
    wait_or_shoot(page, artifacts / f"{Path(path).stem}_hi-Latn_timeout.png",
                  r"""(count) => {
            const panel = document.querySelector('.jp-NotebookPanel');
            const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
            const failed = [...panel.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
                .some(o => /Traceback|Error\b/.test(o.textContent));
            return failed || (prompts.length === count && prompts.every(p => /\[\d+\]/.test(p.textContent)));
        }""", count)
    expect(panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute("data-status", "idle")
    page.screenshot(path=str(artifacts / f"{Path(path).stem}_hi-Latn_after_run.png"))

    # no error output: none on the page, none in the saved notebook
    stderr = panel.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    for text in stderr.all_inner_texts():
        assert not re.search(r"Traceback|Error\b", text), text
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    expect(page.locator(".lm-TabBar-tab.jp-mod-dirty")).to_have_count(0)
    saved = nbformat.read(lab_server.root / path, as_version=4)
    errors = [output for cell in saved.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    assert not errors, errors

    # every figure rendered (decoded, with a size), as many as the committed notebook has
    expected_figures = figures(ROOT / path)
    assert expected_figures > 0
    images = panel.locator(".jp-OutputArea-output img")
    expect(images).to_have_count(expected_figures)
    sizes = images.evaluate_all("imgs => imgs.map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
    assert all(done and w > 100 and h > 100 for done, w, h in sizes), sizes
    # and JupyterLab keeps each figure's description as its alternative text (its sanitiser keeps alt)
    alts = images.evaluate_all("imgs => imgs.map(i => i.alt)")
    assert all(len(alt) > 40 for alt in alts), alts

    # the mask explorer, where the chapter has one, runs after its cell ran, with labels in Hinglish
    explorers = explorer_outputs(ROOT / path)
    if explorers:
        from labbook.texts import tr

        ready = panel.locator('.lbx[data-ready="true"]')
        expect(ready).to_have_count(explorers)
        widget = ready.first
        widget.locator('[role="tab"][data-view="mask"]').click()
        first_row = widget.locator("button.lbx-q").first
        query = first_row.get_attribute("data-query")
        first_row.click()
        expect(widget).to_have_attribute("data-selected-row", "0")
        expect(widget.locator(".lbx-status")).to_contain_text(
            tr("explorer.status_row", "hi-Latn").split("{")[0] + query)
        shoot(page, widget, artifacts / "chapter_hi-Latn_explorer.png")
    shoot(page, images.first, artifacts / f"{Path(path).stem}_hi-Latn_figure.png")
    assert not page_log.errors, page_log.errors
    assert all(url.startswith((lab_server.base, "data:", "blob:")) for url in page_log.requests)


def test_explorer_in_jupyterlab(page, page_log, lab_server, artifacts):
    """Untrusted, the stored explorer shows its static table; once its cell runs, it is live and keyboard-safe."""
    from playwright.sync_api import expect

    from labbook.texts import tr

    panel = open_notebook(page, lab_server, EXPLORER_NOTEBOOK, "explorer-hi")
    stored = panel.locator(".lbx")
    # JupyterLab runs no script of an untrusted output (and its sanitiser drops the data attributes)
    expect(stored).not_to_have_attribute("data-ready", "true")
    expect(stored.locator(".lbx-static table.lbx-grid")).to_be_visible()
    expect(stored).to_contain_text(tr("explorer.static_note", "hi-Latn"))
    # the sanitiser drops the cells' aria-label but keeps their title: each cell still says why, in Hinglish
    first = stored.locator(".lbx-static td").first
    expect(first).to_have_attribute("title", re.compile(re.escape(tr("explorer.cell_self", "hi-Latn"))))
    expect(first).to_have_accessible_description(re.compile(re.escape(tr("explorer.cell_self", "hi-Latn"))))
    page.screenshot(path=str(artifacts / "explorer_jupyterlab_1_untrusted.png"))

    cell = panel.locator(".jp-Notebook .jp-CodeCell").first
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+Enter")
    widget = panel.locator('.lbx[data-ready="true"]')
    expect(widget).to_have_count(1, timeout=RUN_TIMEOUT_MS)
    numbered(cell)
    expect(widget.locator(".lbx-title")).to_have_text(tr("explorer.title", "hi-Latn"))
    widget.locator('button[data-query="2"]').click()
    expect(widget).to_have_attribute("data-selected-row", "2")
    assert {tuple(x) for x in widget.locator('td[data-mark="read"]').evaluate_all(
        "tds => tds.map(td => [Number(td.dataset.row), Number(td.dataset.col)])")} == {(2, 0), (2, 1), (2, 2)}
    words = tr("explorer.sentence1", "hi-Latn").split(" ")
    expect(widget.locator(".lbx-status")).to_contain_text(f"«{words[3]}»")
    # keys belong to the widget: ArrowDown moves the selected query, not JupyterLab's cell selection,
    # and "a"/"b" (insert a cell in command mode) insert nothing
    cells_before = panel.locator(".jp-Notebook .jp-Cell").count()
    page.keyboard.press("ArrowDown")
    expect(widget).to_have_attribute("data-selected-row", "3")
    expect(widget.locator('button[data-query="3"]')).to_be_focused()
    page.keyboard.press("b")
    page.keyboard.press("a")
    expect(panel.locator(".jp-Notebook .jp-Cell")).to_have_count(cells_before)
    # the grid's other keys stay in the widget as well: along the row to its cells, Ctrl+Home to the corner;
    # each cell is named in Hinglish
    page.keyboard.press("ArrowRight")
    expect(widget.locator('.lbx-app td[data-row="3"][data-col="0"]')).to_be_focused()
    expect(page.locator(":focus")).to_have_accessible_name(re.compile(re.escape(tr("explorer.cell_read", "hi-Latn"))))
    page.keyboard.press("End")
    expect(widget.locator('.lbx-app td[data-row="3"][data-col="4"]')).to_be_focused()
    expect(page.locator(":focus")).to_have_accessible_name(re.compile(re.escape(tr("explorer.cell_future", "hi-Latn"))))
    page.keyboard.press("Control+Home")
    expect(widget.locator('button[data-query="0"]')).to_be_focused()
    page.keyboard.press("Control+End")
    expect(widget).to_have_attribute("data-selected-row", "4")
    page.keyboard.press("ArrowUp")
    expect(widget).to_have_attribute("data-selected-row", "3")
    expect(panel.locator(".jp-Notebook .jp-Cell")).to_have_count(cells_before)
    widget.locator('input[data-control="causal"]').uncheck()
    expect(widget).to_have_attribute("data-causal", "false")
    expect(widget.locator('[data-panel="mask"] td[data-leak="target"]')).to_have_count(4)
    expect(widget.locator(".lbx-status")).to_contain_text("Leak!")
    widget.screenshot(path=str(artifacts / "explorer_jupyterlab_2_live.png"))

    # chapter 11's controls work inside JupyterLab too, and the cells are labbook.explorer's
    from labbook.explorer import Settings, grid

    def cells():
        return widget.locator('[data-panel="mask"] tbody tr').evaluate_all(
            """trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => ({
                allowed: td.dataset.allowed === 'true', reason: td.dataset.reason, leak: td.dataset.leak})))""")

    widget.locator('input[data-control="causal"]').check()
    widget.locator('input[data-control="boundary"][data-pos="2"]').check()
    expect(widget).to_have_attribute("data-documents", "2,3")
    assert cells() == grid(Settings(T=5, documents=(2, 3)))
    widget.locator('input[data-control="boundary"][data-pos="2"]').uncheck()
    expect(widget).to_have_attribute("data-documents", "")
    for control, value in (("window", 2), ("sinks", 1)):
        field = widget.locator(f'input[data-control="{control}"]')
        field.fill(str(value))
        field.press("Tab")
        expect(widget).to_have_attribute(f"data-{control}", str(value))
    expect(panel.locator(".jp-Notebook .jp-Cell")).to_have_count(cells_before)
    assert cells() == grid(Settings(T=5, window=2, sinks=1))
    assert {tuple(x) for x in widget.locator('td[data-reason="sink"]').evaluate_all(
        "tds => tds.map(td => [Number(td.dataset.row), Number(td.dataset.col)])")} == {(2, 0), (3, 0), (4, 0)}
    assert not page_log.errors, page_log.errors
