"""Chapter references in feedback are links: in `check`'s output in a notebook, and in the grader's feedback
files when the instructor names where the HTML edition is published (`grade --book-url`)."""
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import mistune
import nbformat
import pytest
from jupyter_client import KernelManager
from nbclient import NotebookClient

from autograder import book_links
from autograder.grader import gradebook
from autograder.grader.gradebook import md_text
from labbook.references import read_document

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "es", "de", "hi-Latn")
URL = "https://book.example.edu/causal/"
# The solution's causal_mask made wrong in the way whose diagnosis sends the student to a chapter section.
RIGHT = 'return torch.full((T, T), float("-inf")).triu(diagonal=1)'
WRONG = 'return torch.full((T, T), float("-inf")).triu(diagonal=0)'
HREF = re.compile(r'<a class="book-ref" href="([^"]+)">([^<]+)</a>')
FEEDBACK_ELEMENT = re.compile(r'<div class="autograder-feedback" lang="(?P<lang>[^"]+)" style="(?P<style>[^"]+)">')


def chapter_of(href: str, lang: str) -> tuple[Path, str]:
    """The chapter notebook a link names and its fragment, whatever the link's base."""
    parsed = urlparse(href)
    return ROOT / "course" / lang / f"{Path(unquote(parsed.path)).stem}.ipynb", unquote(parsed.fragment)


def assert_resolves(href: str, lang: str) -> None:
    """The link names a chapter notebook of that language and, if it has a fragment, one of its headings
    (read with the book's Markdown parser, not with the code that made the link)."""
    chapter, fragment = chapter_of(href, lang)
    assert chapter.is_file(), href
    if fragment:
        assert fragment in read_document(chapter).anchors, (href, sorted(read_document(chapter).anchors))


def wrong_lab01(lang: str) -> nbformat.NotebookNode:
    notebook = nbformat.read(ROOT / "solutions" / lang / "lab01_masks.ipynb", as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and RIGHT in c.source)
    cell.source = cell.source.replace(RIGHT, WRONG)
    for c in notebook.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    return notebook


@pytest.mark.parametrize("lang", LANGS)
def test_check_in_a_notebook_links_the_chapter_it_names(lang, tmp_path):
    notebook = wrong_lab01(lang)
    # IPC, not TCP: kernels started in parallel by other tests cannot race this one for its ports
    kernel = KernelManager(kernel_name="causal-attention", transport="ipc", ip=str(tmp_path / "k"))
    client = NotebookClient(notebook, km=kernel, timeout=300, resources={"metadata": {"path": str(ROOT / "labs" / lang)}})
    client.execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" and 'check("causal_mask")' in c.source
               for o in c.outputs]
    (shown,) = [o for o in outputs if o.output_type == "display_data"]
    links = HREF.findall(shown.data["text/html"])
    assert links, shown.data["text/html"]
    for href, text in links:
        assert href.startswith(f"../../course/{lang}/") and ".ipynb#" in href, href
        assert text in shown.data["text/plain"]
        assert_resolves(href, lang)
    # what a console or nbval reads is the line `check` prints elsewhere
    assert "[0/" in shown.data["text/plain"] and "<a" not in shown.data["text/plain"]
    # the line is marked with its language and wraps between words, not JupyterLab's <pre> (break-all)
    element = FEEDBACK_ELEMENT.match(shown.data["text/html"])
    assert element and element["lang"] == lang, shown.data["text/html"][:200]
    assert "word-break: normal" in element["style"] and "white-space: pre-wrap" in element["style"]
    assert "<pre" not in shown.data["text/html"]
    # every other feedback line of the notebook too (a correct answer, the hand-in's total), links or not
    feedback = [o for c in notebook.cells if c.cell_type == "code" and re.search(r"lab\.(check|hand_in)\(", c.source)
                for o in c.outputs if o.output_type != "stream" or o.text.strip()]
    assert len(feedback) >= 5
    for output in feedback:
        assert output.output_type == "display_data", output
        element = FEEDBACK_ELEMENT.match(output.data["text/html"])
        assert element and element["lang"] == lang, output.data["text/html"][:200]


def test_check_outside_a_notebook_prints_plain_text(capsys):
    from autograder.notebook import Lab

    namespace = {}
    exec("import torch\ndef causal_mask(T):\n    " + WRONG, namespace)
    Lab("lab01", "en").check("causal_mask", namespace)
    printed = capsys.readouterr().out
    assert "chapter 0" in printed and "<a" not in printed and "](" not in printed


def grade(tmp_path: Path, *extra: str) -> Path:
    subs = tmp_path / "subs"
    subs.mkdir(parents=True)
    for lang in LANGS:
        nbformat.write(wrong_lab01(lang), subs / f"s_{lang.replace('-', '_')}.ipynb")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "lab01", str(subs), "--out", str(out),
                          "--seed", "3", "--jobs", "2", "--quiet", *extra], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return out / "feedback"


def test_feedback_files_link_to_the_published_book_and_stay_plain_without_it(tmp_path):
    linked = grade(tmp_path / "a", "--book-url", URL)
    plain = grade(tmp_path / "b")
    for lang in LANGS:
        name = gradebook.feedback_name(f"s_{lang.replace('-', '_')}")
        page = (linked / f"{name}.html").read_text(encoding="utf-8")
        links = HREF.findall(page)
        assert links, page
        for href, _ in links:
            assert href.startswith(f"{URL}course/{lang}/") and ".html" in href, href
            assert_resolves(href, lang)
        markdown = (linked / f"{name}.md").read_text(encoding="utf-8")
        md_links = re.findall(r"\]\(<([^>]+)>\)", markdown)
        assert sorted(md_links) == sorted(unescape(href) for href, _ in links)
        assert "book-ref" not in (plain / f"{name}.html").read_text(encoding="utf-8")
        assert "](" not in (plain / f"{name}.md").read_text(encoding="utf-8")


def unescape(href: str) -> str:
    return href.replace("&amp;", "&")


def test_a_student_text_beside_a_reference_stays_inert():
    resolve = book_links.site_resolver("en", URL)
    text = 'raised "<script>alert(1)</script> [x](javascript:alert(1)) chapter 03 §4" (See chapter 03 §4.)'
    page = book_links.to_html(text, resolve)
    assert "<script>" not in page and page.count('class="book-ref"') == 2
    rendered = mistune.html(book_links.to_markdown(text, resolve, md_text))
    hrefs = re.findall(r'href="([^"]*)"', rendered)
    assert "<script>" not in rendered and len(hrefs) == 2
    assert all(href.startswith(f"{URL}course/en/03_") for href in hrefs), hrefs


def test_a_reference_to_no_chapter_stays_text():
    resolve = book_links.site_resolver("de", URL)
    assert book_links.to_html("Siehe Kapitel 42 §1.", resolve) == "Siehe Kapitel 42 §1."
    assert book_links.to_html("chapter 03", None) == "chapter 03"
