"""lab04 (the mask at inference with a KV cache): reference solutions get full marks, and every
diagnosis is triggered by a wrong implementation written here in torch, as a student would.
"""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder import Lab
from autograder.exercise import Feedback
from autograder.grading import grade_lab
from autograder.labs import lab04
from autograder.runtime import run_call

pytestmark = pytest.mark.lab04


# ---------------------------------------------------------------- reference solutions
def kv_cache_mask(T_new, T_past):
    return torch.ones(T_new, T_past + T_new, dtype=torch.bool).tril(diagonal=T_past)


def cached_attention(q, k, v, past_k=None, past_v=None):
    k_all = k if past_k is None else torch.cat([past_k, k], dim=-2)  # (..., S, d_k)
    v_all = v if past_v is None else torch.cat([past_v, v], dim=-2)  # (..., S, d_v)
    T_new, S = q.shape[-2], k_all.shape[-2]
    scores = q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T_new, S)
    scores = scores.masked_fill(~kv_cache_mask(T_new, S - T_new), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v_all, k_all, v_all


def solved():
    return {"kv_cache_mask": kv_cache_mask, "cached_attention": cached_attention}


def grade(namespace, lang="en", exercise=None, seed=None):
    lab = Lab("lab04", lang=lang)
    results = grade_lab(lab.spec, lambda spec: run_call(namespace, spec), seed=seed,
                        only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3, 4, 5])
def test_reference_gets_full_marks(seed):
    results = grade(solved(), seed=seed)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab04.LAB.max_score


def test_points():
    assert {e.id: e.points for e in lab04.EXERCISES} == {"kv_cache_mask": 3, "cached_attention": 5}


def test_sdpa_with_the_lower_right_causal_bias_also_passes():
    from torch.nn.attention.bias import causal_lower_right

    def via_sdpa(q, k, v, past_k=None, past_v=None):
        k_all = k if past_k is None else torch.cat([past_k, k], dim=-2)
        v_all = v if past_v is None else torch.cat([past_v, v], dim=-2)
        bias = causal_lower_right(q.shape[-2], k_all.shape[-2])
        return F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=bias), k_all, v_all

    result = grade({**solved(), "cached_attention": via_sdpa}, exercise="cached_attention", seed=1)["cached_attention"]
    assert result.status == "passed", result.render("en")


def test_blank_lab_scores_zero_with_not_implemented_messages():
    def stub(*args, **kwargs):
        raise NotImplementedError("Your code here")

    results = grade({"kv_cache_mask": stub, "cached_attention": stub})
    assert {r.status for r in results.values()} == {"not_answered"}
    assert sum(r.points for r in results.values()) == 0
    assert "not implemented yet" in results["kv_cache_mask"].render("en")
    assert "nicht implementiert" in results["cached_attention"].render("de")


def test_hidden_cases_come_with_a_seed_only():
    for exercise in lab04.EXERCISES:
        public = exercise.cases({})
        assert all(case.public for case in public)
        hidden = [c for c in exercise.cases({}, seed=9) if not c.public]
        assert hidden
        if exercise.id == "kv_cache_mask":  # the whole taught grid, whatever the seed
            assert {tuple(c.call["args"]) for c in hidden} == {(n, p) for n in range(1, 7) for p in range(7)}
        else:
            assert [c.call for c in hidden] != [c.call for c in exercise.cases({}, seed=10) if not c.public]


# ---------------------------------------------------------------- kv_cache_mask
def top_left(T_new, T_past):
    return torch.ones(T_new, T_past + T_new, dtype=torch.bool).tril()


def diagonal_masked(T_new, T_past):
    return torch.ones(T_new, T_past + T_new, dtype=torch.bool).tril(diagonal=T_past - 1)


def off_by_one(T_new, T_past):
    return torch.ones(T_new, T_past + T_new, dtype=torch.bool).tril(diagonal=T_past + 1)


def inverted(T_new, T_past):
    return ~kv_cache_mask(T_new, T_past)


