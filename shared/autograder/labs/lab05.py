"""lab05, production masks: document masks for packed sequences, position ids from a left-padded
attention mask, the attention-sink window of StreamingLLM, and attention over a packed batch.

- ``document_causal_mask(doc_ids)``: bool (T, T) for (T,) ids, (B, 1, T, T) for (B, T) ids;
  True = may attend: same document and j <= i.
- ``packed_position_ids(doc_ids)``: long (T,), the position inside each document (0 at its start).
- ``position_ids_from_mask(attention_mask)``: long (B, T) for a left-padded 0/1 mask, as
  transformers 5.24's generate builds them: cumsum - 1, and 0 on padding.
- ``sink_window_mask(T, W, n_sink)``: bool (T, T), key j allowed for query i iff j <= i and
  (i - W < j or j < n_sink).
- ``packed_attention(q, k, v, doc_ids)``: (..., T, d_v), equal document by document to lab02's
  causal attention on each document alone (within 1e-5).

Cases are plain data; the judge computes the right answers and the classic slips with numpy
from the same arguments (TensorExercise, labs/tensors.py). Nothing here runs student code.
"""
from __future__ import annotations

import numpy as np

from ..exercise import Case, Exercise
from ..i18n import N_
from . import LabSpec
from .tensors import TensorExercise, f32, right_weights, rng_for, shape_str, softmax, tensor_arg

ATOL = 1e-5  # the issue: equal to lab02's causal attention per document within 1e-5
SLIP_ATOL = 1e-4

# The sections of chapters 11 and 12 each diagnosis sends the student to (a contract with the chapters).
POSITIONS = "11 §1"
PACKED = "11 §2"
SINKS = "12 §2"
WINDOW = "09 §0"
COMMON = {"diagonal_masked": "02 §2", "wrong_triangle": "02 §0", "convention_inverted": "08 §5",
          "forgot_scale": "03 §2", "no_mask": "02 §0", "window_too_wide": WINDOW, "window_too_narrow": WINDOW,
          "padding_counted": POSITIONS, "batch_shape": "06 §1", "off_by_one": "08 §4"}


# ---------------------------------------------------------------- the masks, in numpy
def causal(T: int) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def same_document(doc_ids: np.ndarray) -> np.ndarray:
    """(..., T, T): True where query i and key j belong to the same document."""
    return doc_ids[..., :, None] == doc_ids[..., None, :]


def document_mask(doc_ids: np.ndarray) -> np.ndarray:
    """(T, T) for (T,) ids; (B, 1, T, T) for (B, T) ids."""
    mask = same_document(doc_ids) & causal(doc_ids.shape[-1])  # (..., T, T)
    return mask[:, None] if doc_ids.ndim == 2 else mask


def positions_in_documents(doc_ids: np.ndarray) -> np.ndarray:
    """(T,): 0 at the first token of each document, then 1, 2, ..."""
    T = len(doc_ids)
    starts = np.r_[True, doc_ids[1:] != doc_ids[:-1]]  # (T,)
    start_of = np.maximum.accumulate(np.where(starts, np.arange(T), 0))  # (T,)
    return np.arange(T) - start_of


def positions_from_mask(mask: np.ndarray, pad_fill: int | None = 0, offset: int = -1) -> np.ndarray:
    """(B, T): cumsum + offset at real tokens; pad_fill on padding (None: leave the cumsum there)."""
    pos = np.cumsum(mask, axis=-1) + offset  # (B, T)
    return pos if pad_fill is None else np.where(mask == 0, pad_fill, pos)


def sink_window(T: int, W: int, n_sink: int, lo: int = 0, causal_sinks: bool = True) -> np.ndarray:
    """True where j <= i and (i - W + lo < j or j < n_sink); `lo` shifts the window's start (slips)."""
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    window = (j <= i) & (j > i - W + lo)
    sinks = j < n_sink
    return window | (sinks & (j <= i)) if causal_sinks else window | sinks


# ---------------------------------------------------------------- doc ids of the hidden cases
def segments(lengths: list[int], labels: list[int] | None = None) -> list[int]:
    labels = labels if labels is not None else list(range(len(lengths)))
    return [label for label, n in zip(labels, lengths) for _ in range(n)]


def random_segments(rng: np.random.Generator, T: int) -> list[int]:
    """Document ids 0, 1, ... for T tokens cut at random places (at least one document)."""
    cuts = np.sort(rng.choice(np.arange(1, T), size=int(rng.integers(0, T)), replace=False)) if T > 1 else []
    lengths = np.diff(np.r_[0, cuts, T]).astype(int).tolist()
    return segments(lengths)


