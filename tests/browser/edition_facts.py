"""What the tests of the HTML edition check, read from each page of a built edition once.

Parsing a page is what costs (the edition has ~77 pages of up to 300 kB), so `crawl` parses each page
one time and keeps every fact a test asserts on: the URLs the page would load, its links, its language
switcher, its formulas and visible text, its chapter references. The `*_problems` functions turn those
facts into a list of what is wrong (empty when the edition is right); the tests assert that list is
empty, and feed them one page with a planted defect to show they can fail.

Paths are the pages' paths inside the site ("course/es/02_causal_mask.html"); a link is resolved
against the set of files the site holds, as the browser would resolve it against the folder.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from bs4 import BeautifulSoup

from autograder.i18n import LANGS
from labbook import references

# The tags and attributes by which a page makes the browser fetch something.
EMBEDS = (("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
          ("source", "src"), ("audio", "src"), ("video", "src"), ("object", "data"))
OTHER_HOST = re.compile(r"^(https?:)?//")
CSS_FETCH = re.compile(r"url\(\s*['\"]?(https?:)?//|@import")
NOT_A_PAGE_LINK = re.compile(r"^[a-z]+:|^#|^//")
RAW_TEX = re.compile(r"\\(?:frac|sum|begin|end|text|sqrt|mathbf|mathrm|left|right|cdot|top|infty|leq?|geq?|quad)\b"
                     r"|\[2ex\]|\$[^$\s][^$]*\$")
DATA_URI = re.compile(r"(data:[\w/+.-]+;base64,)[A-Za-z0-9+/=\s]{64,}")
# Code as Pygments highlights it: a <pre> of <span class=..> around escaped text, two thirds of a page's tags.
HIGHLIGHTED = re.compile(r'(<div class="highlight[^"]*">\s*<pre>)(.*?)(</pre>)', re.S)
SPAN_TAG = re.compile(r"</?span\b[^>]*>")


def without_highlighting(html: str) -> str:
    """The page with the highlighting spans of its code taken out (their text stays): nothing a test checks is
    in them, and parsing them is most of the time a page takes."""
    return HIGHLIGHTED.sub(lambda match: match[1] + SPAN_TAG.sub("", match[2]) + match[3], html)


@dataclass
class PageFacts:
    name: str  # the page's path inside the site
    html_lang: str | None  # <html lang>
    embeds: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attribute, URL) it would load
    styles: list[str] = field(default_factory=list)  # text of its <style> elements
    links: list[str] = field(default_factory=list)  # href of every <a href>
    switcher: list[tuple[str | None, str]] = field(default_factory=list)  # (data-lang, href) in the nav bar
    formulas: int = 0  # "<math " in the page's source
    text: str = ""  # all its text
    visible: str = ""  # its text without script, style, pre and code (code may hold TeX on purpose)
    book_refs: list[tuple[str, str]] = field(default_factory=list)  # (href, text) of each a.book-ref
    unlinked_refs: list[str] = field(default_factory=list)  # chapter references in the prose not in a link


@dataclass
class Crawl:
    pages: dict[str, PageFacts]  # every *.html of the site
    files: set[str]  # every file of the site


def read_page(name: str, html: str) -> PageFacts:
    """The facts of one page, from one parse (data: URIs of figures shortened and code highlighting taken out
    first: they make parsing slow)."""
    soup = BeautifulSoup(without_highlighting(DATA_URI.sub(r"\1AAAA", html)), "html.parser")
    facts = PageFacts(name, soup.html.get("lang") if soup.html else None, formulas=html.count("<math "))
    embedded_by = dict(EMBEDS)
    for element in soup.find_all([*embedded_by, "style", "a"]):  # one walk over the tree for all of them
        if element.name in embedded_by:
            attr = embedded_by[element.name]
            facts.embeds.append((element.name, attr, (element.get(attr) or "").strip()))
        if element.name == "style":
            facts.styles.append(element.get_text())
        elif element.name == "a":
            if element.has_attr("href"):
                facts.links.append(element["href"])
            if "book-ref" in element.get("class", []):
                facts.book_refs.append((element.get("href", ""), element.get_text()))
    facts.switcher = [(a.get("data-lang"), a.get("href", ""))
                      for a in soup.select('nav.book-nav ul[data-nav="languages"] a')]
    # the prose: paragraphs, list items and table cells (the glossary is a table) of Markdown cells
    for element in soup.select(", ".join(f".jp-RenderedMarkdown {tag}" for tag in ("p", "li", "td", "th"))):
        for node in element.find_all(string=references.CHAPTER_REFERENCE):
            if not node.find_parent(["a", "code", "math"]):
                facts.unlinked_refs.append(str(node)[:80])
    facts.text = soup.get_text()
    for element in soup(["script", "style", "pre", "code"]):  # last: this changes the tree
        element.decompose()
    facts.visible = soup.get_text(" ")
    return facts


def crawl(site: Path) -> Crawl:
    files = {path.relative_to(site).as_posix() for path in site.rglob("*") if path.is_file()}
    pages = {name: read_page(name, (site / name).read_text(encoding="utf-8"))
             for name in sorted(files) if name.endswith(".html")}
    return Crawl(pages, files)


def resolve(name: str, href: str) -> str:
    """The site path a relative href of page `name` points to (its #fragment dropped)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(name), href.split("#")[0]))


# ---------------------------------------------------------------- what is wrong, per check
def other_host_problems(crawl: Crawl) -> list[str]:
    """Anything a page would load from another host: an embedded URL or a CSS fetch in a <style>."""
    problems = []
    for name, page in crawl.pages.items():
        problems += [f"{name}: <{tag} {attr}={url}>" for tag, attr, url in page.embeds if OTHER_HOST.match(url)]
        problems += [f"{name}: <style> fetches" for style in page.styles if CSS_FETCH.search(style)]
    return problems


def link_problems(crawl: Crawl) -> list[str]:
    """Links between pages that reach no file of the site, or reach a notebook instead of its page."""
    problems = []
    for name, page in crawl.pages.items():
        for href in page.links:
            if NOT_A_PAGE_LINK.match(href):
                continue
            if resolve(name, href) not in crawl.files:
                problems.append(f"{name} -> {href}: no such file")
            if href.split("#")[0].endswith(".ipynb"):
                problems.append(f"{name} -> {href}: a notebook")
    return problems


def switcher_problems(crawl: Crawl) -> list[str]:
    """Every page but the index: its <html lang> is its folder's language, and its switcher lists exactly the
    languages that have this page (its own among them), each entry linking to that language's page."""
    problems = []
    for name, page in crawl.pages.items():
        if posixpath.basename(name) == "index.html":
            continue
        folder, base = posixpath.split(name)
        lang, part = posixpath.basename(folder), posixpath.dirname(folder)
        langs = {entry_lang for entry_lang, _ in page.switcher}
        if lang not in langs:
            problems.append(f"{name}: its own language {lang} is not in the switcher")
        for entry_lang, href in page.switcher:
            if entry_lang is None:
                problems.append(f"{name}: a switcher entry without data-lang ({href})")
            elif resolve(name, href) != posixpath.join(part, entry_lang, base):
                problems.append(f"{name}: the {entry_lang} entry links to {href}")
        others = {other for other in LANGS if posixpath.join(part, other, base) in crawl.files}
        if langs != others:
            problems.append(f"{name}: the switcher lists {sorted(langs, key=str)}, the site has {sorted(others)}")
        if page.html_lang != lang:
            problems.append(f"{name}: <html lang={page.html_lang}> in the {lang} folder")
    return problems


def raw_tex_problems(crawl: Crawl, names: list[str]) -> list[str]:
    """TeX left as text where a reader sees it (formulas must have become MathML)."""
    problems = []
    for name in names:
        leftover = RAW_TEX.findall(crawl.pages[name].visible)
        if leftover:
            problems.append(f"{name}: raw TeX in the visible text: {leftover[:5]}")
    return problems


def chapter_reference_problems(crawl: Crawl, names: list[str]) -> list[str]:
    """A chapter reference in the prose that is no link, a book-ref link to no page, or a book-ref whose
    text is no chapter reference."""
    problems = []
    for name in names:
        page = crawl.pages[name]
        problems += [f"{name}: not a link: {text!r}" for text in page.unlinked_refs]
        for href, text in page.book_refs:
            if resolve(name, href) not in crawl.files:
                problems.append(f"{name}: book-ref {href} reaches no page")
            if not references.CHAPTER_REFERENCE.search(text):
                problems.append(f"{name}: book-ref {href} says {text!r}, no chapter reference")
    return problems


def chapter_links_per_lang(crawl: Crawl, names: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(LANGS, 0)
    for name in names:
        counts[name.split("/")[1]] += len(crawl.pages[name].book_refs)
    return counts