def no_mask(T_new, T_past):
    return torch.ones(T_new, T_past + T_new, dtype=torch.bool)


def past_blocked(T_new, T_past):
    return torch.cat([torch.zeros(T_new, T_past, dtype=torch.bool),
                      torch.ones(T_new, T_new, dtype=torch.bool).tril()], dim=1)


def transposed(T_new, T_past):
    return kv_cache_mask(T_new, T_past).T


def additive(T_new, T_past):
    return torch.zeros(T_new, T_past + T_new).masked_fill(~kv_cache_mask(T_new, T_past), float("-inf"))


MASK_SLIPS = [
    (top_left, "top_left", ("aligned top-left", "alineada arriba a la izquierda")),
    (diagonal_masked, "diagonal_masked", ("also blocks the diagonal", "también bloquea la diagonal")),
    (off_by_one, "off_by_one", ("one key too many", "una key de más")),
    (inverted, "inverted", ("True and False are swapped", "True y False están intercambiados")),
    (no_mask, "no_mask", ("every new query sees every key", "cada query nueva lee todas las keys")),
    (past_blocked, "past_blocked", ("do not see the cache", "no ven la caché")),
    (transposed, "transposed", ("transposed", "traspuesta")),
]


@pytest.mark.parametrize("fn,diagnosis,texts", MASK_SLIPS, ids=[d for _, d, _ in MASK_SLIPS])
def test_each_mask_slip_is_named_in_two_languages(fn, diagnosis, texts):
    result = grade({**solved(), "kv_cache_mask": fn}, exercise="kv_cache_mask")["kv_cache_mask"]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    assert texts[0] in result.render("en")
    assert texts[1] in result.render("es")
    assert "§" in result.render("hi-Latn")


def test_every_mask_diagnosis_is_covered_here():
    assert set(lab04.LAB.exercise("kv_cache_mask").diagnosis_names()) == {d for _, d, _ in MASK_SLIPS}


def test_is_causal_alignment_is_the_top_left_slip():
    """What `is_causal=True` does with L != S is exactly the slip the diagnosis names."""
    L, S = 2, 6
    q, k, v = torch.randn(L, 4), torch.randn(S, 4), torch.eye(S)
    weights = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (L, S): v = I gives the weights
    assert torch.equal(weights > 0, top_left(L, S - L))
    assert np.array_equal(lab04.cache_mask(L, S - L, "top_left"), top_left(L, S - L).numpy())


def test_diagnoses_point_to_existing_chapter_sections():
    from labbook.notebooks import headings, read_source, targets

    chapters = {t.name[:2]: t for t in targets() if t.part == "course" and t.lang == "en"}
    for name, section in lab04.CHAPTER_SECTIONS.items():
        chapter, number = section.split(" §")
        numbers = [h.split("·")[0].strip() for h in headings(read_source(chapters[chapter]), 2)]
        assert number in numbers, (name, section)


def test_float_mask_says_bool_was_expected():
    result = grade({**solved(), "kv_cache_mask": additive}, exercise="kv_cache_mask")["kv_cache_mask"]
    assert result.diagnosis == "wrong_shape"
    assert "the answer must be bool (1, 6), but yours is float32 (1, 6)" in result.render("en")
    assert "muss die Antwort bool (1, 6) sein, deine ist float32 (1, 6)" in result.render("de")


def test_an_unrecognised_mask_points_at_an_entry():
    def odd(T_new, T_past):
        mask = kv_cache_mask(T_new, T_past)
        mask[-1, 0] = False
        return mask

    result = grade({**solved(), "kv_cache_mask": odd}, exercise="kv_cache_mask")["kv_cache_mask"]
    assert result.diagnosis == "wrong_values" and "[0, 0]" in result.render("en")


