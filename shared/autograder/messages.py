"""Messages shared by every lab, in the four languages of the book."""
from . import i18n

COMMON = {
    "common.passed": {
        "en": "✅ {name}: correct.",
        "es": "✅ {name}: correcto.",
        "de": "✅ {name}: richtig.",
        "hi-Latn": "✅ {name}: bilkul sahi.",
    },
    "common.failed": {
        "en": "❌ {name}:",
        "es": "❌ {name}:",
        "de": "❌ {name}:",
        "hi-Latn": "❌ {name}:",
    },
    "common.not_answered": {
        "en": "⏳ {name}: not implemented yet. Replace the `...` or the `raise NotImplementedError` with your answer, run that cell, then this one.",
        "es": "⏳ {name}: todavía sin implementar. Sustituye el `...` o el `raise NotImplementedError` por tu respuesta, ejecuta esa celda y luego esta.",
        "de": "⏳ {name}: noch nicht gelöst (nicht implementiert). Ersetze `...` bzw. `raise NotImplementedError` durch deine Lösung, führe jene Zelle aus und dann diese.",
        "hi-Latn": "⏳ {name}: abhi implement nahi hua. `...` ya `raise NotImplementedError` ki jagah apna answer likho, woh cell run karo, phir yeh wala.",
    },
    "common.not_answered_value": {
        "en": "⏳ {name}: not answered yet. Replace the `...` with your answer, run that cell, then this one.",
        "es": "⏳ {name}: todavía sin responder. Sustituye el `...` por tu respuesta, ejecuta esa celda y luego esta.",
        "de": "⏳ {name}: noch nicht beantwortet. Ersetze `...` durch deine Antwort, führe jene Zelle aus und dann diese.",
        "hi-Latn": "⏳ {name}: abhi answer nahi diya. `...` ki jagah apna answer likho, woh cell run karo, phir yeh wala.",
    },
    "common.wrong_shape_value": {
        "en": "expected {expected}, but got {got}.",
        "es": "se esperaba {expected}, pero llegó {got}.",
        "de": "Erwartet war {expected}, eingegeben hast du {got}.",
        "hi-Latn": "{expected} chahiye tha, lekin mila {got}.",
    },
    "common.wrong_entry_value": {
        "en": "the entry at [{index}] is wrong (you have {got}). No classic slip explains it: recompute that entry step by step.",
        "es": "la entrada [{index}] es incorrecta (tienes {got}). Ningún error clásico lo explica: recalcula esa entrada paso a paso.",
        "de": "Der Eintrag [{index}] ist falsch (bei dir {got}). Kein typischer Fehler erklärt das: rechne diesen Eintrag Schritt für Schritt nach.",
        "hi-Latn": "entry [{index}] galat hai (tumne {got} likha). Koi classic galti isko explain nahi karti: us entry ko step by step dobara calculate karo.",
    },
    "common.missing": {
        "en": "❓ `{name}` is not defined. Run the cell that defines it first (or check its spelling).",
        "es": "❓ `{name}` no está definido. Ejecuta primero la celda que lo define (o revisa cómo lo escribiste).",
        "de": "❓ `{name}` ist nicht definiert. Führe zuerst die Zelle aus, die es definiert (oder prüfe die Schreibweise).",
        "hi-Latn": "❓ `{name}` defined nahi hai. Pehle woh cell run karo jo ise define karta hai (ya spelling check karo).",
    },
    "common.raised": {
        "en": "💥 {name} raised {type} on the case {case}: {message}",
        "es": "💥 {name} lanzó {type} en el caso {case}: {message}",
        "de": "💥 {name} hat im Fall {case} {type} ausgelöst: {message}",
        "hi-Latn": "💥 {name} ne case {case} par {type} raise kiya: {message}",
    },
    "common.timeout": {
        "en": "⌛ {name} did not finish in time on the case {case} (an endless loop?).",
        "es": "⌛ {name} no terminó a tiempo en el caso {case} (¿un bucle infinito?).",
        "de": "⌛ {name} ist im Fall {case} nicht rechtzeitig fertig geworden (eine Endlosschleife?).",
        "hi-Latn": "⌛ {name} case {case} par time par khatam nahi hua (kahin infinite loop to nahi?).",
    },
    "common.wrong_shape": {
        "en": "for {case} expected {expected}, but got {got}.",
        "es": "para {case} se esperaba {expected}, pero llegó {got}.",
        "de": "Für {case} war {expected} erwartet, bekommen habe ich {got}.",
        "hi-Latn": "{case} ke liye {expected} chahiye tha, lekin mila {got}.",
    },
    "common.wrong_entry": {
        "en": "for {case} the entry at [{index}] is wrong (you have {got}). No classic slip explains it: recompute that entry step by step.",
        "es": "para {case} la entrada [{index}] es incorrecta (tienes {got}). Ningún error clásico lo explica: recalcula esa entrada paso a paso.",
        "de": "Für {case} ist der Eintrag [{index}] falsch (bei dir {got}). Kein typischer Fehler erklärt das: rechne diesen Eintrag Schritt für Schritt nach.",
        "hi-Latn": "{case} ke liye entry [{index}] galat hai (tumne {got} likha). Koi classic galti isko explain nahi karti: us entry ko step by step dobara calculate karo.",
    },
    "common.see_section": {
        "en": "(See chapter {section}.)",
        "es": "(Consulta el capítulo {section}.)",
        "de": "(Siehe Kapitel {section}.)",
        "hi-Latn": "(Chapter {section} dekho.)",
    },
    "common.points": {
        "en": "{points:g}/{max_points:g} points",
        "es": "{points:g}/{max_points:g} puntos",
        "de": "{points:g}/{max_points:g} Punkte",
        "hi-Latn": "{points:g}/{max_points:g} points",
    },
    "common.total": {
        "en": "Total for {lab}: {points:g}/{max_points:g} points.",
        "es": "Total de {lab}: {points:g}/{max_points:g} puntos.",
        "de": "Summe für {lab}: {points:g}/{max_points:g} Punkte.",
        "hi-Latn": "{lab} ka total: {points:g}/{max_points:g} points.",
    },
    "common.hand_in": {
        "en": "Save the notebook (Ctrl+S) and hand in this .ipynb file as it is; the grader re-runs it in a sandbox with extra cases.",
        "es": "Guarda el cuaderno (Ctrl+S) y entrega este archivo .ipynb tal cual; el corrector lo vuelve a ejecutar en un entorno aislado con casos adicionales.",
        "de": "Speichere das Notebook (Strg+S) und gib diese .ipynb-Datei unverändert ab; der Korrektor führt sie in einer Sandbox mit zusätzlichen Fällen erneut aus.",
        "hi-Latn": "Notebook save karo (Ctrl+S) aur yeh .ipynb file jaisi hai waisi submit karo; grader ise sandbox mein extra cases ke saath dobara run karega.",
    },
    "common.unknown_exercise": {
        "en": "There is no exercise called {name!r} in {lab}. Exercises: {known}.",
        "es": "No hay ningún ejercicio llamado {name!r} en {lab}. Ejercicios: {known}.",
        "de": "In {lab} gibt es keine Aufgabe namens {name!r}. Aufgaben: {known}.",
        "hi-Latn": "{lab} mein {name!r} naam ki koi exercise nahi hai. Exercises: {known}.",
    },
}

i18n.register(COMMON)
