"""The offline HTML edition and the mask explorer in it, in Chromium.

The edition is built once per run (conftest's html_site, python -m
labbook.html_edition into a temporary folder, shared with
test_accessibility) and the module parses each page
once (edition_facts.crawl); the checks assert over those facts: every chapter
and lab in every language, no solution, no reference to another host, working
links, switchers, formulas, chapter references. Each check is also fed one
small page with a planted defect, to show it names it. Then it opens it in
Chromium from file:// and follows the language switcher and a link. The
explorer tests click through the widget in a chapter page of the edition
(chapter 02, 05 or 09 once they show it; until then a page built the same way
from a notebook whose output is the explorer) and compare what the page shows
with labbook.explorer's reference rules.
"""
from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.i18n import LANGS
from browser_support import ROOT, TIMEOUT_MS
import edition_facts as facts
from labbook import html_edition, references
from labbook.explorer import (Settings, cell_name, cell_state, explorer, fmt_weight, grid, grid_summary, labels,
                              worked_example)
from labbook.notebooks import BEGIN, END, STUB
from labbook.texts import texts_with_prefix, tr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from wcag import LARGE_TEXT, TEXT, contrast, is_large  # noqa: E402

EXPLORER_CHAPTERS = ("02_causal_mask", "05_padding", "09_beyond_the_triangle")


@pytest.fixture(scope="module")
def site(html_site):
    return html_site  # built once for the run (conftest), shared with test_accessibility


@pytest.fixture(scope="module")
def crawl(site) -> facts.Crawl:
    """Every page of the edition, parsed once: the facts the tests below assert on."""
    out, _ = site
    return facts.crawl(out)


def explorer_page(site_dir: Path, tmp_path_factory) -> Path:
    """A page of the edition with the explorer: a real chapter if one has it, else one built the same way."""
    for name in EXPLORER_CHAPTERS:
        page = site_dir / "course" / "es" / f"{name}.html"
        if page.exists() and 'class="lbx"' in page.read_text(encoding="utf-8"):
            return page
    root = tmp_path_factory.mktemp("explorer-root")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 02 · La máscara causal\n\nHaz clic en una fila."),
        nbformat.v4.new_code_cell("from labbook.explorer import explorer\n\nexplorer(T=6)"),
    ])
    bundle = explorer(T=6, lang="es")._repr_mimebundle_()
    notebook.cells[1].outputs = [nbformat.v4.new_output("execute_result", data=bundle, execution_count=1)]
    notebook.cells[1].execution_count = 1
    for index, cell in enumerate(notebook.cells):
        cell.id = f"c{index}"
    (root / "course" / "es").mkdir(parents=True)
    nbformat.write(notebook, root / "course" / "es" / "02_causal_mask.ipynb")
    out = tmp_path_factory.mktemp("explorer-site") / "site"
    html_edition.build(out, root=root, quiet=True)
    return out / "course" / "es" / "02_causal_mask.html"


# ---------------------------------------------------------------- the site, as files
def test_every_chapter_and_lab_has_a_page(site):
    out, stats = site
    # the notebooks there were when the edition was built (other work may add some meanwhile)
    for page in stats["page_paths"]:
        assert (out / page).is_file(), page
    for part in ("course", "labs"):
        for lang in LANGS:
            for notebook in (ROOT / part / lang).glob("*.ipynb"):
                page = f"{part}/{lang}/{notebook.stem}.html"
                assert page in stats["page_paths"] or notebook.stat().st_mtime > stats["started"], page
    assert {page.split("/")[1] for page in stats["page_paths"]} == set(LANGS)
    assert (out / "index.html").is_file()
    assert not (out / "solutions").exists()
    print(f"HTML edition: {stats['pages']} pages, {stats['bytes'] / 1e6:.1f} MB, built in {stats['seconds']:.1f} s")


def test_no_reference_to_another_host(site, crawl):
    out, stats = site
    assert stats["external"] == []
    problems = facts.other_host_problems(crawl)
    assert problems == [], "\n".join(problems)
    css = (out / html_edition.CSS_PATH).read_text(encoding="utf-8")
    assert not re.search(r"url\(\s*['\"]?(https?:)?//|@import|@font-face", css)


def test_links_between_pages_work(site, crawl):
    out, stats = site
    assert stats["broken_links"] == [], "\n".join(stats["broken_links"])
    assert sum(len(page.links) for page in crawl.pages.values()) > 1000  # the crawl saw the links
    problems = facts.link_problems(crawl)
    assert problems == [], "\n".join(problems)


def test_link_fragments_reach_an_id(site):
    """labbook.references' check of a built edition: pages as above, and each #fragment to an id of its page."""
    out, _ = site
    report = references.Report()
    references.check_html(out, report)
    assert report.html_links > 0
    assert report.problems == [], "\n".join(map(str, report.problems))


def test_language_switcher_on_every_page(crawl):
    assert all(page.switcher for name, page in crawl.pages.items() if name != "index.html")
    problems = facts.switcher_problems(crawl)
    assert problems == [], "\n".join(problems)


def solution_lines_shown(lang: str, stem: str, text: str) -> list[str]:
    """The lines of solution regions of sources/solutions/<lang>/<stem>.md (not in the lab itself) that `text` shows."""
    source = ROOT / "sources" / "solutions" / lang / f"{stem}.md"
    lab = nbformat.read(ROOT / "labs" / lang / f"{stem}.ipynb", as_version=4)
    in_lab = {line.strip() for cell in lab.cells for line in cell.source.splitlines()}
    inside, secret = False, []
    for line in source.read_text(encoding="utf-8").splitlines():
        if BEGIN.match(line):
            inside = True
        elif END.match(line):
            inside = False
        elif inside and not STUB.match(line) and len(line.strip()) > 12 and line.strip() not in in_lab:
            secret.append(line.strip())
    return [line for line in secret if line in text]


