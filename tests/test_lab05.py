"""lab05 (production masks): right answers pass, every named diagnosis is triggered by a wrong answer
written here in torch as a student would (in two languages), and the buggy implementations differ
from the right ones on the public cases.
"""
import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder import Lab
from autograder.exercise import decode
from autograder.grading import grade_lab
from autograder.labs import lab05
from autograder.runtime import run_call

pytestmark = [pytest.mark.lab05, pytest.mark.usefixtures("one_torch_thread")]




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
     "un desfase de una posición"),
    ("position_ids_from_mask", "padding_counted", lambda m: torch.arange(m.shape[1]).expand(m.shape[0], -1),
     "counted the padding", "contaste el padding"),
    ("position_ids_from_mask", "positions_off_by_one", lambda m: m.long().cumsum(-1), "off by one",
     "un desfase de una posición"),
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
            assert section.split(" §")[0] in {"11", "12", "09", "06", "08", "03", "02"}, (exercise.id, name, section)


WRONG_TYPES = [
    ("position_ids_from_mask", lambda m: position_ids_from_mask(m).int(),
     "the shape is right, but your tensor holds int32. Here the answer is positions: an integer tensor of dtype "
     "torch.long (int64)", "la forma es correcta, pero tu tensor es de tipo int32. Aquí se piden posiciones"),
    ("document_causal_mask", lambda d: document_causal_mask(d).float(),
     "the shape is right, but your tensor holds float32. Here the answer is a boolean mask",
     "Aquí se pide una máscara booleana"),
    ("packed_attention", lambda q, k, v, d: (packed_attention(q, k, v, d), None),
     "your function must return a torch.Tensor of shape (6, 3), but it returned tuple(float32 (6, 3), NoneType)",
     "tu función debe devolver un torch.Tensor de forma (6, 3)"),
    ("sink_window_mask", lambda T, W, n: sink_window_mask(T, W, n)[None],
     "the answer must have shape (8, 8), but yours has shape (1, 8, 8)", "la respuesta debe tener forma (8, 8)"),
]


@pytest.mark.parametrize("name,function,english,spanish", WRONG_TYPES, ids=[w[0] for w in WRONG_TYPES])
def test_wrong_type_dtype_or_shape_says_what_was_expected(name, function, english, spanish):
    result = grade(with_(name, function), exercise=name)[name]
    assert result.status == "failed" and result.points == 0 and result.diagnosis == "wrong_shape"
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")


# ---------------------------------------------------------------- each slip's message: key, parameters, section
# The message key of each diagnosis (lab05's own, or the common one lab05 does not reword), the section it
# points to (chapter 11's skeleton, and the chapters the classic slips come from) and the parameters of its message on the first public case the slip fails: sink_window_mask(8, 4, 2) and,
# for the batch shape, the batched case (2 sequences of 5 tokens).
FEEDBACK = {
    ("document_causal_mask", "documents_leak"): ("lab05.documents_leak", "11 §2", {}),
    ("document_causal_mask", "not_causal_in_document"): ("lab05.not_causal_in_document", "11 §2", {}),
    ("document_causal_mask", "convention_inverted"): ("lab05.convention_inverted", "08 §5", {}),
    ("document_causal_mask", "diagonal_masked"): ("lab05.diagonal_masked", "02 §2", {}),
    ("document_causal_mask", "wrong_triangle"): ("lab05.wrong_triangle", "02 §0", {}),
    ("document_causal_mask", "off_by_one"): ("diagnosis.off_by_one", "08 §4", {}),
    ("document_causal_mask", "batch_shape"): ("lab05.batch_shape", "06 §1", {"got": "(2, 5, 5)", "expected": "(2, 1, 5, 5)"}),
    ("packed_position_ids", "positions_not_reset"): ("lab05.positions_not_reset", "11 §2", {}),
    ("packed_position_ids", "positions_off_by_one"): ("lab05.positions_off_by_one", "11 §2", {}),
    ("position_ids_from_mask", "padding_counted"): ("lab05.padding_counted", "11 §1", {}),
    ("position_ids_from_mask", "positions_off_by_one"): ("lab05.positions_off_by_one", "11 §1", {}),
    ("position_ids_from_mask", "padding_fill_one"): ("lab05.padding_fill_one", "11 §1", {}),
    ("position_ids_from_mask", "padding_not_filled"): ("lab05.padding_not_filled", "11 §1", {}),
    ("sink_window_mask", "sinks_not_causal"): ("lab05.sinks_not_causal", "12 §2", {"n_sink": 2}),
    ("sink_window_mask", "window_too_wide"): ("lab05.window_too_wide", "09 §0", {"W": 4, "W1": 5}),
    ("sink_window_mask", "window_too_narrow"): ("lab05.window_too_narrow", "09 §0", {"W": 4}),
    ("sink_window_mask", "sinks_double_counted"): ("lab05.sinks_double_counted", "12 §2", {"W": 4, "n_sink": 2}),
    ("sink_window_mask", "sinks_missing"): ("lab05.sinks_missing", "12 §2", {"n_sink": 2}),
    ("sink_window_mask", "window_missing"): ("lab05.window_missing", "12 §2", {}),
    ("sink_window_mask", "convention_inverted"): ("lab05.convention_inverted", "08 §5", {}),
    ("packed_attention", "documents_leak"): ("lab05.documents_leak", "11 §2", {}),
    ("packed_attention", "not_causal_in_document"): ("lab05.not_causal_in_document", "11 §2", {}),
    ("packed_attention", "no_mask"): ("lab05.no_mask", "02 §0", {}),
    ("packed_attention", "forgot_scale"): ("lab05.forgot_scale", "03 §2", {}),
}


