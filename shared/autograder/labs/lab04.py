"""lab04, the mask at inference with a KV cache.

- ``kv_cache_mask(T_new, T_past)``: bool (T_new, T_past + T_new), True = may attend,
  aligned bottom-right: new query k (absolute position T_past + k) sees keys
  0 .. T_past + k. The classic slip is the top-left alignment of
  ``is_causal=True`` / ``tril(ones(L, S))``.
- ``cached_attention(q, k, v, past_k=None, past_v=None) -> (out, k_all, v_all)``.
  The grader cannot chain a student's calls (each call is plain data), so
  "decoding in chunks of sizes 1, 3, the rest equals full causal attention" is
  graded as three independent calls whose past is the prefix of the same
  sequence: their outputs, stacked, must be the full causal attention.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import i18n
from ..exercise import Array, Case, Exercise, Feedback, Result, describe, first_difference, shape_mismatch
from . import LabSpec
from .lab01 import rng_for
from .lab03 import LabExercise, arg_array, close_nan, f32, is_float_array, softmax, tensor_arg

ATOL = 1e-5
MATCH_ATOL = 1e-4

# Where the book explains each mistake (chapter §section); the others point to the lab's own section.
CHAPTER_SECTIONS = {
    "top_left": "08 §7",
    "diagonal_masked": "08 §3",
    "off_by_one": "08 §4",
    "inverted": "08 §5",
    "no_mask": "09 §1",
    "past_blocked": "09 §1",
    "transposed": "09 §1",
    "forgot_scale": "03 §2",
    "wrong_axis": "03 §4",
    "past_ignored": "09 §1",
    "cache_not_appended": "09 §1",
    "cache_order": "09 §1",
    "wrong_cache": "09 §1",
}


# ---------------------------------------------------------------- the masks
def cache_mask(T_new: int, T_past: int, kind: str = "bottom_right") -> np.ndarray:
    """(T_new, T_past + T_new) bool, True = may attend; `kind` names the reference or a slip."""
    S = T_past + T_new
    ones = np.ones((T_new, S), dtype=bool)
    right = np.tril(ones, k=T_past)
    if kind == "bottom_right":
        return right
    if kind == "top_left":  # is_causal=True, tril(ones(L, S))
        return np.tril(ones)
    if kind == "diagonal_masked":
        return np.tril(ones, k=T_past - 1)
    if kind == "off_by_one":
        return np.tril(ones, k=T_past + 1)
    if kind == "inverted":
        return ~right
    if kind == "no_mask":
        return ones
    if kind == "past_blocked":
        mask = np.zeros((T_new, S), dtype=bool)
        mask[:, T_past:] = np.tril(np.ones((T_new, T_new), dtype=bool))
        return mask
    raise ValueError(kind)


MASK_SLIPS = ("top_left", "diagonal_masked", "off_by_one", "inverted", "no_mask", "past_blocked")


class KVCacheMaskExercise(LabExercise):
    id = "kv_cache_mask"
    points = 3
    section = "09 §1"
    lab_section = "1"
    chapter_sections = CHAPTER_SECTIONS
    diagnoses = MASK_SLIPS + ("transposed",)

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        sizes = [(1, 5), (3, 2), (4, 0), (2, 4)]
        public = [True] * len(sizes)
        if seed is not None:
            # Every (T_new, T_past) of the taught range, T_past = 0 (no cache) and T_new = 1 (decoding) included.
            hidden = [(n, p) for n in range(1, 7) for p in range(0, 7)]
            sizes += hidden
            public += [False] * len(hidden)
        return [Case(f"kv_cache_mask({n}, {p})", {"kind": "call", "target": self.id, "args": [n, p]}, public=pub)
                for (n, p), pub in zip(sizes, public)]

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        sizes = [tuple(case.call["args"]) for case in cases]
        for case, (T_new, T_past), got in zip(cases, sizes, values):
            shape = (T_new, T_past + T_new)
            if isinstance(got, Array) and got.is_bool and got.shape == shape[::-1] and shape[0] != shape[1]:
                if np.array_equal(got.values.T, cache_mask(T_new, T_past)):
                    return self.diagnosed("transposed")
            if not (isinstance(got, Array) and got.is_bool and got.shape == shape):
                return shape_mismatch(self, case, got, f"bool {shape}")
        got = [value.values for value in values]
        if all(np.array_equal(g, cache_mask(n, p)) for g, (n, p) in zip(got, sizes)):
            return self.passed()
        for slip in MASK_SLIPS:
            if all(np.array_equal(g, cache_mask(n, p, slip)) for g, (n, p) in zip(got, sizes)):
                return self.diagnosed(slip)
        index = next(i for i, (g, (n, p)) in enumerate(zip(got, sizes)) if not np.array_equal(g, cache_mask(n, p)))
        position = tuple(int(i) for i in np.argwhere(got[index] != cache_mask(*sizes[index]))[0])
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_entry", {"case": cases[index].name, "index": ", ".join(map(str, position)),
                                            "got": str(bool(got[index][position]))}),
            self.pointer(None),
            diagnosis="wrong_values",
        )


# ---------------------------------------------------------------- attention with a cache
def attend(q: np.ndarray, k_all: np.ndarray, v_all: np.ndarray, mask: str = "bottom_right",
           scale: bool = True, axis: int = -1, past_ignored: bool = False) -> np.ndarray:
    """softmax(q k_allᵀ / √d_k + mask) v_all for the new queries, or one classic slip of it."""
    T_new, S = q.shape[-2], k_all.shape[-2]
    if past_ignored:
        k_all, v_all = k_all[..., S - T_new:, :], v_all[..., S - T_new:, :]
        S = T_new
    scores = q @ k_all.swapaxes(-1, -2)  # (..., T_new, S)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    allowed = cache_mask(T_new, S - T_new, mask)  # (T_new, S)
    with np.errstate(invalid="ignore"):
        weights = softmax(np.where(allowed, scores, -np.inf), axis=axis)
    return weights @ v_all  # (..., T_new, d_v)


ATTENTION_SLIPS: list[tuple[str, dict]] = [
    ("top_left", {"mask": "top_left"}),
    ("no_mask", {"mask": "no_mask"}),
    ("diagonal_masked", {"mask": "diagonal_masked"}),
    ("forgot_scale", {"scale": False}),
    ("wrong_axis", {"axis": -2}),
    ("past_ignored", {"past_ignored": True}),
]


def attention_case(name: str, q, k, v, past_k=None, past_v=None, public: bool = True) -> Case:
    call = {"kind": "call", "target": "cached_attention", "args": [tensor_arg(q), tensor_arg(k), tensor_arg(v)]}
    if past_k is not None:
        call["kwargs"] = {"past_k": tensor_arg(past_k), "past_v": tensor_arg(past_v)}
    elif name.startswith("chunk"):
        call["kwargs"] = {"past_k": None, "past_v": None}
    return Case(name, call, public=public)


def chunk_cases(rng: np.random.Generator, lead: tuple[int, ...], T: int, d_k: int, d_v: int,
                sizes: list[int], public: bool = True) -> list[Case]:
    """One sequence decoded in chunks: chunk c gets the keys and values before it as its cache."""
    Q = f32(rng.normal(size=lead + (T, d_k)))  # (..., T, d_k)
    K = f32(rng.normal(size=lead + (T, d_k)))  # (..., T, d_k)
    V = f32(rng.normal(size=lead + (T, d_v)))  # (..., T, d_v)
    cases, start = [], 0
    label = ", ".join(str(s) for s in sizes)
    for number, size in enumerate(sizes, 1):
        end = start + size
        past = (K[..., :start, :], V[..., :start, :]) if start else (None, None)
        cases.append(attention_case(f"chunk {number} of ({label}), T={T}", Q[..., start:end, :], K[..., start:end, :],
                                    V[..., start:end, :], *past, public=public))
        start = end
    return cases


def attention_inputs(case: Case) -> tuple[np.ndarray, ...]:
    q, k, v = (arg_array(a) for a in case.call["args"])
    kwargs = case.call.get("kwargs") or {}
    if kwargs.get("past_k") is None:
        return q, k, v, k, v, 0
    past_k, past_v = arg_array(kwargs["past_k"]), arg_array(kwargs["past_v"])
    return q, k, v, np.concatenate([past_k, k], axis=-2), np.concatenate([past_v, v], axis=-2), past_k.shape[-2]


class CachedAttentionExercise(LabExercise):
    id = "cached_attention"
    points = 5
    section = "09 §1"
    lab_section = "3"
    chapter_sections = CHAPTER_SECTIONS
    diagnoses = tuple(dict.fromkeys(name for name, _ in ATTENTION_SLIPS)) + (
        "cache_not_appended", "cache_order", "wrong_cache", "wrong_return")

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(4)
        cases = [
            attention_case("no cache, T=4", f32(rng.normal(size=(4, 3))), f32(rng.normal(size=(4, 3))),
                           f32(rng.normal(size=(4, 2)))),
            attention_case("one new token, T_past=4", f32(rng.normal(size=(2, 1, 3))), f32(rng.normal(size=(2, 1, 3))),
                           f32(rng.normal(size=(2, 1, 2))), f32(rng.normal(size=(2, 4, 3))),
                           f32(rng.normal(size=(2, 4, 2)))),
        ]
        cases += chunk_cases(rng, (2, 2), 7, 4, 3, [1, 3, 3])
        if seed is not None:
            rng = rng_for(seed, self.id)
            # Fixed chunkings at the edges (one token at a time, the whole sequence at once, d_k = d_v = 1,
            # no leading dims and two), then one drawn by the seed.
            for lead, T, d_k, d_v, sizes in (((), 1, 1, 1, [1]), ((3,), 5, 2, 1, [1, 1, 1, 1, 1]),
                                             ((2, 2), 6, 3, 2, [6]), ((), 7, 1, 3, [2, 5])):
                cases += chunk_cases(rng, lead, T, d_k, d_v, sizes, public=False)
            T = int(rng.integers(4, 10))
            first = int(rng.integers(1, T - 1))
            second = int(rng.integers(1, T - first))
            sizes = [first, second] + ([T - first - second] if T - first - second else [])
            lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
            cases += chunk_cases(rng, lead, T, int(rng.integers(2, 6)), int(rng.integers(1, 5)), sizes, public=False)
        return cases

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        inputs = [attention_inputs(case) for case in cases]
        for case, (q, k, v, k_all, v_all, T_past), got in zip(cases, inputs, values):
            shapes = (q.shape[:-1] + v.shape[-1:], k_all.shape, v_all.shape)
            expected = "tuple(" + ", ".join(f"float32 {s}" for s in shapes) + ")"
            if not (isinstance(got, tuple) and len(got) == 3):
                return self.wrong_return(case, got, expected)
            if T_past and isinstance(got[1], Array) and got[1].shape == k.shape:
                return self.diagnosed("cache_not_appended")
            if not all(is_float_array(part, shape) for part, shape in zip(got, shapes)):
                return shape_mismatch(self, case, got, expected)
        for case, (q, k, v, k_all, v_all, T_past), got in zip(cases, inputs, values):
            if not (close_nan(got[1].values, k_all, ATOL) and close_nan(got[2].values, v_all, ATOL)):
                swapped = (np.concatenate([k, k_all[..., :T_past, :]], axis=-2),
                           np.concatenate([v, v_all[..., :T_past, :]], axis=-2))
                if close_nan(got[1].values, swapped[0], ATOL) and close_nan(got[2].values, swapped[1], ATOL):
                    return self.diagnosed("cache_order")
                return self.diagnosed("wrong_cache", case=case.name)
        outs = [value[0].values for value in values]
        want = [attend(q, k_all, v_all) for q, _, _, k_all, v_all, _ in inputs]
        right = [close_nan(g, w, ATOL) for g, w in zip(outs, want)]
        if all(right):
            return self.passed()
        for name, slip in ATTENTION_SLIPS:
            if all(self.matches(g, attend(q, k_all, v_all, **slip))
                   for g, (q, _, _, k_all, v_all, _) in zip(outs, inputs)):
                return self.diagnosed(name)
        index = right.index(False)
        position = first_difference(np.nan_to_num(outs[index], nan=1e30), want[index], ATOL) or (0,)
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_entry", {"case": cases[index].name, "index": ", ".join(map(str, position)),
                                            "got": f"{outs[index][position]:.4g}"}),
            self.pointer(None),
            diagnosis="wrong_values",
        )

    @staticmethod
    def matches(got: np.ndarray, candidate: np.ndarray) -> bool:
        # A query with no key left (diagonal blocked, no cache) is NaN, zeros or the mean of V
        # depending on how it was masked: compare where the candidate is defined.
        defined = ~np.isnan(candidate)
        return close_nan(got[defined], candidate[defined], MATCH_ATOL)

    def wrong_return(self, case: Case, got: Any, expected: str) -> Result:
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_shape", {"case": case.name, "expected": expected, "got": describe(got)}),
                           Feedback("lab04.wrong_return"), diagnosis="wrong_return")


EXERCISES: list[Exercise] = [KVCacheMaskExercise(), CachedAttentionExercise()]

MESSAGES = {
    "lab04.see_lab": {
        "en": "(See §{section} of this lab.)",
        "es": "(Consulta el §{section} de este lab.)",
        "de": "(Siehe §{section} dieses Labs.)",
        "hi-Latn": "(Is lab ka §{section} dekho.)",
    },
    "lab04.top_left": {
        "en": "your mask is aligned top-left, like is_causal=True or tril(ones(T_new, T_past + T_new)): new query k then sees keys 0 .. k, and a single new token sees only key 0. Align it bottom-right: new query k sits at position T_past + k and sees keys 0 .. T_past + k (tril with diagonal=T_past).",
        "es": "tu máscara está alineada arriba a la izquierda, como is_causal=True o tril(ones(T_new, T_past + T_new)): la query nueva k ve entonces las keys 0 .. k, y un único token nuevo solo ve la key 0. Alinéala abajo a la derecha: la query nueva k está en la posición T_past + k y ve las keys 0 .. T_past + k (tril con diagonal=T_past).",
        "de": "deine Maske ist oben links ausgerichtet, wie is_causal=True oder tril(ones(T_new, T_past + T_new)): die neue Query k sieht dann die Keys 0 .. k, und ein einzelnes neues Token sieht nur Key 0. Richte sie unten rechts aus: die neue Query k steht an Position T_past + k und sieht die Keys 0 .. T_past + k (tril mit diagonal=T_past).",
        "hi-Latn": "tumhara mask top-left aligned hai, jaise is_causal=True ya tril(ones(T_new, T_past + T_new)): tab new query k sirf keys 0 .. k dekhti hai, aur akela new token sirf key 0 dekhta hai. Ise bottom-right align karo: new query k position T_past + k par hai aur keys 0 .. T_past + k dekhti hai (tril with diagonal=T_past).",
    },
    "lab04.diagonal_masked": {
        "en": "your mask also blocks the diagonal: new query k must see its own key too, at column T_past + k.",
        "es": "tu máscara también bloquea la diagonal: la query nueva k debe ver también su propia key, en la columna T_past + k.",
        "de": "deine Maske sperrt auch die Diagonale: die neue Query k muss auch ihren eigenen Key sehen, in Spalte T_past + k.",
        "hi-Latn": "tumhara mask diagonal bhi block karta hai: new query k ko apni khud ki key bhi dikhni chahiye, column T_past + k par.",
    },
    "lab04.off_by_one": {
        "en": "new query k sees one key too many: column T_past + k + 1 is the next token, which is not there yet at inference. Use diagonal=T_past.",
        "es": "la query nueva k ve una key de más: la columna T_past + k + 1 es el token siguiente, que en inferencia aún no existe. Usa diagonal=T_past.",
        "de": "die neue Query k sieht einen Key zu viel: Spalte T_past + k + 1 ist das nächste Token, das es bei der Inferenz noch nicht gibt. Nimm diagonal=T_past.",
        "hi-Latn": "new query k ek key zyada dekh rahi hai: column T_past + k + 1 agla token hai, jo inference ke waqt abhi exist hi nahi karta. diagonal=T_past use karo.",
    },
    "lab04.inverted": {
        "en": "True and False are swapped: here True means 'may attend' (the convention of F.scaled_dot_product_attention), not 'blocked' (nn.MultiheadAttention).",
        "es": "True y False están intercambiados: aquí True significa «puede atender» (la convención de F.scaled_dot_product_attention), no «bloqueado» (nn.MultiheadAttention).",
        "de": "True und False sind vertauscht: hier bedeutet True „darf lesen“ (die Konvention von F.scaled_dot_product_attention), nicht „gesperrt“ (nn.MultiheadAttention).",
        "hi-Latn": "True aur False ulte hain: yahan True ka matlab 'padh sakti hai' (F.scaled_dot_product_attention ka convention), 'blocked' nahi (nn.MultiheadAttention wala).",
    },
    "lab04.no_mask": {
        "en": "every new query sees every key: right for one new token, wrong for a chunk of several. New query k must not see the new keys after column T_past + k.",
        "es": "cada query nueva ve todas las keys: correcto para un solo token nuevo, incorrecto para un bloque de varios. La query nueva k no debe ver las keys nuevas después de la columna T_past + k.",
        "de": "jede neue Query sieht jeden Key: richtig für ein einzelnes neues Token, falsch für einen Block aus mehreren. Die neue Query k darf die neuen Keys nach Spalte T_past + k nicht sehen.",
        "hi-Latn": "har new query har key dekh rahi hai: ek new token ke liye sahi, kai tokens ke chunk ke liye galat. New query k ko column T_past + k ke baad wali new keys nahi dikhni chahiye.",
    },
    "lab04.past_blocked": {
        "en": "the new queries do not see the cache: the T_past keys of earlier tokens are always allowed; only new keys after the query are blocked.",
        "es": "las queries nuevas no ven la caché: las T_past keys de los tokens anteriores siempre están permitidas; solo se bloquean las keys nuevas posteriores a la query.",
        "de": "die neuen Queries sehen den Cache nicht: die T_past Keys früherer Tokens sind immer erlaubt; gesperrt sind nur neue Keys nach der Query.",
        "hi-Latn": "new queries cache ko nahi dekh paa rahi: pichhle tokens ki T_past keys hamesha allowed hain; sirf query ke baad wali new keys block hoti hain.",
    },
    "lab04.transposed": {
        "en": "your mask is transposed: rows are the T_new new queries, columns the T_past + T_new keys.",
        "es": "tu máscara está traspuesta: las filas son las T_new queries nuevas y las columnas las T_past + T_new keys.",
        "de": "deine Maske ist transponiert: Zeilen sind die T_new neuen Queries, Spalten die T_past + T_new Keys.",
        "hi-Latn": "tumhara mask transposed hai: rows T_new new queries hain, columns T_past + T_new keys.",
    },
    "lab04.forgot_scale": {
        "en": "you forgot the 1/√d_k scale: divide the scores by √d_k before the softmax, as without a cache.",
        "es": "olvidaste la escala 1/√d_k: divide los scores entre √d_k antes del softmax, igual que sin caché.",
        "de": "du hast die Skalierung 1/√d_k vergessen: teile die Scores vor dem Softmax durch √d_k, genau wie ohne Cache.",
        "hi-Latn": "tum 1/√d_k scale bhool gaye: softmax se pehle scores ko √d_k se divide karo, bilkul cache ke bina jaise.",
    },
    "lab04.wrong_axis": {
        "en": "you normalised over the wrong axis: the scores are (..., T_new, T_past + T_new) and the softmax runs over the keys, dim=-1.",
        "es": "normalizaste sobre el eje equivocado: los scores son (..., T_new, T_past + T_new) y el softmax va sobre las keys, dim=-1.",
        "de": "du hast über die falsche Achse normiert: die Scores sind (..., T_new, T_past + T_new), der Softmax läuft über die Keys, dim=-1.",
        "hi-Latn": "tumne galat axis par normalise kiya: scores (..., T_new, T_past + T_new) hain aur softmax keys par chalta hai, dim=-1.",
    },
    "lab04.past_ignored": {
        "en": "the new queries attend only to the new keys: concatenate first (k_all = torch.cat([past_k, k], dim=-2), the same for v) and attend over k_all and v_all.",
        "es": "las queries nuevas solo atienden a las keys nuevas: concatena primero (k_all = torch.cat([past_k, k], dim=-2), igual con v) y atiende sobre k_all y v_all.",
        "de": "die neuen Queries lesen nur die neuen Keys: hänge zuerst an (k_all = torch.cat([past_k, k], dim=-2), ebenso für v) und rechne die Attention über k_all und v_all.",
        "hi-Latn": "new queries sirf new keys padh rahi hain: pehle concatenate karo (k_all = torch.cat([past_k, k], dim=-2), v ke liye bhi same) aur attention k_all, v_all par lagao.",
    },
    "lab04.cache_not_appended": {
        "en": "k_all has only the new keys: return the cache grown by the new ones, torch.cat([past_k, k], dim=-2) (T_past + T_new rows), and the same for v_all.",
        "es": "k_all solo tiene las keys nuevas: devuelve la caché ampliada con las nuevas, torch.cat([past_k, k], dim=-2) (T_past + T_new filas), y lo mismo para v_all.",
        "de": "k_all enthält nur die neuen Keys: gib den um die neuen erweiterten Cache zurück, torch.cat([past_k, k], dim=-2) (T_past + T_new Zeilen), und ebenso v_all.",
        "hi-Latn": "k_all mein sirf new keys hain: cache ko new keys se badha kar return karo, torch.cat([past_k, k], dim=-2) (T_past + T_new rows), aur v_all ke liye bhi same.",
    },
    "lab04.cache_order": {
        "en": "the cache is in the wrong order: the past comes first, k_all = torch.cat([past_k, k], dim=-2), so that row j of k_all is the key of position j.",
        "es": "la caché está en el orden equivocado: el pasado va primero, k_all = torch.cat([past_k, k], dim=-2), para que la fila j de k_all sea la key de la posición j.",
        "de": "der Cache steht in der falschen Reihenfolge: die Vergangenheit kommt zuerst, k_all = torch.cat([past_k, k], dim=-2), damit Zeile j von k_all der Key von Position j ist.",
        "hi-Latn": "cache galat order mein hai: past pehle aata hai, k_all = torch.cat([past_k, k], dim=-2), taaki k_all ki row j position j ki key ho.",
    },
    "lab04.wrong_cache": {
        "en": "on the case {case}, k_all or v_all is not the past followed by the new keys and values: torch.cat([past_k, k], dim=-2); without a cache, k_all is k itself.",
        "es": "en el caso {case}, k_all o v_all no es el pasado seguido de las keys y values nuevas: torch.cat([past_k, k], dim=-2); sin caché, k_all es el propio k.",
        "de": "im Fall {case} ist k_all oder v_all nicht die Vergangenheit gefolgt von den neuen Keys und Values: torch.cat([past_k, k], dim=-2); ohne Cache ist k_all einfach k.",
        "hi-Latn": "case {case} mein k_all ya v_all past ke baad new keys aur values nahi hai: torch.cat([past_k, k], dim=-2); cache ke bina k_all khud k hai.",
    },
    "lab04.wrong_return": {
        "en": "cached_attention returns three tensors: (out, k_all, v_all).",
        "es": "cached_attention devuelve tres tensores: (out, k_all, v_all).",
        "de": "cached_attention gibt drei Tensoren zurück: (out, k_all, v_all).",
        "hi-Latn": "cached_attention teen tensors return karta hai: (out, k_all, v_all).",
    },
    "lab04.not_solved": {
        "en": "⏳ Run this cell again once {name} is implemented.",
        "es": "⏳ Vuelve a ejecutar esta celda cuando {name} esté implementado.",
        "de": "⏳ Führe diese Zelle erneut aus, sobald {name} implementiert ist.",
        "hi-Latn": "⏳ {name} implement ho jaye, tab yeh cell dobara run karna.",
    },
}

i18n.register(MESSAGES)

LAB = LabSpec(id="lab04", exercises=EXERCISES)