def test_labs_carry_no_solution(crawl):
    """No line of a solution region reaches the lab's page."""
    checked = 0
    for lang in LANGS:
        for source in (ROOT / "sources" / "solutions" / lang).glob("*.md"):
            name = f"labs/{lang}/{source.stem}.html"
            if name not in crawl.pages:
                continue
            text = crawl.pages[name].text
            leaked = solution_lines_shown(lang, source.stem, text)
            assert not leaked, f"{name} shows solution lines: {leaked[:3]}"
            assert "BEGIN SOLUTION" not in text
            checked += 1
    assert checked >= len(LANGS)


# ---------------------------------------------------------------- the checks above can fail
# Each check is fed the edition with one defect planted in one small page (re-read alone: no second crawl)
# and must name it; the same check finds nothing on the page as built.
GLOSSARY, LAB00 = "course/en/glossary.html", "labs/en/lab00_attention_by_hand.html"


def planted(site, crawl: facts.Crawl, name: str, pattern: str, replacement) -> facts.Crawl:
    """The crawl with page `name` re-read after the first match of `pattern` in its source became `replacement`."""
    out, _ = site
    html, found = re.subn(pattern, replacement, (out / name).read_text(encoding="utf-8"), count=1)
    assert found == 1, f"nothing to plant into: {pattern!r} is not in {name}"
    return facts.Crawl({**crawl.pages, name: facts.read_page(name, html)}, crawl.files)


DEFECTS = {  # id: (check, page, pattern, replacement, what the check must say)
    "image-from-a-cdn": (facts.other_host_problems, GLOSSARY, r"</main>",
                         '<img src="https://cdn.example.org/x.png"></main>', "<img src=https://cdn.example.org/x.png>"),
    "protocol-relative-script": (facts.other_host_problems, GLOSSARY, r"</main>",
                                 '<script src="//cdn.example.org/x.js"></script></main>', "<script src=//cdn"),
    "style-import": (facts.other_host_problems, GLOSSARY, r"</main>", "<style>@import 'x.css';</style></main>",
                     "<style> fetches"),
    "broken-link": (facts.link_problems, GLOSSARY, r'href="10_review\.html"', 'href="10_reviews.html"',
                    "-> 10_reviews.html: no such file"),
    "link-to-a-notebook": (facts.link_problems, GLOSSARY, r'href="10_review\.html"', 'href="10_review.ipynb"',
                           "-> 10_review.ipynb: a notebook"),
    "switcher-entry-dropped": (facts.switcher_problems, GLOSSARY, r'<li><a [^>]*data-lang="de"[^>]*>[^<]*</a></li>',
                               "", "the switcher lists ['en', 'es', 'hi-Latn'], the site has ['de', 'en', 'es', 'hi-Latn']"),
    "switcher-entry-elsewhere": (facts.switcher_problems, GLOSSARY, r'href="\.\./de/glossary\.html"',
                                 'href="../de/10_review.html"', "the de entry links to ../de/10_review.html"),
    "own-language-missing": (facts.switcher_problems, GLOSSARY, r'<li><a [^>]*data-lang="en"[^>]*>[^<]*</a></li>',
                             "", "its own language en is not in the switcher"),
    "wrong-html-lang": (facts.switcher_problems, GLOSSARY, r'<html lang="en">', '<html lang="es">',
                        "<html lang=es> in the en folder"),
    "formula-left-as-tex": (lambda crawl: facts.raw_tex_problems(crawl, [LAB00]), LAB00,
                            r'<math alttext="([^"]*)"[^>]*>.*?</math>', r"$\1$", "raw TeX in the visible text"),
    "tex-command-in-prose": (lambda crawl: facts.raw_tex_problems(crawl, [LAB00]), LAB00, r"</main>",
                             r"<p>each weight is \\frac{1}{T} at first</p></main>", r"['\\frac']"),
    "chapter-reference-unlinked": (lambda crawl: facts.chapter_reference_problems(crawl, [GLOSSARY]), GLOSSARY,
                                   r'<a [^>]*class="book-ref"[^>]*>([^<]*)</a>', r"\1", "not a link: "),
    "chapter-reference-in-a-new-paragraph": (
        lambda crawl: facts.chapter_reference_problems(crawl, [GLOSSARY]), GLOSSARY,
        r'(<div [^>]*jp-RenderedMarkdown[^>]*>)', r"\1<p>as chapter 03 §2 shows</p>", "not a link: 'as chapter 03 §2"),
    "chapter-reference-to-no-page": (lambda crawl: facts.chapter_reference_problems(crawl, [GLOSSARY]), GLOSSARY,
                                     r'href="07_testing_causality\.html"', 'href="77_nowhere.html"',
                                     "book-ref 77_nowhere.html reaches no page"),
}


@pytest.mark.parametrize("defect", DEFECTS)
def test_a_planted_defect_is_reported(site, crawl, defect):
    check, name, pattern, replacement, expected = DEFECTS[defect]
    assert not [problem for problem in check(crawl) if expected in problem]
    problems = check(planted(site, crawl, name, pattern, replacement))
    assert any(problem.startswith(name) and expected in problem for problem in problems), problems


def test_a_planted_solution_line_is_reported(site, crawl):
    source = ROOT / "sources" / "solutions" / "en" / "lab00_attention_by_hand.md"
    hidden = solution_lines_shown("en", "lab00_attention_by_hand", source.read_text(encoding="utf-8"))
    assert hidden, "the solution has no line that the lab lacks"
    assert solution_lines_shown("en", "lab00_attention_by_hand", crawl.pages[LAB00].text) == []
    # as a code cell shows it: highlighted, each word in its own <span>
    code = "".join(f'<span class="n">{html.escape(word)}</span>' for word in re.split(r"(\W)", hidden[-1]) if word)
    leaky = planted(site, crawl, LAB00, r'(<div class="highlight[^"]*">\s*<pre>)', lambda match: match[1] + code + "\n")
    assert solution_lines_shown("en", "lab00_attention_by_hand", leaky.pages[LAB00].text) == [hidden[-1]]