def test_mask_slips_differ_from_the_reference_on_the_public_cases():
    sizes = [tuple(c.call["args"]) for c in lab04.LAB.exercise("kv_cache_mask").cases({})]
    for slip in lab04.MASK_SLIPS:
        assert any(not np.array_equal(lab04.cache_mask(n, p, slip), lab04.cache_mask(n, p)) for n, p in sizes), slip


# ---------------------------------------------------------------- cached_attention
def attention_with(mask_fn=kv_cache_mask, scale=True, dim=-1, ignore_past=False, cat_order="past_first",
                   append=True, returns="tuple3"):
    def fn(q, k, v, past_k=None, past_v=None):
        if past_k is None:
            k_all, v_all = k, v
        elif cat_order == "past_first":
            k_all, v_all = torch.cat([past_k, k], dim=-2), torch.cat([past_v, v], dim=-2)
        else:
            k_all, v_all = torch.cat([k, past_k], dim=-2), torch.cat([v, past_v], dim=-2)
        keys, values = (k, v) if ignore_past else (k_all, v_all)
        T_new, S = q.shape[-2], keys.shape[-2]
        scores = q @ keys.transpose(-2, -1)
        if scale:
            scores = scores / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~mask_fn(T_new, S - T_new), float("-inf"))
        out = torch.softmax(scores, dim=dim) @ values
        if returns == "out":
            return out
        if returns == "tuple2":
            return out, k_all
        return (out, k_all, v_all) if append else (out, k, v)

    return fn


def is_causal_sdpa(q, k, v, past_k=None, past_v=None):
    k_all = k if past_k is None else torch.cat([past_k, k], dim=-2)
    v_all = v if past_v is None else torch.cat([past_v, v], dim=-2)
    return F.scaled_dot_product_attention(q, k_all, v_all, is_causal=True), k_all, v_all


def sdpa_diagonal_blocked(q, k, v, past_k=None, past_v=None):
    k_all = k if past_k is None else torch.cat([past_k, k], dim=-2)
    v_all = v if past_v is None else torch.cat([past_v, v], dim=-2)
    mask = diagonal_masked(q.shape[-2], k_all.shape[-2] - q.shape[-2])
    return F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask), k_all, v_all


ATTENTION_SLIPS = [
    (is_causal_sdpa, "top_left", ("aligned top-left", "alineada arriba a la izquierda")),
    (attention_with(mask_fn=top_left), "top_left", ("aligned top-left", "alineada arriba a la izquierda")),
    (attention_with(mask_fn=no_mask), "no_mask", ("every new query sees every key", "cada query nueva lee")),
    (attention_with(mask_fn=diagonal_masked), "diagonal_masked", ("also blocks the diagonal", "bloquea la diagonal")),
    (sdpa_diagonal_blocked, "diagonal_masked", ("also blocks the diagonal", "bloquea la diagonal")),
    (attention_with(scale=False), "forgot_scale", ("forgot the 1/√d_k scale", "olvidaste la escala")),
    (attention_with(dim=-2), "wrong_axis", ("wrong axis", "eje equivocado")),
    (attention_with(ignore_past=True), "past_ignored", ("attend only to the new keys", "solo leen las keys nuevas")),
    (attention_with(append=False), "cache_not_appended", ("k_all has only the new keys", "k_all solo tiene")),
    (attention_with(cat_order="new_first"), "cache_order", ("wrong order", "orden equivocado")),
    (attention_with(returns="out"), "wrong_return", ("returns three tensors", "devuelve tres tensores")),
    (attention_with(returns="tuple2"), "wrong_return", ("the answer must be tuple(float32 (4, 2), float32 (4, 3), float32 (4, 2)), but yours is tuple(float32 (4, 2), float32 (4, 3))", "devuelve tres tensores")),
]


@pytest.mark.parametrize("fn,diagnosis,texts", ATTENTION_SLIPS, ids=[f"{d}-{i}" for i, (_, d, _) in enumerate(ATTENTION_SLIPS)])
def test_each_attention_slip_is_named_in_two_languages(fn, diagnosis, texts):
    result = grade({**solved(), "cached_attention": fn}, exercise="cached_attention")["cached_attention"]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    assert texts[0] in result.render("en")
    assert texts[1] in result.render("es")


