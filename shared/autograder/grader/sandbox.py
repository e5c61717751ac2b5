"""The grader's side of the sandbox: worker directory, zygotes, children.

A `Slot` is one job slot: a warm zygote (see `_worker.py`) started once, inside
bubblewrap where it works. `Slot.spawn()` asks it for a fresh child and gets
the child's socket and output pipe; `Slot.kill()` ends the child's whole
process tree. Everything that comes back is JSON; nothing here ever calls
student code.
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import site
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import runtime
from .stubs import write_stubs

WORKER_FILE = Path(__file__).with_name("_worker.py")
SANDBOX_WORKER_DIR = "/worker"
PREIMPORT = ["numpy", "torch", "torch.nn.functional", "matplotlib", "matplotlib.pyplot", "math", "json"]
PREIMPORT_ROOTS = {"torch", "numpy", "matplotlib"}
MAX_LINE = 32 << 20  # one answer of the child, at most
START_TIMEOUT = 180.0
CONTROL_TIMEOUT = 60.0
CAPS = ["CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"]


class SandboxError(RuntimeError):
    """The sandbox could not be started (not a student's fault)."""


class ChildDied(Exception):
    """The child's socket closed or spoke nonsense: the process is gone or broken."""


@dataclass
class Limits:
    memory_bytes: int = 2 << 30
    cpu_seconds: int = 300
    file_bytes: int = 64 << 20
    processes: int = 64
    output_bytes: int = 64 << 10

    def for_child(self) -> dict:
        return {"memory_bytes": self.memory_bytes, "cpu_seconds": self.cpu_seconds,
                "file_bytes": self.file_bytes, "processes": self.processes}


@dataclass
class SandboxInfo:
    """What isolation the batch actually got, for the summary and the gradebook."""

    requested: str
    mode: str = "none"  # "bwrap" | "fallback"
    privileged: bool = False  # children run under a uid of their own
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    isolation: dict = field(default_factory=dict)  # what the fallback zygote managed (network, hidden paths)

    def describe(self) -> str:
        if self.mode == "bwrap":
            text = ("bwrap: no network, own pid/ipc/uts namespaces, read-only view of the Python "
                    "installation only (no repository, solutions or gradebook)")
        else:
            text = "fallback without bwrap"
            if self.reason:
                text += f" ({self.reason})"
            hidden = self.isolation.get("hidden") or []
            if self.privileged and hidden and not self.isolation.get("error"):
                text += (": a private mount namespace hides " + ", ".join(hidden)
                         + "; other files the children's uids may read stay visible")
            else:
                text += (": student code can read every file the grader's user can read "
                         "(the repository, solutions/, the gradebook)")
                if self.isolation.get("error"):
                    text += f" (hiding failed: {self.isolation['error']})"
            text += "; network cut" if self.isolation.get("network") else "; network NOT cut"
            text += ". Install bubblewrap (apt-get install bubblewrap) for a real sandbox"
        if self.privileged:
            text += "; each submission runs under a uid of its own with a process limit"
        return text

    def to_plain(self) -> dict:
        return {"mode": self.mode, "requested": self.requested, "privileged": self.privileged,
                "reason": self.reason, "isolation": self.isolation, "description": self.describe()}


def modules_to_preimport(notebooks: list[list[str]], limit: int = 40) -> list[str]:
    """Modules of PREIMPORT_ROOTS that several notebooks import (`torch.nn.attention.bias`...).

    The zygote imports them once so that no child pays for it. Only public
    modules of the packages listed here qualify, and only those imported by at
    least two notebooks (and a tenth of the batch): one student cannot make the
    zygote import an odd module that every other child would then inherit.
    """
    import ast

    counts: dict[str, int] = {}
    for cells in notebooks:
        seen: set[str] = set()
        for source in cells:
            if "import" not in source:
                continue
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    seen.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    seen.add(node.module)
        for name in seen:
            parts = name.split(".")
            if parts[0] in PREIMPORT_ROOTS and not any(p.startswith("_") for p in parts) and name not in PREIMPORT:
                counts[name] = counts.get(name, 0) + 1
    needed = max(2, len(notebooks) // 10)
    return sorted(name for name, count in counts.items() if count >= needed)[:limit]


def _site_packages() -> list[str]:
    """The interpreter's package directories, minus any that holds the project's own packages."""
    candidates = []
    try:
        candidates += site.getsitepackages()
    except AttributeError:  # pragma: no cover - virtualenv's old site.py
        pass
    candidates += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    found = []
    for path in candidates:
        real = os.path.realpath(path)
        if not os.path.isdir(real) or real in found:
            continue
        if any(os.path.exists(os.path.join(real, name, "__init__.py")) for name in ("autograder", "labbook")):
            continue  # a non-editable install of this project: never visible to students
        found.append(real)
    return found


def _python() -> tuple[str, str]:
    """(interpreter binary, its installation prefix), outside any virtual environment."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    binary = os.path.realpath(base if os.path.exists(base) else sys.executable)
    return binary, os.path.realpath(sys.base_prefix)


class WorkerDir:
    """A private directory with only what the sandbox may see of the grader's code."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        os.chmod(self.path, 0o755)
        shutil.copyfile(WORKER_FILE, self.path / "_worker.py")
        shutil.copyfile(runtime.__file__, self.path / "runtime.py")
        write_stubs(self.path)
        self._mpl_cache()
        for path in self.path.rglob("*"):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)

    def _mpl_cache(self) -> None:
        """Hand matplotlib's font list to the zygotes so that none rebuilds it."""
        try:
            import matplotlib  # noqa: F401  (only its cache dir is needed)
            cache = Path(matplotlib.get_cachedir())
        except Exception:
            return
        target = self.path / "mplconfig"
        target.mkdir()
        for font_list in cache.glob("fontlist-*.json"):
            shutil.copyfile(font_list, target / font_list.name)

    def cleanup(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def decide_mode(info: SandboxInfo, worker: WorkerDir) -> SandboxInfo:
    """bwrap if asked or available and working here, else the fallback (with the reason)."""
    if info.requested == "fallback":
        info.mode, info.reason = "fallback", "--sandbox fallback"
        return info
    binary = bwrap_path()
    if binary is None:
        if info.requested == "bwrap":
            raise SandboxError("bwrap is not installed (apt-get install bubblewrap)")
        info.mode, info.reason = "fallback", "bwrap is not installed"
        return info
    probe = Slot(-1, worker, SandboxInfo(info.requested, mode="bwrap"))
    command = probe._command(True, os.geteuid() == 0, 0, "/tmp")
    command = command[:command.index("--") + 1] + [_python()[0], "-I", "-S", "-c", "import os; os.listdir('/tmp')"]
    try:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        error = result.stderr.decode(errors="replace").strip()[:200] if result.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as failure:
        error = str(failure)[:200]
    if error:
        if info.requested == "bwrap":
            raise SandboxError(f"bwrap does not work here: {error}")
        info.mode, info.reason = "fallback", f"bwrap does not work here: {error}"
    else:
        info.mode = "bwrap"
    return info


class Slot:
    """One job slot: a zygote process, restarted if it ever dies."""

    def __init__(self, index: int, worker: WorkerDir, info: SandboxInfo, log_dir: Path | None = None,
                 limits: Limits | None = None, hide: list[Path] | None = None, preimport: list[str] | None = None):
        self.index = index
        self.hide = hide or []
        self.preimport = preimport or []
        self.worker = worker
        self.info = info
        self.limits = limits or Limits()
        self.log_dir = log_dir
        self.process: subprocess.Popen | None = None
        self.ctrl: socket.socket | None = None
        self.tmp_root: Path | None = None
        self.restarts = 0
        self.ready_info: dict = {}
        self.child_cpu = 0.0  # CPU seconds of all the children killed so far (user + system)
        self.total_cpu = 0.0  # CPU seconds of the zygotes that ended, their children included

    # -- zygote life
    def _command(self, use_bwrap: bool, privileged: bool, ctrl_fd: int, tmp_root: str) -> list[str]:
        binary, prefix = _python()
        site_packages = _site_packages()
        worker_dir = SANDBOX_WORKER_DIR if use_bwrap else str(self.worker.path)
        config = {
            "ctrl_fd": ctrl_fd,
            "worker_dir": worker_dir,
            "site_packages": site_packages,
            "tmp_root": tmp_root,
            "privileged": privileged,
            "uid_base": 100_000 + secrets.randbelow(1 << 30),
            "in_bwrap": use_bwrap,
            "preimport": PREIMPORT + [m for m in self.preimport if m not in PREIMPORT],
            # Without bwrap, as root: the zygote hides these behind a private mount namespace.
            "hide": [] if use_bwrap else [str(p) for p in self.hide],
            "keep": [prefix, os.path.dirname(binary), *site_packages, str(self.worker.path), tmp_root],
        }
        python = [binary, "-I", "-S", "-B", f"{worker_dir}/_worker.py", json.dumps(config)]
        if not use_bwrap:
            return python
        command = [bwrap_path() or "bwrap"]
        if privileged:
            # As root: every namespace but the user one, so that each child can drop to a uid of
            # its own (no capabilities; RLIMIT_NPROC applies). Without root: --unshare-all.
            command += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                        "--cap-drop", "ALL"]
            for cap in CAPS:
                command += ["--cap-add", cap]
        else:
            command += ["--unshare-all"]
        command += ["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64"):
            host = Path("/") / name
            if host.is_symlink():
                command += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                command += ["--ro-bind", str(host), str(host)]
        # A private /tmp first, then the binds: a venv that itself lives under /tmp (a checkout
        # in /tmp, as CI may use) must stay visible on top of the empty tmpfs.
        command += ["--tmpfs", "/tmp"]
        bound, made = ["/usr"], {"/", "/usr", "/tmp", "/proc", "/dev"}
        for path in [prefix, os.path.dirname(binary), *site_packages]:
            if any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):
                continue
            # bwrap copies the modes of the parents it creates (/root is 0700): make them traversable.
            for parent in reversed(Path(path).parents):
                if str(parent) not in made:
                    command += ["--perms", "0755", "--dir", str(parent)]
                    made.add(str(parent))
            command += ["--ro-bind", path, path]
            bound.append(path)
        command += ["--ro-bind", str(self.worker.path), SANDBOX_WORKER_DIR,
                    "--proc", "/proc", "--dev", "/dev",
                    "--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
        for key, value in self._env(worker_dir).items():
            command += ["--setenv", key, value]
        return command + ["--", *python]

    def _env(self, worker_dir: str) -> dict:
        env = {"HOME": "/tmp", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        return env

    def start(self) -> None:
        """Start the zygote in the mode `decide_mode` chose for the batch."""
        self._start(self.info.mode == "bwrap")

    def _start(self, use_bwrap: bool) -> None:
        privileged = os.geteuid() == 0
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if use_bwrap:
            tmp_root = "/tmp"
        else:
            self.tmp_root = Path(tempfile.mkdtemp(prefix=f"autograder-slot{self.index}-"))
            os.chmod(self.tmp_root, 0o711)
            tmp_root = str(self.tmp_root)
        command = self._command(use_bwrap, privileged, theirs.fileno(), tmp_root)
        log = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"zygote-{self.index}.log", "ab")
        env = None
        if not use_bwrap:
            env = self._env(str(self.worker.path))
            env["HOME"] = tmp_root
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            pass_fds=[theirs.fileno()], env=env, cwd=tmp_root if not use_bwrap else None)
        finally:
            theirs.close()
            if log is not subprocess.DEVNULL:
                log.close()
        self.ctrl = ours
        try:
            reply = self._receive(START_TIMEOUT)
        except SandboxError:
            self.stop()
            raise
        if not reply.get("ready"):
            self.stop()
            raise SandboxError(f"zygote did not start: {reply}")
        self.info.privileged = privileged
        self.info.isolation = reply.get("isolation") or {}
        self.ready_info = reply

    def _receive(self, timeout: float) -> dict:
        assert self.ctrl is not None
        ready, _, _ = select.select([self.ctrl], [], [], timeout)
        if not ready:
            raise SandboxError("the zygote did not answer in time")
        try:
            data, fds, _, _ = socket.recv_fds(self.ctrl, 1 << 16, 2)
        except OSError as error:
            raise SandboxError(f"control socket: {error}") from error
        if not data:
            code = self.process.poll() if self.process else None
            raise SandboxError(f"the zygote exited (status {code})")
        reply = json.loads(data)
        reply["_fds"] = fds
        return reply

    def _request(self, message: dict, timeout: float = CONTROL_TIMEOUT) -> dict:
        if self.ctrl is None or self.process is None or self.process.poll() is not None:
            self.restart()
        try:
            self.ctrl.send(json.dumps(message).encode())
            return self._receive(timeout)
        except (SandboxError, OSError):
            self.restart()
            self.ctrl.send(json.dumps(message).encode())
            return self._receive(timeout)

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self._start(self.info.mode == "bwrap")

    def stop(self) -> None:
        if self.ctrl is not None:
            try:
                self.ctrl.send(json.dumps({"op": "exit"}).encode())
                reply = self._receive(5.0)
                self.total_cpu += float(reply.get("cpu", 0.0)) + float(reply.get("children_cpu", 0.0))
            except (OSError, SandboxError, ValueError):
                pass
            self.ctrl.close()
            self.ctrl = None
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.tmp_root is not None:
            shutil.rmtree(self.tmp_root, ignore_errors=True)
            self.tmp_root = None

    # -- children
    def spawn(self, env: dict | None = None) -> "ChildHandle":
        reply = self._request({"op": "spawn", "env": env or {}, "limits": self.limits.for_child()})
        fds = reply.pop("_fds", [])
        if not reply.get("ok") or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"spawn failed: {reply}")
        return ChildHandle(socket.socket(fileno=fds[0]), fds[1], self.limits.output_bytes)

    def kill(self, child: "ChildHandle | None" = None, died: bool = False) -> str:
        """End the child's process tree; returns how the child ended when it `died` on its own."""
        if child is not None:
            child.close()
        if self.process is None or self.process.poll() is not None:
            return "the worker's parent process ended"  # it took its children along; the next spawn restarts it
        try:
            self.ctrl.send(json.dumps({"op": "kill", "wait": 0.2 if died else 0}).encode())
            reply = self._receive(CONTROL_TIMEOUT)
            self.child_cpu += float(reply.get("child_cpu", 0.0))
            return str(reply.get("child_status", ""))
        except (SandboxError, OSError):
            self.restart()
            return ""


