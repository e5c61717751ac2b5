"""lab05 (production masks): right answers pass, every named diagnosis is triggered by a wrong answer
written here in torch as a student would (in two languages), and the buggy implementations differ
from the right ones on the public cases.
"""
import json
import math

import pytest
import torch
import torch.nn.functional as F

from autograder import Lab
from autograder.grading import grade_lab
from autograder.labs import lab05
from autograder.runtime import run_call

pytestmark = pytest.mark.lab05


# ---------------------------------------------------------------- a correct student
def document_causal_mask(doc_ids):
    T = doc_ids.shape[-1]
    same = doc_ids[..., :, None] == doc_ids[..., None, :]  # (..., T, T)
    mask = same & torch.ones(T, T, dtype=torch.bool).tril()  # (..., T, T)
    return mask[:, None] if doc_ids.dim() == 2 else mask


def packed_position_ids(doc_ids):
    T = doc_ids.shape[0]
    starts = torch.ones(T, dtype=torch.bool)  # (T,)
    starts[1:] = doc_ids[1:] != doc_ids[:-1]
    start_of = torch.cummax(torch.where(starts, torch.arange(T), 0), dim=0).values  # (T,)
    return torch.arange(T) - start_of


def position_ids_from_mask(attention_mask):
    return (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)


def sink_window_mask(T, W, n_sink):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (j <= i) & ((j > i - W) | (j < n_sink))


def causal_attention(q, k, v):
    """lab02's causal attention."""
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, T)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T)
    return torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1) @ v


def packed_attention(q, k, v, doc_ids):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=document_causal_mask(doc_ids))


RIGHT = {f.__name__: f for f in (document_causal_mask, packed_position_ids, position_ids_from_mask,
                                 sink_window_mask, packed_attention)}


def grade(namespace, lang="en", exercise=None, seed=None):
    results = grade_lab(Lab("lab05", lang=lang).spec, lambda call: run_call(namespace, call), seed=seed,
                        only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}


def with_(name, function):
    namespace = dict(RIGHT)
    namespace[name] = function
    return namespace


# ---------------------------------------------------------------- right answers
@pytest.mark.parametrize("seed", [None, *range(8)])
def test_right_answers_get_full_marks(seed):
    results = grade(RIGHT, seed=seed)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab05.LAB.max_score


def test_packed_attention_document_by_document_is_lab02_on_each_document():
    def per_document(q, k, v, doc_ids):
        out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
        for doc in doc_ids.unique():
            at = (doc_ids == doc).nonzero().squeeze(-1)
            out[..., at, :] = causal_attention(q[..., at, :], k[..., at, :], v[..., at, :])
        return out

    for seed in (None, 3):
        assert grade(with_("packed_attention", per_document), exercise="packed_attention",
                     seed=seed)["packed_attention"].status == "passed"


def test_transformers_position_ids_are_the_reference():
    """transformers 5.24's generate: cumsum - 1, then 0 on padding (masked_fill(attention_mask == 0, 0))."""
    transformers = pytest.importorskip("transformers")
    from transformers.generation.utils import GenerationMixin

    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 0, 0, 1]])  # (B, T)
    ids = GenerationMixin._prepare_position_ids_for_generation(None, mask, {"attention_mask": mask})
    assert torch.equal(ids, position_ids_from_mask(mask)), transformers.__version__


def test_hidden_cases_come_from_the_seed_and_cover_the_domain():
    for exercise in lab05.EXERCISES:
        public = exercise.cases({})
        assert public and all(case.public for case in public)
        a, b = exercise.cases({}, seed=1), exercise.cases({}, seed=1)
        assert [c.call for c in a] == [c.call for c in b]
        calls = {json.dumps(c.call, sort_keys=True) for seed in range(4) for c in exercise.cases({}, seed=seed)
                 if not c.public}
        assert len(calls) > len([c for c in a if not c.public]), exercise.id
        for case in a:
            json.dumps(case.call)
            json.dumps(case.data)
    docs = [c.data["doc_ids"] for c in lab05.DocumentCausalMask().cases({}, seed=0) if not c.public]
    assert [0] in docs and [0] * 5 in docs and list(range(6)) in docs and [[0]] in docs  # T = 1, one, many docs
    masks = [c.data["mask"] for c in lab05.PositionIdsFromMask().cases({}, seed=0) if not c.public]
    assert any(len(m[0]) == 1 for m in masks)
    assert any(row.count(1) == 1 and len(row) > 1 for m in masks for row in m)  # all padding but one


def _todo(*args):
    raise NotImplementedError("Your code here")