def _feedback(result):
    return [(item.key, item.params) for item in result.feedback]


@pytest.mark.parametrize("exercise,diagnosis,function", [s[:3] for s in SLIPS], ids=[f"{s[0]}-{s[1]}" for s in SLIPS])
def test_each_slip_has_its_own_message_parameters_and_section(exercise, diagnosis, function):
    key, section, params = FEEDBACK[exercise, diagnosis]
    result = grade(with_(exercise, function), exercise=exercise)[exercise]
    assert _feedback(result) == [("common.failed", {"name": exercise}), (key, params),
                                 ("common.see_section", {"section": section})]


# Slips that the table above does not reach: another way to make the same mistake.
OTHER_FORMS = [
    # a batch of documents answered with one plain causal (T, T) mask: the documents leak
    ("document_causal_mask", "documents_leak", lambda d: _causal(d.shape[-1])),
    # positions counted from the first token, minus the padding: -n_pad ... -1 on the padding, not 0
    ("position_ids_from_mask", "padding_not_filled",
     lambda m: torch.arange(m.shape[1]) - (m == 0).sum(-1, keepdim=True)),
    # the window missing altogether (W = 0): only the sinks remain
    ("sink_window_mask", "window_missing", lambda T, W, n: _sinks(T, 0, n)),
    ("packed_position_ids", "positions_off_by_one", lambda d: packed_position_ids(d) - 1),
]


@pytest.mark.parametrize("exercise,diagnosis,function", OTHER_FORMS, ids=[f"{o[0]}-{o[1]}" for o in OTHER_FORMS])
def test_another_form_of_a_slip_gets_the_same_name(exercise, diagnosis, function):
    result = grade(with_(exercise, function), exercise=exercise)[exercise]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, diagnosis), result.render("en")


# ---------------------------------------------------------------- tolerances
def _nudged(function, by, entry=0):
    """The function's output with one entry (of the first case only) moved by `by`."""
    calls = []

    def nudged(*args):
        out = function(*args).clone()
        if not calls:
            out.reshape(-1)[entry] += by
        calls.append(1)
        return out

    return nudged


def _forgot_scale(q, k, v, d):
    return _attention(q, k, v, _same(d) & _causal(d.shape[0]), scale=False)


@pytest.mark.parametrize("by,passes", [(0.8e-5, True), (-0.8e-5, True), (1.2e-5, False), (-1.2e-5, False)])
def test_packed_attention_is_right_within_1e_5(by, passes):
    # the float32 reference differs from the numpy float64 one by ~1e-7, far below the 2e-6 margins
    result = grade(with_("packed_attention", _nudged(packed_attention, by)), exercise="packed_attention")
    result = result["packed_attention"]
    if passes:
        assert result.status == "passed" and result.points == 3
    else:
        assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
        assert _feedback(result)[1][0] == "common.wrong_entry"
        assert _feedback(result)[1][1]["index"] == "0, 0"


