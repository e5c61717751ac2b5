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
import re
import secrets
import select
import shutil
import signal
import site
import socket
import stat
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
MAX_LINE = 4 << 20  # one message of the child, at most (an answer of 100 000 numbers is about 2 MB)
MAX_CONTAINERS = 200_000  # objects and arrays in one message: json.loads makes each a Python object
START_TIMEOUT = 180.0
CONTROL_TIMEOUT = 60.0
# CAP_SYS_ADMIN: each child unshares an IPC namespace of its own; CAP_SYS_RESOURCE: it pins its OOM score
# at the maximum. The zygote never runs student code, and a child loses every capability with its uid.
CAPS = ["CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SYS_ADMIN",
        "CAP_SYS_RESOURCE"]
SANDBOX_TMP_ROOT = "/tmp/autograder-work"  # the children's directories, apart from what bwrap put in /tmp
# The zygote's whole configuration arrives on its control socket: nothing but this generic line is on
# its command line, which every process on the machine can read.
BOOTSTRAP = ("import json, socket, sys; ctrl = socket.socket(fileno=int(sys.argv[1])); "
             "config = json.loads(ctrl.recv(1 << 20)); sys.path.insert(0, config['worker_dir']); "
             "import _worker; _worker.main(config, ctrl)")


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

    @property
    def scratch_bytes(self) -> int:
        """Size of each of the slot's tmpfs (/tmp, /dev/shm): together half the memory budget."""
        return max(64 << 20, self.memory_bytes // 4)

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
    isolation: dict = field(default_factory=dict)  # what the zygote managed (network, hidden paths, ipc)
    cgroups: "Cgroups | None" = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        return self._describe_mode() + self._describe_budget()

    def _describe_budget(self) -> str:
        text = ""
        if self.cgroups is not None and self.cgroups.usable:
            text += (f"; each job slot in cgroups (v{self.cgroups.version}) of its own: 1 CPU, memory of the warm "
                     "worker + --memory-mb (tmpfs and shared memory included), a process limit")
        elif self.cgroups is not None:
            text += (f"; NO cgroups ({self.cgroups.reason}): memory is bounded per process only and the CPU "
                     "time of a submission's processes together, not their share of the machine")
        if self.isolation.get("scratch") is True:
            text += "; each submission starts from empty scratch folders of its own (a new tmpfs on each of /tmp, " \
                    "/dev/shm and, without bwrap, every other folder any user may write to)"
        elif "scratch" in self.isolation:
            text += ("; scratch folders are only wiped between submissions, not new for each"
                     f" ({self.isolation['scratch']})")
        if self.isolation.get("ipc") is True:
            text += "; each submission in an IPC namespace of its own"
        elif "ipc" in self.isolation:
            text += ("; System V IPC and POSIX message queues are NOT isolated between submissions"
                     f" ({self.isolation['ipc']})")
        return text

    def _describe_mode(self) -> str:
        if self.mode == "bwrap":
            text = ("bwrap: no network, own pid/ipc/uts namespaces, read-only view of the Python "
                    "installation only (no repository, solutions or gradebook), sized tmpfs /tmp and /dev/shm")
        else:
            text = "fallback without bwrap"
            if self.reason:
                text += f" ({self.reason})"
            hidden = self.isolation.get("hidden") or []
            if self.privileged and hidden and not self.isolation.get("error"):
                text += (": a private mount namespace hides " + ", ".join(hidden)
                         + "; other files the children's uids may read stay visible")
                if self.isolation.get("read_only"):
                    writable = self.isolation.get("writable") or []
                    text += "; the host's file systems are read-only to student code" + (
                        f" but {', '.join(writable)}" if writable else "")
            else:
                text += (": student code can read every file the grader's user can read "
                         "(the repository, solutions/, the gradebook)")
                if self.isolation.get("error"):
                    text += f" (hiding failed: {self.isolation['error']})"
            text += "; network cut" if self.isolation.get("network") else "; network NOT cut"
            if self.isolation.get("shm"):
                text += ", sized tmpfs /dev/shm"
            text += ". Install bubblewrap (apt-get install bubblewrap) for a real sandbox"
        if self.privileged:
            text += "; each submission runs under a uid of its own with a process limit"
        return text

    def to_plain(self) -> dict:
        return {"mode": self.mode, "requested": self.requested, "privileged": self.privileged,
                "reason": self.reason, "isolation": self.isolation, "description": self.describe()}


# ---------------------------------------------------------------- cgroups: one budget per job slot
CGROUP_CONTROLLERS = ("cpu", "memory", "pids")
NO_CGROUPS_ENV = "AUTOGRADER_NO_CGROUPS"  # diagnostics and tests: grade as on a machine without cgroups
# Puts the shell itself (so bwrap and the zygote after it) into the slot's cgroups before anything forks,
# and makes the zygote the OOM killer's last choice: the children raise their own score (see _worker.py).
CGROUP_ENTER = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 97; shift; n=$((n-1)); done; '
                'echo -1000 > /proc/self/oom_score_adj 2>/dev/null; exec "$@"')