def test_a_wrong_cache_names_the_case():
    def scaled_cache(q, k, v, past_k=None, past_v=None):
        out, k_all, v_all = cached_attention(q, k, v, past_k, past_v)
        return out, k_all * 2, v_all

    result = grade({**solved(), "cached_attention": scaled_cache}, exercise="cached_attention")["cached_attention"]
    assert result.diagnosis == "wrong_cache"
    assert "on the case no cache, T=4" in result.render("en")
    assert "im Fall ohne Cache, T=4" in result.render("de")  # the case described in the reader's language


def test_every_attention_diagnosis_is_covered_here():
    named = set(lab04.LAB.exercise("cached_attention").diagnosis_names())
    assert named == {d for _, d, _ in ATTENTION_SLIPS} | {"wrong_cache"}


def test_a_function_that_raises_is_reported():
    def raises(q, k, v, past_k=None, past_v=None):
        return cached_attention(q, k, v, past_k.clone(), past_v)  # fails when there is no cache

    result = grade({**solved(), "cached_attention": raises}, exercise="cached_attention")["cached_attention"]
    assert result.status == "error"
    assert "raised AttributeError on the case no cache, T=4" in result.render("en")
    assert "AttributeError" in result.render("es")


def test_the_chunk_cases_stack_to_full_causal_attention():
    """Decoding in chunks (1, 3, 3) with the reference equals lab02's full causal attention."""
    cases = [c for c in lab04.LAB.exercise("cached_attention").cases({}) if c.name.startswith("chunk")]
    outs = []
    for case in cases:
        q, k, v, k_all, v_all, _ = lab04.attention_inputs(case)
        outs.append(lab04.attend(q, k_all, v_all))
    q, k, v, *_ = lab04.attention_inputs(cases[-1])
    Q = np.concatenate([lab04.attention_inputs(c)[0] for c in cases], axis=-2)
    full = F.scaled_dot_product_attention(torch.tensor(Q), torch.tensor(k_all), torch.tensor(v_all), is_causal=True)
    assert np.allclose(np.concatenate(outs, axis=-2), full.numpy(), atol=1e-5)


def test_chained_decoding_with_the_reference_equals_full_attention():
    g = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 9, 4, generator=g) for _ in range(3))  # (B, H, T, d)
    full = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    past_k = past_v = None
    outs = []
    for start, end in [(0, 1), (1, 4), (4, 9)]:
        out, past_k, past_v = cached_attention(Q[..., start:end, :], K[..., start:end, :], V[..., start:end, :],
                                               past_k, past_v)
        outs.append(out)
    assert torch.allclose(torch.cat(outs, dim=-2), full, atol=1e-5)


def test_attention_slips_differ_from_the_reference_on_the_public_cases():
    inputs = [lab04.attention_inputs(c) for c in lab04.LAB.exercise("cached_attention").cases({})]
    for name, slip in lab04.ATTENTION_SLIPS:
        gaps = []
        for q, _, _, k_all, v_all, _ in inputs:
            candidate = lab04.attend(q, k_all, v_all, **slip)
            gaps.append(np.nanmax(np.abs(np.nan_to_num(candidate, nan=1e3) - lab04.attend(q, k_all, v_all))))
        assert max(gaps) > 1e-2, name


# The blank lab executed top to bottom: tests/test_blank_labs.py (every lab, every language)
# and nbval in lax mode (a real kernel).


