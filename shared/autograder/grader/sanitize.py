"""The boundary: everything a student controls passes through here before the grader keeps it.

Student-controlled text reaches the grader from file and folder names, notebook
metadata, the child's socket (exception messages, values, anything its code
writes there) and captured output; older records on disk are no more trusted.
Such text may hold lone surrogates (which no UTF-8 file can store, so writing
the gradebook would fail), terminal escape sequences (which would reach the
instructor's terminal through the summary), bidirectional overrides (which make
text read differently from what it is) or megabytes of anything. `text` makes
one string safe; `message` does the same for a decoded JSON message and refuses
one that is too deep or too big.
"""
from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"
TEXT_LIMIT = 2000
MESSAGE_DEPTH = 64  # runtime.encode_result nests at most 6 levels, plus the envelope
MESSAGE_ITEMS = 2_000_000  # runtime.MAX_ELEMENTS is 100 000 numbers per array
MESSAGE_STRING = 4000  # runtime keeps at most 2000 characters of a string value
MESSAGE_CHARS = 1 << 20  # all strings of one message together


class ProtocolError(ValueError):
    """A message from the child that no honest child sends: too deep or too big."""


def _table(newlines: bool) -> dict[int, str]:
    table: dict[int, str] = {}
    # C0 controls, DEL and C1 controls (ESC and CSI start terminal escape sequences)
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]:
        table[code] = REPLACEMENT
    # lone surrogates cannot be encoded; line and paragraph separators break lines like \n
    for code in range(0xD800, 0xE000):
        table[code] = REPLACEMENT
    # bidirectional embeddings, overrides and isolates reorder what the reader sees
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        table[code] = REPLACEMENT
    for code in (0x2028, 0x2029, 0x85, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E):
        table[code] = "\n" if newlines else " "
    table[ord("\t")] = "\t" if newlines else " "
    table[ord("\n")] = "\n" if newlines else " "
    table[ord("\r")] = "\n" if newlines else " "
    return table


_MULTILINE = _table(True)
_ONE_LINE = _table(False)


def text(value: Any, limit: int = TEXT_LIMIT, newlines: bool = True) -> str:
    """A student-controlled string that can be stored, printed and encoded: at most `limit` characters
    plus a visible marker when cut; controls, escapes and lone surrogates become U+FFFD; newlines and
    tabs stay only when `newlines` (else they become spaces)."""
    if not isinstance(value, str):
        value = _plain_str(value)
    if len(value) <= limit and value.isascii() and value.isprintable():
        return value  # the usual key or dtype name: nothing to replace (ASCII printable has no controls)
    cut = len(value) - limit
    if cut > 0:
        value = value[:limit]
    if newlines:
        value = value.replace("\r\n", "\n")
    value = value.translate(_MULTILINE if newlines else _ONE_LINE)
    if cut > 0:
        value += f"…[+{cut} characters]"
    return value


def _plain_str(value: Any) -> str:
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    try:
        return str(value)
    except Exception:  # an object whose __str__ fails still gets a row
        return f"<{type(value).__name__}>"


def message(value: Any, max_depth: int = MESSAGE_DEPTH, max_items: int = MESSAGE_ITEMS,
            max_string: int = MESSAGE_STRING, max_chars: int = MESSAGE_CHARS) -> Any:
    """A decoded JSON value with every string (keys too) made safe by `text`; ProtocolError when the
    value nests deeper than `max_depth`, holds more than `max_items` items, or more than `max_chars`
    characters of strings before capping."""
    budget = [max_items, max_chars]

    def walk(item: Any, depth: int) -> Any:
        if isinstance(item, str):
            budget[1] -= len(item)
            if budget[1] < 0:
                raise ProtocolError("too much text in one message")
            return text(item, max_string)
        if item is None or isinstance(item, (bool, int, float)):
            return item
        if depth >= max_depth:
            raise ProtocolError(f"nested deeper than {max_depth} levels")
        if isinstance(item, list):
            budget[0] -= len(item)
            if budget[0] < 0:
                raise ProtocolError("too many items in one message")
            if all(type(v) is float or type(v) is int for v in item):
                return item  # the common case, an array's numbers: nothing to clean
            return [walk(v, depth + 1) for v in item]
        if isinstance(item, dict):
            budget[0] -= len(item)
            if budget[0] < 0:
                raise ProtocolError("too many items in one message")
            return {walk(k, depth + 1) if isinstance(k, str) else k: walk(v, depth + 1) for k, v in item.items()}
        raise ProtocolError(f"not plain data: {type(item).__name__}")

    return walk(value, 0)
