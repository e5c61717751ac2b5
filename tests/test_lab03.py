"""lab03 (multi-head causal self-attention, the prefix test): reference solutions get full marks,
every diagnosis is triggered by a wrong implementation written here in torch (as a student would
write it), and the tiny decoders that grade prefix_test are tested themselves.
"""
import inspect
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder import Lab
from autograder.exercise import Array, Case, Feedback
from autograder.grading import grade_lab
from autograder.labs import lab03
from autograder.runtime import run_call
from corpus.notebooks import with_definition

pytestmark = pytest.mark.lab03


# ---------------------------------------------------------------- reference solutions (torch)
class CausalSelfAttention(nn.Module):
    """The reference, with switches that reproduce the classic slips."""

    mask = "causal"  # causal | none | strict | upper
    scale = "head"  # head | none | model
    dim = -1
    split = "ok"  # ok | single | no_transpose | merge_no_transpose | both_wrong | interleaved
    masked_heads = "all"  # all | first
    # keys | ignored | queries | keys_and_queries | short | batch_on_heads | side_ignored | left_only
    padding = "keys"
    sdpa = False
    fill = float("-inf")  # what blocked scores get (a large negative number blocks as well)

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = 1 if self.split == "single" else n_heads
        self.d_k = d_model // self.n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split_heads(self, z):
        B, T, D = z.shape
        if self.split in ("no_transpose", "both_wrong"):
            return z.reshape(B, self.n_heads, T, self.d_k)
        if self.split == "interleaved":
            return z.view(B, T, self.d_k, self.n_heads).permute(0, 3, 1, 2)
        return z.view(B, T, self.n_heads, self.d_k).transpose(1, 2)  # (B, H, T, d_k)

    def forward(self, x, lengths=None, padding_side="right"):
        B, T, D = x.shape
        q, k, v = (self.split_heads(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        ones = torch.ones(T, T, dtype=torch.bool)
        allowed = {"causal": ones.tril(), "none": ones, "strict": ones.tril(-1), "upper": ones.triu()}[self.mask]
        allowed = allowed.expand(B, self.n_heads, T, T).clone()  # (B, H, T, T)
        if self.masked_heads == "first":
            allowed[:, 1:] = True
        ignored = self.padding == "ignored" or (self.padding == "left_only" and padding_side == "right")
        if lengths is not None and not ignored:
            n = torch.as_tensor(lengths)[:, None]  # (B, 1)
            positions = torch.arange(T)[None, :]  # (1, T)
            left = padding_side == "left" and self.padding != "side_ignored"
            real = positions >= T - n if left else positions < n  # (B, T)
            if self.padding in ("keys", "side_ignored", "left_only"):
                allowed = allowed & real[:, None, None, :]
            elif self.padding == "queries":
                allowed = allowed & real[:, None, :, None]
            elif self.padding == "keys_and_queries":
                allowed = allowed & real[:, None, None, :] & real[:, None, :, None]
            elif self.padding == "short":  # one real key too few: the last (right) or first (left) real token
                short = positions >= T - n + 1 if left else positions < n - 1
                allowed = allowed & short[:, None, None, :]
            elif self.padding == "batch_on_heads":
                allowed = allowed & (ones.tril() & real[:, None, :])  # (B, T, T) against (B, H, T, T)
        if self.sdpa:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        else:
            scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
            if self.scale == "head":
                scores = scores / math.sqrt(self.d_k)
            elif self.scale == "model":
                scores = scores / math.sqrt(D)
            weights = torch.softmax(scores.masked_fill(~allowed, self.fill), dim=self.dim)
            out = weights @ v  # (B, H, T, d_k)
        if self.split in ("merge_no_transpose", "both_wrong"):
            out = out.reshape(B, T, D)
        else:
            out = out.transpose(1, 2).reshape(B, T, D)
        return self.out_proj(out)


def prefix_test(model_fn, vocab_size, T=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)  # (B, T)
    with torch.no_grad():
        base = model_fn(ids)  # (B, T, vocab)
        for t in range(T - 1):
            changed = ids.clone()
            shift = torch.randint(1, vocab_size, (2, T - t - 1), generator=g)
            changed[:, t + 1:] = (ids[:, t + 1:] + shift) % vocab_size  # every token after t changes
            out = model_fn(changed)
            if not torch.allclose(out[:, : t + 1], base[:, : t + 1], atol=1e-5):
                return False
    return True


def variant(**switches):
    return type("CausalSelfAttention", (CausalSelfAttention,), switches)


def grade(namespace, lang="en", exercise=None, seed=None):
    lab = Lab("lab03", lang=lang)
    results = grade_lab(lab.spec, lambda spec: run_call(namespace, spec), seed=seed,
                        only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}


def solved():
    return {"CausalSelfAttention": CausalSelfAttention, "prefix_test": prefix_test}


# ---------------------------------------------------------------- the whole lab
@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3, 4])
def test_reference_gets_full_marks(seed):
    results = grade(solved(), seed=seed)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab03.LAB.max_score


def test_points():
    assert {e.id: e.points for e in lab03.EXERCISES} == {"CausalSelfAttention": 5, "prefix_test": 5}


def test_seed_adds_hidden_cases_that_change_with_the_seed():
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    public = exercise.cases({})
    assert all(case.public for case in public)
    one, two = exercise.cases({}, seed=1), exercise.cases({}, seed=2)
    assert len(one) > len(public) and not all(case.public for case in one)
    assert [c.call for c in one if not c.public] != [c.call for c in two if not c.public]
    assert exercise.cases({}) == public, "public cases are fixed"