# ---------------------------------------------------------------- the site, in Chromium
def local_only(requests: list[str]) -> list[str]:
    return [url for url in requests if not url.startswith(("file://", "data:", "blob:", "about:"))]


def test_index_switcher_and_links_in_chromium(page, page_log, site, artifacts):
    from playwright.sync_api import expect

    out, _ = site
    page.goto((out / "index.html").as_uri())
    for lang in LANGS:
        if (out / "course" / lang).exists():
            expect(page.locator(f'section[data-lang="{lang}"]')).to_be_visible()
    page.screenshot(path=str(artifacts / "html_index.png"), full_page=False)

    # index -> an English chapter
    chapter = "03_worked_example.html"
    page.locator('section[data-lang="en"]').locator(f'a[href="course/en/{chapter}"]').click()
    expect(page).to_have_url(re.compile(rf"/course/en/{chapter}$"))
    expect(page.locator("html")).to_have_attribute("lang", "en")
    # the switcher -> the same chapter in Spanish
    page.locator('nav.book-nav a[data-lang="es"]').click()
    expect(page).to_have_url(re.compile(rf"/course/es/{chapter}$"))
    expect(page.locator("html")).to_have_attribute("lang", "es")
    expect(page.locator('nav.book-nav a[aria-current="page"]')).to_have_attribute("data-lang", "es")
    # figures are in the page
    images = page.locator(".jp-OutputArea-output img")
    assert images.count() > 0
    assert all(w > 100 for w in images.evaluate_all("imgs => imgs.map(i => i.naturalWidth)"))
    page.screenshot(path=str(artifacts / "html_chapter_es.png"))
    # a link in the text -> the lab, in the same language
    page.locator("main a[href$='lab00_attention_by_hand.html']").first.click()
    expect(page).to_have_url(re.compile(r"/labs/es/lab00_attention_by_hand\.html$"))
    expect(page.locator("h1").first).to_contain_text("Lab 00")
    # and back to the index
    page.locator('nav.book-nav a[data-nav="index"]').click()
    expect(page).to_have_url(re.compile(r"/index\.html$"))
    assert local_only(page_log.requests) == []
    assert not page_log.errors, page_log.errors


# ---------------------------------------------------------------- typeset mathematics
def test_every_formula_is_mathml_and_no_raw_tex_is_visible(site, crawl):
    _, stats = site
    problems = facts.raw_tex_problems(crawl, stats["page_paths"])
    assert problems == [], "\n".join(problems)
    formulas = sum(crawl.pages[name].formulas for name in stats["page_paths"])
    assert formulas > 500, f"only {formulas} formulas typeset"


@pytest.mark.parametrize("kind, page_name, selector", [
    ("fraction", "course/en/03_worked_example.html", "math:has(mfrac)"),
    ("sum", "course/en/03_worked_example.html", "math:has(mo:text-is('∑')), math:has(munderover)"),
    ("cases", "course/en/02_causal_mask.html", "math:has(mtable)"),
])
def test_formulas_are_typeset_in_chromium(page, page_log, site, artifacts, kind, page_name, selector):
    """A fraction stands taller than its line, a sum and a cases formula render as MathML boxes."""
    out, _ = site
    page.goto((out / page_name).as_uri())
    formula = page.locator(selector).first
    formula.scroll_into_view_if_needed()
    box = formula.bounding_box()
    font = formula.evaluate("m => parseFloat(getComputedStyle(m).fontSize)")
    assert box and box["width"] > font, (kind, box)
    if kind in ("fraction", "cases"):
        assert box["height"] > 1.6 * font, f"the {kind} is not typeset on several levels: {box}, font {font}"
    formula.screenshot(path=str(artifacts / f"html_math_{kind}.png"))
    assert not page_log.errors, page_log.errors


def test_chapter_references_in_the_prose_are_links(site, crawl):
    """Every "chapter NN §K" the prose writes, in each language's words, links to that chapter's page and heading."""
    _, stats = site
    problems = facts.chapter_reference_problems(crawl, stats["page_paths"])
    assert problems == [], "\n".join(problems[:10])
    for lang, count in facts.chapter_links_per_lang(crawl, stats["page_paths"]).items():
        assert count >= 20, f"{lang}: only {count} chapter references became links"


# ---------------------------------------------------------------- the explorer, in the edition
def cells_where(widget, selector: str) -> set[tuple[int, int]]:
    found = widget.locator(f'[data-panel="mask"] td{selector}').evaluate_all(
        "tds => tds.map(td => [Number(td.dataset.row), Number(td.dataset.col)])")
    return {tuple(x) for x in found}


def grid_names(widget) -> list[list[str]]:
    """The accessible name each cell of the live grid carries."""
    return widget.locator('[data-panel="mask"] tbody tr').evaluate_all(
        "trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => td.getAttribute('aria-label')))")


def reference_names(s: Settings, lang: str) -> list[list[str]]:
    text = texts_with_prefix("explorer.", lang)
    label = labels(s, text, lang)
    return [[cell_name(s, r, j, text, label) for j in range(s.T)] for r in range(s.rows)]


def grid_attributes(widget) -> list[list[dict]]:
    rows = widget.locator('[data-panel="mask"] tbody tr').evaluate_all(
        """trs => trs.map(tr => [...tr.querySelectorAll('td')].map(td => ({
            allowed: td.dataset.allowed === 'true', reason: td.dataset.reason, leak: td.dataset.leak})))""")
    return rows


def set_number(widget, control: str, value: int, attribute: str | None = None, seq: int | None = None):
    from playwright.sync_api import expect

    selector = f'input[data-control="{control}"]' + (f'[data-seq="{seq}"]' if seq is not None else "")
    field = widget.locator(selector)
    field.fill(str(value))
    field.press("Tab")  # a change event, as a reader leaving the field
    if attribute:
        expect(widget).to_have_attribute(attribute, str(value))


@pytest.fixture(scope="module")
def explorer_url(site, tmp_path_factory) -> str:
    out, _ = site
    return explorer_page(out, tmp_path_factory).as_uri()


