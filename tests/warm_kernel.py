"""Warm kernels for nbval: each notebook's kernel is a fork of an interpreter that has already imported torch.

nbval starts a fresh kernel for every notebook it checks, and `import torch`
alone costs about 3 s of CPU: over the book's ~100 notebooks, minutes of the
suite. So each pytest process that runs notebooks keeps one *zygote*, a Python
process that has imported torch and ipykernel and then only waits. A kernel
is a fork of it, made for one notebook:

- it runs in the launcher's working folder, with the launcher's environment
  and standard streams, in its own process group; nothing has run in it but
  imports, so the notebook starts from an empty namespace (a cell that forgets
  `import torch` still fails: the module is loaded, the name is not bound);
- the launcher (the process jupyter_client started and watches) forwards every
  signal to it and exits with its status; when the launcher dies, the zygote
  kills the kernel.

Only nbval's kernels are warm (its kernel-spec lookup is patched); the build,
JupyterLab and every subprocess use the plain kernel. If the zygote cannot be
reached the launcher runs the plain kernel instead. LABBOOK_COLD_KERNELS=1
turns the whole thing off. Warm or cold, nbval's kernels use IPC sockets, not
TCP ports (use_ipc_transport says why), and a kernel that fails at start-up is
started again (retry_kernel_start_up).

    python tests/warm_kernel.py serve SOCKET MODULE...
    python -S tests/warm_kernel.py launch SOCKET -- PLAIN KERNEL ARGV...
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

KERNEL_NAME = "causal-attention"
# What the notebooks' first cells pay for: torch in every one, transformers in chapter 11 and lab05. Not
# matplotlib: it reads the backend from the environment at import, and the kernel sets that later.
PRELOADED = ("torch", "ipykernel.kernelapp", "transformers.data.data_collator", "transformers.generation.utils",
             "transformers.masking_utils")
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
CONNECT_WAIT = 120.0  # seconds a launcher waits for a zygote that is still importing


# ---------------------------------------------------------------- the zygote
def serve(path: str, preloaded: tuple[str, ...] = PRELOADED) -> None:
    import warnings

    for module in preloaded:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # transformers warns about optional packages; a notebook shows its own
            try:
                __import__(module)
            except ImportError:
                pass  # that notebook pays for its own import
    parent = os.getppid()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))  # Zygote.stop: end the loop, kill the kernels
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # launchers see the socket only once it listens
    server.listen(16)
    launchers: dict[socket.socket, int] = {}  # connection -> kernel pid
    kernels: dict[int, socket.socket] = {}
    while os.getppid() == parent and not stopping:  # the pytest process that started us is gone: so are we
        try:
            ready, _, _ = select.select([server, *launchers], [], [], 0.2)
        except InterruptedError:
            continue
        for conn in ready:
            if conn is server:
                _fork_kernel(server, launchers, kernels)
            elif not conn.recv(16):  # the launcher died (SIGKILL from jupyter_client): its kernel follows
                _kill(launchers.pop(conn))
        _reap(launchers, kernels)
    for pid in kernels:
        _kill(pid)


def _fork_kernel(server, launchers, kernels) -> None:
    conn, _ = server.accept()
    try:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(message)
    except (OSError, ValueError):
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        server.close()
        for other in launchers:
            other.close()
        conn.close()
        _become_kernel(request, fds)  # never returns
    for fd in fds:
        os.close(fd)
    launchers[conn] = pid
    kernels[pid] = conn
    conn.send(json.dumps({"pid": pid}).encode())


def _become_kernel(request: dict, fds: list[int]) -> None:
    code = 1
    try:
        _die_with_parent()
        os.setpgid(0, 0)
        for number, fd in enumerate(fds):
            os.dup2(fd, number)
            os.close(fd)
        for sig in (*FORWARDED, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it at start-up
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.pop("JPY_PARENT_PID", None)  # our parent is the zygote; the launcher watches the kernel
        import random

        random.seed()  # a fresh process would not share the zygote's state
        sys.argv = request["argv"]
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _die_with_parent() -> None:
    """Linux: the kernel gets SIGKILL when the zygote ends, however it ends."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _reap(launchers, kernels) -> None:
    while kernels:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = kernels.pop(pid, None)
        if conn is None:
            continue
        launchers.pop(conn, None)
        try:
            conn.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
        except OSError:
            pass
        conn.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- the launcher
def launch(path: str, plain: list[str]) -> None:
    conn = _connect(path)
    if conn is None:
        print(f"warm_kernel: no zygote at {path}; starting the plain kernel", file=sys.stderr)
        os.execv(plain[0], plain)
    request = {"cwd": os.getcwd(), "env": dict(os.environ), "argv": ["ipykernel_launcher", "-f", plain[-1]]}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    pid = json.loads(conn.recv(1 << 16))["pid"]
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _frame: _forward(pid, number))
    reply = conn.recv(1 << 16)
    sys.exit(json.loads(reply)["status"] if reply else 1)


