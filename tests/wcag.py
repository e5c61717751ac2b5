"""WCAG 2.1 contrast (success criteria 1.4.3 and 1.4.11), from the definition's relative luminance.

https://www.w3.org/TR/WCAG21/#dfn-relative-luminance and #dfn-contrast-ratio. Shared by the
explorer's CSS test (tests/test_explorer_a11y.py) and the browser test that measures computed colours.
"""
from __future__ import annotations

import re

TEXT, LARGE_TEXT = 4.5, 3.0  # AA: normal text; text of at least 18pt, or 14pt bold (also graphics)


def rgba(colour: str) -> tuple[float, float, float, float]:
    """'#abc', '#aabbcc', 'rgb(r, g, b)' or 'rgba(r, g, b, a)' as three channels from 0 to 255 and an alpha."""
    colour = colour.strip().lower()
    match = re.fullmatch(r"rgba\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)[,\s/]+([\d.]+)\s*\)", colour)
    if match:
        return tuple(float(match[k]) for k in (1, 2, 3, 4))
    return (*rgb(colour), 1.0)


def over(foreground: str, background: str) -> str:
    """A translucent text colour as it shows on an opaque background (alpha compositing)."""
    *channels, alpha = rgba(foreground)
    mixed = [alpha * f + (1 - alpha) * b for f, b in zip(channels, rgb(background))]
    return "rgb({:.3f}, {:.3f}, {:.3f})".format(*mixed)


def rgb(colour: str) -> tuple[float, float, float]:
    """'#abc', '#aabbcc' or 'rgb(r, g, b)' / 'rgba(r, g, b, 1)' as three channels from 0 to 255."""
    colour = colour.strip().lower()
    if colour.startswith("#"):
        digits = colour[1:]
        if len(digits) == 3:
            digits = "".join(d * 2 for d in digits)
        if len(digits) != 6:
            raise ValueError(f"not a colour: {colour!r}")
        return tuple(int(digits[k:k + 2], 16) for k in (0, 2, 4))
    match = re.fullmatch(r"rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+))?\s*\)", colour)
    if not match:
        raise ValueError(f"not a colour: {colour!r}")
    if match[4] is not None and float(match[4]) < 1:
        raise ValueError(f"a translucent colour has no contrast of its own: {colour!r}")
    return tuple(float(match[k]) for k in (1, 2, 3))


def luminance(colour: str) -> float:
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: str, background: str) -> float:
    """The contrast ratio of a text colour (translucent or not) on an opaque background."""
    foreground = over(foreground, background)
    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def is_large(font_px: float, bold: bool) -> bool:
    """WCAG's large text: at least 18 pt (24 CSS px), or 14 pt (18.66 px) bold."""
    return font_px >= 24 or (bold and font_px >= 18.66)