def test_blank_lab_reports_not_answered():
    results = grade({name: _todo for name in RIGHT})
    assert {r.status for r in results.values()} == {"not_answered"}
    assert "not implemented yet" in results["packed_attention"].render("en")


# ---------------------------------------------------------------- named diagnoses
def _causal(T):
    return torch.ones(T, T, dtype=torch.bool).tril()


def _same(doc_ids):
    return doc_ids[..., :, None] == doc_ids[..., None, :]


def _as_batch(doc_ids, mask):
    return mask[:, None] if doc_ids.dim() == 2 else mask


def _sinks(T, W, n_sink, lo=0, causal_sinks=True):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    window = (j <= i) & (j > i - W + lo)
    sinks = j < n_sink
    return window | (sinks & (j <= i)) if causal_sinks else window | sinks


def _attention(q, k, v, allowed, scale=True):
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


SLIPS = [
    ("document_causal_mask", "documents_leak",
     lambda d: _as_batch(d, _causal(d.shape[-1]).expand(*d.shape, d.shape[-1])), "leak", "se filtran"),
    ("document_causal_mask", "not_causal_in_document", lambda d: _as_batch(d, _same(d)), "not causal", "no es causal"),
    ("document_causal_mask", "convention_inverted", lambda d: ~document_causal_mask(d), "True and False",
     "True y False"),
    ("document_causal_mask", "diagonal_masked", lambda d: document_causal_mask(d) & ~torch.eye(d.shape[-1],
                                                                                                dtype=torch.bool),
     "diagonal", "diagonal"),
    ("document_causal_mask", "wrong_triangle", lambda d: _as_batch(d, _same(d) & _causal(d.shape[-1]).T),
     "wrong triangle", "triángulo equivocado"),
    ("document_causal_mask", "off_by_one",
     lambda d: _as_batch(d, _same(d) & torch.ones(d.shape[-1], d.shape[-1], dtype=torch.bool).tril(1)),
     "query i also reads key i + 1", "la query i lee también la key i + 1"),
    ("document_causal_mask", "batch_shape", lambda d: _same(d) & _causal(d.shape[-1]), "(2, 5, 5)", "(2, 5, 5)"),
    ("packed_position_ids", "positions_not_reset", lambda d: torch.arange(d.shape[0]), "restart", "reinicia"),
    ("packed_position_ids", "positions_off_by_one", lambda d: packed_position_ids(d) + 1, "off by one",
     "desfasadas en uno"),
    ("position_ids_from_mask", "padding_counted", lambda m: torch.arange(m.shape[1]).expand(m.shape[0], -1),
     "counted the padding", "contaste el padding"),
    ("position_ids_from_mask", "positions_off_by_one", lambda m: m.long().cumsum(-1), "off by one",
     "desfasadas en uno"),
    ("position_ids_from_mask", "padding_fill_one",
     lambda m: (m.long().cumsum(-1) - 1).masked_fill(m == 0, 1), "older releases", "versiones anteriores"),
    ("position_ids_from_mask", "padding_not_filled", lambda m: m.long().cumsum(-1) - 1, "-1", "-1"),
    ("sink_window_mask", "sinks_not_causal", lambda T, W, n: _sinks(T, W, n, causal_sinks=False), "future",
     "futuro"),
    ("sink_window_mask", "window_too_wide", lambda T, W, n: _sinks(T, W + 1, n), "W + 1 keys", "W + 1 keys"),
    ("sink_window_mask", "window_too_narrow", lambda T, W, n: _sinks(T, W - 1, n), "W - 1 keys", "W - 1 keys"),
    ("sink_window_mask", "sinks_double_counted", lambda T, W, n: _sinks(T, max(W - n, 0), n), "twice", "dos veces"),
    ("sink_window_mask", "sinks_missing", lambda T, W, n: _sinks(T, W, 0), "sink", "sink"),
    ("sink_window_mask", "window_missing", lambda T, W, n: _sinks(T, 1, n), "window", "ventana"),
    ("sink_window_mask", "convention_inverted", lambda T, W, n: ~sink_window_mask(T, W, n), "True and False",
     "True y False"),
    ("packed_attention", "documents_leak", lambda q, k, v, d: _attention(q, k, v, _causal(d.shape[0])), "leak",
     "se filtran"),
    ("packed_attention", "not_causal_in_document", lambda q, k, v, d: _attention(q, k, v, _same(d)), "not causal",
     "no es causal"),
    ("packed_attention", "no_mask", lambda q, k, v, d: F.scaled_dot_product_attention(q, k, v), "no mask",
     "sin máscara"),
    ("packed_attention", "forgot_scale",
     lambda q, k, v, d: _attention(q, k, v, _same(d) & _causal(d.shape[0]), scale=False), "√d_k", "√d_k"),
]