@dataclass
class Cgroups:
    """Where this process may create cgroups: the directory of each controller (v1) or the one (v2)."""

    version: int = 0  # 0: none usable
    parents: dict = field(default_factory=dict)  # controller -> directory of our own cgroup
    reason: str = ""

    @classmethod
    def detect(cls) -> "Cgroups":
        if os.environ.get(NO_CGROUPS_ENV):
            return cls(reason=f"${NO_CGROUPS_ENV} is set")
        try:
            mounts = Path("/proc/self/mounts").read_text().splitlines()
            own = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError as error:
            return cls(reason=f"cannot read /proc: {error.strerror}")
        found = _cgroup_v1(mounts, own)
        if isinstance(found, dict):
            return cls(1, found)
        v2 = _cgroup_v2(mounts, own)
        if isinstance(v2, dict):
            return cls(2, v2)
        return cls(reason=f"{found}; {v2}")

    @property
    def usable(self) -> bool:
        return self.version > 0

    def sweep_stale(self) -> int:
        """Remove the empty slot cgroups of graders that died (kill -9 leaves them); how many."""
        removed = 0
        for parent in dict.fromkeys(self.parents.values()):
            try:
                names = os.listdir(parent)
            except OSError:
                continue
            for name in names:
                match = re.fullmatch(r"autograder-(\d+)-slot\d+-[0-9a-f]{6}", name)
                if match is None or os.path.exists(f"/proc/{match.group(1)}"):
                    continue  # not ours, or its grader still runs
                try:
                    os.rmdir(os.path.join(parent, name))  # fails, harmlessly, while a task is inside
                    removed += 1
                except OSError:
                    pass
        return removed

    def create(self, label: str) -> "SlotCgroup":
        name = f"autograder-{os.getpid()}-{label}-{secrets.token_hex(3)}"
        dirs = {}
        try:
            for controller in CGROUP_CONTROLLERS:
                parent = self.parents[controller]
                path = os.path.join(parent, name)
                if path not in dirs.values():
                    os.mkdir(path)
                dirs[controller] = path
        except OSError:
            SlotCgroup(self.version, dirs).remove()
            raise
        return SlotCgroup(self.version, dirs)


def _cgroup_v1(mounts: list[str], own: list[str]) -> dict | str:
    roots, paths = {}, {}
    for line in mounts:
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "cgroup":
            for option in parts[3].split(","):
                roots.setdefault(option, parts[1])
    for line in own:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        for controller in controllers.split(","):
            paths[controller] = path
    parents = {}
    for controller in CGROUP_CONTROLLERS:
        if controller not in roots or controller not in paths:
            return f"cgroup v1: no {controller} controller"
        parents[controller] = roots[controller] + paths[controller].rstrip("/")
    problem = _writable(set(parents.values()))
    return problem or parents


def _cgroup_v2(mounts: list[str], own: list[str]) -> dict | str:
    root = next((line.split()[1] for line in mounts if len(line.split()) > 2 and line.split()[2] == "cgroup2"), None)
    path = next((line[3:] for line in own if line.startswith("0::")), None)
    if root is None or path is None:
        return "no cgroup v2"
    parent = root + path.rstrip("/")
    try:
        enabled = Path(parent, "cgroup.subtree_control").read_text().split()
    except OSError as error:
        return f"cgroup v2: {error.strerror}"
    missing = [c for c in CGROUP_CONTROLLERS if c not in enabled]
    if missing:
        # Allowed only where no process sits in our own cgroup (the "no internal processes" rule).
        try:
            Path(parent, "cgroup.subtree_control").write_text(" ".join("+" + c for c in missing))
        except OSError:
            return "cgroup v2: controllers " + ", ".join(missing) + " not enabled for our cgroup"
    problem = _writable({parent})
    return problem or {c: parent for c in CGROUP_CONTROLLERS}


