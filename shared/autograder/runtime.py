"""Run one call against a student's namespace and return plain data.

This module is the only part of the autograder that touches student code. It
imports nothing from the rest of the package (a test enforces it), so the
sandboxed grading worker can hold this file alone and never the reference
implementations. Its inputs and outputs are plain data (JSON-able: numbers,
strings, lists, dicts with the markers below), so all comparisons happen
elsewhere, on data the student's code can no longer touch.

Encoded values:
  {"__tensor__": nested list, "dtype": "float32", "shape": [..]}  a tensor or array
  {"__tuple__": [...]}                                            a tuple
  {"__function__": source, "name": "f", "record": true}           a function (arguments only); with
                                                                  "record", the call's result also lists
                                                                  the inputs it was called with ("calls")
  {"__object__": "TypeName", "repr": "..."}                       anything else returned
"""
from __future__ import annotations

import math
from typing import Any

MAX_ELEMENTS = 100_000
MAX_REPR = 200
MAX_RECORDED_CALLS = 256  # inputs a student's test passed to a recorded function, kept as evidence
MAX_RECORDED_ELEMENTS = 4096  # one recorded input, at most
MAX_RECORDED_TOTAL = 200_000  # all recorded inputs of one function, at most (the answer stays small)
LARGE_INT = 1 << 1000  # a larger int has no float: sent as an object

# Code of the functions handed to students' tests, compiled by the zygote before it forks
# (precompile): every child of a batch gets the same functions, and compiling in each costs.
_COMPILED: dict[tuple[str, str], Any] = {}


def precompile(functions: list[dict]) -> int:
    """Compile the `{"__function__": source, "name": ...}` arguments a batch will send; how many."""
    for value in functions:
        key = (value["__function__"], value["name"])
        if key not in _COMPILED:
            _COMPILED[key] = compile(value["__function__"], f"<{value['name']}>", "exec")
    return len(_COMPILED)


# Recorders created while decoding the arguments of the current call (see run_call).
_recorders: list[list] = []


class NotAnswered(Exception):
    """The student has not answered yet (an Ellipsis placeholder or NotImplementedError)."""


def _torch():
    import torch  # imported lazily: lab00 needs no torch at grading time

    return torch


def decode_arg(value: Any) -> Any:
    """Turn an encoded argument into the object handed to the student's code."""
    if isinstance(value, dict):
        if "__tensor__" in value:
            torch = _torch()
            return torch.tensor(value["__tensor__"], dtype=getattr(torch, value.get("dtype", "float32")))
        if "__function__" in value:
            namespace: dict[str, Any] = {"math": math}
            torch = _torch()
            namespace.update(torch=torch, F=torch.nn.functional, nn=torch.nn)
            key = (value["__function__"], value["name"])
            code = _COMPILED.get(key) or compile(value["__function__"], f"<{value['name']}>", "exec")
            exec(code, namespace)
            function = namespace[value["name"]]
            return _recording(function) if value.get("record") else function
        if "__tuple__" in value:
            return tuple(decode_arg(v) for v in value["__tuple__"])
        return {k: decode_arg(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_arg(v) for v in value]
    return value


def _recording(function):
    """The function, noting each input it is called with: a student's test must show its evidence.

    The grader re-runs its own copy of the function on these inputs: a verdict
    "not causal" counts only when two recorded inputs reveal the leak.
    """
    calls: list = []
    _recorders.append(calls)

    budget = [MAX_RECORDED_TOTAL]

    def candidate(*args, **kwargs):
        first = args[0] if args else next(iter(kwargs.values()), None)  # model_fn(ids=...) counts too
        if len(calls) < MAX_RECORDED_CALLS and first is not None and budget[0] > 0:
            snapshot = _snapshot(first)
            if isinstance(snapshot, dict) and isinstance(snapshot.get("__tensor__"), list):
                budget[0] -= len(snapshot["__tensor__"])
            calls.append(snapshot)
        return function(*args, **kwargs)

    candidate.__name__ = candidate.__qualname__ = getattr(function, "__name__", "candidate")
    return candidate


def _snapshot(value: Any) -> Any:
    """A recorded input as plain data (None when it is too large or not a tensor of numbers)."""
    try:
        type_name = type(value).__module__
        if type_name.startswith("torch") and hasattr(value, "shape"):
            if value.numel() > MAX_RECORDED_ELEMENTS or value.is_complex():
                return None
            return _encode_array(value)
        import numpy as np

        array = np.asarray(value)
        if array.dtype.kind not in "biuf" or array.size > MAX_RECORDED_ELEMENTS:
            return None
        return _encode_array(array)
    except Exception:  # a functorch wrapper (torch.func.jacrev) has no values to read, but a shape
        try:
            return {"__shape__": [int(n) for n in value.shape]}
        except Exception:
            return None


def _float_list(values):
    return [float(v) for v in values]


def encode_result(value: Any, depth: int = 0) -> Any:
    """Turn what the student's code returned into plain data."""
    if depth > 6:
        return {"__object__": "nested too deep", "repr": ""}
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, str):
            return str.__getitem__(value, slice(MAX_REPR * 10))  # a str subclass may slice to anything
        if isinstance(value, float) or value is None or isinstance(value, bool):
            return value if value is None or type(value) in (bool, float) else float(value)  # numpy.float64
        value = int(value)
        if not -LARGE_INT < value < LARGE_INT:
            return {"__object__": "int", "repr": f"an int of {value.bit_length()} bits"}  # no float holds it
        return value
    type_name = type(value).__module__ + "." + type(value).__qualname__
    if type_name == "torch.Tensor" or type_name.startswith("numpy.") and hasattr(value, "shape"):
        encoded = _encode_array(value)
        # a class that only calls itself torch.Tensor (or a subclass lying about its shape) is an object
        return encoded if _consistent(encoded) else {"__object__": type(value).__qualname__,
                                                       "repr": _safe_repr(value)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode_result(v, depth + 1) for v in value[:64]]}
    if isinstance(value, list):
        return [encode_result(v, depth + 1) for v in value[:MAX_ELEMENTS]]
    return {"__object__": type(value).__qualname__, "repr": _safe_repr(value)}


