"""Students' tests (lab02's perturbation_test and jacobian_leaks, lab03's prefix_test) written every way an
honest student writes them: each must keep full marks when the functions it probes run in the grader.

The variants are the reference tests of tests/test_lab02.py and tests/test_lab03.py and the correct
alternatives of the expert review (technical-2 section (c)): exact equality, one batched call, float64,
autograd.functional.jacobian (looped and vectorized), torch.func.jacrev and jacfwd, a random cotangent per
position, .backward() per row, torch.func.vmap, the cut-style prefix test. Each value is a cell's source.
"""
from __future__ import annotations

IMPORTS = "import math\nimport torch\nimport torch.nn.functional as F\n"

PERTURBATION = {
    "reference": '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    if not torch.isfinite(Y).all():
        return False
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        Y2 = attn_fn(X2)
        if not torch.isfinite(Y2).all() or not torch.allclose(Y[:p], Y2[:p], atol=1e-5, rtol=0):
            return False
    return True
''',
    "exact": '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    for p in range(1, T):
        Xp = X.clone(); Xp[p] = torch.randn(d, generator=g)
        if not torch.equal(attn_fn(Xp)[:p], Y[:p]):
            return False
    return True
''',
    "batched": '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Xs = X.repeat(T, 1, 1)                      # (T, T, d): copy p has row p replaced
    Xs[torch.arange(T), torch.arange(T)] = torch.randn(T, d, generator=g)
    Y, Ys = attn_fn(X), attn_fn(Xs)             # one batched call
    before = torch.arange(T)[None, :] < torch.arange(T)[:, None]   # (T, T): position t < p
    diff = (Ys - Y).abs().amax(-1)              # (T, T): copy p, position t
    return bool(torch.isfinite(Y).all()) and not bool((diff[before] > 1e-5).any())
''',
    "thorough": '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    for p in range(1, T):
        for _ in range(5):
            X = torch.randn(T, d, generator=g)
            X2 = X.clone()
            X2[p] = torch.randn(d, generator=g)
            Y, Y2 = attn_fn(X), attn_fn(X2)
            if not torch.isfinite(Y).all() or not torch.allclose(Y[:p], Y2[:p], atol=1e-5):
                return False
    return True
''',
    "float64_vmap": '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g, dtype=torch.float64)
    copies = []
    for p in range(1, T):
        Xp = X.clone()
        Xp[p] = torch.randn(d, generator=g, dtype=torch.float64)
        copies.append(Xp)
    Y = attn_fn(X)
    Ys = torch.func.vmap(attn_fn)(torch.stack(copies))   # (T - 1, T, d)
    if not torch.isfinite(Y).all():
        return False
    return all(torch.allclose(Ys[p - 1][:p], Y[:p], atol=1e-9) for p in range(1, T))
''',
}

JACOBIAN = {
    "reference": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
    J = torch.autograd.functional.jacobian(attn_fn, X)  # (T, d, T, d)
    return J.abs().amax(dim=(1, 3)) > 0
''',
    "jacrev_float64": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, dtype=torch.float64)
    J = torch.func.jacrev(attn_fn)(X)
    return (J != 0).any(dim=3).any(dim=1)
''',
    "cotangent_per_position": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, requires_grad=True)
    out = attn_fn(X)
    rows = []
    for i in range(T):
        g, = torch.autograd.grad(out[i], X, torch.randn(d), retain_graph=True)
        rows.append(g.abs().sum(-1) > 0)
    return torch.stack(rows)
''',
    "jacfwd": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
    return torch.func.jacfwd(attn_fn)(X).ne(0).any(dim=3).any(dim=1)  # (T, T)
''',
    "vectorized_leaks_only": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
    J = torch.autograd.functional.jacobian(attn_fn, X, vectorize=True)
    return (J.abs().amax(dim=(1, 3)) > 0).triu(1)  # the leaks alone, as the name suggests
''',
    "backward_per_row": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    rows = []
    for i in range(T):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(1)).requires_grad_()
        attn_fn(X)[i].sum().backward()
        rows.append(X.grad.abs().sum(dim=-1) > 0)
    return torch.stack(rows)
''',
    "chapter07_sum": '''
def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d)
    J = torch.autograd.functional.jacobian(attn_fn, X)
    return J.abs().sum(dim=(1, 3)) > 1e-6
''',
}

# notebooks of lab02: (perturbation variant, jacobian variant), every variant at least once
LAB02 = {
    "h_reference": ("reference", "reference"),
    "h_exact": ("exact", "jacrev_float64"),
    "h_batched": ("batched", "cotangent_per_position"),
    "h_thorough": ("thorough", "jacfwd"),
    "h_float64_vmap": ("float64_vmap", "vectorized_leaks_only"),
    "h_rows": ("reference", "backward_per_row"),
    "h_chapter07": ("exact", "chapter07_sum"),
}

PREFIX = {
    "reference": '''
def prefix_test(model_fn, vocab_size, T=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)  # (B, T)
    with torch.no_grad():
        base = model_fn(ids)  # (B, T, vocab)
        for t in range(T - 1):
            changed = ids.clone()
            shift = torch.randint(1, vocab_size, (2, T - t - 1), generator=g)
            changed[:, t + 1:] = (ids[:, t + 1:] + shift) % vocab_size  # every token after t changes
            out = model_fn(changed)
            if not torch.allclose(out[:, : t + 1], base[:, : t + 1], atol=1e-5):
                return False
    return True
''',
    "cut": '''
def prefix_test(model_fn, vocab_size, T=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab_size, (2, T), generator=g)
    with torch.no_grad():
        full = model_fn(ids)
        for t in range(T - 1):
            if not torch.allclose(model_fn(ids[:, :t + 1]), full[:, :t + 1], atol=1e-5):
                return False
    return True
''',
    "lists": '''
def prefix_test(model_fn, vocab_size, T=8, seed=0):
    import random
    rng = random.Random(seed)
    ids = [[rng.randrange(vocab_size) for _ in range(T)]]  # plain lists, as a student may pass them
    base = model_fn(ids)
    for t in range(T - 1):
        changed = [row[:t + 1] + [(v + 1) % vocab_size for v in row[t + 1:]] for row in ids]
        if not torch.allclose(model_fn(changed)[:, :t + 1], base[:, :t + 1], atol=1e-5):
            return False
    return True
''',
}
