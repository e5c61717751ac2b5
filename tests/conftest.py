import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The tests check the tree they live in, even with an interpreter whose
# editable install points at another checkout.
os.environ["LABBOOK_ROOT"] = str(ROOT)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def one_torch_thread():
    """Tensors of a few dozen numbers: a second thread only waits for CPU on a busy machine (20 ms become 400)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