def open_explorer(page, url):
    from playwright.sync_api import expect

    page.goto(url)
    widget = page.locator('.lbx[data-ready="true"]').first
    expect(widget).to_be_visible()
    # the starting state, whatever the chapter chose: T = 6, causal, no window, no cache, sequence 1 unpadded,
    # one document, no sink
    widget.locator('[role="tab"][data-view="mask"]').click()
    expect(widget).to_have_attribute("data-view", "mask")
    widget.locator('select[data-control="sequence"]').select_option("0")
    expect(widget).to_have_attribute("data-sequence", "0")
    widget.locator('select[data-control="align"]').select_option("bottom-right")
    set_number(widget, "T", 6, "data-T")
    set_number(widget, "offset", 0, "data-offset")
    set_number(widget, "window", 0, "data-window")
    set_number(widget, "padding", 0, "data-pad", seq=0)
    set_number(widget, "sinks", 0, "data-sinks")
    for box in widget.locator('input[data-control="boundary"]').all():
        box.uncheck()
    expect(widget).to_have_attribute("data-documents", "")
    if widget.locator('input[data-control="causal"]').is_checked() is False:
        widget.locator('input[data-control="causal"]').check()
    expect(widget).to_have_attribute("data-causal", "true")
    return widget


def settings_of(widget, **changes) -> Settings:
    config = json.loads(widget.get_attribute("data-config"))
    padding = list(config["state"]["padding"])
    padding[0] = 0
    base = dict(T=6, causal=True, window=0, padding=tuple(padding), sequence=0, offset=0, align="bottom-right")
    base.update(changes)
    return Settings(**base)


def test_explorer_row_mask_off_and_window(page, page_log, explorer_url, artifacts):
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)

    # click query row 3: it may read keys 0..3, its target is key 4
    widget.locator('button[data-query="3"]').click()
    expect(widget).to_have_attribute("data-selected-row", "3")
    s = settings_of(widget)
    assert cells_where(widget, '[data-mark="read"]') == {(3, j) for j in range(4)}
    assert cells_where(widget, '[data-mark="read"]') == {(3, j) for j in range(6) if cell_state(s, 3, j)["allowed"]}
    assert cells_where(widget, '[data-mark="target"]') == {(3, 4)}
    expect(widget.locator('[data-panel="mask"] thead th[data-target="true"]')).to_have_attribute("data-col", "4")
    words = tr("explorer.sentence1", "es").split(" ")
    expect(widget.locator(".lbx-status")).to_contain_text(f"«{words[4]}»")
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    widget.screenshot(path=str(artifacts / "explorer_1_row3.png"))

    # the mask off: every readable future key is a leak; for row 3, key 4 is its own target
    widget.locator('input[data-control="causal"]').uncheck()
    expect(widget).to_have_attribute("data-causal", "false")
    s = settings_of(widget, causal=False)
    assert cells_where(widget, '[data-leak="target"]') == {(r, r + 1) for r in range(5)}
    assert cells_where(widget, '[data-leak="future"]') == {(r, j) for r in range(6) for j in range(r + 2, 6)}
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    assert cells_where(widget, '[data-mark="read"]') == {(3, j) for j in range(6) if j != 4}
    assert cells_where(widget, '[data-mark="target"]') == {(3, 4)}
    expect(widget.locator(".lbx-status")).to_contain_text(tr("explorer.status_leak", "es").split("{")[0].strip())
    widget.screenshot(path=str(artifacts / "explorer_2_mask_off.png"))

    # the worked example follows: weight on future keys, and the numbers of labbook.explorer
    widget.locator('[role="tab"][data-view="worked"]').click()
    expect(widget).to_have_attribute("data-view", "worked")
    weights = widget.locator('[data-matrix="weights"] td').all_inner_texts()
    reference = worked_example(s)["weights"]
    assert weights == [fmt_weight(x) for row in reference for x in row]
    expect(widget.locator('[data-warn="leak"]')).to_be_visible()
    widget.screenshot(path=str(artifacts / "explorer_3_worked_mask_off.png"))
    widget.locator('[role="tab"][data-view="mask"]').click()

    # the mask on again, window W = 2: row 3 reads keys 2 and 3 only
    widget.locator('input[data-control="causal"]').check()
    expect(widget).to_have_attribute("data-causal", "true")
    set_number(widget, "window", 2, "data-window")
    s = settings_of(widget, window=2)
    assert cells_where(widget, '[data-mark="read"]') == {(3, 2), (3, 3)}
    assert {(3, 0), (3, 1)} <= cells_where(widget, '[data-reason="window"]')
    assert cells_where(widget, '[data-reason="window"]') == {(r, j) for r in range(6) for j in range(r - 1)}
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    assert cells_where(widget, "[data-leak]:not([data-leak=''])") == set()
    widget.screenshot(path=str(artifacts / "explorer_4_window2.png"))

    # the worked example with the window: its last row reads keys 1 and 2 only
    widget.locator('[role="tab"][data-view="worked"]').click()
    weights = widget.locator('[data-matrix="weights"] td').all_inner_texts()
    assert weights == [fmt_weight(x) for row in worked_example(s)["weights"] for x in row]
    assert weights[6] == "0.00"
    assert not page_log.errors, page_log.errors
    assert local_only(page_log.requests) == []


