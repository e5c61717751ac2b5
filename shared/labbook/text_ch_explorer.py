"""Text of the mask explorer (labbook.explorer), in the notebook's language.

Keys start with `explorer.`. Placeholders in braces ({q}, {token}...) are filled
by the widget's JavaScript. The two example sentences are split on spaces into
tokens; each has at least 17 tokens, so that the target of the last query of a
16-token grid exists.
"""

TEXTS = {
    "explorer.title": {
        "en": "Mask explorer", "es": "Explorador de máscaras", "de": "Masken-Explorer",
        "hi-Latn": "Mask explorer"},
    "explorer.structure_note": {
        "en": "Structure view: a marked cell says the query may read that key, not that the model weights it strongly.",
        "es": "Vista de estructura: una celda marcada dice que la query puede leer esa key, no que el modelo le dé mucho peso.",
        "de": "Strukturansicht: Eine markierte Zelle heißt, dass die Query diesen Key lesen darf, nicht dass das Modell ihn stark gewichtet.",
        "hi-Latn": "Structure view: marked cell ka matlab hai query us key ko padh sakti hai, yeh nahi ki model use zyada weight deta hai."},
    "explorer.static_note": {
        "en": "Static view of the starting state. Run this cell (or open the HTML edition of the book) to make it interactive.",
        "es": "Vista estática del estado inicial. Ejecuta esta celda (o abre la edición HTML del libro) para que sea interactiva.",
        "de": "Statische Ansicht des Anfangszustands. Führe diese Zelle aus (oder öffne die HTML-Ausgabe des Buchs), dann wird sie interaktiv.",
        "hi-Latn": "Yeh starting state ka static view hai. Interactive banane ke liye yeh cell run karo (ya book ka HTML edition kholo)."},
    "explorer.plain": {
        "en": "Mask explorer (T = {T}): interactive in JupyterLab after running the cell, and in the HTML edition.",
        "es": "Explorador de máscaras (T = {T}): interactivo en JupyterLab tras ejecutar la celda, y en la edición HTML.",
        "de": "Masken-Explorer (T = {T}): interaktiv in JupyterLab, nachdem die Zelle gelaufen ist, und in der HTML-Ausgabe.",
        "hi-Latn": "Mask explorer (T = {T}): JupyterLab mein cell run karne ke baad interactive hai, aur HTML edition mein bhi."},
    "explorer.views": {
        "en": "Views", "es": "Vistas", "de": "Ansichten", "hi-Latn": "Views"},
    "explorer.view_mask": {
        "en": "Mask of the sentence", "es": "Máscara de la frase", "de": "Maske des Satzes",
        "hi-Latn": "Sentence ka mask"},
    "explorer.view_worked": {
        "en": "Worked example (T = 3)", "es": "Ejemplo resuelto (T = 3)", "de": "Rechenbeispiel (T = 3)",
        "hi-Latn": "Worked example (T = 3)"},
    "explorer.length": {
        "en": "Length T (2 to 16)", "es": "Longitud T (2 a 16)", "de": "Länge T (2 bis 16)",
        "hi-Latn": "Length T (2 se 16)"},
    "explorer.causal": {
        "en": "causal mask on", "es": "máscara causal activada", "de": "kausale Maske an",
        "hi-Latn": "causal mask on"},
    "explorer.sequence": {
        "en": "Sequence shown", "es": "Secuencia mostrada", "de": "Gezeigte Sequenz",
        "hi-Latn": "Dikhayi gayi sequence"},
    "explorer.seq": {
        "en": "sequence {n}", "es": "secuencia {n}", "de": "Sequenz {n}", "hi-Latn": "sequence {n}"},
    "explorer.padding": {
        "en": "Padding of sequence {n}", "es": "Padding de la secuencia {n}", "de": "Padding von Sequenz {n}",
        "hi-Latn": "Sequence {n} ki padding"},
    "explorer.window": {
        "en": "Sliding window W (0 = off)", "es": "Ventana deslizante W (0 = sin ventana)",
        "de": "Gleitendes Fenster W (0 = aus)", "hi-Latn": "Sliding window W (0 = off)"},
    "explorer.offset": {
        "en": "KV-cache offset (cached tokens)", "es": "Desplazamiento de la caché KV (tokens en caché)",
        "de": "KV-Cache-Versatz (Tokens im Cache)", "hi-Latn": "KV cache offset (cache mein tokens)"},
    "explorer.align": {
        "en": "Alignment of the triangle", "es": "Alineación del triángulo", "de": "Ausrichtung des Dreiecks",
        "hi-Latn": "Triangle ka alignment"},
    "explorer.bottom_right": {
        "en": "bottom-right (causal_lower_right)", "es": "abajo a la derecha (causal_lower_right)",
        "de": "unten rechts (causal_lower_right)", "hi-Latn": "bottom-right (causal_lower_right)"},
    "explorer.top_left": {
        "en": "top-left (is_causal=True)", "es": "arriba a la izquierda (is_causal=True)",
        "de": "oben links (is_causal=True)", "hi-Latn": "top-left (is_causal=True)"},
    "explorer.corner": {
        "en": "query ↓ key →", "es": "query ↓ key →", "de": "Query ↓ Key →", "hi-Latn": "query ↓ key →"},
    "explorer.caption": {
        "en": "Which keys each query may read (rows: queries, columns: keys)",
        "es": "Qué keys puede leer cada query (filas: queries, columnas: keys)",
        "de": "Welche Keys jede Query lesen darf (Zeilen: Queries, Spalten: Keys)",
        "hi-Latn": "Har query kaunsi keys padh sakti hai (rows: queries, columns: keys)"},
    "explorer.pad": {"en": "<pad>", "es": "<pad>", "de": "<pad>", "hi-Latn": "<pad>"},
    "explorer.legend": {"en": "Legend", "es": "Leyenda", "de": "Legende", "hi-Latn": "Legend"},
    "explorer.legend_read": {
        "en": "may read", "es": "puede leer", "de": "darf lesen", "hi-Latn": "padh sakti hai"},
    "explorer.legend_future": {
        "en": "blocked: future", "es": "bloqueada: futuro", "de": "gesperrt: Zukunft", "hi-Latn": "blocked: future"},
    "explorer.legend_pad": {
        "en": "blocked: padding", "es": "bloqueada: padding", "de": "gesperrt: Padding", "hi-Latn": "blocked: padding"},
    "explorer.legend_window": {
        "en": "blocked: outside the window", "es": "bloqueada: fuera de la ventana",
        "de": "gesperrt: außerhalb des Fensters", "hi-Latn": "blocked: window ke bahar"},
    "explorer.legend_align": {
        "en": "blocked: hidden by top-left alignment", "es": "bloqueada: oculta por la alineación arriba a la izquierda",
        "de": "gesperrt: von der Ausrichtung oben links versteckt", "hi-Latn": "blocked: top-left alignment ne chhupa di"},
    "explorer.legend_leak": {
        "en": "leak: a future key is readable", "es": "fuga: se puede leer una key futura",
        "de": "Leck: ein zukünftiger Key ist lesbar", "hi-Latn": "leak: future key padhi ja sakti hai"},
    "explorer.legend_target": {
        "en": "the target the query must predict", "es": "el objetivo que la query debe predecir",
        "de": "das Ziel, das die Query vorhersagen muss", "hi-Latn": "target jo query ko predict karna hai"},
    "explorer.pick": {
        "en": "Click a query row (or focus its button and press Enter) to see which keys it may read.",
        "es": "Haz clic en una fila de query (o pon el foco en su botón y pulsa Intro) para ver qué keys puede leer.",
        "de": "Klicke auf eine Query-Zeile (oder fokussiere ihren Knopf und drücke Enter), um zu sehen, welche Keys sie lesen darf.",
        "hi-Latn": "Kisi query row par click karo (ya uske button par focus karke Enter dabao), dekho woh kaunsi keys padh sakti hai."},
    "explorer.status_row": {
        "en": "Query {q} («{token}») may read {n} key(s): {keys}.",
        "es": "La query {q} («{token}») puede leer {n} key(s): {keys}.",
        "de": "Query {q} („{token}“) darf {n} Key(s) lesen: {keys}.",
        "hi-Latn": "Query {q} («{token}») {n} key(s) padh sakti hai: {keys}."},
    "explorer.status_target": {
        "en": "Its target, the token it must predict, is «{target}» at position {pos}.",
        "es": "Su objetivo, el token que debe predecir, es «{target}», en la posición {pos}.",
        "de": "Ihr Ziel, das Token, das sie vorhersagen muss, ist „{target}“ an Position {pos}.",
        "hi-Latn": "Iska target, yaani jo token predict karna hai, «{target}» hai, position {pos} par."},
    "explorer.status_target_outside": {
        "en": "Its target is «{target}», the next token after this sequence.",
        "es": "Su objetivo es «{target}», el token que sigue a esta secuencia.",
        "de": "Ihr Ziel ist „{target}“, das nächste Token nach dieser Sequenz.",
        "hi-Latn": "Iska target «{target}» hai, is sequence ke baad wala token."},
    "explorer.status_pad_query": {
        "en": "Query {q} is a padding position: it has no target and the loss ignores its output.",
        "es": "La query {q} es una posición de padding: no tiene objetivo y la pérdida ignora su salida.",
        "de": "Query {q} ist eine Padding-Position: Sie hat kein Ziel, und der Loss ignoriert ihre Ausgabe.",
        "hi-Latn": "Query {q} padding position hai: iska koi target nahi, loss iska output ignore karta hai."},
    "explorer.status_leak": {
        "en": "Leak! It can read {n} future key(s), its own target among them: it could copy the answer.",
        "es": "¡Fuga! Puede leer {n} key(s) del futuro, entre ellas su propio objetivo: podría copiar la respuesta.",
        "de": "Leck! Sie kann {n} zukünftige(n) Key(s) lesen, darunter ihr eigenes Ziel: Sie könnte die Antwort abschreiben.",
        "hi-Latn": "Leak! Yeh {n} future key(s) padh sakti hai, apna target bhi: answer copy kar sakti hai."},
    "explorer.status_empty": {
        "en": "It may read no key at all: its softmax row is NaN.",
        "es": "No puede leer ninguna key: su fila del softmax es NaN.",
        "de": "Sie darf gar keinen Key lesen: Ihre Softmax-Zeile ist NaN.",
        "hi-Latn": "Yeh koi bhi key nahi padh sakti: iski softmax row NaN hai."},
    "explorer.none": {"en": "none", "es": "ninguna", "de": "keinen", "hi-Latn": "koi nahi"},
    "explorer.worked_note": {
        "en": "Q and K of the worked example (chapter 03), scaled scores QKᵀ/√d_k plus the mask set above (T is 3 here).",
        "es": "Q y K del ejemplo resuelto (capítulo 03): scores escalados QKᵀ/√d_k más la máscara elegida arriba (aquí T es 3).",
        "de": "Q und K aus dem Rechenbeispiel (Kapitel 03): skalierte Scores QKᵀ/√d_k plus die oben eingestellte Maske (hier ist T = 3).",
        "hi-Latn": "Worked example (chapter 03) ke Q aur K: scaled scores QKᵀ/√d_k plus upar set kiya hua mask (yahan T = 3)."},
    "explorer.worked_scores": {
        "en": "Masked scores QKᵀ/√d_k + M", "es": "Scores enmascarados QKᵀ/√d_k + M",
        "de": "Maskierte Scores QKᵀ/√d_k + M", "hi-Latn": "Masked scores QKᵀ/√d_k + M"},
    "explorer.worked_weights": {
        "en": "Attention weights (row-wise softmax)", "es": "Pesos de atención (softmax por filas)",
        "de": "Attention-Gewichte (Softmax je Zeile)", "hi-Latn": "Attention weights (row-wise softmax)"},
    "explorer.worked_leak": {
        "en": "Leak: weight on a future key.", "es": "Fuga: peso sobre una key futura.",
        "de": "Leck: Gewicht auf einem zukünftigen Key.", "hi-Latn": "Leak: future key par weight."},
    "explorer.worked_nan": {
        "en": "A row with every key blocked has no valid softmax: NaN.",
        "es": "Una fila con todas las keys bloqueadas no tiene softmax válido: NaN.",
        "de": "Eine Zeile, in der jeder Key gesperrt ist, hat keinen gültigen Softmax: NaN.",
        "hi-Latn": "Jis row mein har key blocked hai, uska softmax valid nahi: NaN."},
    "explorer.sentence1": {
        "en": "The cat sat on the mat because it was tired after a long day in the sun .",
        "es": "El gato se sentó en la alfombra porque estaba cansado después de un largo día al sol .",
        "de": "Die Katze saß auf der Matte , weil sie nach einem langen Tag in der Sonne müde war .",
        "hi-Latn": "Billi chatai par baithi thi kyunki lambe din ke baad woh dhoop mein bahut thak gayi thi ."},
    "explorer.sentence2": {
        "en": "Students read the whole chapter carefully before they try the lab on their own at home .",
        "es": "Los estudiantes leen todo el capítulo con calma antes de intentar el lab solos en casa .",
        "de": "Die Studierenden lesen das ganze Kapitel in Ruhe , bevor sie das Lab allein zu Hause lösen .",
        "hi-Latn": "Students lab try karne se pehle poora chapter aaram se padhte hain aur phir ghar par code likhte hain ."},
}
