"""The book's kernel (labbook.kernel) reports the language_info every built notebook stores, so JupyterLab does
not mark a notebook modified when its kernel starts (test_jupyterlab sees that in the browser)."""
import json

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from labbook.kernel import LANGUAGE_INFO


def test_the_project_kernel_runs_the_book_kernel():
    spec = KernelSpecManager().get_kernel_spec("causal-attention")
    assert spec.argv[spec.argv.index("-m") + 1] == "labbook.kernel", f"{spec.argv}: run `make setup`"


def test_the_book_kernel_reports_the_stored_language_info(tmp_path):
    # IPC, not TCP: kernels started in parallel by other tests cannot race this one for its ports
    kernel = KernelManager(kernel_name="causal-attention", transport="ipc", ip=str(tmp_path / "k"))
    kernel.start_kernel()
    try:
        client = kernel.client()
        client.start_channels()
        reply = client.kernel_info(reply=True, timeout=120)
        client.stop_channels()
    finally:
        kernel.shutdown_kernel(now=True)
    reported = reply["content"]["language_info"]
    assert reported == LANGUAGE_INFO, json.dumps(reported)
    # what IPython's own kernel says instead: the full version, which no committed notebook can know
    from ipykernel.ipkernel import IPythonKernel

    assert IPythonKernel.language_info["version"].startswith(LANGUAGE_INFO["version"] + ".")
    assert IPythonKernel.language_info != reported