def test_explorer_padding_and_kv_cache(page, page_log, explorer_url, artifacts):
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    # padding: sequence 1 (0-based) with 2 pad tokens blocks keys 4 and 5 for every query
    widget.locator('select[data-control="sequence"]').select_option("1")
    expect(widget).to_have_attribute("data-sequence", "1")
    set_number(widget, "padding", 2, "data-pad", seq=1)
    assert cells_where(widget, '[data-reason="pad"]') == {(r, j) for r in range(6) for j in (4, 5)}
    widget.locator('button[data-query="5"]').click()
    expect(widget.locator(".lbx-status")).to_contain_text(
        tr("explorer.status_pad_query", "es").split("{")[0].strip())
    # KV cache: 3 cached tokens, 3 new queries; top-left alignment hides keys the query may read
    widget.locator('select[data-control="sequence"]').select_option("0")
    set_number(widget, "offset", 3, "data-offset")
    expect(widget.locator('[data-panel="mask"] tbody tr')).to_have_count(3)
    assert cells_where(widget, '[data-reason="align"]') == set()
    widget.locator('select[data-control="align"]').select_option("top-left")
    expect(widget).to_have_attribute("data-align", "top-left")
    s = settings_of(widget, offset=3, align="top-left")
    assert cells_where(widget, '[data-reason="align"]') == {(r, j) for r in range(3) for j in range(r + 1, r + 4)}
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    widget.screenshot(path=str(artifacts / "explorer_5_kv_top_left.png"))
    assert not page_log.errors, page_log.errors


def test_explorer_documents_and_sinks(page, page_log, explorer_url, artifacts):
    """Chapter 11's masks: boundaries between packed documents, then a sink with a window."""
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    set_number(widget, "T", 8, "data-T")
    # documents of 3, 2 and 3 tokens: new documents begin at keys 3 and 5
    for pos in (3, 5):
        widget.locator(f'input[data-control="boundary"][data-pos="{pos}"]').check()
    expect(widget).to_have_attribute("data-documents", "3,2,3")
    s = settings_of(widget, T=8, documents=(3, 2, 3))
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    other = {(r, j) for r in (3, 4) for j in range(3)} | {(r, j) for r in (5, 6, 7) for j in range(5)}
    assert cells_where(widget, '[data-reason="document"]') == other
    assert cells_where(widget, '[data-doc-start="true"]') == {(r, j) for r in range(8) for j in (3, 5)}
    # the first query of document 1 reads only itself
    widget.locator('button[data-query="3"]').click()
    expect(widget).to_have_attribute("data-selected-row", "3")
    assert cells_where(widget, '[data-mark="read"]') == {(3, 3)}
    assert cells_where(widget, '[data-mark="target"]') == {(3, 4)}
    expect(widget.locator(".lbx-status")).to_contain_text(tr("explorer.status_document", "es").split("{")[0].strip())
    # the last query of document 0: its next token begins document 1, so it has no target
    widget.locator('button[data-query="2"]').click()
    assert cells_where(widget, '[data-mark="read"]') == {(2, 0), (2, 1), (2, 2)}
    assert cells_where(widget, '[data-mark="target"]') == set()
    expect(widget.locator(".lbx-status")).to_contain_text(
        tr("explorer.status_target_document", "es").split("{")[0].strip())
    widget.screenshot(path=str(artifacts / "explorer_7_documents.png"))
    # move a boundary: without the one at key 5, documents of 3 and 5 tokens
    widget.locator('input[data-control="boundary"][data-pos="5"]').uncheck()
    expect(widget).to_have_attribute("data-documents", "3,5")
    assert grid_attributes(widget) == grid(settings_of(widget, T=8, documents=(3, 5)))
    # the worked example (T = 3) with documents 0 | 1 2: its rows read k0, k1, and k1 k2
    widget.locator('input[data-control="boundary"][data-pos="3"]').uncheck()
    widget.locator('input[data-control="boundary"][data-pos="1"]').check()
    expect(widget).to_have_attribute("data-documents", "1,7")
    s = settings_of(widget, T=8, documents=(1, 7))
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    widget.locator('[role="tab"][data-view="worked"]').click()
    weights = widget.locator('[data-matrix="weights"] td').all_inner_texts()
    assert weights == [fmt_weight(x) for row in worked_example(s)["weights"] for x in row]
    assert weights[:6] == ["1.00", "0.00", "0.00", "0.00", "1.00", "0.00"]
    widget.locator('[role="tab"][data-view="mask"]').click()
    widget.locator('input[data-control="boundary"][data-pos="1"]').uncheck()
    expect(widget).to_have_attribute("data-documents", "")

    # one sink and a window of three keys: key 0 stays readable for every later query
    set_number(widget, "window", 3, "data-window")
    set_number(widget, "sinks", 1, "data-sinks")
    s = settings_of(widget, T=8, window=3, sinks=1)
    assert grid_attributes(widget) == grid(s)
    assert grid_names(widget) == reference_names(s, "es")
    assert cells_where(widget, '[data-reason="sink"]') == {(r, 0) for r in range(3, 8)}
    assert cells_where(widget, '[data-reason="window"]') == {(r, j) for r in range(4, 8) for j in range(1, r - 2)}
    widget.locator('button[data-query="7"]').click()
    assert cells_where(widget, '[data-mark="sink"]') == {(7, 0)}
    assert cells_where(widget, '[data-mark="read"]') == {(7, 5), (7, 6), (7, 7)}
    expect(widget.locator(".lbx-status")).to_contain_text(tr("explorer.status_sink", "es").split("{")[0].strip())
    widget.screenshot(path=str(artifacts / "explorer_8_sinks.png"))
    # no sink: the plain window again
    set_number(widget, "sinks", 0, "data-sinks")
    assert cells_where(widget, '[data-reason="sink"]') == set()
    assert grid_attributes(widget) == grid(settings_of(widget, T=8, window=3))
    assert not page_log.errors, page_log.errors


def test_explorer_keyboard(page, page_log, explorer_url, artifacts):
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    first = widget.locator('button[data-query="0"]')
    first.focus()
    page.keyboard.press("Enter")
    expect(widget).to_have_attribute("data-selected-row", "0")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(widget).to_have_attribute("data-selected-row", "2")
    focused = widget.locator('button[data-query="2"]')
    expect(focused).to_be_focused()
    outline = focused.evaluate("b => [getComputedStyle(b).outlineStyle, parseFloat(getComputedStyle(b).outlineWidth)]")
    assert outline[0] != "none" and outline[1] >= 2, outline
    # the causal box, from the keyboard
    widget.locator('input[data-control="causal"]').focus()
    page.keyboard.press("Space")
    expect(widget).to_have_attribute("data-causal", "false")
    # the tabs: arrow keys switch the view
    widget.locator('[role="tab"][data-view="mask"]').focus()
    page.keyboard.press("ArrowRight")
    expect(widget).to_have_attribute("data-view", "worked")
    expect(widget.locator('[role="tab"][data-view="worked"]')).to_be_focused()
    widget.screenshot(path=str(artifacts / "explorer_6_keyboard.png"))
    assert not page_log.errors, page_log.errors


