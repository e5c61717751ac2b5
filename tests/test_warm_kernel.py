"""The warm kernels nbval uses (tests/warm_kernel.py) behave as fresh kernels: empty namespace, the launcher's
folder and environment, interrupts delivered, and no kernel outliving its launcher."""
import contextlib
import os
import signal
import time

import pytest
from jupyter_client.manager import KernelManager
from nbval.kernel import NbvalKernelspecManager

import warm_kernel


def run(client, code, timeout=60):
    """What the cell printed (stdout), or the error's name."""
    msg_id = client.execute(code)
    out, error = [], None
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            error = content["ename"]
        elif kind == "status" and content["execution_state"] == "idle":
            return error or "".join(out)


@pytest.fixture(scope="module")
def manager_class():
    if os.environ.get("LABBOOK_COLD_KERNELS"):
        pytest.skip("LABBOOK_COLD_KERNELS is set: nbval uses the plain kernel")
    warm_kernel.install()  # a second call changes nothing: the root conftest may have done it already
    return NbvalKernelspecManager


@contextlib.contextmanager
def started(km, **options):
    """A client of the kernel `km` starts with `options`, shut down afterwards however the test ends."""
    km.start_kernel(**options)
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        yield client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.fixture
def kernel(manager_class, tmp_path):
    km = KernelManager(kernel_name=warm_kernel.KERNEL_NAME, kernel_spec_manager=manager_class())
    with started(km, cwd=str(tmp_path), env={**os.environ, "WARM_KERNEL_PROBE": "from-the-launcher"}) as client:
        yield km, client


def test_the_kernel_is_a_fork_of_the_zygote_and_starts_empty(kernel, tmp_path):
    km, client = kernel
    assert "launch" in km.kernel_spec.argv  # the warm path, not the plain kernel
    assert run(client, "print(torch)") == "NameError"  # loaded in the zygote, not bound in the notebook
    assert run(client, "import os, sys; print(os.getcwd()); print(os.environ['WARM_KERNEL_PROBE'])") == \
        f"{tmp_path}\nfrom-the-launcher\n"
    assert run(client, "import sys; print('torch' in sys.modules, any(p.endswith('tests') for p in sys.path))") == \
        "True False\n"
    pids = run(client, "import os; print(os.getpid(), os.getppid(), os.getpgid(0))").split()
    assert int(pids[0]) != km.provisioner.process.pid  # the launcher is not the kernel
    assert int(pids[2]) == int(pids[0])  # its own process group


def test_an_interrupt_reaches_the_kernel(kernel):
    km, client = kernel
    msg_id = client.execute("import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    print('stopped')")
    time.sleep(1.0)
    km.interrupt_kernel()
    out = []
    while True:
        msg = client.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    assert "".join(out) == "stopped\n"


def gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_killed_launcher_takes_its_kernel_along(kernel):
    km, client = kernel
    pid = int(run(client, "import os; print(os.getpid())"))
    os.kill(km.provisioner.process.pid, signal.SIGKILL)
    assert gone_within(pid, 10), f"kernel {pid} outlived its launcher"


def test_without_a_zygote_the_plain_kernel_starts(manager_class, tmp_path):
    spec = manager_class().get_kernel_spec(warm_kernel.KERNEL_NAME)
    argv = list(spec.argv)
    argv[argv.index("launch") + 1] = str(tmp_path / "nowhere" / "zygote")  # a folder that does not exist
    km = KernelManager(kernel_name=warm_kernel.KERNEL_NAME, kernel_spec_manager=manager_class())
    km.kernel_spec.argv = argv
    with started(km, cwd=str(tmp_path)) as client:
        pid = int(run(client, "import os; print(os.getpid())"))
        assert pid == km.provisioner.process.pid  # the launcher became the plain kernel (exec)


def test_stopping_the_zygote_stops_its_kernels(manager_class, tmp_path):
    zygote = warm_kernel.Zygote(preloaded=("ipykernel.kernelapp",))  # a light one: what is loaded does not matter
    km = KernelManager(kernel_name=warm_kernel.KERNEL_NAME, kernel_spec_manager=manager_class())
    plain = km.kernel_spec.argv[km.kernel_spec.argv.index("--") + 1:]
    km.kernel_spec.argv = zygote.argv(plain)
    try:
        with started(km, cwd=str(tmp_path)) as client:
            pid = int(run(client, "import os; print(os.getpid())"))
            zygote.stop()
            assert gone_within(pid, 10), f"kernel {pid} outlived its zygote"
    finally:
        zygote.stop()


# ---------------------------------------------------------------- kernels that start together
def test_nbval_kernels_use_unix_sockets_with_absolute_paths():
    from nbval import kernel as nbval_kernel

    warm_kernel.use_ipc_transport()
    first, second = (nbval_kernel.KernelManager(kernel_name="causal-attention") for _ in range(2))
    assert first.transport == second.transport == "ipc"
    assert os.path.isabs(first.ip) and first.ip != second.ip  # one kernel's sockets are no other's
    assert len(first.ip) + len("-65535") < 100  # a Unix socket's path holds about 107 bytes


def test_many_notebook_kernels_started_at_once_all_answer(manager_class, tmp_path):
    """The stress test: 3 rounds of 6 kernels started together through nbval's own start-up, each runs a cell."""
    import threading

    from nbval.kernel import RunningKernel

    warm_kernel.use_ipc_transport()
    rounds, at_once = 3, 6
    answers, losses = [], []

    def one(number):
        try:
            kernel = RunningKernel(warm_kernel.KERNEL_NAME, cwd=str(tmp_path), startup_timeout=120)
        except Exception as error:  # noqa: BLE001 - a lost kernel is what this test counts
            losses.append(f"kernel {number}: {type(error).__name__}: {error}")
            return
        try:
            answers.append(run(kernel.kc, f"print({number} * 7)"))
        except Exception as error:  # noqa: BLE001
            losses.append(f"kernel {number}: {type(error).__name__}: {error}")
        finally:
            kernel.stop()

    for round_number in range(rounds):
        threads = [threading.Thread(target=one, args=(round_number * at_once + n,)) for n in range(at_once)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
    assert losses == []
    assert sorted(answers) == sorted(f"{n * 7}\n" for n in range(rounds * at_once))


def test_a_kernel_that_fails_at_start_up_is_started_again(monkeypatch):
    from nbval import kernel as nbval_kernel

    calls = []

    def flaky(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "manager", "client"

    monkeypatch.setattr(nbval_kernel, "start_new_kernel", flaky)
    warm_kernel.retry_kernel_start_up()
    assert nbval_kernel.start_new_kernel(kernel_name="k", cwd="/x") == ("manager", "client")
    assert calls == [{"kernel_name": "k", "cwd": "/x"}] * 2


def test_a_kernel_that_always_fails_fails_the_notebook_after_three_tries(monkeypatch):
    from nbval import kernel as nbval_kernel

    calls = []

    def broken(**kwargs):
        calls.append(1)
        raise RuntimeError(f"attempt {len(calls)}: Kernel didn't respond")

    monkeypatch.setattr(nbval_kernel, "start_new_kernel", broken)
    warm_kernel.retry_kernel_start_up()
    with pytest.raises(RuntimeError, match="attempt 3:"):
        nbval_kernel.start_new_kernel(kernel_name="k")
    assert len(calls) == 3