@pytest.mark.parametrize("by,diagnosis", [(0.8e-4, "forgot_scale"), (-0.8e-4, "forgot_scale"),
                                          (1.2e-4, "wrong_values"), (-1.2e-4, "wrong_values")])
def test_a_slip_of_packed_attention_is_recognised_within_1e_4(by, diagnosis):
    result = grade(with_("packed_attention", _nudged(_forgot_scale, by)), exercise="packed_attention")
    assert result["packed_attention"].diagnosis == diagnosis


def test_one_wrong_position_id_is_named_by_case_position_and_value():
    result = grade(with_("packed_position_ids", _nudged(packed_position_ids, 7, entry=2)),
                   exercise="packed_position_ids")["packed_position_ids"]
    # the first public case, [0, 0, 0, 1, 1, 2]: position 2 is 2, and 2 + 7 = 9
    assert _feedback(result) == [
        ("common.failed", {"name": "packed_position_ids"}),
        ("common.wrong_entry", {"case": "packed_position_ids(torch.tensor([0, 0, 0, 1, 1, 2]))", "index": "2",
                                "got": "9"}),
        ("common.see_section", {"section": "11 §2"})]


@pytest.mark.parametrize("name,function,key,kind", [
    # right values, wrong dtype: positions are integers
    ("packed_position_ids", lambda d: packed_position_ids(d).float(), "common.wrong_kind", "common.kind.positions"),
    ("position_ids_from_mask", lambda m: position_ids_from_mask(m).numpy(), "common.not_a_tensor",
     "common.kind.positions"),
    ("sink_window_mask", lambda T, W, n: sink_window_mask(T, W, n).numpy(), "common.not_a_tensor",
     "common.kind.bool_mask"),
])
def test_right_values_of_the_wrong_kind_are_a_wrong_type(name, function, key, kind):
    result = grade(with_(name, function), exercise=name)[name]
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_shape")
    assert [item for item, _ in _feedback(result)] == ["common.failed", key, kind]


# ---------------------------------------------------------------- the cases: public ones by hand, hidden ones by their domain
def _ids_arg(ids):
    return {"__tensor__": ids, "dtype": "int64"}


def _is_segmentation(ids):
    """Document ids 0, 1, 2, ... in order: each token is in the document of the one before, or the next one."""
    return ids[0] == 0 and all(b - a in (0, 1) for a, b in zip(ids, ids[1:]))


def test_hidden_doc_ids_have_fixed_edge_cases_then_random_segmentations():
    lengths, counts, rows, widths = set(), set(), set(), set()
    for seed in range(40):
        plain, batched = lab05.hidden_doc_ids(seed, "x", batched=False), lab05.hidden_doc_ids(seed, "x", batched=True)
        # one token; one document; one token per document; three documents; ids that are not 0, 1, 2
        assert plain[:5] == [[0], [0] * 5, [0, 1, 2, 3, 4, 5], [0, 1, 1, 1, 1, 2], [3, 3, 7, 7, 7, 9, 9]]
        assert len(plain) == 9 and batched[:9] == plain  # the same draws, then the batches
        for ids in plain[5:]:
            assert _is_segmentation(ids), ids
            lengths.add(len(ids))
            counts.add((len(ids), ids[-1] + 1))
        assert len(batched) == 11 and batched[10] == [[0]]
        rows.add(len(batched[9]))
        widths |= {len(ids) for ids in batched[9]}
        assert len({len(ids) for ids in batched[9]}) == 1 and all(_is_segmentation(ids) for ids in batched[9])
    assert lengths == set(range(2, 13)) and rows == {1, 2, 3} and widths == set(range(3, 9))
    assert {n for T, n in counts if n == 1} and {T for T, n in counts if n == T}  # one document, and T of them
    assert (2, 2) in counts  # two tokens are cut too


def test_hidden_doc_ids_differ_from_exercise_to_exercise():
    assert lab05.hidden_doc_ids(0, "document_causal_mask", True) != lab05.hidden_doc_ids(0, "packed_position_ids", True)