def test_explorer_without_javascript(browser, explorer_url):
    """Where scripts do not run (an untrusted notebook), the starting state is still readable."""
    from playwright.sync_api import expect

    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        page.goto(explorer_url)
        widget = page.locator(".lbx").first
        expect(widget).to_have_attribute("data-ready", "false")
        expect(widget.locator(".lbx-static table.lbx-grid")).to_be_visible()
        expect(widget.locator(".lbx-static")).to_contain_text(tr("explorer.static_note", "es"))
        assert widget.locator(".lbx-static td[data-allowed='true']").count() > 0
    finally:
        context.close()


# ---------------------------------------------------------------- the explorer for a screen reader (issue 18)
def focused(page) -> list:
    """Where the focus is in the explorer's grid: [row, column] (column -1: the query button), or None."""
    return page.evaluate("""() => {
        const a = document.activeElement;
        if (!a || !a.closest('.lbx-grid')) return null;
        const td = a.closest('td[data-col]');
        return [Number(a.closest('tr[data-row]').dataset.row), td ? Number(td.dataset.col) : -1];
    }""")


def test_explorer_grid_roles_names_and_legend(page, page_log, explorer_url):
    """A WAI-ARIA grid with one Tab stop; each cell's computed name says query, key, state and reason."""
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    app = widget.locator(".lbx-app")
    grid_ = app.get_by_role("grid")
    expect(grid_).to_have_count(1)
    expect(grid_).to_have_accessible_name(tr("explorer.caption", "es"))
    expect(grid_).to_have_accessible_description(tr("explorer.grid_help", "es"))
    expect(grid_.get_by_role("row")).to_have_count(7)
    expect(grid_.get_by_role("columnheader")).to_have_count(7)
    expect(grid_.get_by_role("rowheader")).to_have_count(6)
    expect(grid_.get_by_role("gridcell")).to_have_count(36)
    expect(grid_.locator('[tabindex="0"]')).to_have_count(1)
    s = settings_of(widget)
    names = reference_names(s, "es")
    assert grid_names(widget) == names
    # the names as Chromium computes them for assistive technology: the future target, a readable key
    words = tr("explorer.sentence1", "es").split(" ")
    target = grid_.locator('td[data-row="3"][data-col="4"]')
    expect(target).to_have_accessible_name(names[3][4])
    assert f"q3 «{words[3]}»" in names[3][4] and f"k4 «{words[4]}»" in names[3][4]
    assert tr("explorer.cell_future", "es") in names[3][4]
    expect(grid_.locator('td[data-row="3"][data-col="1"]')).to_have_accessible_name(names[3][1])
    assert tr("explorer.cell_read", "es") in names[3][1]
    # a row is named by its query, not by the sentences of its cells
    expect(grid_.get_by_role("row").nth(4)).to_have_accessible_name(f"q3 {words[3]}")
    # the legend: each symbol next to its meaning, none hidden from the accessibility tree
    legend = app.locator(".lbx-legend").aria_snapshot().replace('"', "")
    for key, symbol in (("read", "✓"), ("future", "·"), ("pad", "∅"), ("window", "⋯"), ("align", "◸"),
                        ("document", "≠"), ("sink", "◆"), ("leak", "!"), ("target", "◎")):
        assert f"listitem: {symbol} {tr('explorer.legend_' + key, 'es')}" in legend, legend
    assert not page_log.errors, page_log.errors


def test_explorer_grid_keyboard(page, page_log, explorer_url, artifacts):
    """One Tab stop, arrows move and select, Home/End along a row, Ctrl+Home/End to the corners."""
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    # from just before the widget, one Tab reaches the jump button, and Enter the grid
    widget.evaluate("root => { root.tabIndex = -1; root.focus(); }")
    page.keyboard.press("Tab")
    skip = widget.locator("button.lbx-skip")
    expect(skip).to_be_focused()
    expect(skip).to_have_accessible_name(tr("explorer.skip", "es"))
    assert skip.bounding_box()["width"] > 20  # it shows itself when focused
    page.keyboard.press("Enter")
    assert focused(page) == [0, -1]
    moves = [("ArrowRight", [0, 0]), ("ArrowRight", [0, 1]), ("ArrowDown", [1, 1]), ("End", [1, 5]),
             ("ArrowRight", [1, 5]), ("Home", [1, -1]), ("ArrowLeft", [1, -1]), ("Control+End", [5, 5]),
             ("ArrowDown", [5, 5]), ("Control+Home", [0, -1]), ("ArrowUp", [0, -1]), ("ArrowDown", [1, -1]),
             ("ArrowDown", [2, -1]), ("ArrowRight", [2, 0]), ("ArrowRight", [2, 1]), ("ArrowRight", [2, 2]),
             ("ArrowRight", [2, 3])]
    for key, where in moves:
        page.keyboard.press(key)
        assert focused(page) == where, (key, where, focused(page))
        # the arrows select the row they land on; the grid keeps one Tab stop
        expect(widget).to_have_attribute("data-selected-row", str(where[0]))
        expect(widget.locator('.lbx-app .lbx-grid [tabindex="0"]')).to_have_count(1)
    s = settings_of(widget)
    name = reference_names(s, "es")[2][3]
    expect(page.locator(":focus")).to_have_accessible_name(name)
    # the focused cell's words are shown for sighted keyboard users too
    expect(widget.locator("[data-cellinfo]")).to_have_text(name)
    expect(widget.locator(".lbx-status")).to_contain_text(f"«{tr('explorer.sentence1', 'es').split(' ')[3]}»")
    widget.screenshot(path=str(artifacts / "explorer_grid_es.png"))
    # one Tab leaves the grid, Shift+Tab comes back to the same cell
    page.keyboard.press("Tab")
    assert focused(page) is None
    page.keyboard.press("Shift+Tab")
    assert focused(page) == [2, 3]
    # Enter on a cell selects its row (here after a click chose another row)
    widget.locator('button[data-query="0"]').click()
    widget.locator('.lbx-app td[data-row="4"][data-col="2"]').focus()
    page.keyboard.press("Enter")
    expect(widget).to_have_attribute("data-selected-row", "4")
    # without the jump button the grid is behind every control and the tab list
    widget.evaluate("root => root.focus()")
    presses = 0
    while focused(page) is None and presses < 40:
        page.keyboard.press("Tab")
        presses += 1
    print(f"from the widget's start to the grid: Tab + Enter with the jump button, {presses} Tab presses without")
    assert presses > 2
    assert not page_log.errors, page_log.errors