@pytest.mark.parametrize("exercise,diagnosis,function,english,spanish", SLIPS,
                         ids=[f"{s[0]}-{s[1]}" for s in SLIPS])
def test_each_slip_is_named_in_two_languages(exercise, diagnosis, function, english, spanish):
    result = grade(with_(exercise, function), exercise=exercise)[exercise]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")
    assert "§" in result.render("de") and "Kapitel" in result.render("de")
    assert "Chapter" in result.render("hi-Latn")


@pytest.mark.parametrize("exercise,diagnosis,function,english,spanish", SLIPS,
                         ids=[f"{s[0]}-{s[1]}" for s in SLIPS])
def test_each_slip_fails_the_hidden_cases(exercise, diagnosis, function, english, spanish):
    for seed in range(3):
        assert grade(with_(exercise, function), exercise=exercise, seed=seed)[exercise].points == 0


def test_every_diagnosis_of_lab05_is_covered_here():
    named = {(exercise.id, name) for exercise in lab05.EXERCISES for name in exercise.diagnosis_names()}
    assert named == {(exercise, diagnosis) for exercise, diagnosis, *_ in SLIPS}


def test_the_issue_diagnoses_exist():
    named = {name for exercise in lab05.EXERCISES for name in exercise.diagnosis_names()}
    for wanted in ("not_causal_in_document", "documents_leak", "positions_not_reset", "positions_off_by_one",
                   "padding_counted", "sinks_not_causal", "window_too_wide", "sinks_double_counted"):
        assert wanted in named


def test_buggy_implementations_differ_from_the_right_ones_on_the_public_cases():
    """Each slip returns something else than the right answer on at least one public case."""
    from autograder.exercise import decode
    from autograder.runtime import run_call as call

    for exercise_id, diagnosis, function, *_ in SLIPS:
        exercise = lab05.LAB.exercise(exercise_id)
        differs = False
        for case in exercise.cases({}):
            right = decode(call(RIGHT, case.call)["ok"])
            wrong = decode(call({exercise_id: function}, case.call)["ok"])
            if right.shape != wrong.shape or not torch.allclose(torch.tensor(right.values), torch.tensor(wrong.values),
                                                               atol=1e-4):
                differs = True
        assert differs, (exercise_id, diagnosis)


@pytest.mark.parametrize("exercise,diagnosis,function,english,spanish", SLIPS,
                         ids=[f"{s[0]}-{s[1]}" for s in SLIPS])
def test_check_in_the_notebook_names_each_slip(exercise, diagnosis, function, english, spanish, capsys):
    Lab("lab05", lang="es").check(exercise, with_(exercise, function))
    printed = capsys.readouterr().out
    assert printed.startswith(f"❌ {exercise}") and spanish in printed and "[0/" in printed, printed


def test_the_slips_are_the_mistakes_of_the_issue_each_with_a_chapter_section():
    """Every diagnosis points to a section of chapter 11, 09, 06, 08, 03 or 02 of the book."""
    for exercise in lab05.EXERCISES:
        for name in exercise.diagnosis_names():
            section = exercise.sections.get(name, exercise.section)
            assert section.split(" §")[0] in {"11", "09", "06", "08", "03", "02"}, (exercise.id, name, section)


WRONG_TYPES = [
    ("position_ids_from_mask", lambda m: position_ids_from_mask(m).int(), "expected int64 (3, 5), but got int32 (3, 5)",
     "se esperaba forma int64 (3, 5), pero tu respuesta tiene int32 (3, 5)"),
    ("document_causal_mask", lambda d: document_causal_mask(d).float(), "expected bool (6, 6), but got float32 (6, 6)",
     "se esperaba forma bool (6, 6)"),
    ("packed_attention", lambda q, k, v, d: (packed_attention(q, k, v, d), None),
     "expected torch.Tensor float (6, 3), but got tuple(float32 (6, 3), NoneType)", "se esperaba forma torch.Tensor float (6, 3)"),
    ("sink_window_mask", lambda T, W, n: sink_window_mask(T, W, n)[None], "expected bool (8, 8), but got bool (1, 8, 8)",
     "se esperaba forma bool (8, 8)"),
]


@pytest.mark.parametrize("name,function,english,spanish", WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_type_dtype_or_shape_says_what_was_expected(name, function, english, spanish):
    result = grade(with_(name, function), exercise=name)[name]
    assert result.status == "failed" and result.points == 0 and result.diagnosis == "wrong_shape"
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")