# ---------------------------------------------------------------- a wrong entry no slip explains
def test_one_wrong_mask_entry_is_named_by_case_position_and_value():
    def one_flipped(T_new, T_past):
        mask = kv_cache_mask(T_new, T_past).clone()  # (T_new, T_past + T_new)
        if (T_new, T_past) == (1, 5):
            mask[0, 0] = False  # the first key, which every query may read
        return mask

    result = grade({**solved(), "kv_cache_mask": one_flipped}, exercise="kv_cache_mask")["kv_cache_mask"]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    assert [(item.key, item.params) for item in result.feedback] == [
        ("common.failed", {"name": "kv_cache_mask"}),
        ("common.wrong_entry", {"case": "kv_cache_mask(1, 5)", "index": "0, 0", "got": "False"}),
        ("lab04.see_lab", {"section": "1"})]


def test_one_wrong_output_entry_is_named_by_case_position_and_value():
    seen = []

    def one_off(q, k, v, past_k=None, past_v=None):
        out, k_all, v_all = cached_attention(q, k, v, past_k, past_v)
        out = out.clone()  # (..., T_new, d_v)
        if not seen:  # the first case only: no cache, T = 4
            seen.append(float(out.reshape(-1)[0]))
            out.reshape(-1)[0] += 0.5
        return out, k_all, v_all

    result = grade({**solved(), "cached_attention": one_off}, exercise="cached_attention")["cached_attention"]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    assert [(item.key, item.params) for item in result.feedback] == [
        ("common.failed", {"name": "cached_attention"}),
        ("common.wrong_entry", {"case": Feedback("lab04.case.no_cache", {"T": 4}), "index": "0, 0",
                                "got": f"{seen[0] + 0.5:.4g}"}),
        ("lab04.see_lab", {"section": "3"})]


def test_a_wrongly_allowed_mask_entry_shows_true():
    def one_opened(T_new, T_past):
        mask = kv_cache_mask(T_new, T_past).clone()  # (T_new, T_past + T_new)
        if (T_new, T_past) == (3, 2):
            mask[0, 3] = True  # query 0 (position 2) reading key 3, its future
        return mask

    result = grade({**solved(), "kv_cache_mask": one_opened}, exercise="kv_cache_mask")["kv_cache_mask"]
    assert [(item.key, item.params) for item in result.feedback][1] == \
        ("common.wrong_entry", {"case": "kv_cache_mask(3, 2)", "index": "0, 3", "got": "True"})


# ---------------------------------------------------------------- the cases themselves
# Written out by hand: the public cases are what `check` shows a student and what the release records,
# and the hidden ones must span the taught range whatever the instructor's seed.
def shapes_of(case):
    q, k, v, k_all, v_all, T_past = lab04.attention_inputs(case)
    return q.shape, k.shape, v.shape, k_all.shape, v_all.shape, T_past


def test_the_public_mask_cases_are_the_four_the_lab_promises():
    cases = lab04.LAB.exercise("kv_cache_mask").cases({})
    assert [(c.name, c.public) for c in cases] == [
        ("kv_cache_mask(1, 5)", True), ("kv_cache_mask(3, 2)", True), ("kv_cache_mask(4, 0)", True),
        ("kv_cache_mask(2, 4)", True)]


def test_the_hidden_mask_cases_are_every_size_of_the_taught_range():
    cases = lab04.LAB.exercise("kv_cache_mask").cases({}, seed=7)
    hidden = [tuple(c.call["args"]) for c in cases if not c.public]
    assert sorted(hidden) == [(n, p) for n in range(1, 7) for p in range(0, 7)]  # 42 pairs, T_past = 0 and T_new = 1 in