def test_explorer_status_announces_a_change_with_no_row_selected(page, page_log, explorer_url):
    from playwright.sync_api import expect

    page.goto(explorer_url)
    widget = page.locator('.lbx[data-ready="true"]').first
    expect(widget).to_be_visible()
    status = widget.locator('[role="status"]')
    expect(status).to_have_text(tr("explorer.pick", "es"))
    expect(widget).to_have_attribute("data-selected-row", "")
    text = texts_with_prefix("explorer.", "es")
    # the mask off: the status counts the leaks though no row is selected
    widget.locator('input[data-control="causal"]').uncheck()
    s = settings_of(widget, causal=False)
    expect(status).to_have_text(grid_summary(s, text))
    assert tr("explorer.status_grid_leak", "es").split("{")[0] in grid_summary(s, text)
    # a window, then padding on the sequence shown: each change is said
    widget.locator('input[data-control="causal"]').check()
    set_number(widget, "window", 2, "data-window")
    expect(status).to_have_text(grid_summary(settings_of(widget, window=2), text))
    set_number(widget, "padding", 1, "data-pad", seq=0)
    s = settings_of(widget, window=2, padding=(1, settings_of(widget).padding[1]))
    expect(status).to_have_text(grid_summary(s, text))
    assert "1 de padding" not in grid_summary(s, text) and "6 de padding" in grid_summary(s, text)
    # with a row selected, the status speaks of that row; a new offset drops the row and speaks of the grid
    widget.locator('button[data-query="2"]').click()
    expect(status).to_contain_text(tr("explorer.status_row", "es").split("{")[0])
    set_number(widget, "offset", 2, "data-offset")
    expect(widget).to_have_attribute("data-selected-row", "")
    expect(status).to_have_text(grid_summary(settings_of(widget, window=2, padding=s.padding, offset=2), text))
    assert not page_log.errors, page_log.errors


def test_explorer_typing_a_two_digit_length_keeps_the_paddings(page, page_log, explorer_url):
    """Audit S6: typing T = 16 passes through T = 1; the paddings asked for must survive it."""
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    set_number(widget, "padding", 2, "data-pad", seq=0)
    set_number(widget, "padding", 3, seq=1)
    field = widget.locator('input[data-control="T"]')
    field.fill("")
    field.press_sequentially("16")
    field.press("Tab")
    expect(widget).to_have_attribute("data-T", "16")
    expect(widget).to_have_attribute("data-pad", "2")
    expect(widget.locator('input[data-control="padding"][data-seq="0"]')).to_have_value("2")
    expect(widget.locator('input[data-control="padding"][data-seq="1"]')).to_have_value("3")
    assert grid_attributes(widget) == grid(settings_of(widget, T=16, padding=(2, 3)))
    # a padding that no longer fits is clamped while T is short, and comes back with T
    set_number(widget, "T", 3, "data-T")
    expect(widget).to_have_attribute("data-pad", "2")
    expect(widget.locator('input[data-control="padding"][data-seq="1"]')).to_have_value("2")
    set_number(widget, "T", 10, "data-T")
    expect(widget.locator('input[data-control="padding"][data-seq="1"]')).to_have_value("3")
    assert not page_log.errors, page_log.errors


MEASURE_CONTRAST = """root => {
    const rgbList = value => (value.match(/rgba?\\([^)]*\\)/g) || []);
    const backgrounds = el => {
        for (let node = el; node; node = node.parentElement) {
            const cs = getComputedStyle(node);
            if (cs.backgroundImage && cs.backgroundImage !== 'none') return rgbList(cs.backgroundImage);
            const bg = cs.backgroundColor;
            if (bg && !/rgba\\(.*,\\s*0\\)$/.test(bg) && bg !== 'transparent') return [bg];
        }
        return ['rgb(255, 255, 255)'];
    };
    const visible = el => {
        const box = el.getBoundingClientRect();
        return box.width > 2 && box.height > 2 && getComputedStyle(el).visibility !== 'hidden' && !el.closest('[hidden]');
    };
    const out = [];
    const add = (el, text, cs) => out.push({text: text.trim().slice(0, 30), color: cs.color, backgrounds: backgrounds(el),
        size: parseFloat(cs.fontSize), bold: parseInt(cs.fontWeight, 10) >= 700, where: el.tagName + (el.className ? '.' + el.className : '')
          + (el.dataset && el.dataset.reason !== undefined ? '[' + el.dataset.reason + '|' + el.dataset.leak + '|' + (el.dataset.mark || '') + ']' : '')});
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!node.textContent.trim() || ['STYLE', 'SCRIPT', 'OPTION'].includes(el.tagName) || !visible(el)) continue;
        add(el, node.textContent, getComputedStyle(el));
    }
    for (const el of root.querySelectorAll('input[type=number], select')) if (visible(el)) add(el, el.value, getComputedStyle(el));
    for (const el of root.querySelectorAll('td')) {
        const after = getComputedStyle(el, '::after');
        if (visible(el) && after.content && after.content !== 'none' && after.content !== 'normal') {
            out.push({text: after.content, color: after.color, backgrounds: backgrounds(el), size: parseFloat(after.fontSize),
                      bold: parseInt(after.fontWeight, 10) >= 700, where: 'td::after[' + el.dataset.reason + '|' + el.dataset.leak + '|' + (el.dataset.mark || '') + ']'});
        }
    }
    return out;
}"""