def test_document_causal_mask_cases():
    cases = lab05.DocumentCausalMask().cases({}, seed=5)
    public = [[0, 0, 0, 1, 1, 2], [0, 0, 0, 0], [[0, 0, 1, 1, 1], [0, 1, 1, 2, 2]]]
    assert [c.public for c in cases] == [True] * 3 + [False] * 11
    assert [c.name for c in cases[:3]] == ["document_causal_mask(torch.tensor([0, 0, 0, 1, 1, 2]))",
                                           "document_causal_mask(torch.tensor([0, 0, 0, 0]))",
                                           "document_causal_mask(torch.tensor([[0, 0, 1, 1, 1], [0, 1, 1, 2, 2]]))"]
    hidden = lab05.hidden_doc_ids(5, "document_causal_mask", batched=True)
    for case, ids in zip(cases, public + hidden):
        assert case.data == {"doc_ids": ids}
        assert case.call == {"kind": "call", "target": "document_causal_mask", "args": [_ids_arg(ids)]}
    assert [c.public for c in lab05.DocumentCausalMask().cases({})] == [True] * 3


def test_packed_position_ids_cases():
    cases = lab05.PackedPositionIds().cases({}, seed=5)
    public = [[0, 0, 0, 1, 1, 2], [0, 0, 0, 0], [0, 1, 1, 1, 2, 2, 2, 2]]
    assert [c.public for c in cases] == [True] * 3 + [False] * 9
    assert cases[2].name == "packed_position_ids(torch.tensor([0, 1, 1, 1, 2, 2, 2, 2]))"
    for case, ids in zip(cases, public + lab05.hidden_doc_ids(5, "packed_position_ids", batched=False)):
        assert case.data == {"doc_ids": ids}
        assert case.call == {"kind": "call", "target": "packed_position_ids", "args": [_ids_arg(ids)]}
    assert len(lab05.PackedPositionIds().cases({})) == 3


def test_position_ids_from_mask_cases():
    public = [[[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]], [[1, 1, 1, 1], [0, 0, 1, 1]], [[1]]]
    assert [c.data["mask"] for c in lab05.PositionIdsFromMask().cases({})] == public
    sizes, middle_full = set(), False
    for seed in range(30):
        cases = lab05.PositionIdsFromMask().cases({}, seed=seed)
        assert [c.public for c in cases] == [True] * 3 + [False] * 9
        masks = [c.data["mask"] for c in cases]
        assert masks[:3] == public and masks[-1] == [[0, 0, 0, 1]] * 3
        for T, mask in zip(range(1, 9), masks[3:11]):
            sizes.add(len(mask))
            assert all(len(row) == T and row == sorted(row) and row[-1] == 1 and set(row) <= {0, 1} for row in mask)
            assert mask[0] == [1] * T  # one full row
            if len(mask) > 1:
                assert mask[-1] == [0] * (T - 1) + [1]  # and one row all padding but its last token
            middle_full |= any(row == [1] * T for row in mask[1:-1]) and T > 1
        for case in cases:
            assert case.name == f"position_ids_from_mask(torch.tensor({case.data['mask']}))"
            assert case.call == {"kind": "call", "target": "position_ids_from_mask", "args": [_ids_arg(case.data["mask"])]}
    assert sizes == {1, 2, 3, 4} and middle_full


def test_sink_window_mask_cases():
    cases = lab05.SinkWindowMask().cases({}, seed=0)
    public = [(8, 4, 2), (6, 2, 1), (5, 5, 0), (4, 2, 3)]
    every_T_and_W = [(T, W) for T in range(1, 11) for W in range(1, T + 2)]  # 2 + 3 + ... + 11 = 65 cases
    assert [c.public for c in cases] == [True] * 4 + [False] * 65
    assert [(c.data["T"], c.data["W"]) for c in cases[4:]] == every_T_and_W
    assert {c.data["n_sink"] for c in cases[4:]} == {0, 1, 2, 3}
    assert [(c.data["T"], c.data["W"], c.data["n_sink"]) for c in cases[:4]] == public
    assert cases[0].name == "sink_window_mask(8, 4, 2)"
    for case in cases:
        T, W, n = case.data["T"], case.data["W"], case.data["n_sink"]
        assert case.call == {"kind": "call", "target": "sink_window_mask", "args": [T, W, n]}
    assert len(lab05.SinkWindowMask().cases({})) == 4


