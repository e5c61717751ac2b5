"""Exercise definitions: inputs, reference, tolerance, diagnoses, points.

One definition serves the student's ``check`` cell and the instructor's grader:

1. ``cases(ctx, seed)`` lists the calls to make (plain data). Public cases are
   what ``check`` shows; a ``seed`` adds randomised cases only the grader draws.
2. ``runtime.run_call`` executes each call against the student's namespace and
   returns plain data (in the notebook for ``check``, in a sandboxed worker for
   the grader).
3. ``judge(ctx, cases, outputs)`` compares that plain data with the reference
   and returns a Result. It never sees a student object, only numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import i18n
from .i18n import N_


@dataclass(frozen=True)
class Case:
    """One call to make, described by plain data.

    `name` identifies the case (a call such as `causal_mask(4)` is shown as it is); `label`, where the name
    is no code a student wrote, is the message key and parameters that describe the case in the reader's
    language (lab03's "the decoder without a mask"). Messages show `shown`.
    """

    name: str
    call: dict
    public: bool = True
    data: dict = field(default_factory=dict)  # what judge needs besides the output (never sent to the worker)
    label: tuple[str, dict] | None = None

    @property
    def shown(self) -> "str | Feedback":
        return Feedback(self.label[0], dict(self.label[1])) if self.label else self.name


@dataclass(frozen=True)
class Feedback:
    """One message of a result: its key and parameters. A parameter may itself be a Feedback (a case's
    description), rendered in the same language; `count` names the parameter whose number picks the form
    of a plural message (i18n.NP_)."""

    key: str
    params: dict = field(default_factory=dict)
    count: str | None = None
    item: bool = False  # an item of a list: on a line of its own (Result.render)

    def render(self, lang: str) -> str:
        params = {name: value.render(lang) if isinstance(value, Feedback) else value
                  for name, value in self.params.items()}
        # formatted here, not through i18n.t(key, lang, **params): a message may name a placeholder {key}
        if self.count is not None:
            return i18n.plural_text(self.key, lang, float(self.params[self.count])).format(**params)
        return i18n.text(self.key, lang).format(**params)


def render_feedback(feedback: list[Feedback], lang: str) -> str:
    """Messages as one text: sentences joined by a space, each item of a list on a line of its own (and what
    follows a list, too). `check` and the grader's records render through it alike."""
    text, after_item = "", False
    for item in feedback:
        part = item.render(lang)
        separator = "\n" if item.item or after_item else " "
        text = f"{text}{separator}{part}" if text else part
        after_item = item.item
    return text


@dataclass
class Result:
    exercise: str
    points: float
    max_points: float
    status: str  # passed | failed | not_answered | missing | error | timeout
    feedback: list[Feedback] = field(default_factory=list)
    diagnosis: str | None = None  # name of the recognised mistake, if any
    revealed: list[Feedback] | None = None  # the full feedback, where `feedback` hides hidden inputs

    def render(self, lang: str) -> str:
        return render_feedback(self.feedback, lang)

    def to_plain(self, lang: str) -> dict:
        return {
            "points": self.points,
            "max_points": self.max_points,
            "status": self.status,
            "diagnosis": self.diagnosis,
            "feedback": self.render(lang),
        }


class Array:
    """A decoded tensor: values as float64 (or bool) plus the dtype it came with."""

    def __init__(self, values: np.ndarray, dtype: str):
        self.values = values
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def is_bool(self) -> bool:
        return self.dtype in ("bool", "numpy.bool")

    @property
    def is_float(self) -> bool:
        return "float" in self.dtype or self.dtype in ("half", "double")


def decode(value: Any) -> Any:
    """Plain data from runtime.encode_result back into Array, tuple, list, scalar."""
    if isinstance(value, dict):
        if "__tensor__" in value:
            if value["__tensor__"] is None:
                return TooLarge(value["dtype"], tuple(value["shape"]))
            is_bool = value["dtype"] in ("bool", "numpy.bool")
            data = np.array(value["__tensor__"], dtype=bool if is_bool else float)
            return Array(data.reshape(value["shape"]), value["dtype"])
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        if "__object__" in value:
            return Opaque(value["__object__"], value.get("repr", ""))
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


@dataclass(frozen=True)
class TooLarge:
    dtype: str
    shape: tuple


@dataclass(frozen=True)
class Opaque:
    type_name: str
    repr: str


def describe(value: Any, typed: bool = False) -> str:
    """Short language-neutral description of what came back: `float32 (3, 3)`.

    A numpy array says so (`numpy.ndarray bool (4, 4)`), since function
    exercises expect torch tensors; `typed` answers (hand-typed lists, which
    the runtime turns into numpy arrays) only give dtype and shape.
    """
    if isinstance(value, (Array, TooLarge)):
        dtype = value.dtype.removeprefix("numpy.")
        if value.dtype.startswith("numpy.") and not typed:
            return f"numpy.ndarray {dtype} {value.shape}"
        return f"{dtype} {value.shape}"
    if isinstance(value, tuple):
        return "tuple(" + ", ".join(describe(v, typed) for v in value) + ")"
    if isinstance(value, Opaque):
        return value.type_name
    if isinstance(value, list):
        if any(isinstance(v, (Array, TooLarge)) for v in value):
            return "list[" + ", ".join(describe(v, typed) for v in value) + "]"
        return f"list[{len(value)}]"
    return type(value).__name__


def close(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """Same shape and equal within atol, with inf == inf and -inf == -inf."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    finite = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        ok = same_inf | (finite & (np.abs(a - b) <= atol + 1e-12))
    return bool(ok.all())


def first_difference(got: np.ndarray, want: np.ndarray, atol: float) -> tuple[int, ...] | None:
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    for index in np.ndindex(want.shape):
        a, b = got[index], want[index]
        if np.isinf(a) and np.isinf(b) and np.sign(a) == np.sign(b):
            continue
        if not (np.isfinite(a) and np.isfinite(b) and abs(a - b) <= atol + 1e-12):
            return index
    return None


def first_wrong_entry(got: np.ndarray, want: np.ndarray, atol: float) -> tuple[int, ...]:
    """The entry to name in a wrong answer: the first that differs, else the first entry of all.

    first_difference allows 1e-12 more than `close` and the judges' close_nan: where every gap lies
    just above atol it finds none, and a bare (0,) would pick a whole row, which no message can show.
    """
    return first_difference(got, want, atol) or (0,) * np.ndim(want)


def fmt_number(x: float) -> str:
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "-inf" if x < 0 else "inf"
    return f"{x:.4g}"


class Exercise:
    """Base class. Subclasses set id, points, section and implement cases/judge_outputs."""

    id: str = ""
    lab: str = ""  # set by LabSpec
    points: float = 1.0
    section: str = ""  # where the chapter explains it, e.g. "03 §4"
    kind: str = "call"
    diagnoses: tuple[str, ...] = ()  # the named mistakes judge can report
    # calls this exercise's function must not make (`F.scaled_dot_product_attention`): the class
    # report flags them; points are taken only if the instructor asks (grade --penalise-forbidden)
    forbidden_calls: tuple[str, ...] = ()

    def diagnosis_names(self) -> tuple[str, ...]:
        return self.diagnoses

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        raise NotImplementedError

    def judge(self, ctx: dict, cases: list[Case], outputs: list[dict]) -> Result:
        """Common handling of missing, unanswered and failing calls, then judge_outputs."""
        required = [(case, output) for case, output in zip(cases, outputs) if not case.data.get("optional")]
        for _, output in required:
            if "missing" in output:
                return self.result(0, "missing", Feedback("common.missing", {"name": output["missing"]}))
        if any("not_answered" in output for _, output in required):
            key = "common.not_answered_value" if self.kind == "value" else "common.not_answered"
            return self.result(0, "not_answered", Feedback(key, {"name": self.id}))
        for case, output in required:
            if "timeout" in output:
                return self.result(0, "timeout", Feedback("common.timeout", {"name": self.id, "case": case.shown}))
            if "error" in output:
                error = output["error"]
                return self.result(
                    0,
                    "error",
                    Feedback("common.raised", {"name": self.id, "case": case.shown,
                                               "type": error["type"], "message": error["message"]}),
                )
        decoded = [decode(output["ok"]) if "ok" in output else None for output in outputs]
        return self.judge_outputs(ctx, cases, decoded)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        raise NotImplementedError

    # helpers for subclasses
    def result(self, points: float, status: str, *feedback: Feedback, diagnosis: str | None = None) -> Result:
        return Result(self.id, float(points), float(self.points), status, list(feedback), diagnosis)

    def passed(self, *extra: Feedback) -> Result:
        return self.result(self.points, "passed", Feedback("common.passed", {"name": self.id}), *extra)

    def diagnosed(self, diagnosis: str, points: float = 0.0, **params) -> Result:
        """A named mistake recognised; its message is `<lab>.<diagnosis>`, else `diagnosis.<diagnosis>`."""
        key = f"{self.lab}.{diagnosis}"
        if not i18n.has(key):
            key = f"diagnosis.{diagnosis}"
        feedback = [Feedback("common.failed", {"name": self.id}), Feedback(key, params)]
        if self.section:
            feedback.append(Feedback("common.see_section", {"section": self.section}))
        return self.result(points, "failed", *feedback, diagnosis=diagnosis)


# The named diagnoses every lab may use; `diagnosed(name)` takes `<lab>.<name>` first, if the lab has its own.
N_(
    "diagnosis.binary_mask", "diagnosis.diagonal_masked", "diagnosis.divided_by_dk", "diagnosis.forgot_scale",
    "diagnosis.mask_after_softmax", "diagnosis.no_mask", "diagnosis.off_by_one", "diagnosis.transposed_k",
    "diagnosis.weights_transposed", "diagnosis.wrong_axis", "diagnosis.wrong_triangle",
    "diagnosis.zero_inf_swapped",
)


def shape_mismatch(exercise: Exercise, case: Case, got: Any, expected: str) -> Result:
    """A typed answer (lab00) of the wrong shape: the shapes; another answer of the wrong type or shape: what
    it must be and what it is (`float32 (2, 5, 8)`, `tuple(float32 (2, 5, 8), NoneType)`)."""
    if exercise.kind == "value" and isinstance(got, (Array, TooLarge)):
        message = Feedback("common.wrong_shape_value", {"expected": expected, "got": str(tuple(got.shape))})
    elif exercise.kind == "value":  # an object, not typed numbers: a shape would not say what is wrong
        message = Feedback("common.not_a_table", {"expected": expected, "got": describe(got, typed=True)})
    else:
        message = Feedback("common.wrong_type", {"case": case.shown, "expected": expected, "got": describe(got)})
    return exercise.result(0, "failed", Feedback("common.failed", {"name": exercise.id}), message,
                           diagnosis="wrong_shape")


def value_mismatch(exercise: Exercise, case: Case, got: np.ndarray, index: tuple[int, ...]) -> Result:
    """No named mistake fits: point at the first wrong entry without revealing the answer."""
    position = ", ".join(str(i) for i in index)
    feedback = [
        Feedback("common.failed", {"name": exercise.id}),
        Feedback("common.wrong_entry_value" if exercise.kind == "value" else "common.wrong_entry",
                 {"case": case.shown, "index": position, "got": fmt_number(got[index])}),
    ]
    if exercise.section:
        feedback.append(Feedback("common.see_section", {"section": exercise.section}))
    return exercise.result(0, "failed", *feedback, diagnosis="wrong_values")


Candidate = Callable[..., np.ndarray]
