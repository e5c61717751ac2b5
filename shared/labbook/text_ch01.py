"""Output text of chapter 01 (why mask): example sentences, the training text, figure and table labels."""

TEXTS = {
    # The sentence of the "capital of France" example: six words, the answer last.
    # Hinglish keeps the English sentence, as seed 000 does.
    "ch01.sentence": {"en": "The capital of France is Paris", "es": "La capital de Francia es París",
                      "de": "Die Hauptstadt von Frankreich ist Paris",
                      "hi-Latn": "The capital of France is Paris"},
    "ch01.reads": {"en": "reads", "es": "lee", "de": "liest", "hi-Latn": "padh sakti hai"},
    "ch01.predicts": {"en": "must predict", "es": "debe predecir", "de": "soll vorhersagen",
                      "hi-Latn": "aur target hai"},
    "ch01.position": {"en": "position", "es": "posición", "de": "Position", "hi-Latn": "position"},
    "ch01.with_mask": {"en": "with mask", "es": "con máscara", "de": "mit Maske", "hi-Latn": "mask ke saath"},
    "ch01.without_mask": {"en": "without mask", "es": "sin máscara", "de": "ohne Maske",
                          "hi-Latn": "mask ke bina"},
    "ch01.row_of": {"en": "attention weights of the row of", "es": "pesos de atención de la fila de",
                    "de": "Attention-Gewichte der Zeile von", "hi-Latn": "attention weights, row:"},
    "ch01.heat_masked": {"en": "Weights with the causal mask", "es": "Pesos con la máscara causal",
                         "de": "Gewichte mit kausaler Maske", "hi-Latn": "Causal mask ke saath weights"},
    "ch01.heat_unmasked": {"en": "Weights without a mask", "es": "Pesos sin máscara",
                           "de": "Gewichte ohne Maske", "hi-Latn": "Bina mask ke weights"},
    "ch01.other_city": {"en": "Rome", "es": "Roma", "de": "Rom", "hi-Latn": "Rome"},
    "ch01.answer_swapped": {"en": "last word replaced by", "es": "última palabra sustituida por",
                            "de": "letztes Wort ersetzt durch", "hi-Latn": "aakhri word badal kar"},
    "ch01.row_unchanged": {"en": "row unchanged:", "es": "fila sin cambios:", "de": "Zeile unverändert:",
                           "hi-Latn": "row same rahi:"},
    "ch01.largest_change": {"en": "largest change of a weight:", "es": "mayor cambio de un peso:",
                            "de": "größte Änderung eines Gewichts:", "hi-Latn": "kisi weight ka sabse bada change:"},
    # The training text of the live demonstration (lower case keeps the vocabulary small).
    "ch01.text": {
        "en": ("once upon a time a small robot lived by the sea. every morning it walked along the beach and "
               "counted the waves. one day it found a bottle with a letter inside. the letter said: the next word "
               "is always a surprise. the robot read it again and again, but it could not guess what came next. "
               "so it learned to read one word at a time, and it never peeked at the end of the letter. "),
        "es": ("había una vez un pequeño robot que vivía junto al mar. cada mañana caminaba por la playa y "
               "contaba las olas. un día encontró una botella con una carta dentro. la carta decía: la palabra "
               "siguiente siempre es una sorpresa. el robot la leyó una y otra vez, pero no podía adivinar lo que "
               "venía después. así aprendió a leer palabra por palabra, y nunca miró el final de la carta. "),
        "de": ("es war einmal ein kleiner roboter, der am meer wohnte. jeden morgen ging er am strand entlang und "
               "zählte die wellen. eines tages fand er eine flasche mit einem brief darin. im brief stand: das "
               "nächste wort ist immer eine überraschung. der roboter las ihn wieder und wieder, aber er konnte "
               "nicht erraten, was als nächstes kam. also lernte er, wort für wort zu lesen, und er schaute nie "
               "auf das ende des briefes. "),
        "hi-Latn": ("ek chhota sa robot samundar ke kinare rehta tha. har subah woh beach par chalta aur lehrein "
                    "ginta tha. ek din use ek bottle mili, jiske andar ek letter tha. letter mein likha tha: agla "
                    "word hamesha ek surprise hota hai. robot ne use baar baar padha, lekin woh guess nahi kar paya "
                    "ki aage kya aayega. isliye usne ek ek word karke padhna seekha, aur letter ka end kabhi nahi "
                    "dekha. "),
    },
    "ch01.prompt": {"en": "the robot ", "es": "el robot ", "de": "der roboter ", "hi-Latn": "robot ne "},
    "ch01.characters": {"en": "characters of text", "es": "caracteres de texto", "de": "Zeichen Text",
                        "hi-Latn": "characters ka text"},
    "ch01.vocabulary": {"en": "distinct characters (vocabulary)", "es": "caracteres distintos (vocabulario)",
                        "de": "verschiedene Zeichen (Vokabular)", "hi-Latn": "alag characters (vocabulary)"},
    "ch01.uniform_loss": {"en": "loss of a uniform guess, ln V =", "es": "pérdida de adivinar al azar, ln V =",
                          "de": "Loss bei gleichverteiltem Raten, ln V =",
                          "hi-Latn": "uniform guess ka loss, ln V ="},
    "ch01.parameters": {"en": "parameters per model", "es": "parámetros por modelo", "de": "Parameter pro Modell",
                        "hi-Latn": "parameters har model mein"},
    "ch01.curves_title": {"en": "Training loss of the same model with and without the causal mask",
                          "es": "Pérdida de entrenamiento del mismo modelo con y sin máscara causal",
                          "de": "Trainings-Loss desselben Modells mit und ohne kausale Maske",
                          "hi-Latn": "Same model ka training loss, causal mask ke saath aur bina"},
    "ch01.step": {"en": "training step", "es": "paso de entrenamiento", "de": "Trainingsschritt",
                  "hi-Latn": "training step"},
    "ch01.loss_axis": {"en": "cross-entropy loss (log scale)", "es": "pérdida de entropía cruzada (escala log.)",
                       "de": "Kreuzentropie-Loss (log. Skala)", "hi-Latn": "cross-entropy loss (log scale)"},
    "ch01.uniform": {"en": "uniform guess (ln V)", "es": "adivinar al azar (ln V)", "de": "Raten (ln V)",
                     "hi-Latn": "uniform guess (ln V)"},
    "ch01.train_loss": {"en": "train loss", "es": "pérdida entren.", "de": "Loss Training",
                        "hi-Latn": "train loss"},
    "ch01.infer_loss": {"en": "inference loss", "es": "pérdida inferencia", "de": "Loss Inferenz",
                        "hi-Latn": "inference loss"},
    "ch01.train_acc": {"en": "train accuracy", "es": "acierto entren.", "de": "Trefferquote Training",
                       "hi-Latn": "train accuracy"},
    "ch01.infer_acc": {"en": "inference accuracy", "es": "acierto inferencia", "de": "Trefferquote Inferenz",
                       "hi-Latn": "inference accuracy"},
    "ch01.ratio": {"en": "masked loss / unmasked loss =", "es": "pérdida con máscara / sin máscara =",
                   "de": "Loss mit Maske / ohne Maske =", "hi-Latn": "mask wala loss / bina mask wala loss ="},
    "ch01.same_loss": {"en": "with mask, training loss = inference loss:",
                       "es": "con máscara, pérdida de entrenamiento = pérdida de inferencia:",
                       "de": "mit Maske: Loss Training = Loss Inferenz:",
                       "hi-Latn": "mask ke saath, training loss = inference loss:"},
    "ch01.worse_than_uniform": {"en": "without mask, inference loss > ln V:",
                                "es": "sin máscara, pérdida de inferencia > ln V:",
                                "de": "ohne Maske: Loss Inferenz > ln V:",
                                "hi-Latn": "bina mask, inference loss > ln V:"},
    "ch01.acc_but_last": {"en": "without mask, training accuracy at positions 0 to 22 (lowest):",
                          "es": "sin máscara, acierto de entrenamiento en las posiciones 0 a 22 (el más bajo):",
                          "de": "ohne Maske, Trefferquote im Training an den Positionen 0 bis 22 (niedrigste):",
                          "hi-Latn": "bina mask, positions 0 se 22 par training accuracy (sabse kam):"},
    "ch01.acc_last": {"en": "without mask, training accuracy at the last position, 23:",
                      "es": "sin máscara, acierto de entrenamiento en la última posición, la 23:",
                      "de": "ohne Maske, Trefferquote im Training an der letzten Position, 23:",
                      "hi-Latn": "bina mask, aakhri position 23 par training accuracy:"},
}
