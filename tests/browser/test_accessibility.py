"""WCAG 2.1 A and AA on every page of the HTML edition, in every language: axe-core (axe_support) in Chromium,
and a count of the keyboard's tab stops.

The edition is the run's one build (conftest's html_site, shared with test_html_edition). axe runs on every
page with the tags wcag2a, wcag2aa, wcag21a, wcag21aa once the page's explorers are live (data-ready), and
any violation fails the test, listed by rule, page and node. The class report and the students' feedback
pages are audited in test_term_report, where they are made. A missing axe-core fails (axe_support says why).
"""
from __future__ import annotations

import time

import pytest

from autograder.i18n import LANGS
from labbook.texts import tr
from axe_support import AXE_TAGS, audit_pages, axe_problem, site_pages, totals_table
from browser_support import TIMEOUT_MS

# Violations knowingly left, as (rule, page): nodes, each with its reason. None: every page is at 0. An entry
# that no longer matches fails the test too.
ALLOWED: dict[tuple[str, str], int] = {}


@pytest.fixture(scope="module")
def audit_context(browser):
    problem = axe_problem()
    if problem:
        pytest.fail(problem)  # a broken set-up, not a reason to skip (axe_support)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    yield context
    context.close()


def test_axe_finds_no_violation_on_any_page_of_the_edition(html_site, audit_context, artifacts):
    out, stats = html_site
    pages = site_pages(out)
    assert {name for name, _ in pages} == {*stats["page_paths"], "index.html"}
    assert {name.split("/")[1] for name, _ in pages if "/" in name} == set(LANGS)
    started = time.perf_counter()
    audits = audit_pages(audit_context, pages)
    seconds = time.perf_counter() - started
    table = totals_table(audits)
    (artifacts / "axe_edition.md").write_text(table + "\n", encoding="utf-8")
    print(f"\naxe-core ({', '.join(AXE_TAGS)}) on {len(audits)} pages in {seconds:.1f} s")
    problems = []
    for audit in audits:
        if audit.error:
            problems += audit.lines()
            continue
        for violation, line in zip(audit.violations, audit.lines()):
            allowed = ALLOWED.get((violation["rule"], audit.name), 0)
            if len(violation["targets"]) != allowed or not all(".lbx-tok" in t for t in violation["targets"]):
                problems.append(line)
    found = {(violation["rule"], audit.name) for audit in audits for violation in audit.violations}
    problems += [f"ALLOWED lists {rule} on {name}, which no longer occurs: remove the entry"
                 for rule, name in ALLOWED if (rule, name) not in found]
    assert problems == [], f"{len(problems)} axe violation(s) (totals per page: {artifacts / 'axe_edition.md'}):\n" \
        + "\n".join(problems)


def test_axe_reports_planted_violations(audit_context, tmp_path):
    """The audit can fail: a page with faint text, a link told apart by colour alone, an image without
    alternative text and a page without a language is reported rule by rule."""
    page = tmp_path / "planted.html"
    page.write_text(
        "<!DOCTYPE html><html><head><title>planted</title></head><body><main>"
        '<p style="color:#212121">The mask is added to the scores before the softmax; <a href="#x" '
        'style="color:#0d47a1;text-decoration:none">chapter 04 §3</a> shows why multiplying the weights after it '
        "would leave rows that no longer sum to one.</p>"
        '<p style="color:#b0b0b0;background:#fff">In [3]:</p>'
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">'
        '<div class="lbx" data-ready="true"></div>'
        "</main></body></html>", encoding="utf-8")
    (audit,) = audit_pages(audit_context, [("planted.html", page.as_uri())])
    assert audit.error is None
    assert set(audit.by_rule()) == {"color-contrast", "link-in-text-block", "image-alt", "html-has-lang"}
    assert any("color-contrast" in line and "planted.html" in line for line in audit.lines())


