"""Text that readers see in outputs (figure titles, axis labels), per language.

Code cells are identical in every language; they ask `tr("key")` and get the
text in the notebook's language (see autograder.i18n.current_lang). Chapters
add their keys to TEXTS; tests/test_i18n.py checks that all four exist.
"""
from __future__ import annotations

from autograder.i18n import current_lang

TEXTS: dict[str, dict[str, str]] = {
    "query": {"en": "query i", "es": "query i", "de": "Query i", "hi-Latn": "query i"},
    "key": {"en": "key j", "es": "key j", "de": "Key j", "hi-Latn": "key j"},
    "feature": {"en": "feature", "es": "componente", "de": "Merkmal", "hi-Latn": "feature"},
    "token": {"en": "token", "es": "token", "de": "Token", "hi-Latn": "token"},
    "ch03.scores": {"en": "Step 1: scores QKᵀ", "es": "Paso 1: scores QKᵀ",
                    "de": "Schritt 1: Scores QKᵀ", "hi-Latn": "Step 1: scores QKᵀ"},
    "ch03.scaled": {"en": "Step 2: scaled scores QKᵀ/√d_k", "es": "Paso 2: scores escalados QKᵀ/√d_k",
                    "de": "Schritt 2: skalierte Scores QKᵀ/√d_k", "hi-Latn": "Step 2: scaled scores QKᵀ/√d_k"},
    "ch03.masked": {"en": "Step 3: masked scores (+M)", "es": "Paso 3: scores enmascarados (+M)",
                    "de": "Schritt 3: maskierte Scores (+M)", "hi-Latn": "Step 3: masked scores (+M)"},
    "ch03.weights": {"en": "Step 4: attention weights (row-wise softmax)",
                     "es": "Paso 4: pesos de atención (softmax por filas)",
                     "de": "Schritt 4: Attention-Gewichte (Softmax je Zeile)",
                     "hi-Latn": "Step 4: attention weights (row-wise softmax)"},
    "ch03.output": {"en": "Step 5: output = weights · V", "es": "Paso 5: salida = pesos · V",
                    "de": "Schritt 5: Ausgabe = Gewichte · V", "hi-Latn": "Step 5: output = weights · V"},
    "ch03.blocked": {"en": "blocked (−∞)", "es": "bloqueado (−∞)", "de": "gesperrt (−∞)",
                     "hi-Latn": "blocked (−∞)"},
    "ch03.no_scale": {"en": "forgot the 1/√d_k scale", "es": "sin la escala 1/√d_k",
                      "de": "ohne Skalierung 1/√d_k", "hi-Latn": "1/√d_k scale bhool gaye"},
    "ch03.after_softmax": {"en": "0/1 mask after the softmax", "es": "máscara 0/1 después del softmax",
                           "de": "0/1-Maske nach dem Softmax", "hi-Latn": "softmax ke baad 0/1 mask"},
    "ch03.diagonal": {"en": "diagonal masked too", "es": "diagonal también enmascarada",
                      "de": "Diagonale mitmaskiert", "hi-Latn": "diagonal bhi mask kar diya"},
    "ch03.query": {"en": "query", "es": "query", "de": "Query", "hi-Latn": "query"},
    "ch03.scores_word": {"en": "scores", "es": "scores", "de": "Scores", "hi-Latn": "scores"},
    "ch03.rounded": {"en": "rounded to 2 decimals:", "es": "redondeados a 2 decimales:",
                     "de": "auf 2 Nachkommastellen gerundet:", "hi-Latn": "2 decimals tak round karke:"},
    "ch03.their_sum": {"en": "their sum =", "es": "su suma =", "de": "ihre Summe =", "hi-Latn": "inka sum ="},
    "ch03.manual_vs_fused": {"en": "manual and fused agree (max difference < 1e-6):",
                             "es": "manual y fusionado coinciden (diferencia máxima < 1e-6):",
                             "de": "manuell und fusioniert stimmen überein (maximale Abweichung < 1e-6):",
                             "hi-Latn": "manual aur fused same hain (max difference < 1e-6):"},
    "ch03.row_sums": {"en": "row sums", "es": "suma de cada fila", "de": "Zeilensummen", "hi-Latn": "row sums"},
}


def tr(key: str, lang: str | None = None) -> str:
    """The text `key` in the notebook's language."""
    return TEXTS[key][lang or current_lang()]
