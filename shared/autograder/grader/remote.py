"""Functions handed to a student's test run here, in the grader; the worker's child holds only a handle.

lab02's perturbation_test and jacobian_leaks and lab03's prefix_test are given
functions to probe, correct and buggy, as `{"__function__": source, "name", "record"}`
arguments. Were their code compiled in the student's process, a test could
recognise each one by its bytecode, constants or source (the public bugs02.py
lists them all) and call it only as often as the evidence rule asks. So the
engine replaces each such argument by `{"__remote__": token}` (a random name,
new for every call) before the call reaches the child (`translate`). The child's
handle (runtime.remote_function) sends each call's inputs over its socket; the
grader runs its own copy of the function on them (`RemoteFunction.handle`) and
sends the output back. Only the function's behaviour is visible to the test.

The inputs logged here, not anything the child says, are the evidence a verdict
"not causal" needs (evidence.py): they become the call's "calls".

Every request is bounded: numbers per request, size of each axis, samples of a
batch, requests and numbers per function over one call, entries of a whole
Jacobian. The grader's CPU time on a student's requests is counted against
that student's time limit (Session), so a test cannot make the grader compute
without end.
"""
from __future__ import annotations

import base64
import math
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from .. import runtime

MAX_REQUEST_ELEMENTS = runtime.REMOTE_MAX_ELEMENTS  # numbers in one request (tensors and list arguments)
MAX_AXIS = 128  # each axis of an input, but the batch axis of a vmap (attention costs T * T)
MAX_DIMS = 6
MAX_BATCH = 1024  # samples of one vmapped request
MAX_ARGUMENTS = 16
MAX_REQUESTS = 4096  # requests to one function during one call (one case)
MAX_ELEMENTS = 4_000_000  # numbers one function takes during one call
MAX_JACOBIAN = 1 << 20  # entries of one whole Jacobian, asked once per forward (runtime.LOCAL_JACOBIAN)
MAX_JACOBIAN_ROWS = 4096  # and its rows: one backward pass each, as autograd.functional.jacobian makes them
MAX_REPLY_ELEMENTS = 1 << 20  # numbers in one reply
OPS = ("call", "vjp", "jvp", "jacobian")
DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                    "bool"})
INT64 = 1 << 63


class Refused(Exception):
    """A request the function does not take (its message reaches the student's test as an exception)."""


