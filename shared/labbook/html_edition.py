"""The offline HTML edition: `python -m labbook.html_edition [--out build/html]`.

Writes a static site that needs no kernel and no network:

    index.html                      the four languages, every chapter and lab
    course/<lang>/<name>.html       each chapter, with its outputs and figures
    course/<lang>/glossary.html     the glossary
    labs/<lang>/<name>.html         each lab, as students get it (no solutions)
    static/book.css                 one stylesheet shared by every page

The tree mirrors the repository, so the notebooks' relative links keep working
once `.ipynb` and `.md` become `.html`; a link to a solution is sent to the lab.
Every page has a language switcher (the same page in the other languages) and
a link to the index. Pages are made with nbconvert's `lab` template minus its
CDN scripts (require.js, MathJax, Mermaid, widgets): nothing refers to an
outside host. Math is typeset at build time: each formula becomes MathML
(latex2mathml), which the browser renders natively. Figures
are embedded as data URIs; the mask explorer carries its own script and CSS.
"""
from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat
from bs4 import BeautifulSoup
from jinja2 import DictLoader
from latex2mathml.converter import convert
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

from autograder import book_links, i18n
from autograder.i18n import LANGS
from labbook.notebooks import ROOT, headings
from labbook.texts import tr

# The interface's texts, looked up inside f-strings below (where `make catalogs` cannot read them).
i18n.N_("html.index", "html.language", "html.chapters", "html.labs", "html.glossary", "html.nav", "html.offline",
        "html.skip")

LANG_NAMES = i18n.LANGUAGE_NAMES
BOOK_TITLE = "Causal attention: a lab book"
CSS_PATH = "static/book.css"

PAGE_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block header -%}
<!DOCTYPE html>
<html lang="{{ resources.labbook.lang }}">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{{ resources.labbook.title | e }}</title>
<link rel="stylesheet" href="{{ resources.labbook.css }}">
</head>
{%- endblock header -%}
{%- block body_header -%}
<body class="jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light" data-page="{{ resources.labbook.page }}">
{{ resources.labbook.nav }}
<main id="main">
{%- endblock body_header -%}
{% block body_footer %}
</main>
<script>{{ resources.labbook.scroll_focus }}</script>
</body>
{% endblock body_footer %}
{% block footer %}
{{ super() }}
{% endblock footer %}
"""

# A box that scrolls (a wide table or formula on a narrow screen) must be reachable by keyboard (WCAG 2.1.1):
# such a box, and only such a box, becomes a tab stop, again whenever the window's width changes.
SCROLL_FOCUS = """(function () {
  var boxes = "main .jp-Cell-inputWrapper, main .jp-OutputArea-output, main .jp-RenderedMarkdown";
  function scrolls(box) {
    var style = getComputedStyle(box);
    return (/auto|scroll/.test(style.overflowX) && box.scrollWidth > box.clientWidth + 1)
      || (/auto|scroll/.test(style.overflowY) && box.scrollHeight > box.clientHeight + 1);
  }
  function update() {
    Array.prototype.forEach.call(document.querySelectorAll(boxes), function (box) {
      if (scrolls(box)) { box.setAttribute("tabindex", "0"); box.setAttribute("data-scroll-focus", "true"); }
      else if (box.hasAttribute("data-scroll-focus")) { box.removeAttribute("tabindex"); box.removeAttribute("data-scroll-focus"); }
    });
  }
  update();
  window.addEventListener("resize", update);
})();"""

BOOK_CSS = """
/* from nbconvert's lab template (its inline <style>, which pages here do not repeat) */
* { -webkit-print-color-adjust: exact; }
a.anchor-link { display: none; }
h1:hover > a.anchor-link, h2:hover > a.anchor-link, h3:hover > a.anchor-link { display: inline; margin-left: 4px; }
.jp-InputArea { overflow: hidden; }
.jp-InputArea-editor { overflow: hidden; }
.cm-editor.cm-s-jupyter .highlight pre { padding: var(--jp-code-padding) 4px; margin: 0;
  font-family: inherit; font-size: inherit; line-height: inherit; color: inherit; }