def hidden_doc_ids(seed: int, exercise_id: str, batched: bool) -> list[list]:
    rng = rng_for(seed, exercise_id)
    out: list[list] = [[0], [0] * 5, list(range(6)), segments([1, 4, 1]), segments([2, 3, 2], [3, 7, 9])]
    out += [random_segments(rng, int(rng.integers(2, 13))) for _ in range(4)]
    if batched:
        T = int(rng.integers(3, 9))
        out.append([random_segments(rng, T) for _ in range(int(rng.integers(1, 4)))])
        out.append([[0]])
    return out


# ---------------------------------------------------------------- document_causal_mask
class DocumentCausalMask(TensorExercise):
    id = "document_causal_mask"
    points = 2
    section = PACKED
    sections = COMMON
    diagnoses = ("documents_leak", "not_causal_in_document", "convention_inverted", "diagonal_masked",
                 "off_by_one", "wrong_triangle", "batch_shape")
    PUBLIC = ([0, 0, 0, 1, 1, 2], [0, 0, 0, 0], [[0, 0, 1, 1, 1], [0, 1, 1, 2, 2]])

    def cases(self, ctx, seed=None):
        hidden = hidden_doc_ids(seed, self.id, batched=True) if seed is not None else []
        return [Case(f"{self.id}(torch.tensor({ids}))",
                     {"kind": "call", "target": self.id, "args": [tensor_arg(ids, "int64")]},
                     public=public, data={"doc_ids": ids})
                for public, group in ((True, self.PUBLIC), (False, hidden)) for ids in group]

    def expected(self, case):
        return document_mask(np.asarray(case.data["doc_ids"]))

    def slips(self, case):
        ids = np.asarray(case.data["doc_ids"])
        want = self.expected(case)
        T = ids.shape[-1]
        same = same_document(ids)
        same = same[:, None] if ids.ndim == 2 else same  # like want
        tri = causal(T)
        # a (B, T, T) answer, one mask per sequence without the heads' axis, first: it is no other slip
        batch_shape = [("batch_shape", want[:, 0], None, {"got": shape_str(want[:, 0].shape),
                                                          "expected": shape_str(want.shape)})] if want.ndim == 4 else []
        return batch_shape + [
            ("documents_leak", np.broadcast_to(tri, want.shape), None, {}),
            ("documents_leak", tri, None, {}),
            ("not_causal_in_document", same, None, {}),
            ("convention_inverted", ~want, None, {}),
            ("diagonal_masked", want & np.tril(tri, k=-1), None, {}),
            ("off_by_one", same & np.tril(np.ones_like(tri), k=1), None, {}),
            ("wrong_triangle", same & tri.T, None, {}),
        ]


# ---------------------------------------------------------------- integer answers
class LongExercise(TensorExercise):
    """An answer that must be an integer (int64) tensor: position ids."""

    expected_kind = "int64"


class PackedPositionIds(LongExercise):
    id = "packed_position_ids"
    points = 1
    section = PACKED
    sections = COMMON
    diagnoses = ("positions_not_reset", "positions_off_by_one")
    PUBLIC = ([0, 0, 0, 1, 1, 2], [0, 0, 0, 0], [0, 1, 1, 1, 2, 2, 2, 2])

    def cases(self, ctx, seed=None):
        hidden = hidden_doc_ids(seed, self.id, batched=False) if seed is not None else []
        return [Case(f"{self.id}(torch.tensor({ids}))",
                     {"kind": "call", "target": self.id, "args": [tensor_arg(ids, "int64")]},
                     public=public, data={"doc_ids": ids})
                for public, group in ((True, self.PUBLIC), (False, hidden)) for ids in group]

    def expected(self, case):
        return positions_in_documents(np.asarray(case.data["doc_ids"]))

    def slips(self, case):
        want = self.expected(case)
        return [("positions_not_reset", np.arange(len(want)), None, {}),
                ("positions_off_by_one", want + 1, None, {}),
                ("positions_off_by_one", want - 1, None, {})]


def left_padded(lengths: list[int], T: int) -> list[list[int]]:
    return [[0] * (T - n) + [1] * n for n in lengths]