def _writable(directories: set[str]) -> str:
    for directory in directories:
        probe = os.path.join(directory, f"autograder-probe-{os.getpid()}-{secrets.token_hex(3)}")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError as error:
            return f"cannot create cgroups in {directory} ({error.strerror})"
    return ""


@dataclass
class SlotCgroup:
    """The cgroups of one job slot: the zygote, its child and everything they start."""

    version: int
    dirs: dict  # controller -> directory

    def _write(self, controller: str, name: str, value) -> bool:
        try:
            Path(self.dirs[controller], name).write_text(str(value))
            return True
        except OSError:
            return False

    def _read(self, controller: str, name: str) -> str:
        try:
            return Path(self.dirs[controller], name).read_text()
        except OSError:
            return ""

    def procs_files(self) -> list[str]:
        return [os.path.join(d, "cgroup.procs") for d in dict.fromkeys(self.dirs.values())]

    def wrap(self, command: list[str]) -> list[str]:
        files = self.procs_files()
        return ["/bin/sh", "-c", CGROUP_ENTER, "sh", str(len(files)), *files, *command]

    def limit_cpu(self, cpus: float = 1.0) -> None:
        if self.version == 1:
            period = int(self._read("cpu", "cpu.cfs_period_us") or 100_000)
            self._write("cpu", "cpu.cfs_quota_us", int(period * cpus))
        else:
            self._write("cpu", "cpu.max", f"{int(100_000 * cpus)} 100000")

    def limit_processes(self, count: int) -> None:
        self._write("pids", "pids.max", count)

    def tasks(self) -> int:
        return int(self._read("pids", "pids.current") or 0)

    def memory_usage(self) -> int:
        return int(self._read("memory", "memory.usage_in_bytes" if self.version == 1 else "memory.current") or 0)

    def limit_memory(self, limit: int) -> None:
        if self.version == 1:
            self._write("memory", "memory.limit_in_bytes", limit)
            self._write("memory", "memory.memsw.limit_in_bytes", limit)  # swap too, where accounted
        else:
            self._write("memory", "memory.max", limit)
            self._write("memory", "memory.swap.max", 0)

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.procs_files():
            try:
                found.update(int(p) for p in Path(path).read_text().split())
            except (OSError, ValueError):
                pass
        return sorted(found)

    def remove(self) -> None:
        """Kill whatever is still inside (nothing should be) and delete the cgroups."""
        if self.version == 2:
            self._write("pids", "cgroup.kill", 1)
        for _ in range(100):
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)
        for directory in dict.fromkeys(self.dirs.values()):
            for _ in range(50):
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)  # the last task may still be exiting


# ---------------------------------------------------------------- the grader's own command line
def scrub_cmdline() -> bool:
    """Blank our own argv as the kernel shows it in /proc/PID/cmdline (world-readable).

    The instructor typed `--seed N --out DIR`; CPython keeps its own copy of
    argv, so only `ps` and /proc readers lose them. argv[0] stays.
    """
    try:
        with open("/proc/self/stat", "rb") as handle:
            text = handle.read().decode()
        fields = text[text.rfind(")") + 2:].split()
        start, end = int(fields[48 - 3]), int(fields[49 - 3])  # arg_start, arg_end
        if not 0 < start < end or end - start > 1 << 24:
            return False
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            area = memory.read(end - start)
            first = area.find(b"\0")
            if first < 0 or first + 1 >= len(area):
                return True
            memory.seek(start + first + 1)
            memory.write(b"\0" * (len(area) - first - 1))
        return True
    except (OSError, ValueError, IndexError):
        return False


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


WORKER_DIR_PREFIX = "autograder-worker-"


class WorkerDir:
    """A private directory with only what the sandbox may see of the grader's code. Its name carries
    the grader's pid, so that the next grader removes what a killed one (kill -9) left in the temp dir."""

    def __init__(self) -> None:
        self.swept = sweep_stale_worker_dirs()
        self.path = Path(tempfile.mkdtemp(prefix=f"{WORKER_DIR_PREFIX}{os.getpid()}-"))
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


