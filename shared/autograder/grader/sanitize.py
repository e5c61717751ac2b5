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


# ---------------------------------------------------------------- the answer to one call
VALUE_DEPTH = 16  # runtime.encode_result nests at most 6 levels
TENSOR_DIMS = 32
LARGE_INT = 1 << 1000  # beyond this a Python int has no float (judges compare as float64)
_RESULT_KINDS = ("ok", "missing", "not_answered", "error")
_RESULT_KEYS = frozenset((*_RESULT_KINDS, "calls"))
_NUMBER_TYPES = frozenset((float, int, bool))


def call_result(result: Any) -> tuple[dict | None, str]:
    """(result, '') when `result` has the shape runtime.run_call gives, else (None, what is wrong).

    The child's socket carries whatever the student's code writes there, so an
    answer that arrives under the right id may still be forged: an error that
    is a string, a tensor whose shape does not fit its numbers, a plain dict,
    an int no float can hold. Each would make the trusted judge raise (and
    report "the grader failed"); refused here, it is that exercise's protocol
    error instead. The error's type and message are made strings.
    """
    if not isinstance(result, dict):
        return None, "not an object"
    kinds = [kind for kind in _RESULT_KINDS if kind in result]
    if len(kinds) != 1 or not set(result) <= _RESULT_KEYS:
        return None, "not one answer"
    kind = kinds[0]
    problem = ""
    if kind == "missing" and not isinstance(result["missing"], str):
        problem = "missing: not a name"
    elif kind == "not_answered" and result["not_answered"] is not True:
        problem = "not_answered: not true"
    elif kind == "error":
        error = result["error"]
        if not isinstance(error, dict):
            problem = "error: not an object"
        else:
            result = {**result, "error": {"type": text(error.get("type", "Exception"), 80, newlines=False),
                                          "message": text(error.get("message", ""), MESSAGE_STRING)}}
    elif kind == "ok":
        problem = _value_problem(result["ok"], 0)
    if not problem and "calls" in result:
        problem = _calls_problem(result["calls"])
    return (None, problem) if problem else (result, "")


def _value_problem(value: Any, depth: int) -> str:
    if value is None or isinstance(value, (bool, str, float)):
        return ""
    if isinstance(value, int):
        return "" if -LARGE_INT < value < LARGE_INT else "an int too large for a float"
    if depth >= VALUE_DEPTH:
        return "nested too deep"
    if isinstance(value, list):
        for item in value:
            problem = _value_problem(item, depth + 1)
            if problem:
                return problem
        return ""
    if not isinstance(value, dict):
        return f"not plain data: {type(value).__name__}"
    if "__tensor__" in value:
        return _tensor_problem(value)
    if "__tuple__" in value:
        items = value["__tuple__"]
        if set(value) != {"__tuple__"} or not isinstance(items, list):
            return "a tuple that is not a list"
        return _value_problem(items, depth + 1)
    if "__object__" in value:
        if not isinstance(value["__object__"], str) or not isinstance(value.get("repr", ""), str):
            return "an object without a type name"
        return ""
    return "a plain dict (the worker encodes every dict as an object)"


def _tensor_problem(value: dict) -> str:
    data, shape = value["__tensor__"], value.get("shape")
    if not isinstance(value.get("dtype"), str):
        return "a tensor without a dtype name"
    if not (isinstance(shape, list) and len(shape) <= TENSOR_DIMS
            and all(type(n) is int and 0 <= n < 1 << 62 for n in shape)):
        return "a tensor whose shape is not a list of sizes"
    if data is None:
        return ""  # too large to send: only dtype and shape came
    if not isinstance(data, list):
        return "a tensor whose values are not a list"
    size = 1
    for n in shape:
        size *= n
    if size != len(data):
        return "a tensor whose shape does not fit its values"
    types = {type(x) for x in data}
    if not types <= _NUMBER_TYPES:
        return "a tensor with values that are not numbers"
    if int in types and not all(-LARGE_INT < x < LARGE_INT for x in data if type(x) is int):
        return "a tensor with an int too large for a float"
    return ""


def _calls_problem(calls: Any) -> str:
    """The inputs a recorded function was called with: lists of tensors, shapes or nothing."""
    if not isinstance(calls, list) or not all(isinstance(inputs, list) for inputs in calls):
        return "calls: not lists"
    for inputs in calls:
        for snapshot in inputs:
            if snapshot is None:
                continue
            if not isinstance(snapshot, dict):
                return "calls: not a snapshot"
            if "__tensor__" in snapshot:
                problem = _tensor_problem(snapshot)
                if problem:
                    return "calls: " + problem
            elif not (set(snapshot) == {"__shape__"} and isinstance(snapshot["__shape__"], list)
                      and all(type(n) is int and 0 <= n < 1 << 62 for n in snapshot["__shape__"])):
                return "calls: not a snapshot"
    return ""
