"""The pip pins, the lock and environment.yml describe one environment."""
import re

import yaml

from labbook.notebooks import ROOT

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)$")


def pins(lines):
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        match = PIN.match(line)
        assert match, f"not pinned exactly: {line!r}"
        found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def requirements():
    return pins((ROOT / "requirements.txt").read_text().splitlines())


def environment_pip_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python=")]
    assert python == ["python=3.11"]
    return pins(pip_section)


def test_every_requirement_is_pinned_and_torch_is_the_cpu_pin():
    found = requirements()
    assert found["torch"] == "2.13.0"
    for name in ("numpy", "matplotlib", "jupyterlab", "nbval", "jupytext", "pytest"):
        assert name in found


def test_environment_yml_matches_requirements():
    assert environment_pip_pins() == requirements()


def test_lock_agrees_with_requirements():
    lock = pins((ROOT / "requirements-lock.txt").read_text().splitlines())
    for name, version in requirements().items():
        assert lock.get(name) == version, f"{name}: requirements {version}, lock {lock.get(name)}"


def test_pins_helper_rejects_a_range():
    import pytest

    with pytest.raises(AssertionError):
        pins(["torch>=2.13"])