.jp-OutputArea-output pre { line-height: inherit; font-family: inherit; }
.jp-RenderedText pre { color: var(--jp-content-font-color1); font-size: var(--jp-code-font-size); }
.jp-Collapser { display: none; }
@page { margin: 0.5in; }
@media print { .jp-Cell-inputWrapper, .jp-Cell-outputWrapper { display: block; } .book-nav { display: none; } }
/* lab book: navigation, index and math of the HTML edition */
body.jp-Notebook { max-width: 1100px; margin: 0 auto; padding: 0 12px 40px; }
.book-nav { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; padding: 10px 4px;
  border-bottom: 1px solid #ccc; margin-bottom: 14px; font: 14px/1.4 system-ui, sans-serif; }
.book-nav ul { display: flex; gap: 8px; list-style: none; margin: 0; padding: 0; }
.book-nav a { color: #0b57d0; }
.book-nav a[aria-current="page"] { font-weight: 700; color: #1b1b1b; text-decoration: none; }
.book-nav .book-home { font-weight: 600; }
.book-nav .book-note { color: #555; font-size: 12px; flex-basis: 100%; }
.book-nav :focus-visible, .book-index :focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.book-index { font: 16px/1.5 system-ui, sans-serif; }
.book-index section { margin: 18px 0; }
.book-index main a { color: #0b57d0; text-decoration: underline; }
math { font-family: "STIX Two Math", "Cambria Math", "DejaVu Serif", serif; font-size: 1.05em; }
math[display="block"] { margin: 10px 0; }
/* links in prose are told apart by more than colour (WCAG 1.4.1): underlined, as the index's */
.jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited { text-decoration: underline; }
/* no cell of a static page is "active": its prompts are shown at full opacity, not faded to 2.2:1 */
:root { --jp-cell-prompt-not-active-opacity: 1; }
/* a skip link, shown only when focused */
.book-skip { position: absolute; left: -9999px; top: 0; }
.book-skip:focus { left: 8px; top: 8px; z-index: 10; padding: 6px 10px; background: #fff; color: #0b57d0;
  outline: 3px solid #0b57d0; font: 14px/1.4 system-ui, sans-serif; }
"""
# WCAG 1.4.3 AA for normal text; the margin keeps rounding in a checker from tipping a colour under it.
TEXT_CONTRAST = 4.5
CONTRAST_MARGIN = 0.1


# ---------------------------------------------------------------- math, typeset at build time
def render_math(tex: str, display: bool) -> str:
    """MathML for a TeX formula, written into the page: Chromium, Firefox and Safari typeset it natively,
    so nothing is fetched or run at reading time. The TeX stays as the formula's alternative text."""
    mathml = convert(tex.strip(), display="block" if display else "inline")
    return mathml.replace("<math ", f'<math alttext="{html.escape(tex.strip(), quote=True)}" ', 1)


class BookRenderer(IPythonRenderer):
    def block_math(self, body: str) -> str:
        return render_math(body, display=True)

    def inline_math(self, body: str) -> str:
        return render_math(body, display=False)

    def latex_environment(self, name: str, body: str) -> str:
        return render_math(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)


class BookExporter(HTMLExporter):
    """nbconvert's lab template, without CDN scripts, with the book's math and navigation."""

    chapter_sections: dict = {}  # set by build(): where each chapter reference points

    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = BookRenderer(
            escape=False, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        rendered = MarkdownWithMath(renderer=renderer).render(source)
        lang = Path(context.get("resources", {}).get("metadata", {}).get("path", "")).name
        return link_references(rendered, self.chapter_sections.get(lang, {}))


# ---------------------------------------------------------------- chapter references become links
def chapter_sections(pages: list["Page"], root: Path) -> dict[str, dict[str, tuple[str, dict[str, str]]]]:
    """{lang: {"03": ("course/es/03_worked_example.html", {"2": "2-·-Escalar-por-√d_k"})}} for every chapter."""
    found: dict[str, dict[str, tuple[str, dict[str, str]]]] = {}
    for page in pages:
        if page.kind != "chapter" or not re.match(r"\d\d_", page.name):
            continue
        notebook = nbformat.read(page.source, as_version=4)
        sections = book_links.section_anchors(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
        found.setdefault(page.lang, {})[page.name[:2]] = (page.out, sections)
    return found


def link_references(fragment: str, chapters: dict[str, tuple[str, dict[str, str]]]) -> str:
    """Every "chapter NN §K" (in the page's language's words) in the prose of `fragment` becomes a link
    to that chapter and section, as the grader's feedback links them (book_links); text in links, code
    and formulas stays as it is."""
    if not chapters or not book_links.CHAPTER_REFERENCE.search(fragment):
        return fragment

    def resolve(number: str, section: str | None) -> str | None:  # the site-relative URL of a chapter (section)
        if number not in chapters:
            return None
        page, sections = chapters[number]
        return f"../../{page}" + (f"#{quote(sections[section])}" if section in sections else "")

    soup = BeautifulSoup(fragment, "html.parser")
    for node in list(soup.find_all(string=book_links.CHAPTER_REFERENCE)):
        if node.find_parent(["a", "code", "pre", "math", "script", "style"]):
            continue
        linked = book_links.to_html(str(node), resolve)
        if 'class="book-ref"' in linked:
            node.replace_with(BeautifulSoup(linked, "html.parser"))
    return str(soup)


# contextfilter, as in nbconvert's own HTMLExporter.markdown2html
try:  # jinja2 >= 3
    from jinja2 import pass_context as _pass_context
except ImportError:  # pragma: no cover
    from jinja2 import contextfilter as _pass_context
BookExporter.markdown2html = _pass_context(BookExporter.markdown2html)


def make_exporter() -> BookExporter:
    return BookExporter(
        template_name="lab",
        template_file="labbook_page.html.j2",
        extra_loaders=[DictLoader({"labbook_page.html.j2": PAGE_TEMPLATE})],
        exclude_anchor_links=False,
        embed_images=True,
    )


# ---------------------------------------------------------------- pages and links
@dataclass(frozen=True)
class Page:
    part: str  # "course" or "labs"
    lang: str
    name: str  # file stem
    source: Path  # .ipynb or glossary .md

    @property
    def out(self) -> str:  # path of the page inside the site
        return f"{self.part}/{self.lang}/{self.name}.html"

    @property
    def kind(self) -> str:
        if self.source.suffix == ".md":
            return "glossary"
        return "chapter" if self.part == "course" else "lab"


def find_pages(root: Path = ROOT) -> list[Page]:
    pages = []
    for lang in LANGS:
        for part in ("course", "labs"):
            for path in sorted((root / part / lang).glob("*.ipynb")):
                pages.append(Page(part, lang, path.stem, path))
        glossary = root / "course" / lang / "glossary.md"
        if glossary.exists():
            pages.append(Page("course", lang, "glossary", glossary))
    return pages


def title_of(page: Page) -> str:
    if page.source.suffix == ".md":
        for line in page.source.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return page.name
    found = headings(nbformat.read(page.source, as_version=4), 1)
    return found[0] if found else page.name


HREF = re.compile(r'(?P<attr>\bhref)=(?P<q>["\'])(?P<url>[^"\']*)(?P=q)')


def rewrite_links(text: str, page_out: str, site_pages: set[str], broken: list[str]) -> str:
    """Relative links to notebooks and Markdown files become links to their pages.

    A link to solutions/<lang>/<name>.ipynb goes to the lab labs/<lang>/<name>.html
    (the edition has no solutions). Links that point nowhere in the site are
    reported in `broken`.
    """
    here = Path(page_out).parent

    def fix(match: re.Match) -> str:
        url = match.group("url")
        if not url or url.startswith(("#", "data:", "mailto:")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url) \
                or url.startswith("//"):
            return match.group(0)
        path, _, fragment = url.partition("#")
        if not path:
            return match.group(0)
        target = os.path.normpath((here / path).as_posix()).replace(os.sep, "/")
        if target.endswith((".ipynb", ".md")):
            target = target.rsplit(".", 1)[0] + ".html"
        if target.startswith("solutions/"):
            target = "labs/" + target[len("solutions/"):]
        if not (target == "index.html" or target in site_pages or target == CSS_PATH):
            broken.append(f"{page_out}: {url}")
        new = os.path.relpath(target, here.as_posix() or ".").replace(os.sep, "/")
        return f'{match.group("attr")}={match.group("q")}{new}{"#" + fragment if fragment else ""}{match.group("q")}'

    return HREF.sub(fix, text)


def nav_html(page: Page | None, pages_by_key: dict[tuple[str, str, str], Page], lang: str) -> str:
    """The bar at the top of every page: home, and the same page in every language that has it."""
    depth = "../../" if page else ""
    items = []
    for other in LANGS:
        if page is None:
            href, exists = f"#lang-{other}", True
        else:
            exists = (page.part, other, page.name) in pages_by_key
            href = f"../{other}/{page.name}.html"
        if not exists:
            continue
        current = ' aria-current="page"' if page is not None and other == lang else ""
        items.append(f'<li><a href="{href}" hreflang="{other}" lang="{other}" data-lang="{other}"{current}>'
                     f'{LANG_NAMES[other]}</a></li>')
    note = f'<span class="book-note">{html.escape(tr("html.offline", lang))}</span>' if page and page.kind == "lab" else ""
    # first on the page: a keyboard reader skips the bar to the chapter (WCAG 2.4.1)
    skip = f'<a class="book-skip" href="#main">{html.escape(tr("html.skip", lang))}</a>'
    return (f'{skip}<nav class="book-nav" aria-label="{html.escape(tr("html.nav", lang))}">'
            f'<a class="book-home" href="{depth}index.html" data-nav="index">{html.escape(tr("html.index", lang))}</a>'
            f'<span>{html.escape(tr("html.language", lang))}:</span><ul class="book-langs" data-nav="languages">'
            f'{"".join(items)}</ul>{note}</nav>')


NBCONVERT_TAB_STOP = re.compile(r'(<div class="(?:jp-Cell-inputWrapper|[^"]*\bjp-OutputArea-output\b[^"]*)"[^>]*?) tabindex="0"')


def without_tab_stops(page: str) -> str:
    """The page without the tab stops nbconvert puts on every cell's input and output (`tabindex="0"`): they
    are no controls, and a keyboard reader pressed Tab up to 54 times per page to pass them (22 from the
    top of chapter 02 to the explorer). A code block wider than the page scrolls inside its own box and gets
    its tab stop back from the page's script (SCROLL_FOCUS), so it stays reachable (WCAG 2.1.1)."""
    return NBCONVERT_TAB_STOP.sub(r"\1", page)


def glossary_notebook(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(path.read_text(encoding="utf-8"))])
    notebook.cells[0].id = "glossary"
    return notebook


def render_page(exporter: BookExporter, notebook: nbformat.NotebookNode, page: Page,
                pages_by_key: dict, title: str) -> str:
    resources = {
        "metadata": {"name": page.name, "path": str(page.source.parent)},
        "labbook": {"lang": page.lang, "title": f"{title} · {BOOK_TITLE}", "css": f"../../{CSS_PATH}",
                    "nav": nav_html(page, pages_by_key, page.lang), "page": page.out,
                    "scroll_focus": SCROLL_FOCUS},
    }
    body, _ = exporter.from_notebook_node(notebook, resources=resources)
    return body


def index_html(pages: list[Page], titles: dict[str, str]) -> str:
    sections = []
    for lang in LANGS:
        chapters = [p for p in pages if p.lang == lang and p.kind == "chapter"]
        labs = [p for p in pages if p.lang == lang and p.kind == "lab"]
        glossary = [p for p in pages if p.lang == lang and p.kind == "glossary"]
        if not (chapters or labs):
            continue

        def items(group):
            return "".join(f'<li><a href="{p.out}">{html.escape(titles[p.out])}</a></li>' for p in group)

        sections.append(
            f'<section id="lang-{lang}" lang="{lang}" data-lang="{lang}"><h2>{LANG_NAMES[lang]}</h2>'
            f'<h3>{tr("html.chapters", lang)}</h3><ul>{items(chapters)}</ul>'
            f'<h3>{tr("html.labs", lang)}</h3><ul>{items(labs)}</ul>'
            + (f'<p><a href="{glossary[0].out}">{tr("html.glossary", lang)}</a></p>' if glossary else "")
            + "</section>")
    pick_language = " / ".join(html.escape(tr("book.pick_language", lang)) if lang == "en" else
                               f'<span lang="{lang}">{html.escape(tr("book.pick_language", lang))}</span>'
                               for lang in LANGS)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1.0">\n'
        f'<title>{BOOK_TITLE}</title>\n<link rel="stylesheet" href="{CSS_PATH}">\n</head>\n'
        f'<body class="jp-Notebook book-index" data-page="index.html">\n{nav_html(None, {}, "en")}\n<main id="main">\n'
        f'<h1>{BOOK_TITLE}</h1>\n'
        # each language's words marked as that language (WCAG 3.1.2), so a screen reader voices them right
        f'<p class="book-pick">{pick_language}</p>\n'
        + "\n".join(sections) + "\n</main>\n</body>\n</html>\n")


# ---------------------------------------------------------------- colours at WCAG contrast
CSS_VARIABLE = re.compile(r"(--[\w-]+)\s*:\s*([^;}]+)")
# The theme's colours that are text on the code cells' background: JupyterLab's syntax colours (the code
# highlighting of every cell uses them) and the prompts ("In [3]:").
TEXT_ON_CODE = re.compile(r"--jp-mirror-editor-[\w-]*-color$|--jp-cell-(?:in|out)prompt-font-color$"
                          r"|--jp-cell-prompt-not-active-font-color$")
CODE_BACKGROUNDS = ("--jp-cell-editor-background", "--jp-layout-color0")


def css_variables(css: str) -> dict[str, str]:
    """Every custom property a stylesheet declares, the last declaration winning (as in the cascade of
    :root rules of one theme)."""
    return {name: value.strip() for name, value in CSS_VARIABLE.findall(css)}


def resolve_colour(value: str, variables: dict[str, str], depth: int = 0) -> tuple[float, float, float] | None:
    """An sRGB triple (0-1) for a CSS colour value: #rgb, #rrggbb, a few names, var(--x) followed through
    `variables`; None for anything else (rgba with alpha, gradients)."""
    value = value.strip().lower()
    reference = re.fullmatch(r"var\(\s*(--[\w-]+)\s*(?:,[^)]*)?\)", value)
    if reference:
        target = variables.get(reference[1])
        return resolve_colour(target, variables, depth + 1) if target and depth < 10 else None
    value = {"white": "#ffffff", "black": "#000000", "blue": "#0000ff", "red": "#ff0000"}.get(value, value)
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        value = "#" + "".join(2 * c for c in value[1:])
    if re.fullmatch(r"#[0-9a-f]{6}", value):
        return tuple(int(value[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return None


def relative_luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    light, dark = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def hex_colour(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def legible(rgb: tuple[float, float, float], backgrounds: list[tuple[float, float, float]],
            ratio: float = TEXT_CONTRAST + CONTRAST_MARGIN) -> tuple[float, float, float]:
    """The colour itself if it reaches `ratio` on every background, else the lightest darker shade of the same
    hue and saturation that does (the theme's colours stay recognisable: green keywords stay green)."""
    import colorsys

    def enough(colour):
        return all(contrast_ratio(colour, background) >= ratio for background in backgrounds)

    if enough(rgb):
        return rgb
    hue, lightness, saturation = colorsys.rgb_to_hls(*rgb)
    for step in range(1, 101):
        shade = colorsys.hls_to_rgb(hue, lightness * (1 - step / 100), saturation)
        shade = tuple(round(c * 255) / 255 for c in shade)  # what a hex colour can say
        if enough(shade):
            return shade
    return (0.0, 0.0, 0.0)


def legible_code_colours(css: str) -> str:
    """A :root rule that redeclares each syntax and prompt colour of the theme too faint on the code background
    (JupyterLab's light theme: comments #408080 at 4.2:1, keywords #008000 at 4.3:1 ...) as a darker shade
    that reaches 4.5:1; appended after the theme, it wins."""
    variables = css_variables(css)
    backgrounds = [colour for colour in (resolve_colour(variables.get(name, ""), variables)
                                         for name in CODE_BACKGROUNDS) if colour]
    changed = []
    for name in sorted(variables):
        colour = resolve_colour(variables[name], variables) if TEXT_ON_CODE.search(name) else None
        if colour is None or not backgrounds:
            continue
        better = legible(colour, backgrounds)
        if better != colour:
            changed.append(f"  {name}: {hex_colour(better)}; /* was {variables[name]} */")
    return (":root {\n" + "\n".join(changed) + "\n}\n") if changed else ""


def shared_css(exporter: BookExporter) -> str:
    """nbconvert's lab CSS, the light theme and the code colours, once for the whole site."""
    static = None
    parts = []
    for base in exporter.template_paths:
        candidate = Path(base) / "static" / "index.css"
        if candidate.exists():
            static = Path(base) / "static"
            break
    for name in ("index.css", "theme-light.css"):
        parts.append((static / name).read_text(encoding="utf-8"))
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from pygments.formatters import HtmlFormatter

    parts.append(HtmlFormatter(style=CSSHTMLHeaderPreprocessor().style).get_style_defs(".highlight"))
    parts.append(BOOK_CSS)
    parts.append("/* the theme's code and prompt colours, darkened where they are under 4.5:1 (WCAG 1.4.3) */\n"
                 + legible_code_colours("\n".join(parts)))
    return "\n".join(parts)


# What makes a browser fetch: scripts, stylesheets, images, frames, media, fonts and CSS imports. (A plain
# <a href="https://..."> is a link the reader may follow, not a request, and is allowed.)
EXTERNAL = re.compile(
    r"""<(?:script|img|iframe|source|audio|video|embed|track|input)\b[^>]*?\bsrc\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|<link\b[^>]*?\bhref\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|<object\b[^>]*?\bdata\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|@import\s+(?:url\()?\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//""", re.I)


def external_references(text: str) -> list[str]:
    """Places where a page or stylesheet would load something from another host."""
    return [text[max(0, m.start() - 40): m.end() + 60] for m in EXTERNAL.finditer(text)]


def build(out: Path, root: Path = ROOT, quiet: bool = False) -> dict:
    """Write the site into `out` (emptied first); returns numbers about it."""
    started = time.perf_counter()
    pages = find_pages(root)
    if out.exists():
        shutil.rmtree(out)
    (out / "static").mkdir(parents=True)
    exporter = make_exporter()
    exporter.chapter_sections = chapter_sections(pages, root)
    (out / CSS_PATH).write_text(shared_css(exporter), encoding="utf-8")
    pages_by_key = {(p.part, p.lang, p.name): p for p in pages}
    site_pages = {p.out for p in pages}
    titles = {p.out: title_of(p) for p in pages}
    broken: list[str] = []
    for page in pages:
        notebook = glossary_notebook(page.source) if page.kind == "glossary" else nbformat.read(page.source, as_version=4)
        body = render_page(exporter, notebook, page, pages_by_key, titles[page.out])
        body = rewrite_links(without_tab_stops(body), page.out, site_pages, broken)
        target = out / page.out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        if not quiet:
            print(f"  {page.out}", flush=True)
    (out / "index.html").write_text(rewrite_links(index_html(pages, titles), "index.html", site_pages, broken),
                                    encoding="utf-8")
    files = [p for p in out.rglob("*") if p.is_file()]
    external = [f"{p.relative_to(out)}: {hit}" for p in files for hit in external_references(p.read_text(encoding="utf-8"))]
    stats = {
        "pages": len(pages) + 1,
        "page_paths": [p.out for p in pages],
        "started": time.time() - (time.perf_counter() - started),
        "bytes": sum(p.stat().st_size for p in files),
        "seconds": time.perf_counter() - started,
        "broken_links": broken,
        "external": external,
    }
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "html", help="output folder (emptied first)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    stats = build(args.out.resolve(), quiet=args.quiet)
    for link in stats["broken_links"]:
        print(f"broken link: {link}", file=sys.stderr)
    for hit in stats["external"]:
        print(f"external reference: {hit}", file=sys.stderr)
    print(f"HTML edition: {stats['pages']} pages, {stats['bytes'] / 1e6:.1f} MB in {args.out} "
          f"(built in {stats['seconds']:.1f} s)")
    return 1 if stats["external"] else 0


if __name__ == "__main__":
    sys.exit(main())
