"""Output text of chapter 10 (review)."""

TEXTS = {
    "ch10.mask_title": {
        "en": "The causal mask for T = 4 in three conventions",
        "es": "La máscara causal para T = 4 en tres convenciones",
        "de": "Die kausale Maske für T = 4 in drei Konventionen",
        "hi-Latn": "T = 4 ka causal mask, teen conventions mein",
    },
    "ch10.additive": {
        "en": "additive M (added to the scores)",
        "es": "M aditiva (se suma a los scores)",
        "de": "additive Maske M (zu den Scores addiert)",
        "hi-Latn": "additive M (scores mein add hota hai)",
    },
    "ch10.bool_sdpa": {
        "en": "boolean, SDPA: 1 = may read",
        "es": "booleana, SDPA: 1 = puede leer",
        "de": "boolesch, SDPA: 1 = darf lesen",
        "hi-Latn": "boolean, SDPA: 1 = padh sakti hai",
    },
    "ch10.bool_mha": {
        "en": "boolean, nn.MultiheadAttention: 1 = blocked",
        "es": "booleana, nn.MultiheadAttention: 1 = bloqueada",
        "de": "boolesch, nn.MultiheadAttention: 1 = gesperrt",
        "hi-Latn": "boolean, nn.MultiheadAttention: 1 = blocked",
    },
    "ch10.row_additive": {
        "en": "additive mask, F.scaled_dot_product_attention",
        "es": "máscara aditiva, F.scaled_dot_product_attention",
        "de": "additive Maske, F.scaled_dot_product_attention",
        "hi-Latn": "additive mask, F.scaled_dot_product_attention",
    },
    "ch10.row_sdpa": {
        "en": "boolean attn_mask, F.scaled_dot_product_attention",
        "es": "attn_mask booleana, F.scaled_dot_product_attention",
        "de": "boolesche attn_mask, F.scaled_dot_product_attention",
        "hi-Latn": "boolean attn_mask, F.scaled_dot_product_attention",
    },
    "ch10.row_mha": {
        "en": "boolean attn_mask, nn.MultiheadAttention",
        "es": "attn_mask booleana, nn.MultiheadAttention",
        "de": "boolesche attn_mask, nn.MultiheadAttention",
        "hi-Latn": "boolean attn_mask, nn.MultiheadAttention",
    },
    "ch10.row_square": {
        "en": "nn.Transformer.generate_square_subsequent_mask",
        "es": "nn.Transformer.generate_square_subsequent_mask",
        "de": "nn.Transformer.generate_square_subsequent_mask",
        "hi-Latn": "nn.Transformer.generate_square_subsequent_mask",
    },
    "ch10.row_flex": {
        "en": "FlexAttention mask_mod (create_mask)",
        "es": "mask_mod de FlexAttention (create_mask)",
        "de": "FlexAttention-mask_mod (create_mask)",
        "hi-Latn": "FlexAttention ka mask_mod (create_mask)",
    },
    "ch10.col_allowed": {
        "en": "allowed entry (j ≤ i)",
        "es": "entrada permitida (j ≤ i)",
        "de": "erlaubter Eintrag (j ≤ i)",
        "hi-Latn": "allowed entry (j ≤ i)",
    },
    "ch10.col_blocked": {
        "en": "blocked entry (j > i)",
        "es": "entrada bloqueada (j > i)",
        "de": "gesperrter Eintrag (j > i)",
        "hi-Latn": "blocked entry (j > i)",
    },
    "ch10.col_agrees": {
        "en": "= causal attention (1 = yes)",
        "es": "= atención causal (1 = sí)",
        "de": "= kausale Attention (1 = ja)",
        "hi-Latn": "= causal attention (1 = haan)",
    },
    "ch10.fact_softmax_nan": {
        "en": "torch.softmax of a row of -inf is NaN:",
        "es": "torch.softmax de una fila de -inf es NaN:",
        "de": "torch.softmax einer Zeile aus -inf ist NaN:",
        "hi-Latn": "-inf wali row ka torch.softmax NaN hai:",
    },
    "ch10.fact_sdpa_zeros": {
        "en": "SDPA, query without any allowed key, output all zeros:",
        "es": "SDPA, query sin ninguna key permitida, salida toda ceros:",
        "de": "SDPA, Query ohne erlaubten Key, Ausgabe nur Nullen:",
        "hi-Latn": "SDPA, bina kisi allowed key wali query, output poora zero:",
    },
    "ch10.fact_finite_uniform": {
        "en": "softmax of a row of -1e9 (every key blocked by a finite value):",
        "es": "softmax de una fila de -1e9 (todas las keys bloqueadas con un valor finito):",
        "de": "Softmax einer Zeile aus -1e9 (jeder Key mit einem endlichen Wert gesperrt):",
        "hi-Latn": "-1e9 wali row ka softmax (har key finite value se blocked):",
    },
    "ch10.fact_fp16": {
        "en": "float16, masked_fill with -1e9:",
        "es": "float16, masked_fill con -1e9:",
        "de": "float16, masked_fill mit -1e9:",
        "hi-Latn": "float16, -1e9 ke saath masked_fill:",
    },
    "ch10.fact_top_left": {
        "en": "1 query, 4 keys, is_causal=True: the query reads key 0 only:",
        "es": "1 query, 4 keys, is_causal=True: la query solo lee la key 0:",
        "de": "1 Query, 4 Keys, is_causal=True: die Query liest nur Key 0:",
        "hi-Latn": "1 query, 4 keys, is_causal=True: query sirf key 0 padhti hai:",
    },
    "ch10.fact_bottom_right": {
        "en": "with causal_lower_right it reads all 4 keys, like the last row of full causal attention:",
        "es": "con causal_lower_right lee las 4 keys, como la última fila de la atención causal completa:",
        "de": "mit causal_lower_right liest sie alle 4 Keys, wie die letzte Zeile der vollen kausalen Attention:",
        "hi-Latn": "causal_lower_right ke saath chaaron keys padhti hai, poori causal attention ki last row jaisa:",
    },
    "ch10.fact_dropout": {
        "en": "module in eval(), dropout_p=0.5 passed to SDPA, two calls differ:",
        "es": "módulo en eval(), dropout_p=0.5 pasado a SDPA, dos llamadas difieren:",
        "de": "Modul in eval(), dropout_p=0.5 an SDPA übergeben, zwei Aufrufe unterscheiden sich:",
        "hi-Latn": "module eval() mein, SDPA ko dropout_p=0.5 diya, do calls alag aate hain:",
    },
}