class PositionIdsFromMask(LongExercise):
    id = "position_ids_from_mask"
    points = 2
    section = POSITIONS
    sections = COMMON
    diagnoses = ("padding_counted", "positions_off_by_one", "padding_fill_one", "padding_not_filled")
    PUBLIC = (([3, 5, 1], 5), ([4, 2], 4), ([1], 1))

    def cases(self, ctx, seed=None):
        specs = list(self.PUBLIC)
        if seed is not None:
            rng = rng_for(seed, self.id)
            # T = 1 … 8; each batch has one full row and one row that is all padding but its last token.
            for T in range(1, 9):
                B = int(rng.integers(1, 5))
                lengths = [int(n) for n in rng.integers(1, T + 1, size=B)]
                lengths[0] = T
                if B > 1:
                    lengths[-1] = 1
                specs.append((lengths, T))
            specs.append(([1, 1, 1], 4))
        return [Case(f"{self.id}(torch.tensor({left_padded(lengths, T)}))",
                     {"kind": "call", "target": self.id, "args": [tensor_arg(left_padded(lengths, T), "int64")]},
                     public=n < len(self.PUBLIC), data={"mask": left_padded(lengths, T)})
                for n, (lengths, T) in enumerate(specs)]

    def expected(self, case):
        return positions_from_mask(np.asarray(case.data["mask"]))

    def slips(self, case):
        mask = np.asarray(case.data["mask"])
        B, T = mask.shape
        n_pad = (mask == 0).sum(axis=-1, keepdims=True)  # (B, 1)
        counted = np.broadcast_to(np.arange(T), (B, T))
        return [
            ("padding_counted", counted, None, {}),
            ("positions_off_by_one", positions_from_mask(mask, offset=0), None, {}),
            ("positions_off_by_one", positions_from_mask(mask, None, offset=0), None, {}),
            ("padding_fill_one", positions_from_mask(mask, 1), None, {}),
            ("padding_not_filled", positions_from_mask(mask, None), None, {}),
            ("padding_not_filled", counted - n_pad, None, {}),
        ]


# ---------------------------------------------------------------- sink_window_mask
class SinkWindowMask(TensorExercise):
    id = "sink_window_mask"
    points = 2
    section = SINKS
    sections = COMMON
    # A window shrunk to W - n_sink <= 1 keys is reported as window_missing: the two look the same.
    diagnoses = ("sinks_not_causal", "window_too_wide", "window_too_narrow", "window_missing",
                 "sinks_double_counted", "sinks_missing", "convention_inverted")
    PUBLIC = ((8, 4, 2), (6, 2, 1), (5, 5, 0), (4, 2, 3))

    def cases(self, ctx, seed=None):
        hidden = []
        if seed is not None:
            rng = rng_for(seed, self.id)
            # Every T of 1 … 10 with every W of 1 … T + 1; the seed draws n_sink (0 … 3) per case.
            hidden = [(T, W, int(rng.integers(0, 4))) for T in range(1, 11) for W in range(1, T + 2)]
        return [Case(f"{self.id}({T}, {W}, {n})", {"kind": "call", "target": self.id, "args": [T, W, n]},
                     public=public, data={"T": T, "W": W, "n_sink": n})
                for public, group in ((True, self.PUBLIC), (False, hidden)) for T, W, n in group]

    def expected(self, case):
        return sink_window(case.data["T"], case.data["W"], case.data["n_sink"])

    def slips(self, case):
        T, W, n = case.data["T"], case.data["W"], case.data["n_sink"]
        want = self.expected(case)
        return [
            ("sinks_not_causal", sink_window(T, W, n, causal_sinks=False), None, {"n_sink": n}),
            ("window_too_wide", sink_window(T, W + 1, n), None, {"W": W, "W1": W + 1}),
            ("window_too_narrow", sink_window(T, W - 1, n), None, {"W": W}),
            ("window_missing", sink_window(T, 1, n), None, {}),
            ("window_missing", sink_window(T, 0, n), None, {}),
            ("sinks_double_counted", sink_window(T, max(W - n, 0), n), None, {"W": W, "n_sink": n}),
            ("sinks_missing", sink_window(T, W, 0), None, {"n_sink": n}),
            ("convention_inverted", ~want, None, {}),
        ]