def test_packed_attention_public_cases():
    cases = lab05.PackedAttention().cases({})
    assert [c.name for c in cases] == ["q, k (6, 4), v (6, 3), doc_ids [0, 0, 0, 1, 1, 2]",
                                       "q, k (2, 5, 3), v (2, 5, 2), doc_ids [0, 0, 1, 1, 1]",
                                       "q, k (4, 2), v (4, 2), doc_ids [0, 0, 0, 0]"]
    for case in cases:
        assert case.public and case.data["dtype"] == "float32"
        assert [arg["dtype"] for arg in case.call["args"]] == ["float32"] * 3 + ["int64"]
        assert case.call["args"][3] == _ids_arg(case.data["doc_ids"])
        Q, K, V = (np.asarray(case.data[name]) for name in ("Q", "K", "V"))
        assert np.allclose(Q * 1e4, np.round(Q * 1e4)) and not np.allclose(Q, K)  # 4 decimals, drawn apart
        for name, values in zip(("Q", "K", "V"), case.call["args"]):
            assert values["__tensor__"] == case.data[name]


def test_packed_attention_hidden_cases():
    leads, dks, dvs = set(), set(), set()
    for seed in range(12):
        cases = lab05.PackedAttention().cases({}, seed=seed)
        hidden = cases[3:]
        assert [c.public for c in cases] == [True] * 3 + [False] * 10
        assert [c.data["doc_ids"] for c in hidden[:9]] == lab05.hidden_doc_ids(seed, "packed_attention", False)
        for case in hidden:
            Q, V = np.asarray(case.data["Q"]), np.asarray(case.data["V"])
            assert Q.shape[-2] == len(case.data["doc_ids"])
            leads.add(Q.shape[:-2])
            dks.add(Q.shape[-1])
            dvs.add(V.shape[-1])
        assert [c.data["dtype"] for c in hidden] == ["float32"] * 9 + ["float64"]
        assert hidden[-1].name == "q, k (2, 7, 4), v (2, 7, 3), doc_ids [0, 0, 0, 1, 1, 1, 1], float64"
        assert [arg["dtype"] for arg in hidden[-1].call["args"]] == ["float64"] * 3 + ["int64"]
        assert all(c.name.endswith(f"doc_ids {c.data['doc_ids']}") for c in hidden[:9])
    assert leads == {(), (1,), (2,), (1, 1), (1, 2), (2, 1), (2, 2)}
    assert dks == {1, 2, 3, 4, 5} and dvs == {1, 2, 3, 4}


# ---------------------------------------------------------------- every slip on every case, judged directly
def _output(function, case):
    """What the grader reads back from the student's function on one case."""
    return decode(run_call({case.call["target"]: function}, case.call)["ok"])


def _alike(a, b):
    """Two answers a slip's tolerance (1e-4) cannot tell apart."""
    return a.dtype == b.dtype and a.shape == b.shape and np.allclose(a.values.astype(float), b.values.astype(float),
                                                                     atol=1e-4)


@pytest.mark.parametrize("exercise_id", [exercise.id for exercise in lab05.EXERCISES])
def test_each_slip_is_named_on_every_case_where_it_is_wrong(exercise_id):
    """Batched, float64 and one-token cases too, not only the first public case that the grade stops at.

    Where two slips give the same answer on a case, either name is right.
    """
    exercise = lab05.LAB.exercise(exercise_id)
    forms = [(diagnosis, function) for name, diagnosis, function, *_ in SLIPS + OTHER_FORMS if name == exercise_id]
    for case in exercise.cases({}, seed=0):
        right = _output(RIGHT[exercise_id], case)
        answers = [(diagnosis, _output(function, case)) for diagnosis, function in forms]
        for diagnosis, got in answers:
            if _alike(got, right):
                continue
            result = exercise.judge_case(case, got)
            names = {other for other, answer in answers if _alike(answer, got)}
            assert result is not None and result.diagnosis in names, (case.name, diagnosis, result and result.diagnosis)