def sweep_stale_worker_dirs(temp: str | None = None) -> int:
    """Remove the worker dirs of graders that no longer run; how many. Only this user's real
    directories named `autograder-worker-<pid>-...` whose pid is gone: never a link, never a live grader's."""
    if not os.path.isdir("/proc/self"):
        return 0  # no way to tell a dead grader from a live one here
    temp = temp or tempfile.gettempdir()
    removed = 0
    try:
        names = os.listdir(temp)
    except OSError:
        return 0
    for name in names:
        match = re.fullmatch(rf"{WORKER_DIR_PREFIX}(\d+)-[\w]+", name)
        if match is None or os.path.exists(f"/proc/{match.group(1)}"):
            continue
        path = os.path.join(temp, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += not os.path.lexists(path)
    return removed


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def decide_mode(info: SandboxInfo, worker: WorkerDir) -> SandboxInfo:
    """bwrap if asked or available and working here, else the fallback (with the reason)."""
    info.cgroups = Cgroups.detect()
    if info.cgroups.usable:
        info.cgroups.sweep_stale()
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
    command, _ = probe._command(True, os.geteuid() == 0, 0)
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
        self.cgroup: SlotCgroup | None = None
        self.restarts = 0
        self.ready_info: dict = {}
        self.child_cpu = 0.0  # CPU seconds of all the children killed so far (user + system)
        self.total_cpu = 0.0  # CPU seconds of the zygotes that ended, their children included

    # -- zygote life
    def _command(self, use_bwrap: bool, privileged: bool, ctrl_fd: int) -> tuple[list[str], dict]:
        """(command line, configuration the zygote reads from its control socket)."""
        binary, prefix = _python()
        site_packages = _site_packages()
        worker_dir = SANDBOX_WORKER_DIR if use_bwrap else str(self.worker.path)
        tmp_root = SANDBOX_TMP_ROOT if use_bwrap else str(self.tmp_root)
        config = {
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
            "scratch_bytes": self.limits.scratch_bytes,
        }
        python = [binary, "-I", "-S", "-B", "-c", BOOTSTRAP, str(ctrl_fd)]
        if not use_bwrap:
            return python, config
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
        # A private, sized /tmp first, then the binds: a venv that itself lives under /tmp (a checkout
        # in /tmp, as CI may use) must stay visible on top of the empty tmpfs.
        size = str(self.limits.scratch_bytes)
        command += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
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
                    "--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
                    "--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
        for key, value in self._env(worker_dir).items():
            command += ["--setenv", key, value]
        return command + ["--", *python], config

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
        if not use_bwrap:
            self.tmp_root = Path(tempfile.mkdtemp(prefix=f"autograder-slot{self.index}-"))
            os.chmod(self.tmp_root, 0o711)
        command, config = self._command(use_bwrap, privileged, theirs.fileno())
        self.cgroup = self._new_cgroup()
        if self.cgroup is not None:
            command = self.cgroup.wrap(command)
        log = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"zygote-{self.index}.log", "ab")
        env = None
        if not use_bwrap:
            env = self._env(str(self.worker.path))
            env["HOME"] = str(self.tmp_root)
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            pass_fds=[theirs.fileno()], env=env,
                                            cwd=str(self.tmp_root) if not use_bwrap else None)
        finally:
            theirs.close()
            if log is not subprocess.DEVNULL:
                log.close()
        self.ctrl = ours
        try:
            ours.send(json.dumps(config).encode())
            reply = self._receive(START_TIMEOUT)
        except (SandboxError, OSError) as error:
            self.stop()
            raise SandboxError(str(error)) from error
        if not reply.get("ready"):
            self.stop()
            raise SandboxError(f"zygote did not start: {reply}")
        self.info.privileged = privileged
        self.info.isolation = reply.get("isolation") or {}
        self.ready_info = reply
        self._limit_cgroup()

    def _new_cgroup(self) -> "SlotCgroup | None":
        cgroups = self.info.cgroups
        if cgroups is None or not cgroups.usable:
            return None
        try:
            cgroup = cgroups.create(f"slot{self.index}")
        except OSError as error:
            self.info.cgroups = Cgroups(reason=f"cannot create a cgroup: {error.strerror}")
            return None
        return cgroup

    def _limit_cgroup(self) -> None:
        """Once the zygote is warm (its start-up is ours, not a student's, and runs unthrottled):
        1 CPU, and memory and processes of what the zygote holds now plus one student's budget."""
        if self.cgroup is None:
            return
        self.cgroup.limit_cpu(1.0)
        self.cgroup.limit_memory(self.cgroup.memory_usage() + self.limits.memory_bytes)
        self.cgroup.limit_processes(self.cgroup.tasks() + self.limits.processes)

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
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
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

    def child_cpu_now(self) -> float:
        """CPU seconds the current child's whole process tree has used so far (the zygote sums it).

        A trusted measure of a student's time: it does not grow while the child
        waits for a processor, so another student's load cannot use it up.
        """
        if self.ctrl is None or self.process is None or self.process.poll() is not None:
            return 0.0
        try:
            self.ctrl.send(json.dumps({"op": "cpu"}).encode())
            return float(self._receive(CONTROL_TIMEOUT).get("cpu", 0.0))
        except (SandboxError, OSError, ValueError, TypeError):
            return 0.0  # the zygote is gone: the next spawn or kill restarts it

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
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.discarding = False  # inside a line too long to keep: drop up to its newline
        self.closed = False

    def send(self, message: dict, timeout: float = 10.0) -> None:
        data = (json.dumps(message) + "\n").encode()
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view):]  # the usual case: room in the socket, no wait
                continue
            except BlockingIOError:
                pass
            except OSError as error:
                raise ChildDied(str(error)) from error
            self._drain_output(0)  # a child blocked on a full output pipe reads no requests
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChildDied("the child does not read its requests")
            select.select([], [self.sock], [], min(remaining, 0.05))

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

    def receive(self, deadline: float, on_line=None, accept: dict[bytes, int] | None = None,
                fatal: tuple[bytes, ...] = (), raw: tuple[bytes, ...] = ()) -> dict | None:
        """The next message, or None when `deadline` (monotonic) passes first.

        Student code can write anything on this socket, as fast as it likes; the
        grader's work stays bounded per byte. `accept` maps the start of each
        message the caller expects (b'{"cell": ', b'{"id": 3, "result": '...) to its
        longest length: any other JSON object, or one longer than that, is
        skipped without being decoded (a scan for its newline is all it costs);
        a line that is no JSON object at all is ChildDied, as is one that starts
        with one of `fatal` and is too long (an answer the worker would never
        send). Without `accept` every line is decoded. A line that starts with one
        of `raw` is decoded but not cleaned (sanitize.message): its reader checks
        every part of it and passes no text of it on. Before decoding, a line may hold at most
        MAX_CONTAINERS objects and arrays. `on_line(line)` runs as soon as an
        accepted line is in, before it is parsed: the grader sends its next
        request there, so the child computes while the grader decodes the answer.
        """
        strict = accept is not None
        accept = accept if accept is not None else {b"": MAX_LINE}  # None: decode every line (tests)
        longest = max(accept.values())
        while True:
            newline = self.buffer.find(b"\n", self.scanned)
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[:newline + 1]
                self.scanned = 0
                if self.discarding:  # the tail of a line too long to keep
                    self.discarding = False
                    continue
                if strict and not line.startswith(b'{"'):
                    raise ChildDied("unreadable message from the worker: not a JSON object")
                limit = next((n for prefix, n in accept.items() if line.startswith(prefix)), None)
                if limit is None:
                    continue  # nothing the caller waits for: the student's code wrote it
                if len(line) > limit:
                    if line.startswith(fatal):
                        raise ChildDied("unreadable message from the worker: an answer too large")
                    continue
                if on_line is not None:
                    on_line(line)
                return self._decode(line, clean=not line.startswith(raw))
            self.scanned = len(self.buffer)
            if len(self.buffer) > longest:
                if bytes(self.buffer[:64]).startswith(fatal):
                    raise ChildDied("unreadable message from the worker: an answer too large")
                self.buffer.clear()  # drop it, and what follows up to its newline
                self.scanned = 0
                self.discarding = True
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

    @staticmethod
    def _decode(line: bytes, clean: bool = True) -> dict:
        from . import sanitize

        if line.count(b"{") + line.count(b"[") > MAX_CONTAINERS:
            raise ChildDied("unreadable message from the worker: too many objects")
        try:
            # a line nested thousands deep makes the decoder itself overflow
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise ChildDied(f"unreadable message from the worker: {type(error).__name__}") from error
        if not isinstance(message, dict):
            raise ChildDied("unreadable message from the worker")
        if not clean:
            return message
        try:
            # the student's code can write anything on this socket: nothing unclean gets further
            return sanitize.message(message)
        except sanitize.ProtocolError as error:
            raise ChildDied(f"unreadable message from the worker: {error}") from error

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
        from . import sanitize

        # escape sequences and lone surrogates would reach the instructor's terminal and the records
        text = sanitize.text(self.output.decode("utf-8", "replace"), limit=len(self.output) + 1)
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
