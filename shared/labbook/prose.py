"""Numbers in prose must come from computation.

Every decimal number written in a chapter's markdown must appear, at the
precision written, among the numbers its executed code cells printed. A number
quoted as wrong is struck through (``~~0.68~~``) and is not checked.

    python -m labbook.prose course/es/03_worked_example.ipynb ...
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from labbook import schema_formats  # noqa: F401  (first: declines a slow import; see there)
import nbformat

from autograder import i18n

# English and Hinglish write 0.67; Spanish and German write 0,67 (LaTeX: 0{,}67) and accept 0.67
# (locale/languages.toml: decimal_comma).
POINT = re.compile(r"(?<![\w.,])(\d+)\.(\d+)(?![\w]|[.,]\d)")
POINT_OR_COMMA = re.compile(r"(?<![\w.,])(\d+)[.,](\d+)(?![\w]|[.,]\d)")
DECIMAL = {language.code: POINT_OR_COMMA if language.decimal_comma else POINT for language in i18n.LANGUAGES}
OUTPUT_NUMBER = re.compile(r"\d+\.\d+|\d+")
IGNORED = [
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"~~.*?~~", re.S),  # numbers quoted as wrong
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"\\(?:sqrt|frac)\{\d+\}"),  # \sqrt{2} is an expression, not a printed number
]


def prose_text(notebook: nbformat.NotebookNode) -> str:
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    text = text.replace("{,}", ",")
    for pattern in IGNORED:
        text = pattern.sub(" ", text)
    return text


CODE_FENCE = re.compile(r"```.*?```", re.S)


def prose_words(notebook: nbformat.NotebookNode) -> int:
    """Words of prose: the markdown cells without code blocks, split at white space (inline code and
    formulas count as they stand)."""
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    return len(CODE_FENCE.sub(" ", text).split())


def prose_numbers(notebook: nbformat.NotebookNode, lang: str) -> list[tuple[str, float, int]]:
    """(as written, value, decimals) for every decimal number in the prose."""
    found = []
    for match in DECIMAL[lang].finditer(prose_text(notebook)):
        whole, fraction = match.group(1), match.group(2)
        found.append((match.group(0), float(f"{whole}.{fraction}"), len(fraction)))
    return found


def output_text(notebook: nbformat.NotebookNode) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(output["data"].get("text/plain", ""))
    return "\n".join(parts)


def output_numbers(notebook: nbformat.NotebookNode) -> list[float]:
    return [float(x) for x in OUTPUT_NUMBER.findall(output_text(notebook))]


def unexplained(notebook: nbformat.NotebookNode, lang: str) -> list[str]:
    """Prose numbers that no output shows at the written precision."""
    printed = output_numbers(notebook)
    missing = []
    for written, value, decimals in prose_numbers(notebook, lang):
        if not any(abs(round(x, decimals) - value) < 1e-9 for x in printed):
            missing.append(written)
    return missing


def main(paths: list[str]) -> int:
    status = 0
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        lang = notebook.metadata.get("lang", "en")
        missing = unexplained(notebook, lang)
        if missing:
            status = 1
            print(f"{path}: numbers in prose that no output shows: {', '.join(missing)}")
        else:
            print(f"{path}: every prose number is printed by a cell ({len(prose_numbers(notebook, lang))} checked; "
                  f"{prose_words(notebook)} words of prose)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [str(p) for p in sorted(Path("course").glob("*/*.ipynb"))]))