def _forward(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _connect(path: str) -> socket.socket | None:
    deadline = time.monotonic() + CONNECT_WAIT
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(path)
            return conn
        except OSError:
            conn.close()
            if time.monotonic() > deadline or not os.path.exists(os.path.dirname(path)):
                return None
            time.sleep(0.05)


# ---------------------------------------------------------------- pytest's side
class Zygote:
    """The zygote of this pytest process, started at the first notebook and stopped at exit."""

    def __init__(self, preloaded: tuple[str, ...] = PRELOADED) -> None:
        self.folder = tempfile.mkdtemp(prefix="warm-kernel-")
        self.socket = os.path.join(self.folder, "zygote")
        self.process = subprocess.Popen([sys.executable, "-Xfrozen_modules=off", __file__, "serve", self.socket,
                                         *preloaded], stdin=subprocess.DEVNULL)
        atexit.register(self.stop)

    def argv(self, plain: list[str]) -> list[str]:
        return [sys.executable, "-S", __file__, "launch", self.socket, "--", *plain]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


_zygote: Zygote | None = None


_ipc_numbers = itertools.count()


def _ipc_folder() -> str:
    """A private folder for this process's kernel sockets, removed at exit (short: a socket path has ~107 bytes)."""
    global _ipc_dir
    if _ipc_dir is None:
        _ipc_dir = tempfile.mkdtemp(prefix="nbval-ipc-")
        atexit.register(shutil.rmtree, _ipc_dir, True)
    return _ipc_dir


_ipc_dir: str | None = None


def use_ipc_transport() -> None:
    """nbval's kernels talk over Unix sockets, not TCP ports (for cold kernels too).

    jupyter_client picks a TCP kernel's five ports by binding port 0 and closing the socket; the
    kernel binds them a moment later, so two pytest workers that start kernels together can be
    handed the same free port (one candidate for the notebook once lost with "Kernel died before
    replying to kernel_info"). IPC sockets are files in a folder of this process, named per kernel,
    so no two kernels can share one; retry_kernel_start_up covers whatever other cause remains.
    """
    from nbval import kernel as nbval_kernel

    if getattr(nbval_kernel.KernelManager, "ipc_only", False):
        return

    class IpcKernelManager(nbval_kernel.KernelManager):
        ipc_only = True

        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            # an absolute path: the default ("kernel-ipc" until a connection file is named) is relative,
            # and the kernel runs in the notebook's folder, not pytest's
            kwargs.setdefault("ip", os.path.join(_ipc_folder(), f"kernel-{os.getpid()}-{next(_ipc_numbers)}"))
            super().__init__(**kwargs)

    nbval_kernel.KernelManager = IpcKernelManager


START_ATTEMPTS = 3


def retry_kernel_start_up(attempts: int = START_ATTEMPTS) -> None:
    """A kernel that dies or stays silent at start-up is started again, up to `attempts` times in all.

    nbval reports such a kernel as an error in every cell of the notebook; nothing the notebook does
    has run yet, so a fresh kernel loses nothing. A notebook whose kernel fails every time still fails,
    with the last attempt's error.
    """
    from nbval import kernel as nbval_kernel

    start = nbval_kernel.start_new_kernel
    if getattr(start, "retries", False):
        return

    def start_new_kernel(*args, **kwargs):
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as error:  # nbval's own start-up failure (it has shut that kernel down)
                if attempt == attempts:
                    raise
                print(f"warm_kernel: kernel start-up failed ({error}); starting it again ({attempt + 1}/{attempts})",
                      file=sys.stderr)

    start_new_kernel.retries = True
    nbval_kernel.start_new_kernel = start_new_kernel


def install() -> None:
    """Make nbval's kernels warm forks (see the module docstring) unless LABBOOK_COLD_KERNELS is set."""
    if os.environ.get("LABBOOK_COLD_KERNELS") or not hasattr(socket, "send_fds") or not hasattr(os, "fork"):
        return
    from nbval import kernel as nbval_kernel

    manager = nbval_kernel.NbvalKernelspecManager
    plain_lookup = manager.get_kernel_spec
    if getattr(plain_lookup, "warm", False):
        return

    def get_kernel_spec(self, kernel_name):
        spec = plain_lookup(self, kernel_name)
        if kernel_name == KERNEL_NAME and spec.argv[-2:] == ["-f", "{connection_file}"]:
            global _zygote
            if _zygote is None:
                _zygote = Zygote()
            spec.argv = _zygote.argv(list(spec.argv))
        return spec

    get_kernel_spec.warm = True
    manager.get_kernel_spec = get_kernel_spec


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        sys.path.pop(0)  # this script's folder (tests/) is no kernel's business
        serve(sys.argv[2], tuple(sys.argv[3:]))
    elif sys.argv[1] == "launch":
        launch(sys.argv[2], sys.argv[sys.argv.index("--") + 1:])
    else:
        sys.exit(f"usage: {__doc__}")
