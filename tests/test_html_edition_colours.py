"""The HTML edition's code and prompt colours reach WCAG's 4.5:1 on the code background (html_edition's
legible_code_colours), computed with WCAG's own formula; axe checks the built pages in
tests/browser/test_accessibility.py, this checks the rule and the stylesheet without a browser."""
import pytest

from labbook import html_edition as edition


@pytest.fixture(scope="module")
def css() -> str:
    return edition.shared_css(edition.make_exporter())


def rgb(hex_colour: str) -> tuple[float, float, float]:
    return edition.resolve_colour(hex_colour, {})


def test_contrast_ratio_is_wcag_s():
    # WCAG's reference points: black on white 21:1, a colour on itself 1:1, #777 on white 4.48:1
    assert edition.contrast_ratio(rgb("#000"), rgb("#fff")) == pytest.approx(21.0)
    assert edition.contrast_ratio(rgb("#408080"), rgb("#408080")) == pytest.approx(1.0)
    assert edition.contrast_ratio(rgb("#777777"), rgb("#ffffff")) == pytest.approx(4.48, abs=0.01)


def test_a_faint_colour_is_darkened_to_the_ratio_and_keeps_its_hue():
    import colorsys

    background = rgb("#f5f5f5")
    faint = rgb("#408080")  # JupyterLab's comment colour, 4.2:1 there
    assert edition.contrast_ratio(faint, background) < 4.5
    better = edition.legible(faint, [background])
    assert edition.contrast_ratio(better, background) >= 4.5
    assert colorsys.rgb_to_hls(*better)[0] == pytest.approx(colorsys.rgb_to_hls(*faint)[0], abs=0.01)
    assert edition.legible(rgb("#000000"), [background]) == rgb("#000000")  # dark enough: unchanged


def test_every_code_and_prompt_colour_of_the_stylesheet_reaches_4_5(css):
    variables = edition.css_variables(css)
    backgrounds = [edition.resolve_colour(variables[name], variables) for name in edition.CODE_BACKGROUNDS]
    checked = {}
    for name, value in variables.items():
        colour = edition.resolve_colour(value, variables) if edition.TEXT_ON_CODE.search(name) else None
        if colour is not None:
            checked[name] = min(edition.contrast_ratio(colour, background) for background in backgrounds)
    assert "--jp-mirror-editor-comment-color" in checked and len(checked) >= 15
    assert {name: ratio for name, ratio in checked.items() if ratio < 4.5} == {}
    # the theme alone, before the book's rule, has colours under 4.5:1: the rule is what fixes them
    theme = edition.css_variables(css[:css.rindex(":root {")])
    assert edition.contrast_ratio(edition.resolve_colour(theme["--jp-mirror-editor-comment-color"], theme),
                                  backgrounds[0]) < 4.5


def test_inactive_prompts_are_not_faded_and_prose_links_are_underlined(css):
    assert edition.css_variables(css)["--jp-cell-prompt-not-active-opacity"] == "1"
    assert ".jp-RenderedHTMLCommon a:link, .jp-RenderedHTMLCommon a:visited { text-decoration: underline; }" in css