def test_a_one_dimensional_mask_is_a_wrong_shape():
    """`doc_ids == doc_ids[0]` is column 0 of the right mask, but a vector: no slip, a wrong shape."""
    result = grade(with_("document_causal_mask", lambda d: d == d[..., :1]),
                   exercise="document_causal_mask")["document_causal_mask"]
    assert (result.status, result.diagnosis) == ("failed", "wrong_shape")
    assert _feedback(result)[1] == ("common.wrong_shape", {"case": "document_causal_mask(torch.tensor([0, 0, 0, 1, 1, 2]))",
                                                           "expected": "(6, 6)", "got": "(6,)"})


@pytest.mark.parametrize("function", [
    lambda m: m.long().cumsum(-1) + 1,  # 2 too high, and 1 … n_pad on the padding
    lambda m: (m.long().cumsum(-1) + 1).masked_fill(m == 0, 0),  # 2 too high on the real tokens
], ids=["everywhere", "real-tokens"])
def test_positions_two_too_high_are_not_off_by_one(function):
    result = grade(with_("position_ids_from_mask", function), exercise="position_ids_from_mask")
    assert result["position_ids_from_mask"].diagnosis == "wrong_values"


def _per_document(Q, K, V, doc_ids):
    """lab02's causal attention on each document alone, in float64 torch (not lab05's numpy)."""
    Q, K, V = (torch.tensor(np.asarray(x), dtype=torch.float64) for x in (Q, K, V))
    out = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=torch.float64)
    ids = torch.tensor(doc_ids)
    for doc in ids.unique():
        at = (ids == doc).nonzero().squeeze(-1)
        out[..., at, :] = causal_attention(Q[..., at, :], K[..., at, :], V[..., at, :])
    return out


@pytest.mark.parametrize("which", ["public float32", "hidden float64"])
@pytest.mark.parametrize("inside", [True, False])
def test_packed_attention_is_judged_in_the_precision_its_inputs_were_sent_in(which, inside):
    """A float32 case against the float32 numbers the student received, the float64 case against float64.

    The other precision moves the reference by ~1e-7: an answer 1e-8 inside the tolerance, on the side
    away from that other reference, passes only against the right one.
    """
    exercise = lab05.PackedAttention()
    case = exercise.cases({}, seed=0)[0 if which == "public float32" else -1]
    assert case.data["dtype"] == which.split()[1]
    exact = [np.asarray(case.data[name]) for name in ("Q", "K", "V")]
    rounded = [x.astype(np.float32).astype(np.float64) for x in exact]
    sent, other = (rounded, exact) if case.data["dtype"] == "float32" else (exact, rounded)
    right, wrong = _per_document(*sent, case.data["doc_ids"]), _per_document(*other, case.data["doc_ids"])
    gap = right - wrong
    index = np.unravel_index(int(gap.abs().argmax()), gap.shape)
    assert abs(float(gap[index])) > 2e-8  # the two references do differ
    answer = right.clone()
    answer[index] += math.copysign(lab05.ATOL + (-1e-8 if inside else 1e-8), float(gap[index]))
    result = exercise.judge_case(case, _output(lambda *args: answer, case))
    if inside:
        assert result is None
    else:
        assert result.diagnosis == "wrong_values"


def test_the_public_inputs_of_packed_attention_are_the_documented_draw():
    """q, k = 1.5 N(0, 1) and v = N(0, 1) from default_rng(2000 + n), to 4 decimals (the comment at PUBLIC)."""
    for n, case in enumerate(lab05.PackedAttention().cases({})):
        rng = np.random.default_rng(2000 + n)
        for name in ("Q", "K", "V"):
            values = np.asarray(case.data[name])
            draw = rng.normal(size=values.shape) * (1.5 if name != "V" else 1.0)
            assert np.array_equal(values, np.round(draw, 4)), (n, name)
            assert np.abs(values - draw).max() <= 5e-5 and not np.array_equal(values, np.round(values))


def test_every_hidden_input_of_packed_attention_is_its_own_draw():
    """No two hidden cases, over many instructor seeds, share their numbers: each draws its own data seed."""
    seen = set()
    for seed in range(60):
        for case in lab05.PackedAttention().cases({}, seed=seed)[3:]:
            numbers = json.dumps([case.data["Q"], case.data["K"], case.data["V"]])
            assert numbers not in seen, (seed, case.name)
            seen.add(numbers)