def test_the_public_attention_cases_and_their_shapes():
    cases = lab04.LAB.exercise("cached_attention").cases({})
    # (name, q, k, v, k_all, v_all, T_past); the chunks are one (2, 2, 7, ·) sequence cut 1 + 3 + 3
    assert [(c.name, c.public) + shapes_of(c) for c in cases] == [
        ("no cache, T=4", True, (4, 3), (4, 3), (4, 2), (4, 3), (4, 2), 0),
        ("one new token, T_past=4", True, (2, 1, 3), (2, 1, 3), (2, 1, 2), (2, 5, 3), (2, 5, 2), 4),
        ("chunk 1 of (1, 3, 3), T=7", True, (2, 2, 1, 4), (2, 2, 1, 4), (2, 2, 1, 3), (2, 2, 1, 4), (2, 2, 1, 3), 0),
        ("chunk 2 of (1, 3, 3), T=7", True, (2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 3), (2, 2, 4, 4), (2, 2, 4, 3), 1),
        ("chunk 3 of (1, 3, 3), T=7", True, (2, 2, 3, 4), (2, 2, 3, 4), (2, 2, 3, 3), (2, 2, 7, 4), (2, 2, 7, 3), 4),
    ]
    # a decode loop's first step passes its empty cache as None; the plain call passes nothing
    assert "kwargs" not in cases[0].call
    assert cases[2].call["kwargs"] == {"past_k": None, "past_v": None}


def test_the_fixed_hidden_attention_cases_sit_at_the_edges():
    cases = [c for c in lab04.LAB.exercise("cached_attention").cases({}, seed=3) if not c.public]
    assert all(not c.public for c in cases)
    fixed = [(c.name,) + shapes_of(c) for c in cases[:9]]
    assert fixed == [
        ("chunk 1 of (1), T=1", (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), 0),  # one token, d_k = d_v = 1
        *[(f"chunk {n} of (1, 1, 1, 1, 1), T=5", (3, 1, 2), (3, 1, 2), (3, 1, 1), (3, n, 2), (3, n, 1), n - 1)
          for n in range(1, 6)],  # one token at a time
        ("chunk 1 of (6), T=6", (2, 2, 6, 3), (2, 2, 6, 3), (2, 2, 6, 2), (2, 2, 6, 3), (2, 2, 6, 2), 0),  # all at once
        ("chunk 1 of (2, 5), T=7", (2, 1), (2, 1), (2, 3), (2, 1), (2, 3), 0),
        ("chunk 2 of (2, 5), T=7", (5, 1), (5, 1), (5, 3), (7, 1), (7, 3), 2),
    ]


def test_the_drawn_hidden_attention_case_spans_its_ranges_over_seeds():
    """The chunking drawn by the seed: T in 4..9 cut into 3 non-empty chunks, 0 to 2 leading dims of
    1..3, d_k in 2..5, d_v in 1..4; every end of every range is reached by some seed."""
    seen = {"T": set(), "first": set(), "last_of_T": set(), "lead_len": set(), "lead": set(),
            "d_k": set(), "d_v": set()}
    for seed in range(120):
        drawn = [c for c in lab04.LAB.exercise("cached_attention").cases({}, seed=seed) if not c.public][9:]
        shapes = [shapes_of(c) for c in drawn]
        q0, _, v0, _, _, _ = shapes[0]
        sizes = [q[-2] for q, *_ in shapes]
        T = sum(sizes)
        assert all(size >= 1 for size in sizes) and len(sizes) == 3, (seed, sizes)
        assert [c.name for c in drawn] == [f"chunk {n} of ({', '.join(map(str, sizes))}), T={T}"
                                           for n in range(1, len(sizes) + 1)]
        assert [past for *_, past in shapes] == [sum(sizes[:n]) for n in range(len(sizes))]
        lead = q0[:-2]
        seen["T"].add(T)
        seen["first"].add(sizes[0])
        seen["last_of_T"].add(sizes[0] == T - 2)
        seen["lead_len"].add(len(lead))
        seen["lead"].update(lead)
        seen["d_k"].add(q0[-1])
        seen["d_v"].add(v0[-1])
    assert seen["T"] == set(range(4, 10))
    assert min(seen["first"]) == 1 and seen["last_of_T"] == {True, False}  # the first chunk runs 1 .. T - 2
    assert seen["lead_len"] == {0, 1, 2} and seen["lead"] == {1, 2, 3}
    assert seen["d_k"] == {2, 3, 4, 5} and seen["d_v"] == {1, 2, 3, 4}


