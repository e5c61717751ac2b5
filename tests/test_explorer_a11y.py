"""The explorer for a screen reader and for low vision: cell names, the grid's summary, contrast of its CSS.

The live grid's names and summary come from explorer.js; tests/browser/test_html_edition.py checks that
they equal these reference functions. Expected counts are worked out by hand from the settings.
"""
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.i18n import LANGS
from labbook.explorer import ASSETS, Settings, cell_kind, cell_name, explorer, grid_summary, labels
from labbook.texts import texts_with_prefix, tr
from wcag import LARGE_TEXT, TEXT, contrast, rgb

EN = texts_with_prefix("explorer.", "en")


def name(s: Settings, r: int, j: int, lang: str = "en") -> str:
    text = texts_with_prefix("explorer.", lang)
    return cell_name(s, r, j, text, labels(s, text, lang))


# ---------------------------------------------------------------- what each cell says
# one cell of each kind, and where it is: settings, query row, key
KINDS = {
    "read": (Settings(T=6), 3, 1),
    "self": (Settings(T=6), 3, 3),
    "future": (Settings(T=6), 3, 5),
    "pad": (Settings(T=6, padding=(0, 2), sequence=1), 1, 4),
    "window": (Settings(T=6, window=2), 4, 1),
    "align": (Settings(T=6, offset=3, align="top-left"), 0, 2),
    "document": (Settings(T=6, documents=(3, 3)), 4, 1),
    "sink": (Settings(T=8, window=3, sinks=1), 6, 0),
    "leak": (Settings(T=6, causal=False), 1, 4),
    "leak_target": (Settings(T=6, causal=False), 1, 2),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_cell_is_found_where_the_rules_put_it(kind):
    s, r, j = KINDS[kind]
    assert cell_kind(s, r, j) == kind


@pytest.mark.parametrize("lang", LANGS)
def test_a_cell_name_says_query_key_and_why_in_each_language(lang):
    words = tr("explorer.sentence1", lang).split(" ")
    text = texts_with_prefix("explorer.", lang)
    names = {kind: name(s, r, j, lang) for kind, (s, r, j) in KINDS.items()}
    # ten different explanations, none of them a placeholder left unfilled
    assert len(set(text["cell_" + kind] for kind in KINDS)) == len(KINDS)
    for kind, (s, r, j) in KINDS.items():
        i = s.offset + r
        said = names[kind]
        assert not re.search(r"\{\w+\}", said), said
        assert f"q{i}" in said and f"k{j}" in said, said
        assert text["cell_" + kind] in said, said
        if kind != "pad":
            assert words[i] in said and words[j] in said, said
    # the padding key is named as padding, in the reader's language
    assert text["pad"] in names["pad"]


def test_the_next_token_is_named_as_the_target():
    s = Settings(T=6)
    # query 3's next token, key 4: blocked and its target; key 5 is only blocked
    assert "target" in name(s, 3, 4) and "target" not in name(s, 3, 5)
    assert name(s, 3, 4) == "query q3 “on”, key k4 “the”: blocked: a future key (causal mask); " \
                            "it is the query's target, the token it must predict"
    # the last query of a document has no target: its next key is only "another document"
    packed = Settings(T=6, padding=(0, 0), documents=(3, 3))
    assert "target" not in name(packed, 2, 3)


def test_the_static_table_carries_the_names_and_a_readable_legend():
    widget = explorer(T=6, padding=(0, 2), sequence=1, lang="es")
    page = widget._repr_html_()
    static = page[page.index('<div class="lbx-static">'):page.index('<div class="lbx-app"')]

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.names, self.hidden = {}, 0

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "td" and "data-row" in attrs:
                self.names[int(attrs["data-row"]), int(attrs["data-col"])] = attrs.get("aria-label")
                assert attrs.get("title") == attrs.get("aria-label")  # what an untrusted notebook keeps
            if attrs.get("aria-hidden") == "true":
                self.hidden += 1

    cells = Cells()
    cells.feed(static)
    s = widget.settings
    assert cells.names == {(r, j): name(s, r, j, "es") for r in range(6) for j in range(6)}
    assert cells.hidden == 0  # the legend's symbols are read, not hidden
    assert "✓</span> puede leer" in static
    # the worked example's blocked numbers say why in words (grey alone would be colour only)
    blocked = tr("explorer.legend_future", "es")
    page = explorer(T=6, lang="es")._repr_html_()
    static = page[page.index('<div class="lbx-static">'):page.index('<div class="lbx-app"')]
    assert static.count(f'aria-label="−∞ ({blocked})"') == 3  # T = 3: keys above the diagonal
    assert static.count(f'aria-label="0.00 ({blocked})"') == 3


# ---------------------------------------------------------------- the status after a change
def test_the_summary_counts_the_causal_grid():
    # 6 queries: 1 + 2 + ... + 6 = 21 readable keys, the other 15 in the future
    assert grid_summary(Settings(T=6), EN) == \
        "6 queries × 6 keys: 21 cells may be read, 15 are blocked. Blocked: 15 in the future."


def test_the_summary_reports_the_leaks_with_the_mask_off():
    said = grid_summary(Settings(T=6, causal=False), EN)
    # the 15 future keys leak; 5 of them are the next token of their query
    assert said.startswith("6 queries × 6 keys: 36 cells may be read, 0 are blocked.")
    assert "Leak! Future keys that can be read: 15 in all; in 5 of those cells the key is the query's own target." in said
    assert "Blocked:" not in said


def test_the_summary_counts_each_reason():
    # sequence 1 has 2 pad keys (columns 4, 5: 12 cells); among keys 0..3 the future ones are 3 + 2 + 1
    said = grid_summary(Settings(T=6, padding=(0, 2), sequence=1), EN)
    assert said == "6 queries × 6 keys: 18 cells may be read, 18 are blocked. Blocked: 6 in the future, 12 padding."
    # a window of 1 key: each query reads itself only; key 0 stays readable as a sink for queries 1..5
    said = grid_summary(Settings(T=6, padding=(0, 0), window=1, sinks=1), EN)
    assert "11 cells may be read, 25 are blocked" in said
    assert "Blocked: 15 in the future, 10 outside the window." in said
    assert "5 cell(s) stay readable only as attention sinks." in said


def test_the_summary_counts_rows_that_read_nothing():
    # a padded query row still reads its real keys, so no row is empty here
    assert "NaN" not in grid_summary(Settings(T=6, padding=(0, 2), sequence=1), EN)
    # documents of 1 and 5 with top-left alignment and an offset of 3: the triangle limit of query 3 is 0,
    # a key of document 0, so query 3 reads nothing
    s = Settings(T=6, padding=(0, 0), offset=3, align="top-left", documents=(1, 5))
    assert "1 query row(s) may read no key at all" in grid_summary(s, EN)


@pytest.mark.parametrize("lang", LANGS)
def test_the_summary_is_in_each_language(lang):
    text = texts_with_prefix("explorer.", lang)
    said = grid_summary(Settings(T=6, causal=False, padding=(0, 2), sequence=1, window=2), text)
    assert not re.search(r"\{\w+\}", said), said
    assert "12" in said  # the padding cells, whatever the language's words
    assert text["status_grid_leak"].split("{")[0] in said


# ---------------------------------------------------------------- contrast of the explorer's colours
def test_the_contrast_formula_gives_the_published_values():
    assert contrast("#000", "#fff") == pytest.approx(21)
    assert contrast("#fff", "#fff") == pytest.approx(1)
    # #767676 is the lightest grey with 4.5:1 on white; #777 just misses it (4.48)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)
    assert contrast("#777", "#fff") == pytest.approx(4.48, abs=0.01)
    assert contrast("rgb(119, 119, 119)", "#f1f1f1") == pytest.approx(3.96, abs=0.01)
    with pytest.raises(ValueError):
        rgb("rgba(0, 0, 0, 0.5)")
    # translucent text is mixed with its background: black at 54 % on white is #757575, 4.61:1
    assert contrast("rgba(0, 0, 0, 0.54)", "#fff") == pytest.approx(contrast("#757575", "#fff"), abs=0.02)


def css_rules(css: str) -> list[tuple[str, dict[str, str]]]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = {}
        for part in body.split(";"):
            if ":" in part:
                prop, value = part.split(":", 1)
                declarations[prop.strip()] = value.strip()
        rules.append((" ".join(selector.split()), declarations))
    return rules


HEX = r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b"


def pair_problems(css: str) -> list[str]:
    """Every rule of the explorer's CSS that sets a text colour and a background, below 4.5:1 (3:1 if large)."""
    rules = css_rules(css)
    variables = {prop: value for selector, decl in rules if selector == ".lbx"
                 for prop, value in decl.items() if prop.startswith("--")}

    def resolve(value: str) -> str:
        for _ in range(5):
            value = re.sub(r"var\((--[\w-]+)\)", lambda m: variables[m[1]], value)
        return value

    problems = []
    for selector, decl in rules:
        background = decl.get("background") or decl.get("background-color")
        if "color" not in decl or not background:
            continue
        colours = re.findall(HEX, resolve(decl["color"]))
        if not colours:
            continue
        large = "font-size" in decl and re.match(r"(\d+)px", decl["font-size"]) and int(decl["font-size"][:2]) >= 24
        for back in re.findall(HEX, resolve(background)):
            ratio = contrast(colours[0], back)
            if ratio < (LARGE_TEXT if large else TEXT):
                problems.append(f"{selector}: {colours[0]} on {back} is {ratio:.2f}:1")
    return problems


def test_every_colour_pair_of_the_explorer_css_is_aa():
    css = (ASSETS / "explorer.css").read_text(encoding="utf-8")
    assert len([1 for _, decl in css_rules(css) if "color" in decl and ("background" in decl)]) >= 15
    assert pair_problems(css) == []


def test_the_pair_check_finds_the_old_colours():
    css = (ASSETS / "explorer.css").read_text(encoding="utf-8")
    # the colours before issue 18: grey dots 3.96:1, white on green 3.30:1, red on pink 3.99:1
    old = css.replace("--lbx-blocked-ink: #595959", "--lbx-blocked-ink: #777").replace(
        "--lbx-read-strong: #2e7d32", "--lbx-read-strong: #43a047").replace(
        "--lbx-leak-strong: #b71c1c", "--lbx-leak-strong: #c62828")
    problems = pair_problems(old)
    assert any("#777 on #f1f1f1 is 3.96:1" in p for p in problems), problems
    assert any("#fff on #43a047 is 3.30:1" in p for p in problems), problems
    assert any("#c62828 on #ffcdd2 is 3.99:1" in p for p in problems), problems