def test_blank_lab_scores_zero_with_not_implemented_messages():
    class Stub(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.q_proj = nn.Linear(d_model, d_model)
            self.k_proj = nn.Linear(d_model, d_model)
            self.v_proj = nn.Linear(d_model, d_model)
            self.out_proj = nn.Linear(d_model, d_model)

        def forward(self, x, lengths=None):
            raise NotImplementedError("Your code here")

    def stub_test(model_fn, vocab_size, T=8, seed=0):
        raise NotImplementedError("Your code here")

    results = grade({"CausalSelfAttention": Stub, "prefix_test": stub_test})
    assert {r.status for r in results.values()} == {"not_answered"}
    assert sum(r.points for r in results.values()) == 0
    assert "not implemented yet" in results["prefix_test"].render("en")
    assert "todavía sin implementar" in results["CausalSelfAttention"].render("es")


def test_missing_names():
    results = grade({})
    assert all(r.status == "missing" for r in results.values())
    assert "`prefix_test` is not defined" in results["prefix_test"].render("en")


# ---------------------------------------------------------------- CausalSelfAttention diagnoses
CSA_SLIPS = [
    ("no_mask", dict(mask="none"), ("without any causal mask", "sin máscara causal"), 0),
    ("diagonal_masked", dict(mask="strict"), ("also blocks the diagonal", "también bloquea la diagonal"), 0),
    ("diagonal_masked", dict(mask="strict", sdpa=True), ("also blocks the diagonal", "también bloquea la diagonal"), 0),
    ("wrong_triangle", dict(mask="upper"), ("transposed", "traspuesta"), 0),
    ("forgot_scale", dict(scale="none"), ("forgot the 1/√d_k scale", "olvidaste la escala"), 0),
    ("scale_d_model", dict(scale="model"), ("1/√d_model", "1/√d_model"), 0),
    ("wrong_axis", dict(dim=-2), ("wrong axis", "eje equivocado"), 0),
    ("heads_not_split", dict(split="single"), ("single-head attention", "una sola cabeza"), 0),
    ("wrong_head_split", dict(split="no_transpose"), ("plain reshape", "simple reshape"), 0),
    ("wrong_head_split", dict(split="merge_no_transpose"), ("plain reshape", "simple reshape"), 0),
    ("wrong_head_split", dict(split="both_wrong"), ("plain reshape", "simple reshape"), 0),
    ("heads_wrong", dict(split="interleaved"), ("right with one head", "correcto con una cabeza"), 0),
    ("mask_not_shared", dict(masked_heads="first"), ("only the first head", "solo la primera cabeza"), 0),
    ("mask_batch_on_heads", dict(padding="batch_on_heads"), ("lands on head b", "cae en la cabeza b"), 3),
    ("padding_ignored", dict(padding="ignored"), ("your module ignores lengths", "tu módulo ignora lengths"), 3),
    # Chapter 05 §5's "mask on the query axis": the padding rows are blocked, the padding keys still read.
    ("padding_queries", dict(padding="queries"), ("sits on the query axis", "está en el eje de las queries"), 3),
    ("padding_queries", dict(padding="queries", sdpa=True), ("sits on the query axis", "eje de las queries"), 3),
    ("padding_queries", dict(padding="queries", fill=-1e9), ("sits on the query axis", "eje de las queries"), 3),
    ("padding_side_ignored", dict(padding="side_ignored"), ("always takes the first lengths[b] positions",
                                                            "las primeras lengths[b] posiciones"), 3),
    ("padding_wrong", dict(padding="short"), ("combine the two masks with AND", "combina las dos máscaras"), 3),
]


@pytest.mark.parametrize("diagnosis,switches,texts,points", CSA_SLIPS,
                         ids=[f"{d}-{'-'.join(map(str, s.values()))}" for d, s, _, _ in CSA_SLIPS])
def test_each_attention_slip_is_named_in_two_languages(diagnosis, switches, texts, points):
    namespace = {**solved(), "CausalSelfAttention": variant(**switches)}
    result = grade(namespace, exercise="CausalSelfAttention")["CausalSelfAttention"]
    assert result.status == "failed" and result.points == points
    assert result.diagnosis == diagnosis, result.render("en")
    english, spanish = texts
    assert english in result.render("en")
    assert spanish in result.render("es")
    assert "§" in result.render("de")


class ZeroedPadding(variant()):
    """Zeroes the outputs at padding query positions: values chapter 05 calls meaningless."""

    def forward(self, x, lengths=None, padding_side="right"):
        out = super().forward(x, lengths, padding_side)
        if lengths is not None:
            n, positions = torch.as_tensor(lengths)[:, None], torch.arange(x.shape[1])[None, :]
            real = positions >= x.shape[1] - n if padding_side == "left" else positions < n  # (B, T)
            out = torch.where(real[:, :, None], out, 0.0)  # where, not *: a NaN row times 0 stays NaN
        return out


@pytest.mark.parametrize("module", [variant(padding="keys_and_queries"), variant(padding="keys_and_queries", sdpa=True),
                                    ZeroedPadding, variant(sdpa=True), variant(fill=-1e9),
                                    variant(padding="left_only")],
                         ids=["query-rows-blocked-too", "query-rows-blocked-too-sdpa", "outputs-zeroed", "sdpa",
                              "finite-fill", "right-padding-left-to-the-causal-mask"])
def test_any_convention_at_padding_query_positions_is_right(module):
    """What sits at padding query positions does not count (chapter 05: it means nothing): NaN rows from
    blocked or empty rows, SDPA's zeros, the mean of V from a finite fill, zeroed outputs. Nor does the key
    mask under right padding, where the causal mask already hides the padding from every real token."""
    for seed in (None, 2):
        result = grade({**solved(), "CausalSelfAttention": module}, exercise="CausalSelfAttention", seed=seed)[
            "CausalSelfAttention"]
        assert result.status == "passed" and result.points == 5, result.render("en")


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_the_mask_on_the_query_axis_loses_the_padding_points_whatever_the_seed(seed):
    """technical-2 (c), false positive 2: chapter 05 §5's mistake scored 5/5, because right padding alone
    cannot show it; the left-padded cases do (5 points, 2 of them for padding: 3 left)."""
    module = variant(padding="queries")
    result = grade({**solved(), "CausalSelfAttention": module}, exercise="CausalSelfAttention", seed=seed)[
        "CausalSelfAttention"]
    assert (result.points, result.diagnosis) == (3, "padding_queries"), result.render("en")
    assert "05 §5" in result.render("en")


def test_ignoring_lengths_is_told_where_it_matters():
    """The message argues from the left-padded case the grader ran, not from one it could not express."""
    result = grade({**solved(), "CausalSelfAttention": variant(padding="ignored")},
                   exercise="CausalSelfAttention")["CausalSelfAttention"]
    assert (result.points, result.diagnosis) == (3, "padding_ignored")
    assert "with right padding that is harmless" in result.render("en").lower()
    assert "padding_side='left'" in result.render("de")


def test_a_module_without_padding_side_is_told_which_case_raised():
    class OldSignature(CausalSelfAttention):
        def forward(self, x, lengths=None):
            return super().forward(x, lengths)

    result = grade({**solved(), "CausalSelfAttention": OldSignature}, exercise="CausalSelfAttention")[
        "CausalSelfAttention"]
    assert result.status == "error" and result.points == 0
    assert "padding_side='left'" in result.render("en") and "TypeError" in result.render("en")


def test_the_public_cases_pad_on_both_sides():
    cases = lab03.LAB.exercise("CausalSelfAttention").cases({})
    sides = {lab03.case_inputs(case)[4] for case in cases if case.data["padding"]}
    assert sides == {"right", "left"}
    hidden = [c for c in lab03.LAB.exercise("CausalSelfAttention").cases({}, seed=1) if not c.public]
    assert {lab03.case_inputs(case)[4] for case in hidden if case.data["padding"]} == {"right", "left"}


def test_every_attention_diagnosis_is_covered_here():
    named = set(lab03.LAB.exercise("CausalSelfAttention").diagnosis_names())
    assert named == {d for d, _, _, _ in CSA_SLIPS} | {"layers_missing"}


def test_layers_without_bias_or_other_names_are_explained():
    class NoBias(CausalSelfAttention):
        def __init__(self, d_model, n_heads):
            super().__init__(d_model, n_heads)
            self.q_proj = nn.Linear(d_model, d_model, bias=False)

    class Renamed(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.out_proj = nn.Linear(d_model, d_model)

        def forward(self, x, lengths=None):
            return x

    for cls in (NoBias, Renamed):
        result = grade({**solved(), "CausalSelfAttention": cls}, exercise="CausalSelfAttention")["CausalSelfAttention"]
        assert result.diagnosis == "layers_missing"
        assert "q_proj, k_proj, v_proj and out_proj" in result.render("en")
        assert "q_proj, k_proj, v_proj und out_proj" in result.render("de")


def test_wrong_return_type_says_what_was_expected():
    class ReturnsTuple(CausalSelfAttention):
        def forward(self, x, lengths=None, padding_side="right"):
            out = super().forward(x, lengths, padding_side)
            return out, None

    class ReturnsDouble(CausalSelfAttention):
        def forward(self, x, lengths=None, padding_side="right"):
            return super().forward(x, lengths, padding_side)[:, :-1]

    result = grade({**solved(), "CausalSelfAttention": ReturnsTuple})["CausalSelfAttention"]
    assert result.diagnosis == "wrong_shape"
    assert "the answer must be float32 (2, 5, 8), but yours is tuple(float32 (2, 5, 8), NoneType)" in result.render("en")
    result = grade({**solved(), "CausalSelfAttention": ReturnsDouble})["CausalSelfAttention"]
    assert "la respuesta debe ser float32 (2, 5, 8), pero la tuya es float32 (2, 4, 8)" in result.render("es")


def test_a_forward_that_raises_is_reported_with_the_case():
    class Raises(CausalSelfAttention):
        def forward(self, x, lengths=None, padding_side="right"):
            if lengths is not None:
                raise ValueError("lengths not supported")
            return super().forward(x)

    result = grade({**solved(), "CausalSelfAttention": Raises})["CausalSelfAttention"]
    assert result.status == "error" and result.points == 0
    assert "raised ValueError on the case B=2, T=5, d_model=8, n_heads=2, lengths=[5, 2]" in result.render("en")
    assert "ValueError" in result.render("hi-Latn")


def test_an_unrecognised_wrong_output_points_at_an_entry():
    class Noisy(CausalSelfAttention):
        def forward(self, x, lengths=None, padding_side="right"):
            return super().forward(x, lengths, padding_side) + 0.01

    result = grade({**solved(), "CausalSelfAttention": Noisy})["CausalSelfAttention"]
    assert result.diagnosis == "wrong_values" and result.points == 0
    assert "[0, 0, 0]" in result.render("en")


def test_attention_slips_differ_from_the_reference_and_from_each_other():
    cases = lab03.LAB.exercise("CausalSelfAttention").cases({})
    inputs = [lab03.case_inputs(case) for case in cases]
    outputs = {}
    for name, slip in lab03.SLIPS:
        values = [lab03.self_attention(x, s, h, n, side, **slip) for x, s, h, n, side in inputs]
        refs = [lab03.self_attention(x, s, h, n, side) for x, s, h, n, side in inputs]
        # at the real positions, where grading looks (a padding row of the reference is NaN: left empty)
        gaps = [np.nanmax(np.abs(np.nan_to_num(lab03.real_rows(v, n, side), nan=1e3) - lab03.real_rows(r, n, side)))
                for v, r, (_, _, _, n, side) in zip(values, refs, inputs) if v is not None]
        assert max(gaps) > 1e-2, name
        outputs.setdefault(name, []).append(values)
    names = list(outputs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for va in outputs[a]:
                for vb in outputs[b]:
                    same = all(x is not None and y is not None and lab03.close_nan(x, y, 1e-3) for x, y in zip(va, vb))
                    assert not same, (a, b)


def test_lengths_as_list_and_as_tensor_are_both_used():
    kinds = {type(c.call["kwargs"].get("lengths")).__name__ for c in lab03.LAB.exercise("CausalSelfAttention").cases({})}
    assert kinds == {"NoneType", "list", "dict"}


def test_reference_matches_nn_multihead_attention():
    """The numpy reference agrees with torch's own multi-head attention, with the same weights."""
    case = lab03.LAB.exercise("CausalSelfAttention").cases({})[3]
    x, state, heads, lengths, _ = lab03.case_inputs(case)
    B, T, D = x.shape
    mha = nn.MultiheadAttention(D, heads, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.tensor(np.concatenate([state[f"{n}.weight"] for n in lab03.LAYERS[:3]])))
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([state[f"{n}.bias"] for n in lab03.LAYERS[:3]])))
        mha.out_proj.weight.copy_(torch.tensor(state["out_proj.weight"]))
        mha.out_proj.bias.copy_(torch.tensor(state["out_proj.bias"]))
        xt = torch.tensor(x, dtype=torch.float32)
        blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
        padded = torch.arange(T)[None, :] >= torch.tensor(lengths)[:, None]
        out, _ = mha(xt, xt, xt, attn_mask=blocked, key_padding_mask=padded, need_weights=False)
    assert np.allclose(out.numpy(), lab03.self_attention(x, state, heads, lengths), atol=1e-5)


# ---------------------------------------------------------------- the decoders
def ids_for(vocab, T, seed=0, B=2):
    return torch.randint(0, vocab, (B, T), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("bug", lab03.BUGS)
def test_each_buggy_decoder_differs_from_the_correct_one(bug):
    ids = ids_for(11, 8)
    right = lab03.decoder_function()(ids)
    wrong = lab03.decoder_function(bug)(ids)
    assert right.shape == wrong.shape == (2, 8, 11)
    assert (right - wrong).abs().max() > 1e-2


@pytest.mark.parametrize("vocab,T,seed", [(11, 8, 2024), (5, 6, 1), (20, 10, 77), (7, 12, 9999), (2, 3, 5)])
def test_correct_decoder_is_exactly_causal(vocab, T, seed):
    """Bit for bit: even a test that compares with torch.equal says causal."""
    model = lab03.decoder_function(None, vocab, seed)
    ids = ids_for(vocab, T, seed)
    base = model(ids)
    for t in range(T - 1):
        changed = ids.clone()
        changed[:, t + 1:] = (ids[:, t + 1:] + 1) % vocab
        assert torch.equal(model(changed)[:, : t + 1], base[:, : t + 1])


@pytest.mark.parametrize("vocab,T,seed", [(11, 8, 2024), (5, 6, 1), (20, 10, 77), (13, 7, 31)])
def test_a_correct_prefix_test_flags_every_bug_and_accepts_the_correct_decoder(vocab, T, seed):
    assert prefix_test(lab03.decoder_function(None, vocab, seed), vocab, T=T, seed=seed)
    for bug in lab03.BUGS:
        assert not prefix_test(lab03.decoder_function(bug, vocab, seed), vocab, T=T, seed=seed), bug


def test_middle_leak_is_missed_by_a_test_that_changes_only_the_last_token():
    model = lab03.decoder_function("middle_leak")
    assert last_token_only(model, 11) and not last_token_only(lab03.decoder_function("off_by_one"), 11)


def test_decoder_sources_are_plain_data_shown_to_students():
    source = lab03.decoder_source("shifted_input")
    assert "BUG" in source and "torch.Generator().manual_seed" in source
    assert "BUG" not in lab03.decoder_source()
    assert set(lab03.decoders()) == {"correct", *lab03.BUGS, "middle_leak"}


# ---------------------------------------------------------------- prefix_test diagnoses
def always_true(model_fn, vocab_size, T=8, seed=0):
    return True


def always_false(model_fn, vocab_size, T=8, seed=0):
    return False


def last_token_only(model_fn, vocab_size, T=8, seed=0):
    ids = torch.arange(T)[None, :] % vocab_size  # (1, T)
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % vocab_size
    return torch.allclose(model_fn(ids)[:, :-1], model_fn(changed)[:, :-1], atol=1e-5)


def next_token_only(model_fn, vocab_size, T=8, seed=0):
    ids = torch.arange(T)[None, :] % vocab_size
    for t in range(T - 1):
        changed = ids.clone()
        changed[0, t + 1] = (ids[0, t + 1] + 1) % vocab_size
        if not torch.allclose(model_fn(ids)[:, : t + 1], model_fn(changed)[:, : t + 1], atol=1e-5):
            return False
    return True


def asserts(model_fn, vocab_size, T=8, seed=0):
    ids = torch.arange(T)[None, :] % vocab_size
    for t in range(T - 1):
        changed = ids.clone()
        changed[0, t + 1:] = (ids[0, t + 1:] + 1) % vocab_size
        assert torch.allclose(model_fn(ids)[:, : t + 1], model_fn(changed)[:, : t + 1]), f"leak at {t}"
    return True


def compares_everything(model_fn, vocab_size, T=8, seed=0):
    ids = torch.arange(T)[None, :] % vocab_size
    changed = ids.clone()
    changed[0, T // 2:] = (ids[0, T // 2:] + 1) % vocab_size
    return torch.allclose(model_fn(ids), model_fn(changed))  # compares the positions after t too


def only_position_t(model_fn, vocab_size, T=8, seed=0):
    """Changes only token t + 1 and looks only at position t: misses the middle leak."""
    ids = torch.arange(T)[None, :] % vocab_size
    for t in range(1, T - 1):
        changed = ids.clone()
        changed[0, t + 1] = (ids[0, t + 1] + 1) % vocab_size
        if not torch.allclose(model_fn(ids)[:, t], model_fn(changed)[:, t]):
            return False
    return True


def adjacent_only(model_fn, vocab_size, T=8, seed=0):
    """technical-2 (c), false positive 1: changes only token t + 1 and compares only position t."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)
    with torch.no_grad():
        base = model_fn(ids)
        for t in range(T - 1):
            changed = ids.clone()
            changed[:, t + 1] = (ids[:, t + 1] + 1) % vocab_size  # only the next token
            if not torch.allclose(model_fn(changed)[:, t], base[:, t], atol=1e-5):  # only position t
                return False
    return True


def loose_tolerance(model_fn, vocab_size, T=8, seed=0):
    """The lab's prefix test with a tolerance of 1e-3: blind to a leak smaller than that."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)
    with torch.no_grad():
        base = model_fn(ids)
        for t in range(T - 1):
            changed = ids.clone()
            changed[:, t + 1:] = (ids[:, t + 1:] + torch.randint(1, vocab_size, (2, T - t - 1), generator=g)) % vocab_size
            if not torch.allclose(model_fn(changed)[:, : t + 1], base[:, : t + 1], atol=1e-3):
                return False
    return True


def skips_next_token(model_fn, vocab_size, T=8, seed=0):
    """Off by one in the test itself: changes the tokens from t + 2 on, so it misses t + 1 leaks."""
    ids = torch.arange(T)[None, :] % vocab_size
    for t in range(T - 2):
        changed = ids.clone()
        changed[0, t + 2:] = (ids[0, t + 2:] + 1) % vocab_size
        if not torch.allclose(model_fn(ids)[:, : t + 1], model_fn(changed)[:, : t + 1]):
            return False
    return True


_CORRECT_DECODER = {lab03.decoder_function(None, vocab, seed).__code__.co_code
                    for vocab, seed in ((11, 2024), (12, 987654))}


def reads_the_code(model_fn, vocab_size, T=8, seed=0):
    """Recognises the correct decoder by its bytecode (after one call to look busy)."""
    model_fn(torch.zeros(1, T, dtype=torch.long))
    inner = [c.cell_contents for c in (model_fn.__closure__ or ()) if hasattr(c.cell_contents, "__code__")]
    return (inner[0] if inner else model_fn).__code__.co_code in _CORRECT_DECODER


def position_zero_only(model_fn, vocab_size, T=8, seed=0):
    """The reviewer's weak test: change every later token, compare position 0 only."""
    ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    changed = ids.clone()
    changed[0, 1:] = (ids[0, 1:] + 1) % vocab_size
    return torch.allclose(model_fn(ids)[:, 0], model_fn(changed)[:, 0], atol=1e-5)


def inverted(model_fn, vocab_size, T=8, seed=0):
    return not prefix_test(model_fn, vocab_size, T, seed)


def returns_none(model_fn, vocab_size, T=8, seed=0):
    prefix_test(model_fn, vocab_size, T, seed)


def returns_tensor(model_fn, vocab_size, T=8, seed=0):
    return torch.tensor(prefix_test(model_fn, vocab_size, T, seed))


def returns_text(model_fn, vocab_size, T=8, seed=0):
    return "causal" if prefix_test(model_fn, vocab_size, T, seed) else "leaks"


PREFIX_SLIPS = [
    (always_true, "always_true", 0, ("says True for every decoder", "dice True para todos")),
    (always_false, "always_false", 0, ("False for every decoder", "False para todos")),
    (compares_everything, "always_false", 0, ("False for every decoder", "False para todos")),
    (inverted, "rejects_correct", 0, ("correct decoder is not causal", "decodificador correcto no es causal")),
    (last_token_only, "missed_positions", 4, ("a single position reads a later token", "una sola posición lee un token posterior")),
    (position_zero_only, "missed_positions", 4, ("comparing position 0 alone", "comparar solo la posición 0")),
    (reads_the_code, "no_evidence", 0, ("recognising a decoder by its code earns nothing",
                                        "reconocer un decodificador por su código no da puntos")),
    (asserts, "crashes", 0, ("raised AssertionError instead of returning False",
                             "lanzó una excepción AssertionError en lugar de devolver False")),
    (only_position_t, "missed_positions", 4, ("a single position reads a later token, at positions 0, ",
                                              "una sola posición lee un token posterior, en las posiciones 0, ")),
    (adjacent_only, "only_next_token", 4, ("It catches every leak from the very next token and none from farther ahead",
                                           "Detecta todas las fugas que vienen del token inmediatamente siguiente")),
    (loose_tolerance, "tolerance_too_loose", 4, ("It accepted the faint leak", "Aceptó la fuga débil")),
    (skips_next_token, "missed_bugs", 2, ("Each decoder it accepted", "Cada decodificador que aceptó")),
    (returns_none, "wrong_type", 0, ("for “correct decoder” your test returned None instead of a bool: did you forget "
                                     "`return`?", "con «decodificador correcto» tu prueba devolvió None en lugar de un bool")),
    (returns_text, "wrong_type", 0, ("for “correct decoder” your test returned str, not a bool (True or False).",
                                     "para «decodificador correcto» tu prueba devolvió str, no un bool (True o False).")),
]


@pytest.mark.parametrize("test_fn,diagnosis,points,texts", PREFIX_SLIPS, ids=[f.__name__ for f, *_ in PREFIX_SLIPS])
def test_each_prefix_test_slip_is_named_in_two_languages(test_fn, diagnosis, points, texts):
    result = grade({**solved(), "prefix_test": test_fn}, exercise="prefix_test")["prefix_test"]
    assert result.diagnosis == diagnosis, result.render("en")
    assert result.points == points, result.render("en")
    english, spanish = texts
    assert english in result.render("en")
    assert spanish in result.render("es")


def test_a_crash_is_not_reported_as_a_true():
    result = grade({**solved(), "prefix_test": asserts}, exercise="prefix_test")["prefix_test"]
    assert "On “decoder without a mask” your test raised AssertionError" in result.render("en")
    assert "no_mask" not in result.render("en")  # the case's internal name never reaches the student
    assert "said True" not in result.render("en")


def test_every_prefix_test_diagnosis_is_covered_here():
    assert set(lab03.LAB.exercise("prefix_test").diagnosis_names()) == {d for _, d, _, _ in PREFIX_SLIPS}


def _public_leaks(bug):
    return [c.data["leak"] for c in lab03.LAB.exercise("prefix_test").cases({}) if c.data["bug"] == bug]


def test_missed_bugs_are_named_in_the_feedback():
    result = grade({**solved(), "prefix_test": last_token_only}, exercise="prefix_test")["prefix_test"]
    # Changing only the last token (7) shows exactly the leaks that read token 7: the others are missed.
    missed = sorted({t for t, s in _public_leaks(lab03.POSITION_LEAK) if s != 7})
    assert missed, "the public sweep has leaks from tokens other than the last one"
    listed = ", ".join(str(t) for t in missed)
    assert f"It accepted decoders in which a single position reads a later token, at positions {listed}." \
        in result.render("en")
    (faint,) = _public_leaks(lab03.FAINT_LEAK)
    if faint[1] != 7:
        assert f"It accepted the faint leak: position {faint[0]} reads token {faint[1]}" in result.render("en")
    assert "Dein Test hat 4 der 5 Prüfungen bestanden." in result.render("de")
    result = grade({**solved(), "prefix_test": always_true}, exercise="prefix_test")["prefix_test"]
    text = result.render("en")
    for named in ("the decoder without a mask", "the off-by-one mask", "the normalisation over the time axis",
                  "the input shifted inside the model"):  # one per bug of lab03.BUGS, written out
        assert f"Your test said True for {named}" in text, (named, text)
    assert len(lab03.BUGS) == 4


@pytest.mark.parametrize("skipped", range(7))
def test_skipping_any_single_prefix_length_loses_a_point(skipped):
    def skips_one(model_fn, vocab_size, T=8, seed=0):
        return all(_prefix_ok(model_fn, vocab_size, T, seed, t) for t in range(T - 1) if t != skipped)

    for seed in (None, 4):
        result = grade({**solved(), "prefix_test": skips_one}, exercise="prefix_test", seed=seed)["prefix_test"]
        assert result.points == 4 and result.diagnosis == "missed_positions", result.render("en")


def _prefix_ok(model_fn, vocab_size, T, seed, t):
    g = torch.Generator().manual_seed(seed + t)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)
    changed = ids.clone()
    changed[:, t + 1:] = (ids[:, t + 1:] + torch.randint(1, vocab_size, (2, T - t - 1), generator=g)) % vocab_size
    return torch.allclose(model_fn(ids)[:, : t + 1], model_fn(changed)[:, : t + 1], atol=1e-5)


def test_changing_one_later_token_at_a_time_is_a_correct_prefix_test():
    result = grade({**solved(), "prefix_test": next_token_only}, exercise="prefix_test", seed=3)["prefix_test"]
    assert result.status == "passed" and result.points == 5


def cuts_the_sequence(model_fn, vocab_size, T=8, seed=0):
    """Chapter 07's form: run the prefix alone and compare with the full sequence."""
    ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    full = model_fn(ids)  # (1, T, vocab)
    return all(torch.allclose(model_fn(ids[:, : t + 1]), full[:, : t + 1], atol=1e-5) for t in range(T - 1))


def exact_at_one_shape(model_fn, vocab_size, T=8, seed=0):
    """The lab's prefix test with torch.equal: every run has the shape (2, T)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)
    base = model_fn(ids)
    for t in range(T - 1):
        changed = ids.clone()
        changed[:, t + 1:] = (ids[:, t + 1:] + torch.randint(1, vocab_size, (2, T - t - 1), generator=g)) % vocab_size
        if not torch.equal(model_fn(changed)[:, : t + 1], base[:, : t + 1]):
            return False
    return True


def cuts_exactly(model_fn, vocab_size, T=8, seed=0):
    """Chapter 07's cut with torch.equal: the shapes change, so does float32 rounding."""
    ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    full = model_fn(ids)
    return all(torch.equal(model_fn(ids[:, : t + 1]), full[:, : t + 1]) for t in range(T - 1))


def test_exact_comparison_is_right_at_one_shape_and_wrong_across_shapes():
    """technical-2 (c), the borderline case the lab's §3 now explains: torch.equal is a fine comparison when
    both runs have the same shape, and calls the correct decoder leaky when the sequence is cut."""
    for seed in (None, 2):
        exact = grade({**solved(), "prefix_test": exact_at_one_shape}, exercise="prefix_test", seed=seed)
        assert (exact["prefix_test"].status, exact["prefix_test"].points) == ("passed", 5), seed
        cut = grade({**solved(), "prefix_test": cuts_exactly}, exercise="prefix_test", seed=seed)["prefix_test"]
        assert (cut.points, cut.diagnosis) == (0, "always_false"), (seed, cut.render("en"))


def test_cutting_the_sequence_after_t_is_a_correct_prefix_test_too():
    result = grade({**solved(), "prefix_test": cuts_the_sequence}, exercise="prefix_test", seed=5)["prefix_test"]
    assert result.status == "passed" and result.points == 5, result.render("en")


def test_diagnoses_point_to_existing_chapter_sections():
    from labbook.notebooks import headings, read_source, targets

    chapters = {t.name[:2]: t for t in targets() if t.part == "course" and t.lang == "en"}
    for name, section in lab03.CHAPTER_SECTIONS.items():
        chapter, number = section.split(" §")
        assert chapter in chapters, (name, section)
        numbers = [h.split("·")[0].strip() for h in headings(read_source(chapters[chapter]), 2)]
        assert number in numbers, (name, section)


def test_a_zero_d_boolean_tensor_counts_as_a_bool():
    result = grade({**solved(), "prefix_test": returns_tensor}, exercise="prefix_test")["prefix_test"]
    assert result.status == "passed" and result.points == 5


def test_a_test_that_crashes_on_the_correct_decoder_is_an_error():
    def crashes(model_fn, vocab_size, T=8, seed=0):
        return bool(model_fn(torch.arange(T)).sum() > 0)  # 1-D ids: the decoders want (B, T)

    result = grade({**solved(), "prefix_test": crashes}, exercise="prefix_test")["prefix_test"]
    assert result.status == "error" and result.points == 0
    assert "raised ValueError on the case “correct decoder”. Python's message, in English: “not enough values to " \
        "unpack" in result.render("en")
    assert "im Fall „korrekter Decoder“ einen ValueError ausgelöst. Die Meldung von Python, auf Englisch: „" \
        in result.render("de")


def test_hidden_cases_use_other_vocabularies_lengths_and_weights():
    cases = lab03.LAB.exercise("prefix_test").cases({}, seed=11)
    hidden = [c for c in cases if not c.public]
    T = hidden[0].call["kwargs"]["T"]
    leaks = [c.data["leak"] for c in hidden if c.data["bug"] == lab03.POSITION_LEAK]
    # the correct decoder, the bugs, the sweep, the middle leak, a faint leak
    assert len(hidden) == 1 + len(lab03.BUGS) + len(leaks) + 1 + 1
    assert {t for t, _ in leaks} == set(range(T - 1))  # a single-position leak at each t = 0 … T-2
    assert hidden[0].call["kwargs"]["T"] != 8 or hidden[0].call["args"][1] != lab03.PUBLIC_VOCAB
    results = grade({**solved(), "prefix_test": last_token_only}, exercise="prefix_test", seed=11)
    assert results["prefix_test"].points == 4


# The blank lab executed top to bottom: tests/test_blank_labs.py (every lab, every language)
# and nbval in lax mode (a real kernel).


# ---------------------------------------------------------------- review: probes a student could appeal
def test_a_prefix_test_of_a_fixed_length_loses_the_hidden_sweep_whatever_the_seed():
    """Ignoring T (checking the public and default T = 8 prefixes) must cost the sweep for every seed."""
    def eight_tokens(model_fn, vocab_size, T=8, seed=0):
        return prefix_test(model_fn, vocab_size, 8, seed)

    for seed in range(8):
        namespace = {**solved(), "prefix_test": eight_tokens}
        result = grade(namespace, exercise="prefix_test", seed=seed)["prefix_test"]
        assert result.points == 4 and result.diagnosis == "missed_positions", (seed, result.render("en"))


def test_a_prefix_test_that_calls_by_keyword_keeps_its_evidence():
    def by_keyword(model_fn, vocab_size, T=8, seed=0):
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab_size, (2, T), generator=g)
        base = model_fn(ids=ids)
        for t in range(T - 1):
            changed = ids.clone()
            changed[:, t + 1:] = (ids[:, t + 1:] + 1) % vocab_size
            if not torch.allclose(model_fn(ids=changed)[:, : t + 1], base[:, : t + 1], atol=1e-5):
                return False
        return True

    for seed in (None, 3):
        result = grade({**solved(), "prefix_test": by_keyword}, exercise="prefix_test", seed=seed)["prefix_test"]
        assert result.status == "passed" and result.points == 5, result.render("en")


# ---------------------------------------------------------------- the sweep: every position, distance and token
@pytest.mark.parametrize("T", [2, 3, 5, 8, 10, 13])
def test_the_sweep_has_every_next_token_leak_and_every_distance_whatever_the_draw(T):
    sources = {t: set() for t in range(T - 2)}
    for draw in range(30):
        leaks = lab03.sweep_leaks(T, np.random.default_rng(draw))
        assert all(0 <= t < s < T for t, s in leaks) and len(set(leaks)) == len(leaks)
        assert {(t, t + 1) for t in range(T - 1)} <= set(leaks)  # only prefix length t + 1 shows (t, t + 1)
        assert {s - t for t, s in leaks if s - t > 1} == set(range(2, T))  # every longer distance
        for t in sources:  # technical-2 (c): a leak from farther ahead at every position that has one
            farther = [s for u, s in leaks if u == t and s > t + 1]
            assert farther, (t, leaks)
            sources[t].update(farther)
    for t, seen in sources.items():  # the farther source is drawn, from all of t + 2 … T-1
        assert seen == set(range(t + 2, T)), (t, seen)


def test_the_sweep_is_drawn_per_seed():
    def sweep(seed):
        return [c.data["leak"] for c in lab03.LAB.exercise("prefix_test").cases({}, seed=seed)
                if not c.public and c.data["bug"] in lab03.SWEEP_BUGS]

    assert len({repr(sweep(seed)) for seed in range(6)}) > 3


@pytest.mark.parametrize("seed", [None, 1, 5, 9])  # whatever the draw: see test_the_sweep_has_every_...
def test_the_adjacent_only_prefix_test_loses_the_sweep_whatever_the_seed(seed):
    """technical-2 (c), false positive 1: it scored 5/5 when every sweep leak read token t + 1. Now it misses
    exactly the leaks from farther ahead, and is told so in every language."""
    result = grade({**solved(), "prefix_test": adjacent_only}, exercise="prefix_test", seed=seed)["prefix_test"]
    assert (result.points, result.diagnosis) == (4, "only_next_token"), result.render("en")
    texts = {"en": "none from farther ahead", "es": "ninguna de más adelante", "de": "keines von weiter vorn",
             "hi-Latn": "usse aage ka ek bhi nahi"}
    for lang, text in texts.items():
        assert text in result.render(lang), (lang, result.render(lang))
    # The example is the first single-position leak from farther ahead that it accepted (here: every one).
    cases = lab03.LAB.exercise("prefix_test").cases({}, seed=seed)
    t, s = min(tuple(c.data["leak"]) for c in cases
               if c.data["bug"] == lab03.POSITION_LEAK and c.data["leak"][1] - c.data["leak"][0] > 1)
    assert f"(position {t} reads token {s}, for one)" in result.render("en")


def test_the_lab_s_own_middle_leak_is_in_the_sweep_public_and_hidden():
    for seed in (None, 3):
        cases = lab03.LAB.exercise("prefix_test").cases({}, seed=seed)
        middle = [(c.public, c.call["kwargs"]["T"], tuple(c.data["leak"])) for c in cases
                  if c.data["bug"] == lab03.MIDDLE_LEAK]
        expected = [(True, 8, (0, 4))] + ([(False, 10, (0, 5))] if seed is not None else [])
        assert middle == expected and all(type(token) is int for _, _, (_, token) in middle)
        assert [c.name for c in cases if c.data["bug"] == lab03.MIDDLE_LEAK][0] == \
            "middle_leak: position 0 reads token T // 2 = 4"


def skips_pair(position, token):
    def prefix_test_without_one_pair(model_fn, vocab_size, T=8, seed=0):
        """Changes each later token alone and compares position t, except token `token` at `position`."""
        ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
        base = model_fn(ids)[0]  # (T, vocab)
        for t in range(T - 1):
            for s in range(t + 1, T):
                if (t, s) == (position, token if token >= 0 else T + token):
                    continue
                changed = ids.clone()
                changed[0, s] = (ids[0, s] + 1) % vocab_size
                if not torch.allclose(model_fn(changed)[0, t], base[t], atol=1e-5):
                    return False
        return True

    return prefix_test_without_one_pair


def test_a_test_blind_to_the_middle_token_at_position_0_is_told_of_the_middle_leak():
    """The middle leak joins the sweep: a test that never looks at position 0 when token T // 2 changes loses it."""
    result = grade({**solved(), "prefix_test": skips_pair(0, 4)}, exercise="prefix_test")["prefix_test"]
    assert (result.points, result.diagnosis) == (4, "missed_positions"), result.render("en")
    assert "the leak from one middle token" in result.render("en")


def far_only_at_position_zero(model_fn, vocab_size, T=8, seed=0):
    """Next-token leaks at every t, farther tokens only at position 0: blind to a farther leak at t >= 1."""
    ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    base = model_fn(ids)[0]  # (T, vocab)
    pairs = [(t, t + 1) for t in range(T - 1)] + [(0, s) for s in range(2, T)]
    for t, s in pairs:
        changed = ids.clone()
        changed[0, s] = (ids[0, s] + 1) % vocab_size
        if not torch.allclose(model_fn(changed)[0, t], base[t], atol=1e-5):
            return False
    return True


@pytest.mark.parametrize("seed", [None, 2, 6])
def test_a_farther_leak_is_drawn_at_every_position_so_checking_it_at_position_0_alone_fails(seed):
    """Every distance at position 0 is not enough: each t >= 1 gets a leak from farther ahead too."""
    result = grade({**solved(), "prefix_test": far_only_at_position_zero}, exercise="prefix_test", seed=seed)[
        "prefix_test"]
    assert (result.points, result.diagnosis) == (4, "missed_positions"), result.render("en")


def skips_distance(distance):
    def prefix_test_without_one_distance(model_fn, vocab_size, T=8, seed=0):
        """Changes one later token at a time and looks only at position t: blind to the one distance it skips."""
        ids = torch.randint(0, vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
        base = model_fn(ids)[0]  # (T, vocab)
        for t in range(T - 1):
            later = [s for s in range(t + 1, T) if s - t != distance]
            if not later:
                continue
            changed = ids.repeat(len(later), 1)  # (n, T): copy n changes token later[n] only, one batched call
            changed[torch.arange(len(later)), later] = (ids[0, later] + 1) % vocab_size
            if not torch.allclose(model_fn(changed)[:, t], base[t].expand(len(later), -1), atol=1e-5):
                return False
        return True

    return prefix_test_without_one_distance


# Blind to distance 1, a test also misses the off-by-one mask and the shifted input (both leak the next token
# only): 2 of 5. Blind to a longer distance, it misses only the sweep's leak of that distance: 4 of 5.
@pytest.mark.parametrize("distance,points,diagnosis", [(1, 2, "missed_bugs"), (2, 4, "missed_positions"),
                                                       (4, 4, "missed_positions"), (7, 4, "missed_positions")])
def test_a_prefix_test_blind_to_one_distance_loses_the_sweep_whatever_the_seed(distance, points, diagnosis):
    for seed in (None, 1, 2):
        result = grade({**solved(), "prefix_test": skips_distance(distance)}, exercise="prefix_test", seed=seed)[
            "prefix_test"]
        assert (result.points, result.diagnosis) == (points, diagnosis), (seed, result.render("en"))


@pytest.mark.parametrize("seed", [None, 1, 4, 9])
def test_a_loose_tolerance_loses_the_faint_leak_whatever_the_seed(seed):
    """Issue 21: a test must lose points against a leak too small for its threshold."""
    result = grade({**solved(), "prefix_test": loose_tolerance}, exercise="prefix_test", seed=seed)["prefix_test"]
    assert (result.points, result.diagnosis) == (4, "tolerance_too_loose"), result.render("en")
    assert "07 §6" in result.render("en")


@pytest.mark.parametrize("seed", range(5, 11))  # test_reference_gets_full_marks has None and 0 … 4
def test_the_reference_prefix_test_keeps_full_marks_for_every_seed(seed):
    result = grade(solved(), exercise="prefix_test", seed=seed)["prefix_test"]
    assert result.status == "passed" and result.points == 5, result.render("en")


@pytest.mark.parametrize("honest", [next_token_only, cuts_the_sequence, skips_distance(None)],
                         ids=["one-token-at-a-time", "cut-after-t", "each-later-token-alone-at-position-t"])
def test_other_honest_prefix_tests_keep_full_marks(honest):
    for seed in (None, 7):
        result = grade({**solved(), "prefix_test": honest}, exercise="prefix_test", seed=seed)["prefix_test"]
        assert result.status == "passed" and result.points == 5, (seed, result.render("en"))


@pytest.mark.parametrize("vocab,seed,leak", [(5, 1, (0, 1)), (11, 2024, (2, 5)), (20, 77, (0, 7)), (7, 3, (4, 6))])
def test_the_faint_leak_is_far_above_rounding_and_below_a_loose_tolerance(vocab, seed, leak):
    t, s = leak
    model = lab03.decoder_function(lab03.FAINT_LEAK, vocab, seed, leak)
    correct = lab03.decoder_function(None, vocab, seed)
    g = torch.Generator().manual_seed(seed)
    for _ in range(25):
        ids = torch.randint(0, vocab, (1, 8), generator=g)
        changed = ids.clone()
        changed[0, s] = (ids[0, s] + torch.randint(1, vocab, (1,), generator=g)) % vocab
        moved = (model(changed) - model(ids)).abs()[0].amax(dim=-1)  # (T,)
        assert 2e-4 < moved[t] < 1e-3, moved[t]  # seen at 1e-5 (plus rtol on logits of ~10), never at 1e-3
        assert torch.equal(moved[:t], torch.zeros(t)), "only position t leaks"
        assert torch.equal(model(ids)[:, :t], correct(ids)[:, :t])


# ---------------------------------------------------------------- the grader's own helpers, called directly
def test_f32_rounds_to_float32_and_computes_on_in_float64():
    value = lab03.f32([0.1])
    assert value.dtype == np.float64
    assert value[0] == 0.100000001490116119384765625  # 13421773 / 2**27, the float32 nearest 0.1


def test_encoded_arguments_keep_their_dtype_and_come_back_as_floats():
    assert lab03.tensor_arg([[1, 2]], "int64") == {"__tensor__": [[1, 2]], "dtype": "int64"}
    assert lab03.tensor_arg([0.5]) == {"__tensor__": [0.5], "dtype": "float32"}
    for encoded, values in (({"__tensor__": [1, 3], "dtype": "int64"}, [1.0, 3.0]), ([1, 3], [1.0, 3.0]), (2, 2.0)):
        back = lab03.arg_array(encoded)
        assert back.dtype == np.float64 and back.tolist() == values, encoded


def test_softmax_is_stable_row_by_row_and_quiet_on_a_row_without_keys():
    x = np.array([[0.0, math.log(3.0)], [1000.0, 1000.0 + math.log(3.0)], [-np.inf, -np.inf]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # overflow in exp, or -inf - -inf, would warn
        out = lab03.softmax(x)
    # e^0 : e^ln3 = 1 : 3 whatever the row's offset; a row of -inf has no weights at all: NaN (as in torch)
    np.testing.assert_allclose(out[:2], [[0.25, 0.75], [0.25, 0.75]], rtol=1e-12)
    assert np.isnan(out[2]).all()


@pytest.mark.parametrize("a,b,atol,equal", [
    ([0.0], [0.5], 0.5, True),  # a gap of exactly atol passes (0.5 is exact in binary)
    ([0.0], [0.5000001], 0.5, False),
    ([np.nan], [np.nan], 0.0, True),
    ([np.nan], [1.0], 1.0, False),
    ([np.inf], [np.inf], 0.0, True),
    ([-np.inf], [-np.inf], 0.0, True),
    ([-np.inf], [np.inf], 1.0, False),
    ([np.inf], [1.0], 1e9, False),
    ([1.0], [np.inf], 1e9, False),
    ([0.0, 0.0], [0.0, 0.0, 0.0], 1.0, False),  # shapes differ
], ids=["gap-at-atol", "gap-above-atol", "nan-nan", "nan-number", "inf-inf", "minus-inf", "inf-minus-inf",
        "inf-number", "number-inf", "shapes"])
def test_close_nan_at_its_boundary_and_with_nan_and_inf(a, b, atol, equal):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf is NaN: computed without a warning
        assert lab03.close_nan(np.array(a), np.array(b), atol) is equal


def test_the_default_mask_is_the_causal_one():
    assert lab03.allowed_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_a_leak_line_needs_a_later_token_and_is_full_strength_by_default():
    with pytest.raises(AssertionError):
        lab03.position_leak_line(2, 2)
    line = lab03.position_leak_line(1, 3)
    assert "logits[:, 1] + extra[tokens[:, 3]]" in line and "faintly" not in line and str(lab03.FAINT) not in line


def test_a_diagnosis_without_a_message_of_its_own_uses_the_shared_one():
    result = lab03.LAB.exercise("CausalSelfAttention").diagnosed("off_by_one")  # no lab03.off_by_one message
    assert [item.key for item in result.feedback] == ["common.failed", "diagnosis.off_by_one", "lab03.see_lab"]


def test_decoders_are_the_graded_decoders_for_any_vocabulary_and_seed():
    ids = ids_for(5, 6, seed=1)
    made = lab03.decoders(vocab=5, seed=1)
    assert set(made) == {"correct", *lab03.BUG_LINES}
    for name, model in made.items():
        same = lab03.decoder_function(None if name == "correct" else name, 5, 1)
        assert model(ids).shape == (2, 6, 5) and torch.equal(model(ids), same(ids)), name


# ---------------------------------------------------------------- CausalSelfAttention: its cases
def _torch_reference(case, module_class=CausalSelfAttention):
    """The output of the torch reference module above (or of a slip of it) on one case (float32)."""
    x, state, heads, lengths, side = lab03.case_inputs(case)
    module = module_class(x.shape[2], heads)
    module.load_state_dict({key: torch.tensor(value, dtype=torch.float32) for key, value in state.items()})
    with torch.no_grad():
        out = module(torch.tensor(x, dtype=torch.float32), None if lengths is None else torch.tensor(lengths), side)
    return out.double().numpy()


def _feedback(result):
    return [(item.key, item.params) for item in result.feedback]


def _named(case):
    """The name a case should have, written from what the case really passes to the module."""
    x, _, heads, lengths, side = lab03.case_inputs(case)
    B, T, d_model = x.shape
    name = f"B={B}, T={T}, d_model={d_model}, n_heads={heads}"
    if lengths is not None:
        listed = "[" + ", ".join(str(n) for n in lengths) + "]"
        name += f", lengths={f'tensor({listed})' if isinstance(case.call['kwargs']['lengths'], dict) else listed}"
    if side == "left":
        name += ", padding_side='left'"
    return name


def test_each_public_case_is_named_after_what_it_passes():
    cases = lab03.LAB.exercise("CausalSelfAttention").cases({})
    assert [case.name for case in cases] == [_named(case) for case in cases]
    for case in cases:
        x, state, heads, lengths, side = lab03.case_inputs(case)
        assert case.call["init"] == [x.shape[2], heads] and state["q_proj.weight"].shape == (x.shape[2],) * 2
        assert case.data["padding"] == (lengths is not None)
        assert lengths is None or lengths.dtype.kind == "i"


def test_lengths_given_as_a_tensor_reach_the_module_as_int64():
    from autograder.runtime import decode_arg

    cases = lab03.LAB.exercise("CausalSelfAttention").cases({}, seed=0)
    tensors = [decode_arg(case.call["kwargs"])["lengths"] for case in cases
               if isinstance(case.call["kwargs"].get("lengths"), dict)]
    assert tensors and all(lengths.dtype == torch.int64 for lengths in tensors)  # a float index would raise


def test_the_reference_weights_are_symmetric_of_scale_1_5_over_sqrt_d_model():
    """1.5 times nn.Linear's own bound 1/sqrt(d_model): large enough that every slip moves the output."""
    weights, biases = [], []
    for case in lab03.LAB.exercise("CausalSelfAttention").cases({}, seed=0):
        _, state, _, _, _ = lab03.case_inputs(case)
        for layer in lab03.LAYERS:
            weights.append(state[f"{layer}.weight"].ravel() * math.sqrt(state[f"{layer}.weight"].shape[0]))
            biases.append(state[f"{layer}.bias"])
    weights, biases = np.concatenate(weights), np.concatenate(biases)
    assert -1.5 - 1e-6 <= weights.min() < -1.4 and 1.4 < weights.max() <= 1.5 + 1e-6  # 1e-6: float32 rounding
    assert -0.5 <= biases.min() < -0.4 and 0.4 < biases.max() <= 0.5


def test_the_hidden_attention_cases_follow_the_hidden_table_and_vary_within_their_ranges():
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    public = exercise.cases({})
    encodings = {"listed": [], "random": []}  # True where lengths come as a tensor
    sides, heads, head_sizes, batches, lengths_seen, steps = [], set(), set(), set(), set(), set()
    for seed in range(200):
        cases = exercise.cases({}, seed=seed)
        assert cases[:len(public)] == public
        hidden = cases[len(public):]
        assert all(case.public is False for case in hidden)  # the engine runs `public == False` cases last
        # named by what they pass, in code, as the public ones: no English word for the reader of another language
        assert [case.name for case in hidden] == [_named(case) for case in hidden]
        assert len(hidden) == len(exercise.HIDDEN) + 2
        for case, (B, T, d_model, n_heads, lengths, side) in zip(hidden, exercise.HIDDEN):
            x, _, got_heads, got_lengths, got_side = lab03.case_inputs(case)
            assert (x.shape, got_heads) == ((B, T, d_model), n_heads)
            assert (None if got_lengths is None else got_lengths.tolist(), got_side) == (lengths, side)
            if lengths is not None:
                encodings["listed"].append(isinstance(case.call["kwargs"]["lengths"], dict))
        first, second = hidden[-2:]
        assert "lengths" not in first.call["kwargs"] and "lengths" in second.call["kwargs"]
        for case in (first, second):
            x, _, n_heads, lengths, side = lab03.case_inputs(case)
            B, T, d_model = x.shape
            assert d_model % n_heads == 0
            heads.add(n_heads)
            head_sizes.add(d_model // n_heads)
            batches.add(B)
            steps.add(T)
        assert all(1 <= n <= T for n in lengths)
        lengths_seen.update("1" if n == 1 else "T" if n == T else "between" for n in lengths)
        sides.append(side)
        encodings["random"].append(isinstance(second.call["kwargs"]["lengths"], dict))
    assert (heads, head_sizes, batches, steps) == ({1, 2, 4}, {2, 3}, {1, 2, 3}, set(range(2, 8)))
    assert lengths_seen == {"1", "T", "between"}
    # a coin decides the side (200 draws) and the encoding (1000 padded hidden cases, 200 random ones): about half each
    assert set(sides) == {"left", "right"} and 0.4 < sides.count("left") / len(sides) < 0.6
    for name, drawn in encodings.items():
        assert 0.4 < sum(drawn) / len(drawn) < 0.6, name


@pytest.mark.parametrize("B,heads", [(2, 2), (1, 2), (2, 1), (3, 1)])
def test_the_batch_on_heads_slip_exists_exactly_where_it_runs_in_torch(B, heads):
    case = lab03.module_case(np.random.default_rng(0), B, 4, 2 * heads, heads, lengths=[2, 3, 4][:B], side="left")
    inputs = lab03.case_inputs(case)
    slipped = lab03.self_attention(*inputs, padding="batch_on_heads")
    try:  # a (B, T, T) mask against (B, H, T, T) scores: with B != H (and B > 1) the heads axis grows to B
        in_torch = _torch_reference(case, variant(padding="batch_on_heads"))
    except RuntimeError:
        in_torch = None
    assert (slipped is None) == (in_torch is None)
    if in_torch is None:  # what would have raised matches no output
        assert not lab03.CausalSelfAttentionExercise.matches([inputs[0]], [inputs], {"padding": "batch_on_heads"})
    else:
        assert lab03.close_nan(lab03.real_rows(slipped, *inputs[3:]), lab03.real_rows(in_torch, *inputs[3:]), 1e-5)


# ---------------------------------------------------------------- CausalSelfAttention: judging crafted outputs
def test_a_module_that_cannot_take_the_weights_is_told_the_first_160_characters_of_why():
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    cases = exercise.cases({})
    message = "state_dict: " + "k" * 200
    result = exercise.judge({}, cases, [{"error": {"type": "RuntimeError", "message": message}}] * len(cases))
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "layers_missing")
    assert _feedback(result) == [("common.failed", {"name": "CausalSelfAttention"}),
                                 ("lab03.layers_missing", {"message": "state_dict: " + "k" * 148}),  # 12 + 148
                                 ("lab03.see_lab", {"section": "1"})]


@pytest.mark.parametrize("gap,passes", [(0.9e-5, True), (1.1e-5, False)])
def test_outputs_are_compared_within_1e_5(gap, passes):
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    cases = exercise.cases({})
    values = [Array(lab03.self_attention(*lab03.case_inputs(case)) + gap, "float32") for case in cases]
    result = exercise.judge_outputs({}, cases, values)
    assert result.status == ("passed" if passes else "failed") and result.points == (5 if passes else 0)


@pytest.mark.parametrize("gap,diagnosis", [(0.9e-4, "no_mask"), (1.1e-4, "wrong_values")])
def test_a_slip_is_recognised_within_1e_4(gap, diagnosis):
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    cases = exercise.cases({})
    values = [Array(lab03.self_attention(*lab03.case_inputs(case), mask="none") + gap, "float32") for case in cases]
    assert exercise.judge_outputs({}, cases, values).diagnosis == diagnosis


def test_a_gap_just_above_the_tolerance_everywhere_names_the_first_entry():
    """close_nan fails it, first_difference (which allows 1e-12 more) finds no entry: the first is named."""
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    (case,) = exercise.cases({})[:1]
    got = lab03.self_attention(*lab03.case_inputs(case)) + (lab03.ATOL + 5e-13)
    result = exercise.judge_outputs({}, [case], [Array(got, "float32")])
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    assert _feedback(result) == [
        ("common.failed", {"name": "CausalSelfAttention"}),
        ("common.wrong_entry", {"case": case.name, "index": "0, 0, 0", "got": f"{got[0, 0, 0]:.4g}"}),
        ("lab03.see_lab", {"section": "1"})]


def test_the_wrong_entry_named_is_a_real_position_of_the_first_wrong_case():
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    cases = exercise.cases({})
    left, one_head = cases[5], cases[2]  # lengths=[3, 5] padded on the left; a plain case with one head
    assert lab03.case_inputs(left)[4] == "left" and lab03.case_inputs(one_head)[2] == 1
    padded, plain = _torch_reference(left), _torch_reference(one_head)
    padded[0, :2] = 123.0  # the padding rows of sequence 0 (length 3 of T = 5): never compared
    padded[0, 3, 1] += 0.5  # the first wrong real entry
    plain[0, 0, 0] += 0.5  # one head wrong too: no slip, no "right with one head"
    result = exercise.judge_outputs({}, [left, one_head], [Array(padded, "float32"), Array(plain, "float32")])
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    assert _feedback(result) == [
        ("common.failed", {"name": "CausalSelfAttention"}),
        ("common.wrong_entry", {"case": left.name, "index": "0, 3, 1", "got": f"{padded[0, 3, 1]:.4g}"}),
        ("lab03.see_lab", {"section": "1"})]


def test_a_nan_where_the_reference_is_zero_is_the_entry_named():
    exercise = lab03.LAB.exercise("CausalSelfAttention")
    public = exercise.cases({})[0]
    call = {**public.call, "state": {key: lab03.tensor_arg(np.zeros(np.shape(value["__tensor__"])))
                                     for key, value in public.call["state"].items()}}
    case = Case("zero weights", call, data={"padding": False})  # every output, and every slip's, is exactly 0
    got = np.zeros(lab03.case_inputs(case)[0].shape)
    got[0, 1, 2] = np.nan
    result = exercise.judge_outputs({}, [case], [Array(got, "float32")])
    assert result.diagnosis == "wrong_values"
    assert ("common.wrong_entry", {"case": "zero weights", "index": "0, 1, 2", "got": "nan"}) in _feedback(result)


# ---------------------------------------------------------------- prefix_test: its cases
def test_the_prefix_test_cases_are_labelled_after_their_decoder_and_marked_optional_when_buggy():
    exercise = lab03.LAB.exercise("prefix_test")
    public = exercise.cases({})
    for case in exercise.cases({}, seed=3):
        bug, leak = case.data["bug"], case.data["leak"]
        label = bug if leak is None else f"position {leak[0]} reads token {leak[1]}"
        label += ", faintly" if bug == lab03.FAINT_LEAK else ""
        if bug == lab03.MIDDLE_LEAK:
            label = f"middle_leak: position 0 reads token T // 2 = {leak[1]}"
        if not case.public:
            label += f" (vocab_size={case.call['args'][1]}, T={case.call['kwargs']['T']})"
        assert case.name == label
        assert case.data["optional"] is (bug != "correct")  # the engine goes on after a buggy decoder's time-out
    assert exercise.cases({}, seed=3)[:len(public)] == public


def test_the_hidden_prefix_test_cases_vary_within_their_ranges():
    exercise = lab03.LAB.exercise("prefix_test")
    n_public = len(exercise.cases({}))
    vocabularies, faint_tokens = set(), set()
    for seed in range(200):
        hidden = exercise.cases({}, seed=seed)[n_public:]
        assert hidden and all(case.public is False for case in hidden)
        vocabularies.add(hidden[0].call["args"][1])
        (faint,) = [case.data["leak"] for case in hidden if case.data["bug"] == lab03.FAINT_LEAK]
        assert 0 <= faint[0] < faint[1]
        faint_tokens.add(faint[1])
    assert vocabularies == set(range(5, 21))
    assert faint_tokens == set(range(1, exercise.hidden_T))  # the faint leak may read any later token


# ---------------------------------------------------------------- prefix_test: judging crafted outputs
def batched_prefix_test(rows, length, negative=False):
    """One call: row 0 is the base, row t + 1 changes every token after t; ids below 0 with `negative`."""
    def prefix_test_in_one_call(model_fn, vocab_size, T=8, seed=0):
        base = torch.randint(0, vocab_size, (length,), generator=torch.Generator().manual_seed(seed))
        ids = base.repeat(rows, 1)  # (rows, length)
        for t in range(T - 1):
            ids[t + 1, t + 1:] = (base[t + 1:] + 1) % vocab_size
        out = model_fn(ids - vocab_size if negative else ids)  # (rows, length, vocab)
        return all(torch.allclose(out[t + 1, : t + 1], out[0, : t + 1], atol=1e-5) for t in range(T - 1))

    return prefix_test_in_one_call


@pytest.fixture(scope="module")
def public_runs():
    """The public cases and what a right test (one batched call) and `always_true` return on each."""
    cases = lab03.LAB.exercise("prefix_test").cases({})
    return cases, {name: [run_call({"prefix_test": test}, case.call) for case in cases]
                   for name, test in (("right", batched_prefix_test(8, 8)), ("always_true", always_true))}


def test_a_full_pass_says_every_leak_was_caught(public_runs):
    cases, runs = public_runs
    result = lab03.LAB.exercise("prefix_test").judge({}, cases, runs["right"])
    assert (result.status, result.points) == ("passed", 5.0)
    assert _feedback(result) == [("common.passed", {"name": "prefix_test"}), ("lab03.caught_all", {})]


def test_a_rejection_without_any_recorded_call_earns_nothing(public_runs):
    cases, runs = public_runs
    outputs = [{key: value for key, value in output.items() if key != "calls"} for output in runs["right"]]
    result = lab03.LAB.exercise("prefix_test").judge({}, cases, outputs)
    assert (result.points, result.diagnosis) == (0.0, "no_evidence")


@pytest.mark.parametrize("value,key,got", [(None, "lab03.returned_none", "NoneType"),
                                           ("causal", "common.not_a_bool", "str")])
def test_an_answer_that_is_not_a_bool_is_told_what_came_back(public_runs, value, key, got):
    cases, runs = public_runs
    outputs = [{"ok": value}] + runs["right"][1:]  # the correct decoder's case comes first
    result = lab03.LAB.exercise("prefix_test").judge({}, cases, outputs)
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_type")
    assert [item.key for item in result.feedback] == ["common.failed", key, "lab03.wrong_type"]
    assert result.feedback[1].params["got"] == got
    # the case is described in the reader's language, never by its internal name ("correct")
    assert result.feedback[1].params["case"].render("es") == "«decodificador correcto»"


@pytest.mark.parametrize("failure,crash", [
    ({"error": {"type": "AssertionError", "message": "leak " + "!" * 300}},
     {"type": "AssertionError", "message": "leak " + "!" * 155}),  # 5 + 155 = 160 characters
    ({"timeout": True}, {"type": "timeout", "message": ""}),
], ids=["raised", "timed-out"])
def test_a_crash_on_one_decoder_is_reported_after_every_other_miss(public_runs, failure, crash):
    cases, runs = public_runs
    outputs = [failure if case.data["bug"] == "no_mask" else output for case, output in zip(cases, runs["always_true"])]
    result = lab03.LAB.exercise("prefix_test").judge({}, cases, outputs)
    (faint,) = [case.data["leak"] for case in cases if case.data["bug"] == lab03.FAINT_LEAK]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "crashes")
    assert _feedback(result) == [
        ("common.failed", {"name": "prefix_test"}),
        ("lab03.passed_checks", {"caught": 0, "total": 5}),
        ("lab03.missed.off_by_one", {}), ("lab03.missed.time_axis_norm", {}), ("lab03.missed.shifted_input", {}),
        ("lab03.missed.positions", {"positions": "0, 1, 2, 3, 4, 5, 6", "count": 7}),  # every t of T = 8 has a leak
        ("lab03.missed.middle_leak", {"token": 4}),  # T // 2 of T = 8
        ("lab03.missed.faint_leak", {"position": faint[0], "token": faint[1]}),
        ("lab03.crashes", {"bug": Feedback("lab03.case.no_mask", {}), **crash}),  # the decoder described
        ("lab03.see_lab", {"section": "3"})]


# The grader replays a test's calls only on token ids of at most 64 x 64, within the vocabulary.
@pytest.mark.parametrize("rows,length,negative,points", [(64, 8, False, 5), (65, 8, False, 0), (8, 64, False, 5),
                                                         (8, 65, False, 0), (8, 8, True, 0)],
                         ids=["64-rows", "65-rows", "64-tokens", "65-tokens", "ids-below-0"])
def test_calls_beyond_the_replayed_sizes_are_no_evidence(rows, length, negative, points):
    result = grade({**solved(), "prefix_test": batched_prefix_test(rows, length, negative)},
                   exercise="prefix_test")["prefix_test"]
    assert (result.points, result.diagnosis) == (points, None if points else "no_evidence"), result.render("en")


def test_two_leaky_decoders_that_differ_only_in_their_leak_never_share_trusted_outputs():
    # The trusted outputs are cached by decoder; two sweep decoders share bug, vocabulary and seed and
    # differ only in the leak, so the leak must be part of the key, or one decoder's verdict is the other's.
    exercise = lab03.LAB.exercise("prefix_test")
    by_leak = {case.data["leak"]: case for case in exercise.cases({}) if case.data["bug"] == lab03.POSITION_LEAK}
    reads_1, reads_2 = by_leak[(0, 1)], by_leak[(1, 2)]
    assert {k: v for k, v in reads_1.data.items() if k != "leak"} == {k: v for k, v in reads_2.data.items() if k != "leak"}
    base = np.array([[3, 9, 4, 1, 10, 2, 6, 5]])  # (1, T): a sequence no other test hands these decoders
    changed = base.copy()
    changed[0, 1] = 0  # only token 1 changes: position 0 must not see it, position 1 may
    output = {"calls": [[base, changed]]}
    assert exercise.witnessed(reads_1, output) is True
    assert exercise.witnessed(reads_2, output) is False


# ---------------------------------------------------------------- technical-2 (c), through the batch grader
ROOT = Path(__file__).resolve().parents[1]


def test_the_review_s_notebooks_lose_points_in_the_batch_grader_with_its_seed(tmp_path):
    """The review graded its two false positives with `python -m autograder grade lab03 ... --seed 11`: the
    adjacent-only prefix test (5/5 then) and the mask on the query axis (10/10 then). Both lose points there
    now, with their own diagnoses; the solution keeps 10/10, and every one of its cells runs in the grader's
    sandbox, where `autograder` is an inert stand-in (a cell that indexes what it returns would raise)."""
    solution = json.loads((ROOT / "solutions" / "en" / "lab03_multi_head.ipynb").read_text(encoding="utf-8"))
    adjacent = inspect.getsource(adjacent_only).replace("def adjacent_only(", "def prefix_test(")
    key_axis = "allowed = allowed & real[:, None, None, :]"
    assert json.dumps(solution).count(key_axis) == 1
    books = {"solution": solution, "adjacent_only": with_definition(solution, "prefix_test", adjacent),
             "query_axis": json.loads(json.dumps(solution).replace(key_axis, "allowed = allowed & real[:, None, :, None]"))}
    for name, book in books.items():
        (tmp_path / f"{name}.ipynb").write_text(json.dumps(book), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "lab03", str(tmp_path), "--out",
                          str(tmp_path / "out"), "--seed", "11", "--jobs", "2"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    entries = {e["student"]: e for e in json.loads((tmp_path / "out" / "grades.json").read_text())["submissions"]}
    graded = {name: {exercise: (result["points"], result["diagnosis"]) for exercise, result in e["exercises"].items()}
              for name, e in entries.items()}
    assert graded == {
        "solution": {"CausalSelfAttention": (5, None), "prefix_test": (5, None)},
        "adjacent_only": {"CausalSelfAttention": (5, None), "prefix_test": (4, "only_next_token")},
        "query_axis": {"CausalSelfAttention": (3, "padding_queries"), "prefix_test": (5, None)},
    }
    assert [e["cells"] for e in entries.values()] == [[], [], []]
