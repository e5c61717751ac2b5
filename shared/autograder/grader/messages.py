"""What the batch grader tells students (feedback files, Gradescope), in the four languages."""
from __future__ import annotations

from .. import i18n

INVALID = {
    "grader.invalid.unreadable": {
        "en": "🚫 This file could not be read ({error}), so nothing in it was graded.",
        "es": "🚫 No se pudo leer este archivo ({error}), así que no se ha corregido nada.",
        "de": "🚫 Diese Datei ließ sich nicht lesen ({error}), daher wurde nichts darin bewertet.",
        "hi-Latn": "🚫 Yeh file read nahi ho payi ({error}), isliye isme kuch bhi grade nahi hua.",
    },
    "grader.invalid.empty": {
        "en": "🚫 This file is empty: hand in the saved .ipynb notebook (File ▸ Save, then upload that file).",
        "es": "🚫 Este archivo está vacío: entrega el cuaderno .ipynb guardado (Archivo ▸ Guardar y sube ese archivo).",
        "de": "🚫 Diese Datei ist leer: gib das gespeicherte .ipynb-Notebook ab (Datei ▸ Speichern, dann diese Datei hochladen).",
        "hi-Latn": "🚫 Yeh file khaali hai: saved .ipynb notebook submit karo (File ▸ Save, phir wahi file upload karo).",
    },
    "grader.invalid.too_large": {
        "en": "🚫 This file is {size_mb} MB, more than the {max_mb} MB a notebook may have: clear the outputs (Edit ▸ Clear All Outputs), save and hand it in again.",
        "es": "🚫 Este archivo ocupa {size_mb} MB, más de los {max_mb} MB permitidos: borra las salidas (Editar ▸ Borrar todas las salidas), guarda y vuelve a entregarlo.",
        "de": "🚫 Diese Datei ist {size_mb} MB groß, mehr als die erlaubten {max_mb} MB: lösche die Ausgaben (Bearbeiten ▸ Alle Ausgaben löschen), speichere und gib sie erneut ab.",
        "hi-Latn": "🚫 Yeh file {size_mb} MB ki hai, allowed {max_mb} MB se zyada: outputs clear karo (Edit ▸ Clear All Outputs), save karo aur dobara submit karo.",
    },
    "grader.invalid.binary": {
        "en": "🚫 This is not a notebook but a binary file (a zip, a PDF, an image?): hand in the .ipynb file itself.",
        "es": "🚫 Esto no es un cuaderno sino un archivo binario (¿un zip, un PDF, una imagen?): entrega el archivo .ipynb en sí.",
        "de": "🚫 Das ist kein Notebook, sondern eine Binärdatei (ein Zip, ein PDF, ein Bild?): gib die .ipynb-Datei selbst ab.",
        "hi-Latn": "🚫 Yeh notebook nahi, ek binary file hai (zip, PDF ya image?): seedha .ipynb file submit karo.",
    },
    "grader.invalid.not_json": {
        "en": "🚫 This file is not a Jupyter notebook (it is not valid JSON: {detail}). Hand in the .ipynb file that JupyterLab saved.",
        "es": "🚫 Este archivo no es un cuaderno de Jupyter (no es JSON válido: {detail}). Entrega el archivo .ipynb que guardó JupyterLab.",
        "de": "🚫 Diese Datei ist kein Jupyter-Notebook (kein gültiges JSON: {detail}). Gib die .ipynb-Datei ab, die JupyterLab gespeichert hat.",
        "hi-Latn": "🚫 Yeh file Jupyter notebook nahi hai (valid JSON nahi: {detail}). JupyterLab ne jo .ipynb save kiya, wahi submit karo.",
    },
    "grader.invalid.truncated": {
        "en": "🚫 This notebook file is cut off before its end ({detail}): the upload or the save did not finish. Save again and hand in the whole file.",
        "es": "🚫 Este cuaderno está cortado antes de su final ({detail}): la subida o el guardado no terminó. Guarda de nuevo y entrega el archivo completo.",
        "de": "🚫 Diese Notebook-Datei bricht vor ihrem Ende ab ({detail}): Hochladen oder Speichern wurde nicht fertig. Speichere erneut und gib die ganze Datei ab.",
        "hi-Latn": "🚫 Yeh notebook file beech mein hi kat gayi hai ({detail}): upload ya save poora nahi hua. Dobara save karke poori file submit karo.",
    },
    "grader.invalid.not_notebook": {
        "en": "🚫 This JSON file is not a Jupyter notebook (it has no cells). Hand in the lab's .ipynb file.",
        "es": "🚫 Este archivo JSON no es un cuaderno de Jupyter (no tiene celdas). Entrega el archivo .ipynb de la práctica.",
        "de": "🚫 Diese JSON-Datei ist kein Jupyter-Notebook (sie hat keine Zellen). Gib die .ipynb-Datei des Labs ab.",
        "hi-Latn": "🚫 Yeh JSON file Jupyter notebook nahi hai (isme cells hi nahi hain). Lab ki .ipynb file submit karo.",
    },
    "grader.invalid.too_much_code": {
        "en": "🚫 This notebook has far more code than a lab needs (over 2 MB or 2000 cells), so it was not run.",
        "es": "🚫 Este cuaderno tiene muchísimo más código del que necesita una práctica (más de 2 MB o 2000 celdas), así que no se ejecutó.",
        "de": "🚫 Dieses Notebook enthält weit mehr Code, als ein Lab braucht (über 2 MB oder 2000 Zellen), daher wurde es nicht ausgeführt.",
        "hi-Latn": "🚫 Is notebook mein lab ki zaroorat se bahut zyada code hai (2 MB ya 2000 cells se upar), isliye ise run nahi kiya gaya.",
    },
    "grader.invalid.symlink": {
        "en": "🚫 This is a symbolic link, not a notebook file: the grader does not follow links (a link can point at someone else's file). Hand in the .ipynb file itself.",
        "es": "🚫 Esto es un enlace simbólico, no un archivo de cuaderno: el corrector no sigue enlaces (un enlace puede apuntar al archivo de otra persona). Entrega el propio archivo .ipynb.",
        "de": "🚫 Das ist ein symbolischer Link, keine Notebook-Datei: Der Korrektor folgt keinen Links (ein Link kann auf die Datei einer anderen Person zeigen). Gib die .ipynb-Datei selbst ab.",
        "hi-Latn": "🚫 Yeh ek symbolic link hai, notebook file nahi: grader links follow nahi karta (link kisi aur ki file ki taraf point kar sakta hai). Asli .ipynb file hi submit karo.",
    },
}

