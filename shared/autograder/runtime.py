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
  {"__function__": source, "name": "f", "record": true}           a function (arguments only), compiled
                                                                  here (in-process `check`); with "record",
                                                                  the call's result also lists the inputs it
                                                                  was called with ("calls")
  {"__remote__": token}                                           a function (arguments only) whose code
                                                                  runs in the grader: the sandboxed worker
                                                                  gets only this handle (see "Remote
                                                                  functions" below)
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
        if "__remote__" in value:
            return remote_function(value["__remote__"])
        if "__function__" in value:
            function = compile_function(value["__function__"], value["name"])
            return _recording(function) if value.get("record") else function
        if "__tuple__" in value:
            return tuple(decode_arg(v) for v in value["__tuple__"])
        return {k: decode_arg(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_arg(v) for v in value]
    return value


def compile_function(source: str, name: str):
    """The function `name` defined by trusted `source`, with torch, F, nn and math at hand."""
    namespace: dict[str, Any] = {"math": math}
    torch = _torch()
    namespace.update(torch=torch, F=torch.nn.functional, nn=torch.nn)
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace[name]


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


# ---------------------------------------------------------------- remote functions (in the sandboxed worker)
# A student's test (lab02's perturbation_test and jacobian_leaks, lab03's prefix_test) is handed
# functions to probe, correct and buggy. In the grader's worker it gets a handle instead of a function:
# calling the handle sends the inputs to the grader, which runs the function there and sends back the
# output. Nothing in the student's process (bytecode, constants, source, closure, memory) tells one
# function from another, only its behaviour does. The worker connects the channel (connect_remote);
# each request is plain data:
#   {"remote": token, "op": "call" | "vjp" | "jvp" | "jacobian",
#    "args": [...], "kwargs": {...}       the arguments, each top-level tensor replaced by {"__slot__": i}
#    "tensors": [tensor, ...]             those tensors (autograd and torch.func see them: see _functions)
#    "extra": [tensor | None, ...]        cotangents (vjp) or tangents (jvp)
#    "needs": [bool, ...]                 which tensors a vjp or jacobian is taken against
#    "batch": {"size": n, "tensors": [bool, ...], "extra": [bool, ...]}   map over dim 0 of the flagged
#  }                                                                     values (vmap), else absent
# and the grader answers {"ok": value} or {"error": {"type": ..., "message": ...}}.

REMOTE_MAX_ELEMENTS = 65_536  # numbers in one request, at most (the grader refuses more, too)
_REMOTE_ERRORS = {cls.__name__: cls for cls in (TypeError, ValueError, RuntimeError, IndexError, KeyError,
                                                ZeroDivisionError, OverflowError, AttributeError)}
_remote_channel = None  # message -> reply, set by the worker
_REMOTE_FUNCTIONS = None  # the torch.autograd.Function classes, made once torch is imported


def connect_remote(channel) -> None:
    """Where remote calls go: `channel(message) -> reply` (the worker's socket to the grader)."""
    global _remote_channel
    _remote_channel = channel


def remote_function(token: str):
    """The callable a student's test gets: the same code for every function, only `token` differs
    (a random name the grader gave this function for this one call)."""
    def candidate(*args, **kwargs):
        return _call_remote(token, args, kwargs)

    return candidate


class _Spec:
    """What a remote request needs besides the tensors: the token, the other arguments, the batching."""

    __slots__ = ("token", "template", "batch")

    def __init__(self, token: str, template: dict, batch: dict | None = None):
        self.token, self.template, self.batch = token, template, batch


def _call_remote(token: str, args: tuple, kwargs: dict) -> Any:
    import sys

    torch = sys.modules.get("torch")
    tensors: list = []

    def slot(value):
        if torch is not None and isinstance(value, torch.Tensor):
            tensors.append(value)
            return {"__slot__": len(tensors) - 1}
        return value

    template = {"args": [slot(a) for a in args], "kwargs": {k: slot(v) for k, v in kwargs.items()}}
    spec = _Spec(token, template)
    if tensors and _differentiated(torch, tensors):
        return _functions()["call"].apply(spec, *tensors)
    return _request(spec, "call", tensors, [])  # no autograd at work: the plain request is cheaper


def _differentiated(torch, tensors) -> bool:
    """Whether autograd, forward-mode AD, torch.func or torch's older vmap looks at these tensors."""
    if torch._C._are_functorch_transforms_active():
        return True
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return True
    if getattr(torch.autograd.forward_ad, "_current_level", -1) >= 0 and any(
            torch.autograd.forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        return True
    return any(_legacy_batched(t) for t in tensors)


def _request(spec: _Spec, op: str, tensors, extra, needs=None) -> Any:
    if _remote_channel is None:
        raise RuntimeError("this function can only be called while the grader runs your test")
    message = {"remote": spec.token, "op": op,
               "args": [_encode_remote(a) for a in spec.template["args"]],
               "kwargs": {str(k): _encode_remote(v) for k, v in spec.template["kwargs"].items()},
               "tensors": [_encode_remote_tensor(t) for t in tensors],
               "extra": [None if e is None else _encode_remote_tensor(e) for e in extra]}
    size = sum(t.numel() for t in (*tensors, *extra) if t is not None)
    if size > REMOTE_MAX_ELEMENTS:
        raise ValueError(f"the function handed to your test takes at most {REMOTE_MAX_ELEMENTS} numbers "
                         f"per call, not {size}")
    if needs is not None:
        message["needs"] = [bool(n) for n in needs]
    if spec.batch is not None:
        message["batch"] = spec.batch
    reply = _remote_channel(message)
    if not isinstance(reply, dict) or "ok" not in reply:
        error = reply.get("error") if isinstance(reply, dict) else None
        error = error if isinstance(error, dict) else {}
        cls = _REMOTE_ERRORS.get(str(error.get("type")), RuntimeError)
        raise cls(str(error.get("message", "the grader did not answer")))
    return _decode_remote(reply["ok"])


def _encode_remote_tensor(tensor) -> dict:
    if tensor.is_complex():
        raise TypeError("the function handed to your test takes real numbers, not complex ones")
    if tensor.numel() > REMOTE_MAX_ELEMENTS:
        raise ValueError(f"the function handed to your test takes at most {REMOTE_MAX_ELEMENTS} numbers "
                         f"per call, not {tensor.numel()}")
    return encode_bytes(tensor)


def encode_bytes(tensor) -> dict:
    """A tensor as its raw bytes in base64: exact (NaN and -0.0 too) and cheaper than a list of numbers."""
    import base64

    import torch

    functorch = torch._C._functorch
    if functorch.is_functorch_wrapped_tensor(tensor):
        while functorch.is_functorch_wrapped_tensor(tensor) and not functorch.is_batchedtensor(tensor):
            tensor = functorch.get_unwrapped(tensor)  # a torch.func wrapper (jvp, grad) around these values
        with torch._C._DisableFuncTorch():  # plain tensor operations, whatever transform is running
            raw = tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    else:
        raw = tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    return {"__bytes__": base64.b64encode(raw).decode("ascii"), "dtype": str(tensor.dtype).replace("torch.", ""),
            "shape": list(tensor.shape)}


def decode_bytes(value: dict):
    """The tensor of encode_bytes (ValueError when the bytes do not fit dtype and shape)."""
    import base64
    import binascii

    import torch

    dtype = getattr(torch, str(value["dtype"]), None)
    if not isinstance(dtype, torch.dtype) or dtype.is_complex:
        raise ValueError("no such dtype")
    shape = [int(n) for n in value["shape"]]
    try:
        raw = base64.b64decode(value["__bytes__"], validate=True)
    except (binascii.Error, TypeError) as error:
        raise ValueError("not base64") from error
    count = 1
    for n in shape:
        count *= n
    if len(raw) != count * dtype.itemsize:
        raise ValueError("the bytes do not fit the shape")
    if dtype == torch.bool:  # any byte but 0 is True: no bool tensor holds another value
        return (torch.frombuffer(bytearray(raw), dtype=torch.uint8) != 0).reshape(shape) if raw else \
            torch.zeros(shape, dtype=torch.bool)
    if not raw:
        return torch.zeros(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)


def _encode_remote(value, depth: int = 0) -> Any:
    """A non-tensor argument as plain data (numbers, strings, lists, tuples, arrays)."""
    if depth > 8:
        raise TypeError("the function handed to your test takes no arguments nested this deep")
    if value is None or type(value) in (bool, int, float):
        return value
    for kind in (bool, int, float):  # subclasses (numpy.float64 is a float) as the plain type
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, str):
        return value[:1000]
    if isinstance(value, dict) and set(value) == {"__slot__"}:
        return value
    if isinstance(value, tuple):
        return {"__tuple__": [_encode_remote(v, depth + 1) for v in value[:REMOTE_MAX_ELEMENTS]]}
    if isinstance(value, list):
        if len(value) > REMOTE_MAX_ELEMENTS:
            raise ValueError(f"the function handed to your test takes at most {REMOTE_MAX_ELEMENTS} numbers")
        return [_encode_remote(v, depth + 1) for v in value]
    module = type(value).__module__
    if module == "numpy" or module.startswith("numpy."):
        import numpy as np

        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(f"the function handed to your test cannot take an array of {array.dtype}")
        if array.size > REMOTE_MAX_ELEMENTS:
            raise ValueError(f"the function handed to your test takes at most {REMOTE_MAX_ELEMENTS} numbers")
        data = array.reshape(-1).tolist()
        return {"__ndarray__": data, "dtype": str(array.dtype), "shape": list(array.shape)}
    if module.startswith("torch") and type(value).__name__ == "Size":
        return {"__tuple__": [int(n) for n in value]}
    raise TypeError(f"the function handed to your test cannot take a {type(value).__name__}: "
                    "pass tensors, arrays, numbers or lists")


def _decode_remote(value) -> Any:
    if isinstance(value, list):
        return [_decode_remote(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__bytes__" in value:
        return decode_bytes(value)
    if "__tensor__" in value:
        torch = _torch()
        dtype = getattr(torch, value["dtype"])
        return torch.tensor(value["__tensor__"], dtype=dtype).reshape(value["shape"])
    if "__ndarray__" in value:
        import numpy as np

        return np.array(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])
    if "__tuple__" in value:
        return tuple(_decode_remote(v) for v in value["__tuple__"])
    return None


def _legacy_batched(value) -> bool:
    """A tensor of torch's older vmap (autograd.functional.jacobian(..., vectorize=True)): no values to send."""
    import torch

    check = getattr(torch._C._functorch, "is_legacy_batchedtensor", None)
    return value is not None and check is not None and bool(check(value))


def _moved(values, dims):
    """The values with their batch dimension first, and which of them have one."""
    moved = [v if d is None or v is None else v.movedim(d, 0) for v, d in zip(values, dims)]
    return moved, [d is not None for d in dims]


def _outputs_dims(output):
    if isinstance(output, tuple):
        return tuple(0 for _ in output)
    return 0


def _functions() -> dict:
    """torch.autograd.Function classes whose forward, backward (vjp), jvp and vmap rules are requests.

    They make the handle work as the function itself would under autograd (backward,
    autograd.grad, autograd.functional.jacobian) and torch.func (jacrev, jacfwd, vmap, grad).
    """
    global _REMOTE_FUNCTIONS
    if _REMOTE_FUNCTIONS is not None:
        return _REMOTE_FUNCTIONS
    torch = _torch()
    nested = "the function handed to your test cannot be vmapped twice"

    class Call(torch.autograd.Function):
        @staticmethod
        def forward(spec, *tensors):
            return _request(spec, "call", tensors, [])

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.spec = inputs[0]
            ctx.output_size = sum(o.numel() for o in (output if isinstance(output, tuple) else (output,))
                                  if isinstance(o, torch.Tensor))
            ctx.jacobians = None
            ctx.save_for_backward(*inputs[1:])
            ctx.save_for_forward(*inputs[1:])

        @staticmethod
        def backward(ctx, *grads):
            tensors = ctx.saved_tensors
            needs = list(ctx.needs_input_grad[1:])
            if not any(needs):
                return (None,) * (1 + len(tensors))
            if _small_jacobian(ctx, tensors, needs) or any(_legacy_batched(g) for g in grads):
                found = _jacobian_products(ctx, tensors, needs, grads, reverse=True)
            else:
                found = VJP.apply(ctx.spec, tuple(needs), len(tensors), *tensors, *grads)
            found = iter(found)
            return (None, *[next(found) if need else None for need in needs])

        @staticmethod
        def jvp(ctx, _spec, *tangents):
            tensors = ctx.saved_tensors
            needs = [t is not None for t in tangents]
            if _small_jacobian(ctx, tensors, needs) or any(_legacy_batched(t) for t in tangents):
                return _jacobian_products(ctx, tensors, needs, tangents, reverse=False)
            return JVP.apply(ctx.spec, len(tensors), *tensors, *tangents)

        @staticmethod
        def vmap(info, in_dims, spec, *tensors):
            if spec.batch is not None:
                raise RuntimeError(nested)
            moved, flags = _moved(tensors, in_dims[1:])
            batched = _Spec(spec.token, spec.template, {"size": info.batch_size, "tensors": flags, "extra": []})
            output = Call.apply(batched, *moved)
            return output, _outputs_dims(output)

    class VJP(torch.autograd.Function):
        @staticmethod
        def forward(spec, needs, count, *values):
            grads = _request(spec, "vjp", values[:count], values[count:], needs)
            return tuple(grads)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, *grads):
            raise RuntimeError("second derivatives of the function handed to your test are not available")

        @staticmethod
        def vmap(info, in_dims, spec, needs, count, *values):
            dims = in_dims[3:]
            if spec.batch is not None and any(d is not None for d in dims):
                raise RuntimeError(nested)
            if spec.batch is not None:  # the forward was batched: so are its cotangents, at dim 0
                batched = spec
            else:
                values, flags = _moved(values, dims)
                batched = _Spec(spec.token, spec.template,
                                {"size": info.batch_size, "tensors": flags[:count], "extra": flags[count:]})
            output = VJP.apply(batched, needs, count, *values)
            return output, _outputs_dims(output)

    class JVP(torch.autograd.Function):
        @staticmethod
        def forward(spec, count, *values):
            return _request(spec, "jvp", values[:count], values[count:])

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def vmap(info, in_dims, spec, count, *values):
            dims = in_dims[2:]
            if spec.batch is not None and any(d is not None for d in dims):
                raise RuntimeError(nested)
            if spec.batch is not None:
                batched = spec
            else:
                values, flags = _moved(values, dims)
                batched = _Spec(spec.token, spec.template,
                                {"size": info.batch_size, "tensors": flags[:count], "extra": flags[count:]})
            output = JVP.apply(batched, count, *values)
            return output, _outputs_dims(output)

    # Cotangents of a batched forward carry its batch at dim 0: the grader maps over them too.
    _REMOTE_FUNCTIONS = {"call": Call, "vjp": VJP, "jvp": JVP}
    return _REMOTE_FUNCTIONS


LOCAL_JACOBIAN = 1 << 16  # entries of a Jacobian asked once, then multiplied here: one request, not one per pass


def _small_jacobian(ctx, tensors, needs) -> bool:
    """Whether this forward's whole Jacobian is small enough to ask for once (backward passes, jvps and
    torch.func's vmap over them are then products here, with no more requests)."""
    if ctx.spec.batch is not None:
        return False
    size = sum(t.numel() for t, need in zip(tensors, needs) if need)
    return 0 < ctx.output_size * size <= LOCAL_JACOBIAN


def _jacobian_products(ctx, tensors, needs, values, reverse: bool):
    """Products with the whole Jacobian, asked once per forward: J[o][i] has shape out_shape + in_shape.

    reverse: `values` are cotangents, one per output; the result has one gradient per needed input.
    Else `values` are tangents, one per input; the result is the output's tangent.
    A zero in a cotangent or tangent picks nothing, not even a NaN (0 * nan is nan): each backward pass
    that autograd's jacobian makes (one-hot cotangents) gives back the very row it computed.
    """
    import torch

    if ctx.spec.batch is not None:
        raise RuntimeError("the function handed to your test cannot be vmapped twice")
    key = tuple(bool(n) for n in needs)
    if ctx.jacobians is None or ctx.jacobians[0] != key:
        ctx.jacobians = (key, _request(ctx.spec, "jacobian", tensors, [], needs))
    jacobians = ctx.jacobians[1]

    def product(jacobian, value, front: bool):
        value = value.to(jacobian.dtype)
        n = value.dim()
        if front:  # cotangent (out_shape) . J (out_shape + in_shape)
            shaped = value.reshape(value.shape + (1,) * (jacobian.dim() - n))
            terms = torch.where(shaped != 0, shaped * jacobian, torch.zeros((), dtype=jacobian.dtype))
            return terms.sum(dim=tuple(range(n))) if n else terms
        shaped = value.reshape((1,) * (jacobian.dim() - n) + value.shape)  # J . tangent (in_shape)
        terms = torch.where(shaped != 0, jacobian * shaped, torch.zeros((), dtype=jacobian.dtype))
        return terms.sum(dim=tuple(range(jacobian.dim() - n, jacobian.dim()))) if n else terms

    if reverse:
        found = []
        for column in range(sum(key)):
            total = None
            for g, row in zip(values, jacobians):
                if g is None:
                    continue
                term = product(row[column], g, front=True)
                total = term if total is None else total + term
            found.append(total)
        return found
    wanted = [t for t, need in zip(values, needs) if need]
    outputs = []
    for row in jacobians:
        total = None
        for t, jacobian in zip(wanted, row):
            term = product(jacobian, t, front=False)
            total = term if total is None else total + term
        outputs.append(total)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