class ChildHandle:
    """The grader's end of one child: line-delimited JSON in, captured output on the side."""

    def __init__(self, sock: socket.socket, out_fd: int, output_cap: int):
        self.sock = sock
        self.sock.setblocking(False)
        self.out_fd = out_fd
        self.output = bytearray()
        self.output_total = 0
        self.output_cap = output_cap
        self.buffer = bytearray()
        self.closed = False

    def send(self, message: dict, timeout: float = 10.0) -> None:
        data = (json.dumps(message) + "\n").encode()
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChildDied("the child does not read its requests")
            _, writable, _ = select.select([], [self.sock], [], remaining)
            if not writable:
                continue
            try:
                sent = self.sock.send(view)
            except BlockingIOError:
                continue
            except OSError as error:
                raise ChildDied(str(error)) from error
            view = view[sent:]
            self._drain_output(0)

    def _drain_output(self, timeout: float) -> None:
        if self.out_fd < 0:
            return
        ready, _, _ = select.select([self.out_fd], [], [], timeout)
        if ready:
            self._read_output()

    def _read_output(self) -> None:
        try:
            chunk = os.read(self.out_fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            os.close(self.out_fd)
            self.out_fd = -1
            return
        self.output_total += len(chunk)
        room = self.output_cap - len(self.output)
        if room > 0:
            self.output += chunk[:room]

    def receive(self, deadline: float) -> dict | None:
        """The next message, or None when `deadline` (monotonic) passes first."""
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[:newline + 1]
                try:
                    message = json.loads(line)
                except (ValueError, UnicodeDecodeError) as error:
                    raise ChildDied(f"unreadable message from the worker: {error}") from error
                if not isinstance(message, dict):
                    raise ChildDied("unreadable message from the worker")
                return message
            if len(self.buffer) > MAX_LINE:
                raise ChildDied("the worker's answer is too large")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            watch = [self.sock] + ([self.out_fd] if self.out_fd >= 0 else [])
            ready, _, _ = select.select(watch, [], [], remaining)
            if self.out_fd >= 0 and self.out_fd in ready:
                self._read_output()
            if self.sock in ready:
                try:
                    chunk = self.sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError as error:
                    raise ChildDied(str(error)) from error
                if not chunk:
                    raise ChildDied("the worker process ended")
                self.buffer += chunk

    def drain(self) -> None:
        """Read what is already in the output pipe (bounded: a child may still be printing)."""
        for _ in range(64):
            if self.out_fd < 0:
                return
            ready, _, _ = select.select([self.out_fd], [], [], 0)
            if not ready:
                return
            self._read_output()

    def output_text(self) -> str:
        text = self.output.decode("utf-8", "replace")
        if self.output_total > len(self.output):
            text += f"\n[... {self.output_total - len(self.output)} more bytes not kept]"
        return text

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        if self.out_fd >= 0:
            os.close(self.out_fd)
            self.out_fd = -1
