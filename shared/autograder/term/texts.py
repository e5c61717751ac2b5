"""Every text of a term that a student or an instructor reads (feedback notes, the class report), per language.

The form is i18n's: {key: {lang: template}}, keys prefixed `term.`. Usage errors
of the command line are English only and name their file and line (they are
raised where the input is read).
"""
from __future__ import annotations

from .. import i18n

NOTES = {
    "term.note.missing": {
        "en": "No submission for this lab was found.",
        "es": "No se ha encontrado ninguna entrega de esta práctica.",
        "de": "Für dieses Lab wurde keine Abgabe gefunden.",
        "hi-Latn": "Is lab ka koi submission nahi mila.",
    },
    "term.note.late": {
        "en": "Handed in {days} day(s) after the due date: −{percent}% of the raw score ({raw} → {score}).",
        "es": "Entregado {days} día(s) después de la fecha límite: −{percent} % de la nota bruta ({raw} → {score}).",
        "de": "{days} Tag(e) nach dem Abgabetermin abgegeben: −{percent} % der Rohpunktzahl ({raw} → {score}).",
        "hi-Latn": "Due date ke {days} din baad submit kiya: raw score ka −{percent}% ({raw} → {score}).",
    },
    "term.note.late_flag": {
        "en": "The LMS marks this hand-in as late (without saying by how much): the first day's penalty applies, −{percent}% ({raw} → {score}).",
        "es": "El LMS marca esta entrega como tardía (sin decir cuánto): se aplica la penalización del primer día, −{percent} % ({raw} → {score}).",
        "de": "Das LMS markiert diese Abgabe als verspätet (ohne zu sagen, wie sehr): es gilt der Abzug des ersten Tages, −{percent} % ({raw} → {score}).",
        "hi-Latn": "LMS ne is submission ko late mark kiya hai (kitna late, yeh nahi bataya): pehle din ki penalty lagi, −{percent}% ({raw} → {score}).",
    },
    "term.note.late_flag_extension": {
        "en": "The LMS marks this hand-in as late, but you have an extension: no penalty.",
        "es": "El LMS marca esta entrega como tardía, pero tienes una prórroga: sin penalización.",
        "de": "Das LMS markiert diese Abgabe als verspätet, du hast aber eine Fristverlängerung: kein Abzug.",
        "hi-Latn": "LMS ne ise late mark kiya hai, lekin tumhe extension mila hai: koi penalty nahi.",
    },
    "term.note.odd_timestamp": {
        "en": "The hand-in time could not be read, so this submission counts as on time.",
        "es": "No se pudo leer la hora de entrega, así que esta entrega cuenta como puntual.",
        "de": "Der Abgabezeitpunkt ließ sich nicht lesen, daher gilt diese Abgabe als pünktlich.",
        "hi-Latn": "Submission ka time padha nahi ja saka, isliye ise time par maana gaya.",
    },
    "term.note.superseded": {
        "en": "You handed in {count} file(s) before this one; only the latest was graded.",
        "es": "Entregaste {count} archivo(s) antes de este; solo se ha corregido el último.",
        "de": "Du hast vor dieser {count} Datei(en) abgegeben; bewertet wurde nur die letzte.",
        "hi-Latn": "Tumne isse pehle {count} file(s) submit ki thi; sirf aakhri wali grade hui.",
    },
    "term.note.override": {
        "en": "{exercise}: set to {points} points by your instructor ({reason}).",
        "es": "{exercise}: tu profesor lo ha fijado en {points} puntos ({reason}).",
        "de": "{exercise}: von deiner Lehrkraft auf {points} Punkte gesetzt ({reason}).",
        "hi-Latn": "{exercise}: tumhare instructor ne {points} points diye ({reason}).",
    },
    "term.note.forbidden": {
        "en": "{exercise} uses {names}, which this exercise asks you not to use.",
        "es": "{exercise} usa {names}, que este ejercicio pide no usar.",
        "de": "{exercise} verwendet {names}, was diese Aufgabe ausdrücklich nicht erlaubt.",
        "hi-Latn": "{exercise} mein {names} use hua hai, jo is exercise mein mana hai.",
    },
    "term.note.forbidden_penalised": {
        "en": "{exercise} uses {names}, which this exercise forbids: 0 points for it.",
        "es": "{exercise} usa {names}, que este ejercicio prohíbe: 0 puntos en él.",
        "de": "{exercise} verwendet {names}, was diese Aufgabe verbietet: 0 Punkte dafür.",
        "hi-Latn": "{exercise} mein {names} use hua hai, jo is exercise mein mana hai: iske 0 points.",
    },
}