FEEDBACK = {
    "grader.not_found": {
        "en": "❓ `{name}` was not found in your notebook: no cell that ran defines it. Check the name and that its cell runs without an error.",
        "es": "❓ `{name}` no aparece en tu cuaderno: ninguna celda ejecutada lo define. Revisa el nombre y que su celda se ejecute sin errores.",
        "de": "❓ `{name}` wurde in deinem Notebook nicht gefunden: keine ausgeführte Zelle definiert es. Prüfe den Namen und ob seine Zelle ohne Fehler läuft.",
        "hi-Latn": "❓ `{name}` tumhare notebook mein nahi mila: kisi bhi run hui cell ne ise define nahi kiya. Naam check karo aur dekho ki uski cell bina error ke chalti hai.",
    },
    "grader.time_limit": {
        "en": "(The limit is {seconds:g} s per exercise. The other exercises were graded in a fresh process.)",
        "es": "(El límite es de {seconds:g} s por ejercicio. Los demás ejercicios se corrigieron en un proceso nuevo.)",
        "de": "(Die Grenze liegt bei {seconds:g} s pro Aufgabe. Die anderen Aufgaben wurden in einem frischen Prozess bewertet.)",
        "hi-Latn": "(Limit har exercise ke liye {seconds:g} s hai. Baaki exercises ek naye process mein grade hue.)",
    },
    "grader.submission_time_limit": {
        "en": "⌛ {name} was not graded: your notebook used up the {seconds:g} s allowed for the whole submission (look for a slow or endless cell).",
        "es": "⌛ {name} no se corrigió: tu cuaderno agotó los {seconds:g} s permitidos para toda la entrega (busca una celda lenta o infinita).",
        "de": "⌛ {name} wurde nicht bewertet: dein Notebook hat die {seconds:g} s für die ganze Abgabe aufgebraucht (suche eine langsame oder endlose Zelle).",
        "hi-Latn": "⌛ {name} grade nahi hua: tumhare notebook ne poore submission ke {seconds:g} s use kar liye (koi slow ya kabhi na khatam hone wali cell dhundo).",
    },
    "grader.worker_crashed": {
        "en": "💥 {name}: the process running your code stopped on the case {case} ({detail}): os._exit(), a crash or too much memory. This exercise gets 0; the others were graded in a fresh process.",
        "es": "💥 {name}: el proceso que ejecutaba tu código se detuvo en el caso {case} ({detail}): os._exit(), un fallo o demasiada memoria. Este ejercicio obtiene 0; los demás se corrigieron en un proceso nuevo.",
        "de": "💥 {name}: Der Prozess mit deinem Code ist im Fall {case} beendet worden ({detail}): os._exit(), ein Absturz oder zu viel Speicher. Diese Aufgabe bekommt 0; die anderen wurden in einem frischen Prozess bewertet.",
        "hi-Latn": "💥 {name}: tumhara code chalane wala process case {case} par ruk gaya ({detail}): os._exit(), crash ya bahut zyada memory. Is exercise ko 0 mila; baaki exercises naye process mein grade hue.",
    },
    "grader.internal_error": {
        "en": "⚠️ {name}: the grader itself failed on this exercise ({detail}). This is not your fault; your instructor will look at it.",
        "es": "⚠️ {name}: el propio corrector falló en este ejercicio ({detail}). No es culpa tuya; tu profesor lo revisará.",
        "de": "⚠️ {name}: Der Korrektor selbst ist bei dieser Aufgabe gescheitert ({detail}). Das ist nicht dein Fehler; deine Lehrkraft sieht es sich an.",
        "hi-Latn": "⚠️ {name}: is exercise par grader khud fail ho gaya ({detail}). Isme tumhari galti nahi hai; tumhare instructor ise dekhenge.",
    },
    "grader.id_mismatch": {
        "en": "ℹ️ The student id typed in the notebook ({typed}) is not the one this submission was handed in under ({student}): it was graded with the numbers of {typed}.",
        "es": "ℹ️ El identificador escrito en el cuaderno ({typed}) no es aquel con el que se entregó ({student}): se corrigió con los números de {typed}.",
        "de": "ℹ️ Die im Notebook eingetragene Kennung ({typed}) ist nicht die, unter der abgegeben wurde ({student}): bewertet wurde mit den Zahlen von {typed}.",
        "hi-Latn": "ℹ️ Notebook mein likha student id ({typed}) woh nahi hai jiske naam se submit hua ({student}): grading {typed} ke numbers se hui.",
    },
    "grader.cell_error": {
        "en": "cell {cell} raised {type}: {message}",
        "es": "la celda {cell} lanzó {type}: {message}",
        "de": "Zelle {cell} hat {type} ausgelöst: {message}",
        "hi-Latn": "cell {cell} ne {type} raise kiya: {message}",
    },
    "grader.cell_timeout": {
        "en": "cell {cell} did not finish within {seconds:g} s and was skipped",
        "es": "la celda {cell} no terminó en {seconds:g} s y se omitió",
        "de": "Zelle {cell} war nach {seconds:g} s nicht fertig und wurde übersprungen",
        "hi-Latn": "cell {cell} {seconds:g} s mein khatam nahi hui, isliye skip kar di gayi",
    },
    "grader.cell_crashed": {
        "en": "cell {cell} stopped the process ({detail}) and was skipped",
        "es": "la celda {cell} detuvo el proceso ({detail}) y se omitió",
        "de": "Zelle {cell} hat den Prozess beendet ({detail}) und wurde übersprungen",
        "hi-Latn": "cell {cell} ne process rok diya ({detail}), isliye skip kar di gayi",
    },
    "grader.cell_dropped": {
        "en": "cell {cell} is a cell magic (%%...), not Python, and was not run",
        "es": "la celda {cell} es una magia de celda (%%...), no Python, y no se ejecutó",
        "de": "Zelle {cell} ist ein Zellen-Magic (%%...), kein Python, und wurde nicht ausgeführt",
        "hi-Latn": "cell {cell} ek cell magic (%%...) hai, Python nahi, isliye run nahi hui",
    },
    "grader.cells_more": {
        "en": "{count} more cells raised an error, hung or were skipped (the first ones are listed above)",
        "es": "otras {count} celdas lanzaron un error, se colgaron o se omitieron (arriba están las primeras)",
        "de": "{count} weitere Zellen haben einen Fehler ausgelöst, hingen oder wurden übersprungen (die ersten stehen oben)",
        "hi-Latn": "{count} aur cells ne error diya, atak gayi ya skip hui (pehli wali upar list hain)",
    },
    "grader.wrong_lab": {
        "en": "🚫 This notebook is {found}, but this batch grades {expected}: nothing in it was run. Hand in your {expected} notebook.",
        "es": "🚫 Este cuaderno es {found}, pero esta corrección es de {expected}: no se ejecutó nada. Entrega tu cuaderno de {expected}.",
        "de": "🚫 Dieses Notebook ist {found}, bewertet wird aber {expected}: nichts darin wurde ausgeführt. Gib dein Notebook zu {expected} ab.",
        "hi-Latn": "🚫 Yeh notebook {found} hai, lekin is batch mein {expected} grade ho raha hai: isme se kuch bhi run nahi hua. Apna {expected} wala notebook submit karo.",
    },
    "grader.context_unreadable": {
        "en": "✋ The grader could not use the value of {names} in your notebook ({detail}). Set it to plain text, e.g. STUDENT_ID = \"ab123\", and run its cell.",
        "es": "✋ El corrector no pudo usar el valor de {names} de tu cuaderno ({detail}). Ponle un texto simple, p. ej. STUDENT_ID = \"ab123\", y ejecuta su celda.",
        "de": "✋ Der Korrektor konnte den Wert von {names} in deinem Notebook nicht verwenden ({detail}). Setze ihn auf einfachen Text, z. B. STUDENT_ID = \"ab123\", und führe seine Zelle aus.",
        "hi-Latn": "✋ Grader tumhare notebook mein {names} ki value use nahi kar paya ({detail}). Ise simple text rakho, jaise STUDENT_ID = \"ab123\", aur uski cell run karo.",
    },
    "grader.fb.title": {
        "en": "Feedback on {lab} for {student}",
        "es": "Comentarios sobre {lab} para {student}",
        "de": "Rückmeldung zu {lab} für {student}",
        "hi-Latn": "{student} ke liye {lab} ka feedback",
    },
    "grader.fb.score": {
        "en": "Score: {points:g}/{max_points:g} points",
        "es": "Nota: {points:g}/{max_points:g} puntos",
        "de": "Ergebnis: {points:g}/{max_points:g} Punkte",
        "hi-Latn": "Score: {points:g}/{max_points:g} points",
    },
    "grader.fb.exercise": {"en": "Exercise", "es": "Ejercicio", "de": "Aufgabe", "hi-Latn": "Exercise"},
    "grader.fb.points": {"en": "Points", "es": "Puntos", "de": "Punkte", "hi-Latn": "Points"},
    "grader.fb.feedback": {"en": "Feedback", "es": "Comentario", "de": "Rückmeldung", "hi-Latn": "Feedback"},
    "grader.fb.cells": {
        "en": "Notes on your notebook's cells",
        "es": "Notas sobre las celdas de tu cuaderno",
        "de": "Hinweise zu den Zellen deines Notebooks",
        "hi-Latn": "Tumhare notebook ki cells par notes",
    },
    "grader.fb.hidden_cases": {
        "en": "Besides the cases that `check` showed you, the grader ran hidden randomised cases.",
        "es": "Además de los casos que te mostró `check`, el corrector ejecutó casos aleatorios ocultos.",
        "de": "Neben den Fällen, die dir `check` gezeigt hat, hat der Korrektor verdeckte Zufallsfälle ausgeführt.",
        "hi-Latn": "`check` ne jo cases dikhaye the unke alawa grader ne kuch hidden random cases bhi chalaye.",
    },
}

