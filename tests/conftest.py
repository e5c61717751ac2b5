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