def _consistent(encoded: dict) -> bool:
    """dtype a name, shape a list of sizes, and as many numbers as the shape says."""
    shape, data = encoded.get("shape"), encoded.get("__tensor__")
    if type(encoded.get("dtype")) is not str or type(shape) is not list \
            or not all(type(n) is int and 0 <= n < 1 << 62 for n in shape):
        return False
    if data is None:
        return True
    size = 1
    for n in shape:
        size *= n
    return type(data) is list and size == len(data) and all(type(x) in (float, bool) for x in data)


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)[:MAX_REPR]
    except Exception:  # a student's object may break repr itself
        return "<repr failed>"


def _encode_array(value: Any) -> dict:
    type_name = type(value).__module__
    if type_name.startswith("torch"):
        dtype = str(value.dtype).replace("torch.", "")
        shape = list(value.shape)
        flat = value.detach().to("cpu").reshape(-1)
        if flat.numel() > MAX_ELEMENTS:
            return {"__tensor__": None, "dtype": dtype, "shape": shape, "truncated": True}
        if dtype == "bool":
            data = flat.tolist()
        elif flat.is_complex():
            data = _float_list(flat.real.tolist())
        else:
            data = _float_list(flat.double().tolist())
    else:
        import numpy as np

        array = np.asarray(value)
        dtype = "numpy." + str(array.dtype)
        shape = list(array.shape)
        if array.size > MAX_ELEMENTS:
            return {"__tensor__": None, "dtype": dtype, "shape": shape, "truncated": True}
        flat = array.reshape(-1)
        data = flat.tolist() if array.dtype == bool else _float_list(flat.astype(float).tolist())
    return {"__tensor__": data, "dtype": dtype, "shape": shape}


def run_call(namespace: dict, call: dict) -> dict:
    """Execute one call spec against `namespace` and report what happened.

    call = {"kind": "value" | "call" | "module", "target": name,
            "args": [...], "kwargs": {...}, "init": [...], "state": {...}}

    Returns {"ok": encoded result} or {"missing": name} or {"not_answered": True}
    or {"error": {"type": ..., "message": ...}}.
    """
    target = call["target"]
    if target not in namespace:
        return {"missing": target}
    obj = namespace[target]
    _recorders.clear()
    output = _run(namespace, obj, call)
    if _recorders:
        output["calls"] = [list(calls) for calls in _recorders]
        _recorders.clear()
    return output


def _run(namespace: dict, obj: Any, call: dict) -> dict:
    target = call["target"]
    try:
        if call["kind"] == "value":
            if obj is Ellipsis:
                raise NotAnswered(target)
            return _ok(_as_plain_value(obj))
        args = decode_arg(call.get("args", []))
        kwargs = decode_arg(call.get("kwargs", {}))
        if call["kind"] == "call":
            return _ok(obj(*args, **kwargs))
        if call["kind"] == "module":
            torch = _torch()
            module = obj(*decode_arg(call.get("init", [])))
            state = decode_arg(call.get("state", {}))
            if state:
                module.load_state_dict(state)
            module.eval()
            with torch.no_grad():
                return _ok(module(*args, **kwargs))
        raise ValueError(f"unknown call kind {call['kind']!r}")
    except (NotImplementedError, NotAnswered):
        return {"not_answered": True}
    except RecursionError:
        return {"error": {"type": "RecursionError", "message": "maximum recursion depth exceeded"}}
    except Exception as error:  # the student's error is data, not a crash of the grader
        return {"error": {"type": type(error).__name__, "message": _safe_str(error)}}


def _ok(value: Any) -> dict:
    """The encoded value; a value that cannot be read (a meta tensor: NotImplementedError) is an error,
    never "not answered"."""
    try:
        return {"ok": encode_result(value)}
    except RecursionError:
        raise
    except Exception as error:
        return {"error": {"type": type(error).__name__, "message": _safe_str(error)}}


def _safe_str(error: BaseException) -> str:
    try:
        return str(error)[:MAX_REPR * 2]
    except Exception:
        return "<message unavailable>"


def _as_plain_value(obj: Any) -> Any:
    """Values typed by hand (lab00): lists of numbers, arrays or tensors."""
    if isinstance(obj, (list, tuple)):
        try:
            import numpy as np

            array = np.array(obj, dtype=float)
            return array
        except (ValueError, TypeError):
            return list(obj)
    return obj