# ---------------------------------------------------------------- packed_attention
def packed_reference(Q: np.ndarray, K: np.ndarray, V: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """lab02's causal attention on each document alone, put back in place: (..., T, d_v)."""
    out = np.zeros((*Q.shape[:-1], V.shape[-1]))
    for doc in np.unique(ids):
        at = np.flatnonzero(ids == doc)
        out[..., at, :] = right_weights(Q[..., at, :], K[..., at, :]) @ V[..., at, :]
    return out


def attention_with(Q, K, V, allowed: np.ndarray, scale: bool = True) -> np.ndarray:
    scores = Q @ np.swapaxes(K, -1, -2)  # (..., T, T)
    if scale:
        scores = scores / np.sqrt(Q.shape[-1])
    return softmax(np.where(allowed, scores, -np.inf)) @ V


class PackedAttention(TensorExercise):
    id = "packed_attention"
    points = 3
    section = PACKED
    sections = COMMON
    expected_kind = "float"
    atol = ATOL
    slip_atol = SLIP_ATOL
    diagnoses = ("documents_leak", "not_causal_in_document", "no_mask", "forgot_scale")
    # (leading dims, doc lengths, d_k, d_v). Public case n draws q and k as 1.5 N(0, 1), then v as N(0, 1), from
    # np.random.default_rng(2000 + n), rounded to 4 decimals: fixed numbers, which the student release records.
    PUBLIC = (((), [3, 2, 1], 4, 3), ((2,), [2, 3], 3, 2), ((), [4], 2, 2))

    def cases(self, ctx, seed=None):
        specs = [(lead, segments(lengths), dk, dv, 2000 + n, True, "float32")
                 for n, (lead, lengths, dk, dv) in enumerate(self.PUBLIC)]
        if seed is not None:
            rng = rng_for(seed, self.id)
            for ids in hidden_doc_ids(seed, self.id, batched=False):
                lead = tuple(int(x) for x in rng.integers(1, 3, size=int(rng.integers(0, 3))))
                specs.append((lead, ids, int(rng.integers(1, 6)), int(rng.integers(1, 5)),
                              int(rng.integers(0, 2**31)), False, "float32"))
            specs.append(((2,), segments([3, 4]), 4, 3, int(rng.integers(0, 2**31)), False, "float64"))
        cases = []
        for lead, ids, dk, dv, data_seed, public, dtype in specs:
            rng = np.random.default_rng(data_seed)
            T = len(ids)
            Q, K = (np.round(rng.normal(size=(*lead, T, dk)) * 1.5, 4) for _ in range(2))
            V = np.round(rng.normal(size=(*lead, T, dv)), 4)
            name = f"q, k {shape_str((*lead, T, dk))}, v {shape_str((*lead, T, dv))}, doc_ids {ids}"
            if dtype != "float32":
                name += f", {dtype}"
            cases.append(Case(name, {"kind": "call", "target": self.id,
                                     "args": [tensor_arg(Q, dtype), tensor_arg(K, dtype), tensor_arg(V, dtype),
                                              tensor_arg(ids, "int64")]},
                              public=public, data={"Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(),
                                                   "doc_ids": ids, "dtype": dtype}))
        return cases

    def inputs(self, case):
        as_input = f32 if case.data["dtype"] == "float32" else np.asarray
        return [as_input(case.data[name]) for name in ("Q", "K", "V")] + [np.asarray(case.data["doc_ids"])]

    def expected(self, case):
        return packed_reference(*self.inputs(case))

    def slips(self, case):
        """Attention with the classic wrong masks (or no scale), on the case's own inputs."""
        Q, K, V, ids = self.inputs(case)
        T = len(ids)
        same = same_document(ids)
        return [(name, attention_with(Q, K, V, allowed, scale), None, {})
                for name, allowed, scale in (("documents_leak", causal(T), True), ("not_causal_in_document", same, True),
                                             ("no_mask", np.ones((T, T), bool), True),
                                             ("forgot_scale", same & causal(T), False))]


EXERCISES: list[Exercise] = [DocumentCausalMask(), PackedPositionIds(), PositionIdsFromMask(), SinkWindowMask(),
                             PackedAttention()]


# Message keys this module builds at run time (diagnose(name) -> f"lab05.{name}"), listed for `make catalogs`.
N_(
    "lab05.batch_shape", "lab05.convention_inverted", "lab05.diagonal_masked", "lab05.documents_leak",
    "lab05.forgot_scale", "lab05.no_mask", "lab05.not_causal_in_document", "lab05.padding_counted",
    "lab05.padding_fill_one", "lab05.padding_not_filled", "lab05.positions_not_reset", "lab05.positions_off_by_one",
    "lab05.sinks_double_counted", "lab05.sinks_missing", "lab05.sinks_not_causal", "lab05.window_missing",
    "lab05.window_too_narrow", "lab05.window_too_wide", "lab05.wrong_triangle",
)

# The stubs' hints (Lab.hint(exercise), which a stub raises in the notebook's language).
N_(
    "lab05.hint.document_causal_mask", "lab05.hint.packed_position_ids", "lab05.hint.position_ids_from_mask",
    "lab05.hint.sink_window_mask", "lab05.hint.packed_attention",
)

LAB = LabSpec(id="lab05", exercises=EXERCISES)
