"""Named diagnoses of classic mistakes, shared by the labs, in four languages.

A lab may override one with a key `<lab>.<diagnosis>` in its own catalogue.
"""
from . import i18n

DIAGNOSES = {
    "diagnosis.transposed_k": {
        "en": "your matrix is the transpose of the right one: you computed K·Qᵀ (row i should pair query i with every key j).",
        "es": "tu matriz es la traspuesta de la correcta: calculaste K·Qᵀ (la fila i debe emparejar la query i con cada key j).",
        "de": "Deine Matrix ist die Transponierte der richtigen: du hast K·Qᵀ gerechnet (Zeile i gehört zu Query i und allen Keys j).",
        "hi-Latn": "tumhari matrix sahi wali ka transpose hai: tumne K·Qᵀ calculate kiya (row i mein query i ko har key j ke saath pair karna hai).",
    },
    "diagnosis.forgot_scale": {
        "en": "you forgot the 1/√d_k scale: divide the scores by √d_k before the softmax.",
        "es": "olvidaste la escala 1/√d_k: divide los scores entre √d_k antes del softmax.",
        "de": "Du hast die Skalierung 1/√d_k vergessen: teile die Scores vor dem Softmax durch √d_k.",
        "hi-Latn": "tum 1/√d_k scale bhool gaye: softmax se pehle scores ko √d_k se divide karo.",
    },
    "diagnosis.divided_by_dk": {
        "en": "you divided by d_k instead of √d_k.",
        "es": "dividiste entre d_k en lugar de √d_k.",
        "de": "Du hast durch d_k statt durch √d_k geteilt.",
        "hi-Latn": "tumne √d_k ki jagah d_k se divide kar diya.",
    },
    "diagnosis.wrong_triangle": {
        "en": "you masked the wrong triangle: -inf must sit above the diagonal (key j > query i), 0 on and below it.",
        "es": "enmascaraste el triángulo equivocado: -inf va por encima de la diagonal (key j > query i), 0 en ella y por debajo.",
        "de": "Du hast das falsche Dreieck maskiert: -inf gehört oberhalb der Diagonale (Key j > Query i), 0 auf die Diagonale und darunter.",
        "hi-Latn": "tumne galat triangle mask kiya: -inf diagonal ke upar aata hai (key j > query i), 0 diagonal par aur uske neeche.",
    },
    "diagnosis.diagonal_masked": {
        "en": "your mask also blocks the diagonal, so row 0 has no allowed key and softmax gives NaN. A position may read itself: keep j = i.",
        "es": "tu máscara también bloquea la diagonal, así que la fila 0 no tiene ninguna key permitida y el softmax da NaN. Una posición puede leerse a sí misma: deja j = i.",
        "de": "Deine Maske sperrt auch die Diagonale, daher hat Zeile 0 keinen erlaubten Key und der Softmax liefert NaN. Eine Position darf sich selbst lesen: lass j = i frei.",
        "hi-Latn": "tumhara mask diagonal ko bhi block karta hai, isliye row 0 ke paas koi allowed key nahi bachti aur softmax NaN deta hai. Position khud ko padh sakti hai: j = i allowed rakho.",
    },
    "diagnosis.zero_inf_swapped": {
        "en": "0 and -inf are swapped: 0 marks what may be read, -inf what is blocked.",
        "es": "0 y -inf están intercambiados: 0 marca lo que se puede leer, -inf lo bloqueado.",
        "de": "0 und -inf sind vertauscht: 0 steht für erlaubt, -inf für gesperrt.",
        "hi-Latn": "0 aur -inf ulte ho gaye: 0 ka matlab allowed (query woh key padh sakti hai), -inf ka matlab blocked.",
    },
    "diagnosis.binary_mask": {
        "en": "this is a 0/1 mask. An additive mask holds 0 (allowed) and -inf (blocked), and is added to the scores before the softmax.",
        "es": "esto es una máscara 0/1. Una máscara aditiva tiene 0 (permitido) y -inf (bloqueado) y se suma a los scores antes del softmax.",
        "de": "Das ist eine 0/1-Maske. Eine additive Maske enthält 0 (erlaubt) und -inf (gesperrt) und wird vor dem Softmax auf die Scores addiert.",
        "hi-Latn": "yeh 0/1 mask hai. Additive mask mein 0 (allowed) aur -inf (blocked) hote hain, aur use softmax se pehle scores mein add karte hain.",
    },
    "diagnosis.no_mask": {
        "en": "these are the weights without any mask: every query also reads future keys.",
        "es": "estos son los pesos sin máscara: cada query lee también keys del futuro.",
        "de": "Das sind die Gewichte ganz ohne Maske: jede Query liest auch zukünftige Keys.",
        "hi-Latn": "yeh bina mask ke weights hain: har query future keys bhi padh rahi hai.",
    },
    "diagnosis.mask_after_softmax": {
        "en": "you applied the mask after the softmax: the rows no longer sum to 1. Add 0/-inf to the scores before the softmax instead.",
        "es": "aplicaste la máscara después del softmax: las filas ya no suman 1. Suma 0/-inf a los scores antes del softmax.",
        "de": "Du hast die Maske nach dem Softmax angewendet: die Zeilen summieren sich nicht mehr zu 1. Addiere 0/-inf vor dem Softmax auf die Scores.",
        "hi-Latn": "tumne mask softmax ke baad lagaya: ab rows ka sum 1 nahi hai. 0/-inf ko softmax se pehle scores mein add karo.",
    },
    "diagnosis.wrong_axis": {
        "en": "you normalised over the wrong axis: each row (one query) must sum to 1, not each column.",
        "es": "normalizaste sobre el eje equivocado: cada fila (una query) debe sumar 1, no cada columna.",
        "de": "Du hast über die falsche Achse normiert: jede Zeile (eine Query) muss 1 ergeben, nicht jede Spalte.",
        "hi-Latn": "tumne galat axis par normalise kiya: har row (ek query) ka sum 1 hona chahiye, column ka nahi.",
    },
    "diagnosis.weights_transposed": {
        "en": "you multiplied Aᵀ·V: output row i is Σ_j A[i, j]·V[j], so use A·V.",
        "es": "multiplicaste Aᵀ·V: la fila i de la salida es Σ_j A[i, j]·V[j], así que usa A·V.",
        "de": "Du hast Aᵀ·V gerechnet: Ausgabezeile i ist Σ_j A[i, j]·V[j], also A·V.",
        "hi-Latn": "tumne Aᵀ·V multiply kiya: output row i = Σ_j A[i, j]·V[j], isliye A·V use karo.",
    },
}

i18n.register(DIAGNOSES)
