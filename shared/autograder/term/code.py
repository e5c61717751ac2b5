"""What a submission's graded code is, once names, comments, docstrings and layout are gone.

The graded code of an exercise is the last top-level definition of its name
(a function, or an assignment for lab00's by-hand answers) plus the top-level
functions it calls. A stub (only `raise NotImplementedError`, `pass`, `...`)
counts as not attempted. Everything is parsed with `ast`; nothing is run.

This runs in the grader's own process on text a student wrote, so it is
bounded per byte: cells longer than MAX_SOURCE are not looked at, and a tree
nested deeper than MAX_DEPTH (which the recursive steps, copying and
unparsing, would need Python's whole stack for) raises NotAnalysed before
any of them runs. The caller (analysis.py) makes that "not analysed" for
that student, never a crashed class.
"""
from __future__ import annotations

import ast
import io
import tokenize

MAX_SOURCE = 200_000  # characters of one exercise's code looked at
MAX_DEPTH = 60  # levels of nesting of a definition analysed; honest code stays far below


class NotAnalysed(ValueError):
    """The code cannot be analysed within the grader's bounds (the reason says why)."""


def depth(node: ast.AST, limit: int = MAX_DEPTH) -> int:
    """How deep `node` nests, counted without recursion, stopping once past `limit`."""
    deepest, todo = 0, [(node, 1)]
    while todo:
        current, level = todo.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        todo.extend((child, level + 1) for child in ast.iter_child_nodes(current))
    return deepest


def _shallow(node: ast.AST) -> ast.AST:
    if depth(node) > MAX_DEPTH:
        raise NotAnalysed(f"nested more than {MAX_DEPTH} levels deep")
    return node


def _definitions(cells: list[str]) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for source in cells:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[node.name] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node
    return found


def _imports(cells: list[str]) -> dict[str, str]:
    """Alias -> dotted origin: `import torch.nn.functional as F` gives F -> torch.nn.functional."""
    aliases: dict[str, str] = {}
    for source in cells:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _is_stub(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body:
        return True
    # walked, never unparsed: a raise can hold an expression nested deeper than Python's stack
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Raise) and any(
        (isinstance(n, ast.Name) and n.id == "NotImplementedError")
        or (isinstance(n, ast.Attribute) and n.attr == "NotImplementedError") for n in ast.walk(s)))
        for s in body)


def _called_names(node: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _closure(name: str, definitions: dict[str, ast.AST]) -> list[ast.AST]:
    """The definition of `name` and of the top-level functions it calls, transitively, in a fixed order."""
    seen, todo, nodes = set(), [name], []
    while todo:
        current = todo.pop(0)
        if current in seen or current not in definitions:
            continue
        seen.add(current)
        nodes.append(definitions[current])
        todo += sorted(_called_names(definitions[current]) - seen)
    return nodes


class _Renamer(ast.NodeTransformer):
    """Local names become v0, v1... in order of appearance; attributes (torch.tril) and the exercise's own name stay."""

    def __init__(self, keep: set[str]):
        self.keep, self.names = keep, {}

    def _new(self, name: str) -> str:
        if name in self.keep:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name):
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg):
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        node.name = self._new(node.name)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def normalised(nodes: list[ast.AST], keep: set[str]) -> str:
    import copy

    module = ast.Module(body=[copy.deepcopy(n) for n in nodes], type_ignores=[])
    return ast.unparse(_Renamer(keep).visit(module))


def graded_code(cells: list[str], exercise_ids: list[str]) -> dict[str, str]:
    """exercise id -> its normalised code, for the exercises attempted (not stubs, not absent)."""
    import builtins

    cells = [c for c in cells if len(c) <= MAX_SOURCE]
    definitions = _definitions(cells)
    keep = set(exercise_ids) | set(_imports(cells)) | set(dir(builtins))
    code = {}
    for exercise in exercise_ids:
        node = definitions.get(exercise)
        if node is None or _is_stub(node):
            continue
        nodes = [_shallow(n) for n in _closure(exercise, definitions)]
        code[exercise] = normalised(nodes, keep)
    return code


def dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def forbidden_uses(cells: list[str], exercise_id: str, forbidden: tuple[str, ...]) -> list[str]:
    """The forbidden names the exercise's code (and what it calls) uses, spelled as the declaration spells them.

    A use is a reference, called or not (`f = F.scaled_dot_product_attention`), through any import alias
    (`from torch.nn.functional import scaled_dot_product_attention as sdpa`).
    """
    if not forbidden:
        return []
    cells = [c for c in cells if len(c) <= MAX_SOURCE]
    definitions = _definitions(cells)
    aliases = _imports(cells)
    found = set()
    for node in _closure(exercise_id, definitions):
        for sub in ast.walk(node):
            if not isinstance(sub, (ast.Attribute, ast.Name)):
                continue
            name = dotted(sub)
            if not name:
                continue
            head, _, rest = name.partition(".")
            full = aliases.get(head, head) + ("." + rest if rest else "")
            for banned in forbidden:
                # the same function reached through a module (F., torch.nn.functional.) or an import alias;
                # a student's own variable that happens to share the bare name is not it
                if "." in full and full.rsplit(".", 1)[-1] == banned.rsplit(".", 1)[-1]:
                    found.add(banned)
    return sorted(found)


def tokens(text: str) -> list[str]:
    """The tokens of normalised code for the similarity groups (linear; any failure: its words)."""
    text = text[:MAX_SOURCE]
    try:
        return [tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                    tokenize.COMMENT, tokenize.ENDMARKER)]
    except Exception:  # noqa: BLE001 - student code: never a crashed report
        return text.split()
