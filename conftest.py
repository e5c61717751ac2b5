"""Root pytest configuration: labs are checked by nbval in lax mode.

`pytest --nbval` compares every stored output of chapters and solutions. Labs
are committed without outputs, so for them only "every cell runs without an
error" is checked, which is what `--nbval-lax` does; this hook applies it per
file so that one pytest run covers the whole book.
"""
from pathlib import Path

LABS = Path(__file__).parent / "labs"


def pytest_collectstart(collector):
    path = getattr(collector, "path", None)
    if path is not None and path.suffix == ".ipynb" and LABS in path.parents:
        collector.compare_outputs = False


def pytest_configure(config):
    """nbval's kernels: on IPC sockets, started again if they fail at start-up, forks of an interpreter that has
    imported torch (tests/warm_kernel.py)."""
    if not getattr(config.option, "nbval", False):
        return
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return  # the xdist controller runs no notebook
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("warm_kernel", Path(__file__).parent / "tests" / "warm_kernel.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["warm_kernel"] = module  # tests/test_warm_kernel.py imports the same module
    spec.loader.exec_module(module)
    module.use_ipc_transport()
    module.retry_kernel_start_up()
    module.install()