i18n.register(INVALID)
i18n.register(FEEDBACK)

# Feedback on hidden cases names the exercise and the mistake, never the input (see engine.redact_hidden).
HIDDEN = {
    "grader.hidden_failed": {
        "en": "it passes the public cases (the ones `check` shows) but not all of the grader's hidden cases.",
        "es": "supera los casos públicos (los que muestra `check`), pero no todos los casos ocultos del corrector.",
        "de": "die öffentlichen Fälle (die `check` zeigt) besteht es, aber nicht alle verdeckten Fälle des Korrektors.",
        "hi-Latn": "yeh public cases (jo `check` dikhata hai) pass karta hai, lekin grader ke saare hidden cases nahi.",
    },
    "grader.hidden_mistake": {
        "en": "What goes wrong there:",
        "es": "Lo que falla allí:",
        "de": "Was dort schiefgeht:",
        "hi-Latn": "Wahan kya galat hota hai:",
    },
    "grader.hidden_more": {
        "en": "The grader's hidden cases cost {lost} more point(s): {name} also fails on inputs that `check` does not show.",
        "es": "Los casos ocultos del corrector restan {lost} punto(s) más: {name} también falla con entradas que `check` no muestra.",
        "de": "Die verdeckten Fälle des Korrektors kosten {lost} weitere(n) Punkt(e): {name} scheitert auch an Eingaben, die `check` nicht zeigt.",
        "hi-Latn": "Grader ke hidden cases se {lost} point aur kat gaye: {name} un inputs par bhi fail hota hai jo `check` nahi dikhata.",
    },
    "grader.hidden_case_was": {
        "en": "(Hidden case: {case}.)",
        "es": "(Caso oculto: {case}.)",
        "de": "(Verdeckter Fall: {case}.)",
        "hi-Latn": "(Hidden case: {case}.)",
    },
}

i18n.register(HIDDEN)