def test_a_wrong_tuple_shape_names_the_case_and_every_expected_shape():
    def short_cache(q, k, v, past_k=None, past_v=None):
        out, k_all, v_all = cached_attention(q, k, v, past_k, past_v)
        return out, k_all, v_all[..., :1]  # (..., S, 1): the values cut to one feature

    result = grade({**solved(), "cached_attention": short_cache}, exercise="cached_attention")["cached_attention"]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_shape")
    assert [(item.key, item.params) for item in result.feedback][:2] == [
        ("common.failed", {"name": "cached_attention"}),
        ("common.wrong_type", {"case": Feedback("lab04.case.no_cache", {"T": 4}),
                                "expected": "tuple(float32 (4, 2), float32 (4, 3), float32 (4, 2))",
                                "got": "tuple(float32 (4, 2), float32 (4, 3), float32 (4, 1))"})]


def test_a_nan_entry_is_pointed_at_even_where_the_reference_is_zero():
    """With V = 0 the reference is 0 everywhere: a NaN must still be found at its own position."""
    from autograder.exercise import Array

    exercise = lab04.LAB.exercise("cached_attention")
    zeros_v = lab04.attention_case("no cache, V = 0", lab04.f32(np.ones((3, 2))), lab04.f32(np.ones((3, 2))),
                                   lab04.f32(np.zeros((3, 2))))
    q, k, v, k_all, v_all, _ = lab04.attention_inputs(zeros_v)
    out = np.zeros((3, 2), dtype=np.float32)  # (T, d_v)
    out[1, 1] = np.nan
    arrays = tuple(Array(a.astype(np.float64), "float32") for a in (out, k_all, v_all))
    result = exercise.judge_outputs({}, [zeros_v], [arrays])
    assert result.diagnosis == "wrong_values"
    assert ("common.wrong_entry", {"case": "no cache, V = 0", "index": "1, 1", "got": "nan"}) in \
        [(item.key, item.params) for item in result.feedback]


def test_an_unknown_mask_kind_is_named_in_the_error():
    with pytest.raises(ValueError) as caught:
        lab04.cache_mask(2, 1, "sideways")
    assert caught.value.args == ("sideways",)


def test_a_gap_just_above_the_tolerance_everywhere_names_the_first_entry():
    """close_nan fails it, first_difference (which allows 1e-12 more) finds no entry: the first one is named."""
    from autograder.exercise import Array

    exercise = lab04.LAB.exercise("cached_attention")
    case = exercise.cases({})[4]  # chunk 3 of (1, 3, 3): three queries after a cache of 4, where every slip differs
    q, k, v, k_all, v_all, _ = lab04.attention_inputs(case)
    out = lab04.attend(q, k_all, v_all) + (lab04.ATOL + 5e-13)  # (2, 2, 3, 3), every entry off by just over 1e-5
    result = exercise.judge_outputs({}, [case], [(Array(out, "float32"), Array(k_all, "float32"),
                                                   Array(v_all, "float32"))])
    assert (result.status, result.diagnosis) == ("failed", "wrong_values")
    assert [(item.key, item.params) for item in result.feedback][1] == \
        ("common.wrong_entry", {"case": Feedback("lab04.case.chunk", {"number": 3, "sizes": "1, 3, 3", "T": 7}),
                                "index": "0, 0, 0, 0",
                                "got": f"{out[0, 0, 0, 0]:.4g}"})


def test_a_slip_with_no_key_left_gives_nan_rows_without_a_numpy_warning():
    """The grader's output carries no numpy warning: a slip's all-blocked row (diagonal blocked, no cache) is NaN, quietly."""
    import warnings

    q = k = np.ones((2, 3))  # (T, d_k)
    v = np.arange(4.0).reshape(2, 2)  # (T, d_v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = lab04.attend(q, k, v, mask="diagonal_masked")  # (T, d_v)
    assert np.isnan(out[0]).all() and out[1].tolist() == [0.0, 1.0]  # row 1 reads key 0 only