def contrast_problems(widget) -> tuple[list[str], float, int]:
    """Every visible text of the explorer (cells, symbols after numbers, labels, fields) below AA, the lowest ratio."""
    problems, lowest, measured = [], 99.0, 0
    for item in widget.evaluate(MEASURE_CONTRAST):
        for background in item["backgrounds"]:
            ratio = contrast(item["color"], background)
            measured += 1
            lowest = min(lowest, ratio)
            if ratio < (LARGE_TEXT if is_large(item["size"], item["bold"]) else TEXT):
                problems.append(f"{item['where']} {item['text']!r}: {item['color']} on {background} = {ratio:.2f}:1")
    return sorted(set(problems)), lowest, measured


def test_explorer_text_contrast_is_aa(page, page_log, explorer_url):
    """Computed colours of every text in the states that use every colour, at 4.5:1 (3:1 for large text)."""
    from playwright.sync_api import expect

    widget = open_explorer(page, explorer_url)
    problems, lowest, measured = [], 99.0, 0

    def measure():
        nonlocal lowest, measured
        found, low, count = contrast_problems(widget)
        problems.extend(found)
        lowest, measured = min(lowest, low), measured + count

    widget.locator('button[data-query="3"]').click()
    measure()  # readable, blocked, selected row, its target ◎
    widget.locator('input[data-control="causal"]').uncheck()
    measure()  # leaks, the striped target leak, the selected row's leaks
    widget.locator('[role="tab"][data-view="worked"]').click()
    measure()  # weights on future keys
    widget.locator('[role="tab"][data-view="mask"]').click()
    widget.locator('input[data-control="causal"]').check()
    widget.locator('[role="tab"][data-view="worked"]').click()
    measure()  # blocked "0.00 ·"
    widget.locator('[role="tab"][data-view="mask"]').click()
    widget.locator('select[data-control="sequence"]').select_option("1")
    set_number(widget, "padding", 2, "data-pad", seq=1)
    widget.locator('button[data-query="5"]').click()
    measure()  # <pad> labels, padding cells and rows
    widget.locator('select[data-control="sequence"]').select_option("0")
    set_number(widget, "T", 8, "data-T")
    widget.locator('input[data-control="boundary"][data-pos="4"]').check()
    set_number(widget, "window", 2, "data-window")
    set_number(widget, "sinks", 1, "data-sinks")
    widget.locator('button[data-query="3"]').click()
    measure()  # other document, window, sink cells, a selected sink
    set_number(widget, "offset", 3, "data-offset")
    widget.locator('select[data-control="align"]').select_option("top-left")
    widget.locator('button[data-query="5"]').click()  # row 2: queries begin at the offset
    measure()  # hidden by the alignment
    widget.locator("button.lbx-skip").focus()
    measure()  # the jump button, shown
    assert measured > 400
    print(f"explorer contrast: {measured} text/background pairs measured, lowest {lowest:.2f}:1")
    assert problems == [], "\n".join(problems)

    # the measurement finds the colours the explorer had before issue 18
    widget.evaluate("""root => { const style = document.createElement('style'); style.textContent =
        '.lbx.lbx .lbx-grid td { color: #777 } .lbx.lbx .lbx-grid td[data-leak="target"] { color: #c62828; ' +
        'background: repeating-linear-gradient(45deg, #ffcdd2 0 4px, #ef9a9a 4px 8px) }'; root.appendChild(style); }""")
    planted, _, _ = contrast_problems(widget)
    assert any("rgb(119, 119, 119) on rgb(241, 241, 241) = 3.96:1" in p for p in planted), planted
    widget.locator('input[data-control="causal"]').uncheck()
    planted, _, _ = contrast_problems(widget)
    assert any("rgb(198, 40, 40) on rgb(239, 154, 154) = 2.61:1" in p for p in planted), planted
    assert not page_log.errors, page_log.errors


@pytest.mark.parametrize("lang", ["en", "de", "hi-Latn"])
def test_explorer_grid_speaks_the_page_language(page, page_log, site, artifacts, lang):
    """Chapter 02's explorer in another language: the focused cell's name and the status in that language."""
    from playwright.sync_api import expect

    out, _ = site
    chapter = out / "course" / lang / "02_causal_mask.html"
    if 'class="lbx"' not in chapter.read_text(encoding="utf-8"):
        pytest.skip(f"chapter 02 in {lang} shows no explorer")
    page.goto(chapter.as_uri())
    widget = page.locator('.lbx[data-ready="true"]').first
    expect(widget).to_have_attribute("lang", lang)
    widget.locator("button.lbx-skip").focus()
    page.keyboard.press("Enter")
    for key in ["ArrowDown"] * 2 + ["ArrowRight"] * 4:
        page.keyboard.press(key)
    assert focused(page) == [2, 3]
    s = Settings(T=6)  # chapter 02's explorer: explorer(T=6)
    name = reference_names(s, lang)[2][3]
    words = tr("explorer.sentence1", lang).split(" ")
    assert words[2] in name and words[3] in name and tr("explorer.cell_future", lang) in name
    expect(page.locator(":focus")).to_have_accessible_name(name)
    expect(page.locator(":focus")).to_have_role("gridcell")
    expect(widget.locator("[data-cellinfo]")).to_have_text(name)
    expect(widget.locator('[role="status"]')).to_contain_text(tr("explorer.status_row", lang).split("{")[0])
    widget.screenshot(path=str(artifacts / f"explorer_grid_{lang}.png"))
    assert not page_log.errors, page_log.errors