def test_no_tab_stop_on_what_is_no_control(html_site, browser):
    """Tab reaches only links, buttons, form fields and the explorer's own stops (not nbconvert's cell
    wrappers and outputs), and the first stop is the skip link to the chapter."""
    out, _ = html_site
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto((out / "course" / "en" / "02_causal_mask.html").as_uri())
        page.wait_for_function("() => [...document.querySelectorAll('.lbx')].every(e => e.dataset.ready === 'true')")
        stops = page.evaluate(NON_CONTROL_TAB_STOPS)
        assert stops == [], f"{len(stops)} tab stop(s) on no control: {stops[:10]}"
        page.keyboard.press("Tab")
        first = page.evaluate("() => [document.activeElement.className, document.activeElement.getAttribute('href')]")
        assert first == ["book-skip", "#main"], first
        page.keyboard.press("Enter")
        assert page.evaluate("() => location.hash") == "#main"
        # a narrow window: a table wider than it scrolls in its own box, which becomes a tab stop (WCAG 2.1.1)
        page.set_viewport_size({"width": 320, "height": 700})
        page.wait_for_function("() => document.querySelector('[data-scroll-focus]') !== null")
        assert page.evaluate(NON_CONTROL_TAB_STOPS) == []
    finally:
        context.close()


# Elements the keyboard stops at (tabindex >= 0, or focusable by nature) that are not a control: neither a
# link, a form field, a button, nor an element with an interactive ARIA role, nor a box that scrolls.
NON_CONTROL_TAB_STOPS = """() => {
  const natural = 'a[href], button, input, select, textarea, summary, [contenteditable="true"]';
  const roles = ['button', 'tab', 'link', 'checkbox', 'radio', 'switch', 'gridcell', 'row', 'option',
                 'menuitem', 'slider', 'spinbutton', 'textbox', 'combobox', 'grid', 'listbox', 'treeitem'];
  const scrolls = e => { const s = getComputedStyle(e);
    return (/auto|scroll/.test(s.overflowX) && e.scrollWidth > e.clientWidth + 1)
      || (/auto|scroll/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1); };
  return [...document.querySelectorAll('*')].filter(e => e.tabIndex >= 0 && !e.disabled
      && (e.matches(natural) || e.hasAttribute('tabindex')) && e.offsetParent !== null)
    .filter(e => !e.matches(natural) && !roles.includes(e.getAttribute('role')) && !scrolls(e))
    .map(e => e.tagName.toLowerCase() + '.' + String(e.className).split(' ')[0]);
}"""


def test_the_index_marks_each_language_s_words(html_site):
    """The index is English; its "pick your language" sentence says it in every language, each part marked
    with its own lang (WCAG 3.1.2), in the catalogues' words."""
    from bs4 import BeautifulSoup

    out, _ = html_site
    soup = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert soup.html["lang"] == "en"
    parts = {span["lang"]: span.get_text() for span in soup.select("p.book-pick span[lang]")}
    assert parts == {lang: tr("book.pick_language", lang) for lang in LANGS if lang != "en"}
    assert soup.select_one("p.book-pick").get_text().startswith(tr("book.pick_language", "en"))


PLACEHOLDER_ALT = "No description has been provided for this image"


def unlabelled_pictures(page_html: str) -> list[str]:
    """Every <img> without a real alternative text and every <svg> that is neither a labelled image nor hidden."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Pictures(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "img" and (len((a.get("alt") or "").strip()) < 20 or a.get("alt") == PLACEHOLDER_ALT):
                found.append(f"<img alt={a.get('alt')!r}>")
            if tag == "svg" and a.get("aria-hidden") != "true" and not (
                    a.get("role") == "img" and (a.get("aria-label") or a.get("aria-labelledby"))):
                found.append(f"<svg role={a.get('role')!r}>")

    Pictures().feed(page_html)
    return found


def test_no_page_has_a_picture_without_a_text_alternative(html_site):
    out, _ = html_site
    pages = sorted(out.rglob("*.html"))
    images = sum(page.read_text(encoding="utf-8").count("<img") for page in pages)
    assert images >= 100  # every language's figures are there to be checked
    problems = {str(page.relative_to(out)): found for page in pages
                if (found := unlabelled_pictures(page.read_text(encoding="utf-8")))}
    assert problems == {}


def test_the_picture_check_finds_a_placeholder_a_short_alt_and_a_bare_svg():
    page = (f'<img src="a.png" alt="{PLACEHOLDER_ALT}"><img src="b.png" alt="figure">'
            '<svg viewBox="0 0 1 1"></svg><svg role="img" aria-labelledby="t"></svg><svg aria-hidden="true"></svg>'
            '<img src="c.png" alt="Weights for T = 3: row 1 reads keys 0-1 with 0.67, 0.33">')
    assert unlabelled_pictures(page) == [f"<img alt={PLACEHOLDER_ALT!r}>", "<img alt='figure'>", "<svg role=None>"]
