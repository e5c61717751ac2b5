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
from pathlib import Path

import nbformat
import pytest

from autograder.i18n import LANGS
from browser_support import ROOT, TIMEOUT_MS
import edition_facts as facts
from labbook import html_edition, references
from labbook.explorer import Settings, cell_state, explorer, fmt_weight, grid, worked_example
from labbook.notebooks import BEGIN, END, STUB
from labbook.texts import tr

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
    widget.screenshot(path=str(artifacts / "explorer_1_row3.png"))

    # the mask off: every readable future key is a leak; for row 3, key 4 is its own target
    widget.locator('input[data-control="causal"]').uncheck()
    expect(widget).to_have_attribute("data-causal", "false")
    s = settings_of(widget, causal=False)
    assert cells_where(widget, '[data-leak="target"]') == {(r, r + 1) for r in range(5)}
    assert cells_where(widget, '[data-leak="future"]') == {(r, j) for r in range(6) for j in range(r + 2, 6)}
    assert grid_attributes(widget) == grid(s)
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