REPORT = {
    "term.report.title": {
        "en": "Class report: {lab}", "es": "Informe de la clase: {lab}",
        "de": "Klassenbericht: {lab}", "hi-Latn": "Class report: {lab}",
    },
    "term.report.summary": {
        "en": "{students} students on the roster, {graded} graded; mean {mean} of {max_score}, median {median}.",
        "es": "{students} estudiantes en la lista, {graded} corregidos; media {mean} de {max_score}, mediana {median}.",
        "de": "{students} Studierende auf der Liste, {graded} bewertet; Mittelwert {mean} von {max_score}, Median {median}.",
        "hi-Latn": "Roster par {students} students, {graded} grade hue; average {mean} / {max_score}, median {median}.",
    },
    "term.report.scores": {
        "en": "Score distribution", "es": "Distribución de las notas",
        "de": "Verteilung der Punktzahlen", "hi-Latn": "Score ka distribution",
    },
    "term.report.score_axis": {"en": "score", "es": "nota", "de": "Punkte", "hi-Latn": "score"},
    "term.report.count_axis": {"en": "students", "es": "estudiantes", "de": "Studierende", "hi-Latn": "students"},
    "term.report.per_exercise": {
        "en": "Points per exercise", "es": "Puntos por ejercicio",
        "de": "Punkte je Aufgabe", "hi-Latn": "Har exercise ke points",
    },
    "term.report.diagnoses": {
        "en": "Most common mistakes, and where to revisit them in class",
        "es": "Errores más frecuentes y dónde repasarlos en clase",
        "de": "Häufigste Fehler und wo man sie im Unterricht noch einmal aufgreift",
        "hi-Latn": "Sabse common galtiyan, aur class mein unhe kahan dobara samjhana hai",
    },
    "term.report.col.exercise": {"en": "exercise", "es": "ejercicio", "de": "Aufgabe", "hi-Latn": "exercise"},
    "term.report.col.mistake": {"en": "mistake", "es": "error", "de": "Fehler", "hi-Latn": "galti"},
    "term.report.col.count": {"en": "students", "es": "estudiantes", "de": "Studierende", "hi-Latn": "students"},
    "term.report.col.share": {"en": "share", "es": "proporción", "de": "Anteil", "hi-Latn": "hissa"},
    "term.report.col.explanation": {"en": "what it means", "es": "qué significa", "de": "was es bedeutet",
                                    "hi-Latn": "matlab kya hai"},
    "term.report.col.section": {"en": "revisit", "es": "repasar", "de": "wiederholen", "hi-Latn": "dobara dekho"},
    "term.report.no_diagnoses": {
        "en": "No recognised mistake in any submission.", "es": "Ninguna entrega tiene un error reconocido.",
        "de": "In keiner Abgabe wurde ein bekannter Fehler erkannt.", "hi-Latn": "Kisi submission mein koi pehchani galti nahi mili.",
    },
    "term.report.statuses": {"en": "Hand-ins", "es": "Entregas", "de": "Abgaben", "hi-Latn": "Submissions"},
    "term.report.status.graded": {"en": "graded", "es": "corregidas", "de": "bewertet", "hi-Latn": "graded"},
    "term.report.status.missing": {"en": "missing", "es": "sin entregar", "de": "fehlend", "hi-Latn": "missing"},
    "term.report.status.late": {"en": "late", "es": "tardías", "de": "verspätet", "hi-Latn": "late"},
    "term.report.status.invalid": {"en": "invalid file", "es": "archivo no válido", "de": "ungültige Datei",
                                   "hi-Latn": "invalid file"},
    "term.report.status.wrong_lab": {"en": "another lab", "es": "otra práctica", "de": "anderes Lab",
                                     "hi-Latn": "doosra lab"},
    "term.report.status.timeout": {"en": "timed out", "es": "tiempo agotado", "de": "Zeit überschritten",
                                   "hi-Latn": "timeout"},
    "term.report.status.error": {"en": "grader error", "es": "error del corrector", "de": "Fehler des Bewerters",
                                 "hi-Latn": "grader error"},
    "term.report.status.unknown_student": {"en": "not on the roster", "es": "fuera de la lista",
                                           "de": "nicht auf der Liste", "hi-Latn": "roster mein nahi"},
    "term.report.status.unparsed": {"en": "unreadable file name", "es": "nombre de archivo ilegible",
                                    "de": "unlesbarer Dateiname", "hi-Latn": "file ka naam samajh nahi aaya"},
    "term.report.languages": {"en": "Languages used", "es": "Idiomas usados", "de": "Verwendete Sprachen",
                              "hi-Latn": "Istemaal hui bhashayein"},
    "term.report.flags": {"en": "For review", "es": "Para revisar", "de": "Zur Durchsicht", "hi-Latn": "Review ke liye"},
    "term.report.identical": {
        "en": "Identical graded code (after normalising names, comments and layout): {students} ({exercises}).",
        "es": "Código corregido idéntico (tras normalizar nombres, comentarios y formato): {students} ({exercises}).",
        "de": "Identischer bewerteter Code (nach Vereinheitlichung von Namen, Kommentaren und Layout): {students} ({exercises}).",
        "hi-Latn": "Ek jaisa graded code (names, comments aur layout normalise karne ke baad): {students} ({exercises}).",
    },
    "term.report.near": {
        "en": "Near-identical graded code: {students} ({exercises}).",
        "es": "Código corregido casi idéntico: {students} ({exercises}).",
        "de": "Nahezu identischer bewerteter Code: {students} ({exercises}).",
        "hi-Latn": "Lagbhag ek jaisa graded code: {students} ({exercises}).",
    },
    "term.report.groups_hint": {
        "en": "Short correct answers converge: large groups with full marks are expected; small groups sharing the same wrong code are the ones to look at.",
        "es": "Las respuestas cortas y correctas se parecen: los grupos grandes con la nota máxima son normales; conviene mirar los grupos pequeños que comparten el mismo código erróneo.",
        "de": "Kurze richtige Lösungen ähneln sich: große Gruppen mit voller Punktzahl sind zu erwarten; genauer ansehen sollte man kleine Gruppen mit demselben falschen Code.",
        "hi-Latn": "Chhote sahi answers ek jaise ho jaate hain: full marks wale bade groups normal hain; same galat code wale chhote groups ko dekhna chahiye.",
    },
    "term.report.forbidden": {
        "en": "{student}: {exercise} uses {names} (forbidden by the exercise){penalised}.",
        "es": "{student}: {exercise} usa {names} (prohibido por el ejercicio){penalised}.",
        "de": "{student}: {exercise} verwendet {names} (von der Aufgabe verboten){penalised}.",
        "hi-Latn": "{student}: {exercise} mein {names} use hua (exercise mein mana){penalised}.",
    },
    "term.report.penalised": {"en": "; penalised", "es": "; penalizado", "de": "; mit Abzug", "hi-Latn": "; penalty lagi"},
    "term.report.no_flags": {"en": "Nothing to review.", "es": "Nada que revisar.", "de": "Nichts zu prüfen.",
                             "hi-Latn": "Review karne ko kuch nahi."},
    "term.report.hand_graded": {
        "en": "Written answers graded by hand", "es": "Respuestas escritas corregidas a mano",
        "de": "Von Hand bewertete schriftliche Antworten", "hi-Latn": "Haath se grade hone wale likhit jawab",
    },
    "term.report.hand_graded_part": {
        "en": "{part}: {graded} of {answers} answers graded (sheet: hand-graded.csv).",
        "es": "{part}: {graded} de {answers} respuestas corregidas (hoja: hand-graded.csv).",
        "de": "{part}: {graded} von {answers} Antworten bewertet (Bogen: hand-graded.csv).",
        "hi-Latn": "{part}: {answers} mein se {graded} jawab grade hue (sheet: hand-graded.csv).",
    },
    "term.report.unmatched": {
        "en": "Files not counted for any roster student", "es": "Archivos que no cuentan para nadie de la lista",
        "de": "Dateien, die niemandem auf der Liste zugeordnet sind", "hi-Latn": "Files jo kisi roster student ke liye count nahi hui",
    },
}

i18n.register(NOTES)
i18n.register(REPORT)


def render(key: str, **params) -> dict[str, str]:
    """The message in every language, as records keep their texts."""
    return {lang: i18n.t(key, lang, **params) for lang in i18n.LANGS}
