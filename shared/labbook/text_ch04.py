"""Output text of chapter 04 (implementing masks)."""
from __future__ import annotations



def _t(en: str, es: str, de: str, hi: str) -> dict[str, str]:
    return {"en": en, "es": es, "de": de, "hi-Latn": hi}


TEXTS = {
    "ch04.same": _t("same:", "iguales:", "gleich:", "same hain:"),
    "ch04.row": _t("row", "fila", "Zeile", "row"),
    "ch04.same_as_inf": _t("same weights as -inf", "mismos pesos que con -inf", "dieselben Gewichte wie mit -inf",
                           "-inf wale weights jaise hi"),
    "ch04.fill_inf": _t("fill -inf: row 0 is NaN", "relleno -inf: fila 0 es NaN", "Füllwert -inf: Zeile 0 ist NaN",
                        "-inf bharo: row 0 NaN"),
    "ch04.fill_1e9": _t("fill -1e9: row 0 is uniform", "relleno -1e9: fila 0 uniforme",
                        "Füllwert -1e9: Zeile 0 gleichverteilt", "-1e9 bharo: row 0 uniform"),
    "ch04.fill_finfo": _t("fill finfo.min: row 0 is uniform", "relleno finfo.min: fila 0 uniforme",
                          "Füllwert finfo.min: Zeile 0 gleichverteilt", "finfo.min bharo: row 0 uniform"),
    "ch04.fig_fill": _t("Attention weights when query 0 may read no key",
                        "Pesos de atención cuando la query 0 no puede leer ninguna key",
                        "Attention-Gewichte, wenn Query 0 keinen Key lesen darf",
                        "Attention weights jab query 0 koi bhi key nahi padh sakti"),
    "ch04.allowed": _t("may read", "puede leer", "darf lesen", "padh sakti hai"),
    "ch04.blocked": _t("blocked", "bloqueada", "gesperrt", "blocked"),
    "ch04.table_title": _t("One causal pattern, eight APIs: what the mask values mean (measured)",
                           "Un mismo patrón causal, ocho APIs: qué significan los valores de la máscara (medido)",
                           "Ein kausales Muster, acht APIs: was die Maskenwerte bedeuten (gemessen)",
                           "Ek causal pattern, aath APIs: mask values ka matlab (measure kiya hua)"),
    "ch04.col_api": _t("API", "API", "API", "API"),
    "ch04.col_dtype": _t("mask dtype", "dtype de la máscara", "Masken-dtype", "mask dtype"),
    "ch04.col_means": _t("True / 0 means", "True / 0 significa", "True / 0 heißt", "True / 0 ka matlab"),
    "ch04.col_blocked": _t("blocked is", "bloqueado es", "gesperrt ist", "blocked hai"),
    "ch04.col_q0": _t("query 0 reads", "la query 0 lee", "Query 0 liest", "query 0 padhti hai"),
    "ch04.col_q2": _t("query 2 reads", "la query 2 lee", "Query 2 liest", "query 2 padhti hai"),
    "ch04.deterministic": _t("two calls give the same output:", "dos llamadas dan la misma salida:",
                             "zwei Aufrufe liefern dieselbe Ausgabe:", "do calls ka output same hai:"),
    "ch04.call": _t("call", "llamada", "Aufruf", "call"),
    "ch04.query_reads": _t("query {i} reads {keys}", "la query {i} lee {keys}", "Query {i} liest {keys}",
                           "query {i} padhti hai {keys}"),
}