def translate(value: Any, found: list["RemoteFunction"]) -> Any:
    """A call spec with every `{"__function__": ...}` replaced by a handle; the functions go to `found`."""
    if isinstance(value, dict):
        if isinstance(value.get("__function__"), str) and isinstance(value.get("name"), str):
            function = RemoteFunction(value["__function__"], value["name"], bool(value.get("record")))
            found.append(function)
            return {"__remote__": function.token}
        if "__tensor__" in value:
            return value
        return {k: translate(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [translate(v, found) for v in value]
    return value


def evidence(functions: list["RemoteFunction"]) -> list[list]:
    """The inputs each recorded function was called with, in order: the call's "calls" (numpy arrays, or
    {"__shape__": ...} beyond runtime.MAX_RECORDED_ELEMENTS; evidence.recorded_inputs reads both)."""
    return [list(function.calls) for function in functions if function.record]


_CODE: OrderedDict[tuple[str, str], Any] = OrderedDict()  # compiled once per batch, run fresh per call
_CODE_LOCK = threading.Lock()
_THREADS = [False]


def _code(source: str, name: str):
    key = (source, name)
    with _CODE_LOCK:
        if key in _CODE:
            _CODE.move_to_end(key)
            return _CODE[key]
    code = compile(source, f"<{name}>", "exec")
    with _CODE_LOCK:
        _CODE[key] = code
        while len(_CODE) > 256:
            _CODE.popitem(last=False)
    return code


def _torch():
    import torch

    if not _THREADS[0]:
        _THREADS[0] = True
        if torch.get_num_threads() != 1:  # tiny functions: a thread pool costs more than it saves
            torch.set_num_threads(1)
    return torch


class RemoteFunction:
    """One function handed to one call of a student's test, and what the test asked of it."""

    def __init__(self, source: str, name: str, record: bool):
        self.token = secrets.token_hex(12)
        self.source, self.name, self.record = source, name, record
        self._function: Callable | None = None
        self.requests = 0
        self.elements = 0
        self.calls: list = []  # snapshots of the inputs, the evidence (runtime._snapshot's format)
        self._recorded = 0
        self._last: np.ndarray | None = None
        self._last_key: str | None = None

    def function(self) -> Callable:
        # A fresh namespace per call: whatever a function caches (weights per size) dies with the call.
        if self._function is None:
            torch = _torch()
            namespace: dict[str, Any] = {"math": math, "torch": torch, "F": torch.nn.functional, "nn": torch.nn}
            exec(_code(self.source, self.name), namespace)
            self._function = namespace[self.name]
        return self._function

    def handle(self, message: dict) -> dict:
        """The reply to one request of the child: {"ok": value} or {"error": {"type", "message"}}."""
        try:
            return {"ok": self._handle(message)}
        except Refused as refused:
            return {"error": {"type": "RuntimeError", "message": f"the function handed to your test {refused}"}}
        except RecursionError:
            return {"error": {"type": "RuntimeError", "message": "maximum recursion depth exceeded"}}
        except Exception as error:  # the function's own error on this input: the test sees it raised
            return {"error": {"type": type(error).__name__, "message": str(error)[:500]}}

    # -- one request
    def _handle(self, message: dict) -> Any:
        op = message.get("op")
        if op not in OPS:
            raise Refused("knows no such operation")
        self.requests += 1
        if self.requests > MAX_REQUESTS:
            raise Refused(f"takes at most {MAX_REQUESTS} calls per case")
        counter = [0]
        tensors = [self._tensor(t, counter) for t in _list(message.get("tensors"), "tensors")]
        extra = [None if e is None else self._tensor(e, counter) for e in _list(message.get("extra"), "values")]
        args = _list(message.get("args"), "arguments")
        kwargs = message.get("kwargs", {})
        if not isinstance(kwargs, dict) or len(args) + len(kwargs) > MAX_ARGUMENTS:
            raise Refused(f"takes at most {MAX_ARGUMENTS} arguments")
        args = [_value(a, counter, len(tensors)) for a in args]
        kwargs = {str(k): _value(v, counter, len(tensors)) for k, v in kwargs.items()}
        if counter[0] > MAX_REQUEST_ELEMENTS:
            raise Refused(f"takes at most {MAX_REQUEST_ELEMENTS} numbers per call")
        self.elements += counter[0]
        if self.elements > MAX_ELEMENTS:
            raise Refused(f"takes at most {MAX_ELEMENTS} numbers per case")
        needs = message.get("needs", [True] * len(tensors))
        if not (isinstance(needs, list) and len(needs) == len(tensors) and all(type(n) is bool for n in needs)):
            raise Refused("was asked for gradients it cannot tell")
        batch = self._batch(message.get("batch"), tensors, extra)
        size = batch["size"] if batch else 1

        def sample(i: int):
            if batch is None:
                return tensors, extra
            return ([t[i] if flag else t for t, flag in zip(tensors, batch["tensors"])],
                    [e[i] if e is not None and flag else e for e, flag in zip(extra, batch["extra"])])

        # What tells this input from the last one cheaply: the bytes of its first argument, as they came.
        first = args[0] if args else next(iter(kwargs.values()), None)
        key = message["tensors"][first.index]["__bytes__"] if batch is None and isinstance(first, _Slot) else None
        results = []
        for i in range(size):
            ts, es = sample(i)
            call_args = [_fill(a, ts) for a in args]
            call_kwargs = {k: _fill(v, ts) for k, v in kwargs.items()}
            self._log(call_args, call_kwargs, key)
            results.append(getattr(self, f"_{op}")(call_args, call_kwargs, ts, es, needs))
        if batch is None:
            return _encode(results[0], [0])
        if op == "vjp" and batch["forward"]:  # the vjp of a batched forward: a shared input's gradient sums
            combined = []
            for column, (tensor, flag) in enumerate(zip([t for t, n in zip(tensors, needs) if n],
                                                        [f for f, n in zip(batch["tensors"], needs) if n])):
                grads = [r[column] for r in results]
                combined.append(_torch().stack(grads) if flag else sum(grads[1:], grads[0]))
            return _encode(combined, [0])
        return _encode(_stack(results), [0])

    def _call(self, args, kwargs, tensors, extra, needs):
        torch = _torch()
        with torch.no_grad():
            return self.function()(*args, **kwargs)

    def _vjp(self, args, kwargs, tensors, cotangents, needs):
        torch = _torch()
        leaves = self._leaves(tensors, needs)
        with torch.enable_grad():
            output = self.function()(*_replace(args, tensors, leaves), **_replace(kwargs, tensors, leaves))
            outputs = _tensors_of(output)
            if len(cotangents) != len(outputs):
                raise Refused("got a cotangent per output it does not have")
            pairs = [(o, c if c is not None else torch.zeros_like(o)) for o, c in zip(outputs, cotangents)
                     if o.requires_grad]
            for o, c in pairs:
                if tuple(c.shape) != tuple(o.shape):
                    raise Refused(f"got a cotangent of shape {tuple(c.shape)} for an output of shape {tuple(o.shape)}")
            if not pairs:
                return [torch.zeros_like(leaf) for leaf in leaves.values()]
            grads = torch.autograd.grad([o for o, _ in pairs], list(leaves.values()),
                                        [c.to(o.dtype) for o, c in pairs], allow_unused=True)
        return [torch.zeros_like(leaf) if g is None else g for g, leaf in zip(grads, leaves.values())]

    def _jvp(self, args, kwargs, tensors, tangents, needs):
        torch = _torch()
        if len(tangents) != len(tensors):
            raise Refused("got a tangent per input it does not have")
        wanted = [i for i, t in enumerate(tangents) if t is not None]
        for i in wanted:
            if not tensors[i].is_floating_point() or tuple(tangents[i].shape) != tuple(tensors[i].shape):
                raise Refused("got a tangent that does not fit its input")
        function = self.function()

        def of(*primals):
            leaves = dict(zip(wanted, primals))
            return function(*_replace(args, tensors, leaves), **_replace(kwargs, tensors, leaves))

        if not wanted:
            output = self._call(args, kwargs, tensors, tangents, needs)
            return _map_tensors(output, torch.zeros_like)
        _, tangent = torch.func.jvp(of, tuple(tensors[i] for i in wanted),
                                    tuple(tangents[i].to(tensors[i].dtype) for i in wanted))
        return tangent

    def _jacobian(self, args, kwargs, tensors, extra, needs):
        torch = _torch()
        leaves = self._leaves(tensors, needs)
        output = self._call(args, kwargs, tensors, extra, needs)
        rows = sum(o.numel() for o in _tensors_of(output))
        if rows * sum(leaf.numel() for leaf in leaves.values()) > MAX_JACOBIAN or rows > MAX_JACOBIAN_ROWS:
            raise Refused(f"gives a Jacobian of at most {MAX_JACOBIAN_ROWS} rows and {MAX_JACOBIAN} entries")
        function = self.function()
        order = list(leaves)

        def of(*primals):
            chosen = dict(zip(order, primals))
            return function(*_replace(args, tensors, chosen), **_replace(kwargs, tensors, chosen))

        primals = tuple(tensors[i] for i in order)
        try:  # all backward passes at once
            jacobian = torch.autograd.functional.jacobian(of, primals, vectorize=True)
        except RuntimeError:  # an operation torch's vmap does not batch: one backward pass per row
            jacobian = torch.autograd.functional.jacobian(of, primals)
        rows = jacobian if isinstance(output, tuple) else (jacobian,)
        return [list(row) for row in rows]

    def _leaves(self, tensors, needs) -> dict:
        leaves = {}
        for i, (tensor, need) in enumerate(zip(tensors, needs)):
            if need:
                if not tensor.is_floating_point():
                    raise Refused("has no gradient with respect to an integer input")
                leaves[i] = tensor.detach().requires_grad_(True)
        return leaves

    def _batch(self, batch, tensors, extra) -> dict | None:
        if batch is None:
            return None
        if not isinstance(batch, dict):
            raise Refused("got a batch it cannot read")
        size, flags, extra_flags = batch.get("size"), batch.get("tensors"), batch.get("extra", [])
        if type(size) is not int or not 1 <= size <= MAX_BATCH:
            raise Refused(f"maps over at most {MAX_BATCH} samples")
        if not (isinstance(flags, list) and len(flags) == len(tensors) and all(type(f) is bool for f in flags)
                and isinstance(extra_flags, list) and len(extra_flags) in (0, len(extra))
                and all(type(f) is bool for f in extra_flags)):
            raise Refused("got a batch it cannot read")
        # Without flags for them, the extra values are the cotangents of a batched forward (runtime's
        # Call.backward): batched too, and an input shared by the samples gets the sum of their gradients.
        forward = not extra_flags
        extra_flags = extra_flags or [True] * len(extra)
        for value, flag in [*zip(tensors, flags), *zip(extra, extra_flags)]:
            if flag and value is not None and (value.dim() == 0 or value.shape[0] != size):
                raise Refused("got a batch whose inputs differ in size")
        return {"size": size, "tensors": flags, "extra": extra_flags, "forward": forward}

    def _tensor(self, value, counter) -> Any:
        if not isinstance(value, dict) or set(value) != {"__bytes__", "dtype", "shape"} \
                or not isinstance(value["__bytes__"], str) or value["dtype"] not in DTYPES:
            raise Refused("takes tensors it can read")
        shape = value["shape"]
        if not isinstance(shape, list) or len(shape) > MAX_DIMS or not all(type(n) is int and n >= 0 for n in shape):
            raise Refused("takes tensors it can read")
        if any(n > MAX_AXIS for n in shape[1:]) or (shape and shape[0] > max(MAX_AXIS, MAX_BATCH)):
            raise Refused(f"takes inputs of at most {MAX_AXIS} along each axis")
        counter[0] += math.prod(shape)
        if counter[0] > MAX_REQUEST_ELEMENTS:
            raise Refused(f"takes at most {MAX_REQUEST_ELEMENTS} numbers per call")
        try:
            return runtime.decode_bytes(value)
        except ValueError as error:
            raise Refused(f"cannot read a tensor: {error}") from None

    def _log(self, args: list, kwargs: dict, key: str | None = None) -> None:
        """Note the input (the first argument, as the in-process recorder does): the evidence.

        `key`, the input's bytes as sent, tells a repeated input (a Jacobian at the input just called)
        without comparing arrays."""
        if not self.record or len(self.calls) >= runtime.MAX_RECORDED_CALLS:
            return
        if key is not None and key == self._last_key:
            return
        first = args[0] if args else next(iter(kwargs.values()), None)
        array = _array(first)
        if array is None or key is None and self._last is not None and array.shape == self._last.shape \
                and np.array_equal(array, self._last, equal_nan=array.dtype.kind == "f"):
            return  # no input, or the input just called: nothing new to compare
        self._last, self._last_key = array, key
        if array.size > runtime.MAX_RECORDED_ELEMENTS or self._recorded + array.size > runtime.MAX_RECORDED_TOTAL:
            self.calls.append({"__shape__": [int(n) for n in array.shape]})
        else:
            self._recorded += array.size
            self.calls.append(array)


def _array(value) -> np.ndarray | None:
    """The input as a numpy array of numbers (a copy: the evidence), else None."""
    if value is None:
        return None
    try:
        if hasattr(value, "detach"):
            tensor = value.detach()
            # numpy has no bfloat16; a copy, whatever the function does to its input afterwards
            array = (tensor.float() if tensor.dtype.is_floating_point and tensor.element_size() < 4
                     else tensor).numpy().copy()
        else:
            array = np.array(value)
    except Exception:  # an argument that is no array of numbers is no evidence
        return None
    return array if array.dtype.kind in "biuf" else None


def _list(value, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refused(f"got {what} it cannot read")
    return value


def _value(value, counter, slots: int) -> Any:
    """A non-tensor argument from plain data; {"__slot__": i} stays a marker for the i-th tensor."""
    if value is None or type(value) in (bool, int, float, str):
        if type(value) is int and not -INT64 <= value < INT64:
            raise Refused("takes no integer this large")
        counter[0] += 1
        return value
    if isinstance(value, list):
        counter[0] += len(value)
        if counter[0] > MAX_REQUEST_ELEMENTS:
            raise Refused(f"takes at most {MAX_REQUEST_ELEMENTS} numbers per call")
        return [_value(v, counter, slots) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__slot__"} and type(value["__slot__"]) is int and 0 <= value["__slot__"] < slots:
            return _Slot(value["__slot__"])
        if set(value) == {"__tuple__"} and isinstance(value["__tuple__"], list):
            return tuple(_value(value["__tuple__"], counter, slots))
        if set(value) == {"__ndarray__", "dtype", "shape"}:
            data, shape = value["__ndarray__"], value["shape"]
            if not (isinstance(data, list) and isinstance(shape, list) and len(shape) <= MAX_DIMS
                    and all(type(n) is int and 0 <= n <= MAX_AXIS for n in shape)
                    and math.prod(shape) == len(data) and value["dtype"] in _NUMPY_DTYPES
                    and all(type(x) in (bool, int, float) for x in data)):
                raise Refused("takes arrays it can read")
            counter[0] += len(data)
            try:
                return np.array(data, dtype=value["dtype"]).reshape(shape)
            except (TypeError, ValueError, OverflowError):
                raise Refused("takes arrays it can read") from None
    raise Refused("takes tensors, arrays, numbers and lists only")


_NUMPY_DTYPES = frozenset({"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"})


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _fill(value, tensors):
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, list):
        return [_fill(v, tensors) for v in value]
    if isinstance(value, tuple):
        return tuple(_fill(v, tensors) for v in value)
    return value


def _replace(value, tensors: list, by_index: dict):
    """Arguments with the tensors at the given positions swapped for others (leaves needing gradients)."""
    swap = {id(tensors[i]): replacement for i, replacement in by_index.items()}
    if isinstance(value, dict):
        return {k: swap.get(id(v), v) for k, v in value.items()}
    return [swap.get(id(v), v) for v in value]


def _tensors_of(output) -> list:
    import torch

    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, tuple) and all(isinstance(o, torch.Tensor) for o in output):
        return list(output)
    raise Refused("returned no tensor to differentiate")


def _map_tensors(output, function):
    import torch

    if isinstance(output, torch.Tensor):
        return function(output)
    if isinstance(output, tuple):
        return tuple(_map_tensors(o, function) for o in output)
    return output


def _stack(results: list):
    torch = _torch()
    first = results[0]
    if isinstance(first, torch.Tensor):
        if not all(isinstance(r, torch.Tensor) and r.shape == first.shape for r in results):
            raise Refused("gave outputs of different shapes in one batch")
        return torch.stack(results)
    if isinstance(first, (tuple, list)):
        if not all(isinstance(r, type(first)) and len(r) == len(first) for r in results):
            raise Refused("gave outputs of different shapes in one batch")
        return type(first)(_stack([r[i] for r in results]) for i in range(len(first)))
    raise Refused("returned no tensor to batch")


def _encode(value, counter: list, depth: int = 0) -> Any:
    """What the function returned, as plain data the child's handle turns back into tensors."""
    import torch

    if depth > 8:
        raise Refused("returned a value nested too deep")
    if value is None or type(value) in (bool, int, float, str):
        return value
    size = int(value.numel()) if isinstance(value, torch.Tensor) else \
        int(value.size) if isinstance(value, np.ndarray) else 0
    counter[0] += size
    if counter[0] > MAX_REPLY_ELEMENTS:
        raise Refused(f"gives at most {MAX_REPLY_ELEMENTS} numbers per call")
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        if dtype not in DTYPES:
            raise Refused(f"returned a tensor of {value.dtype}")
        if dtype == "bfloat16" or value.requires_grad or not value.is_contiguous():
            return runtime.encode_bytes(value)
        return {"__bytes__": base64.b64encode(value.numpy().tobytes()).decode("ascii"), "dtype": dtype,
                "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, counter, depth + 1) for v in value]}
    if isinstance(value, list):
        return [_encode(v, counter, depth + 1) for v in value]
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.reshape(-1).tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    raise Refused(f"returned a {type(value).__name__}, which cannot be sent")


def cpu_clock() -> float:
    """CPU seconds of the calling thread: the grader's work on one student's requests."""
    return time.thread_time()
