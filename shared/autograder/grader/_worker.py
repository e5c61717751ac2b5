"""The grading worker: runs INSIDE the sandbox, never in the grader's process.

This file is copied alone (with runtime.py and the stub packages) into a
directory that the sandbox sees as its only project code. It imports nothing
from `autograder`: there is no real `autograder` package inside the sandbox.

Two roles, one per process:

* the zygote (one per job slot), started once per batch: imports torch and
  numpy, then waits on its control socket. It never runs student code. For
  each submission it forks a child, hands the grader the child's socket and
  output pipe (SCM_RIGHTS), and on request kills the child's whole process
  tree and wipes the files it left.
* the child (one per submission, never reused): takes empty scratch folders
  of its own, drops privileges, sets its limits, executes the notebook's code
  cells, then answers call requests one at a time with `runtime.run_call`,
  whose results are plain JSON data. A function handed to a student's test is
  a handle (runtime.remote_function): its calls are requests to the grader.

Protocol (JSON, one object per line on the child socket):
  grader -> child: {"cells": [source, ...], "skip": [index, ...]}
                   {"id": n, "call": {...}}
                   {"remote_reply": k, "ok": value} | {"remote_reply": k, "error": {...}}
  child -> grader: {"cell": i}  {"cell_error": i, "type": ..., "message": ...}
                   {"ready": true}  {"id": n, "result": {...}}
                   {"remote": token, "seq": k, "op": ..., ...}   (a call of a remote function)
Control socket (SOCK_SEQPACKET, one JSON object per packet):
  grader -> zygote: first the configuration (a JSON object: paths, uids, hidden folders; never on the
                   command line, which any process can read), then
                   {"op": "spawn", "env": {...}, "limits": {...}} | {"op": "kill"} | {"op": "cpu"}
                   | {"op": "exit"}
  zygote -> grader: {"ok": true, ...} (+ two fds for "spawn": child socket, output pipe; "cpu": the CPU
                   seconds of the current child's whole process tree)
"""
from __future__ import annotations

import builtins
import ctypes
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import stat
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
MAX_MESSAGE = 300
MAX_ANSWER = 4 << 20  # one answer, at most: the grader skips longer lines (sandbox.MAX_LINE)
CPU_POLL = 0.25  # seconds between two looks at the CPU time of the child's process tree
MAX_DEPTH = 64  # directories deeper than this are moved up before they are deleted (bounded recursion)

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no libc symbols: limits still apply
    _libc = None


def _prctl(option: int, value: int) -> bool:
    if _libc is None:
        return False
    return _libc.prctl(option, value, 0, 0, 0) == 0


# ---------------------------------------------------------------- zygote
class Zygote:
    def __init__(self, config: dict, ctrl: socket.socket):
        self.config = config
        self.ctrl = ctrl
        self.tmp_root = config["tmp_root"]
        self.privileged = bool(config.get("privileged"))
        self.uid_base = int(config.get("uid_base", 0))
        self.counter = 0
        self.child_cpu = 0.0
        self.child_pid = 0
        self.child_uid = None
        self.child_dir = None
        self.cpu_budget = 0.0  # CPU seconds the current child's whole process tree may use
        self.ended = ""  # why the zygote ended the current child on its own (CPU budget)
        self.baseline: dict[str, set[str]] = {}  # what the scratch folders held before any child ran

    def warm_up(self) -> dict:
        """Import what students' notebooks use, so that no child pays for it."""
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[name] = "1"
        fonts = os.path.join(self.config["worker_dir"], "mplconfig")
        if os.path.isdir(fonts):  # matplotlib's font list, so that no zygote scans the fonts again
            target = os.path.join(self.tmp_root, ".mplconfig")
            shutil.copytree(fonts, target, dirs_exist_ok=True)
            os.environ["MPLCONFIGDIR"] = target
        loaded = {}
        for module in self.config.get("preimport", []):
            started = time.perf_counter()
            try:
                __import__(module)
                loaded[module] = round(time.perf_counter() - started, 3)
            except Exception as error:  # an optional package may be missing
                loaded[module] = f"{type(error).__name__}: {error}"[:200]
        if "torch" in sys.modules:
            try:
                _warm_torch(sys.modules["torch"])
            except Exception as error:  # warming is an optimisation only
                loaded["warm-up"] = f"{type(error).__name__}: {error}"[:200]
        __import__("runtime")
        __import__("autograder")
        import gc

        gc.collect()
        gc.freeze()  # children's garbage collections then leave the zygote's pages shared (no copy-on-write)
        return loaded

    def serve(self) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        isolation = {}
        if not self.config.get("in_bwrap"):
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if self.privileged:
                isolation = private_mounts(self.config.get("hide", []), self.config.get("keep", []),
                                           [self.tmp_root], int(self.config.get("scratch_bytes", 0)))
        if self.config.get("in_bwrap"):
            # The children's folders live apart from the parents bwrap made in /tmp for its binds.
            os.makedirs(self.tmp_root, 0o711, exist_ok=True)
            os.chmod(self.tmp_root, 0o711)
        # Each child covers the folders any user may write to with empty tmpfs of its own (fresh_scratch).
        self.config["child_scratch"] = {
            "roots": scratch_roots(bool(self.config.get("in_bwrap"))),
            "keep": [k for k in self.config.get("keep", []) if k != self.tmp_root],
            "size": int(self.config.get("scratch_bytes", 0)) or 64 << 20}
        scratch = _probe(lambda: own_namespaces(self.privileged, self.config["child_scratch"]))
        isolation["scratch"] = scratch or True
        isolation["ipc"] = True if not scratch else (_probe(lambda: _own_ipc_namespace(self.privileged)) or True)
        loaded = self.warm_up()
        self.baseline = {root: set(_names(root)) for root in self._scratch_roots()}
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.send({"ok": True, "ready": True, "pid": os.getpid(), "loaded": loaded,
                   "python": sys.version.split()[0], "isolation": isolation,
                   "cpu": round(usage.ru_utime + usage.ru_stime, 3)})
        while True:
            if self.child_pid and not self.ended:
                ready, _, _ = select.select([self.ctrl], [], [], CPU_POLL)
                if not ready:
                    self.enforce_cpu_budget()
                    continue
            try:
                data = self.ctrl.recv(1 << 20)
            except InterruptedError:
                continue
            except OSError:
                break
            if not data:
                break  # the grader is gone
            request = json.loads(data)
            op = request.get("op")
            if op == "spawn":
                self.spawn(request)
            elif op == "kill":
                if self.ended:
                    status = self.ended  # killed already: child_cpu holds its CPU time
                else:
                    self.child_cpu = 0.0
                    status = self.child_status(float(request.get("wait", 0)))
                    self.kill_all(self.child_pid)
                self.ended = ""
                self.send({"ok": True, "child_status": status, "child_cpu": round(self.child_cpu, 4)})
            elif op == "cpu":
                self.send({"ok": True, "cpu": round(self.tree_cpu(), 4)})
            elif op == "exit":
                self.kill_all()
                me = resource.getrusage(resource.RUSAGE_SELF)
                children = resource.getrusage(resource.RUSAGE_CHILDREN)
                try:
                    self.send({"ok": True, "cpu": me.ru_utime + me.ru_stime,
                               "children_cpu": children.ru_utime + children.ru_stime})
                except OSError:
                    pass  # the grader does not wait for this answer
                break
            else:
                self.send({"ok": False, "error": f"unknown op {op!r}"})
        self.kill_all()

    def send(self, message: dict, fds: list[int] | None = None) -> None:
        data = json.dumps(message).encode()
        if fds:
            socket.send_fds(self.ctrl, [data], fds)
        else:
            self.ctrl.send(data)

    def spawn(self, request: dict) -> None:
        self.kill_all()  # one child at a time, always from a clean slate
        self.ended = ""
        self.child_cpu = 0.0
        self.cpu_budget = float(request.get("limits", {}).get("cpu_seconds", 300))
        self.counter += 1
        uid = self.uid_base + self.counter if self.privileged else None
        child_dir = os.path.join(self.tmp_root, f"sub{self.counter}")
        os.mkdir(child_dir, 0o700)
        if uid is not None:
            os.chown(child_dir, uid, uid)
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child
            try:
                self.ctrl.close()
                parent_end.close()
                os.close(out_r)
                Child(child_end, out_w, child_dir, uid, request, self.config).run()
            except BaseException:
                pass
            os._exit(0)
        child_end.close()
        os.close(out_w)
        self.child_pid, self.child_uid, self.child_dir = pid, uid, child_dir
        self.send({"ok": True, "pid": pid}, [parent_end.fileno(), out_r])
        parent_end.close()
        os.close(out_r)

    def child_status(self, wait: float) -> str:
        """How the current child ended, if it did (waiting up to `wait` s for it)."""
        if not self.child_pid:
            return ""
        end = time.monotonic() + wait
        while True:
            try:
                pid, status, usage = os.wait4(self.child_pid, os.WNOHANG)
            except ChildProcessError:
                return "ended"
            if pid:
                self.child_pid = 0
                self.child_cpu = usage.ru_utime + usage.ru_stime
                if os.WIFSIGNALED(status):
                    number = os.WTERMSIG(status)
                    try:
                        name = signal.Signals(number).name
                    except ValueError:
                        name = str(number)
                    return f"killed by {name}"
                return f"exit code {os.WEXITSTATUS(status)}"
            if time.monotonic() >= end:
                return "running"
            time.sleep(0.002)

    # -- cleanup: every process that descends from here, every file a child left
    def _processes(self) -> dict[int, tuple[int, str, int]]:
        """pid -> (ppid, state, uid) for every process this zygote can see."""
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    text = handle.read().decode(errors="replace")
                fields = text[text.rfind(")") + 2:].split()
                uid = os.stat(f"/proc/{entry}").st_uid
                found[int(entry)] = (int(fields[1]), fields[0], uid)
            except (OSError, IndexError, ValueError):
                continue
        return found

    def _children_of(self, pid: int) -> list[int] | None:
        """Direct children from /proc/PID/task/*/children (None where the kernel lacks that file)."""
        found: list[int] = []
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return []
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    found += [int(p) for p in handle.read().split()]
            except FileNotFoundError:
                if pid == os.getpid():
                    return None
            except (OSError, ValueError):
                continue
        return found

    def _tree(self) -> list[int] | None:
        """Every process below this zygote, zombies included (None where the kernel cannot tell)."""
        direct = self._children_of(os.getpid())
        if direct is None:
            return None
        found, seen, stack = [], set(), list(direct)
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            found.append(pid)
            stack.extend(self._children_of(pid) or [])
        return found

    def _doomed(self) -> list[int]:
        """Every live process below this zygote (orphans come back to it: it is a subreaper)."""
        tree = self._tree()
        if tree is not None:
            return [pid for pid in tree if _state(pid) not in ("Z", "")]
        return self._doomed_by_scan()

    def enforce_cpu_budget(self) -> None:
        """One budget for all the child's processes and threads: RLIMIT_CPU counts each process alone.

        Zombies keep their times and a parent's cutime/cstime holds the
        children it reaped; orphans are never reaped before the kill, so
        nothing that ran escapes the sum.
        """
        used = self.tree_cpu()
        if used > self.cpu_budget:
            self.ended = f"killed: its processes used more than {self.cpu_budget:g} s of CPU"
            self.kill_all(self.child_pid)
            self.child_cpu = max(self.child_cpu, used)

    def tree_cpu(self) -> float:
        """CPU seconds of the current child's whole process tree (what it used before an end, if ended)."""
        if not self.child_pid:
            return self.child_cpu if self.ended else 0.0
        tree = self._tree()
        if tree is None:
            tree = self._doomed_by_scan()
        ticks = os.sysconf("SC_CLK_TCK") or 100
        return sum(_cpu_ticks(pid) for pid in tree) / ticks

    def _doomed_by_scan(self) -> list[int]:
        me = os.getpid()
        processes = self._processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in processes.items():
            children.setdefault(ppid, []).append(pid)
        doomed, stack = set(), list(children.get(me, []))
        while stack:
            pid = stack.pop()
            if pid in doomed:
                continue
            doomed.add(pid)
            stack.extend(children.get(pid, []))
        if self.child_uid is not None:  # a child's uid is its own: anything running as it goes too
            doomed.update(pid for pid, (_, _, uid) in processes.items() if uid == self.child_uid and pid != me)
        return [pid for pid in doomed if processes[pid][1] != "Z"]

    def _reap(self, watch: int = 0) -> None:
        while True:
            try:
                pid, _, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == watch:
                self.child_cpu = usage.ru_utime + usage.ru_stime

    def kill_all(self, watch: int = 0) -> None:
        for _ in range(200):
            doomed = self._doomed()
            if not doomed:
                break
            for pid in doomed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.001)
            self._reap(watch)
        self._reap(watch)
        self.child_pid = 0
        self.wipe()
        self.child_uid = None

    def _scratch_roots(self) -> list[str]:
        """Where a child can leave files for the next one."""
        roots = [self.tmp_root, "/tmp", "/dev/shm"]
        if not self.config.get("in_bwrap"):
            roots.append("/var/tmp")
        return list(dict.fromkeys(roots))

    def wipe(self) -> None:
        """Remove what the last child wrote where the next one could read it, and nothing else.

        Only entries that were not there when the zygote got ready go, and in the
        host's shared folders (the fallback) only those of the child's own uid:
        the parents bwrap made in /tmp for its binds, and other users' files,
        stay untouched. No symlink is ever followed.
        """
        for root in self._scratch_roots():
            shared = not self.config.get("in_bwrap") and root != self.tmp_root
            if shared and self.child_uid is None:
                continue  # without a uid of its own a child's files cannot be told from anyone's
            try:
                root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                before = self.baseline.get(root, set())
                for name in _names(root_fd):
                    if name in before:
                        continue
                    try:
                        info = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if shared and info.st_uid != self.child_uid:
                        continue
                    _remove(root_fd, name)
            finally:
                os.close(root_fd)
        self.child_dir = None


def _warm_torch(torch) -> None:
    """Run once what attention code calls, so that lazy initialisation is paid here, not per child."""
    torch.set_num_threads(1)
    F, nn = torch.nn.functional, torch.nn
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 2, 2, 5, 4, generator=g).unbind(0)  # (B, H, T, d)
    future = torch.ones(5, 5, dtype=torch.bool).triu(diagonal=1)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(4)).masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    (weights @ v).sum()
    F.scaled_dot_product_attention(q, k, v, is_causal=True)
    F.scaled_dot_product_attention(q, k, v, attn_mask=~future)
    torch.isfinite(weights).all()
    torch.allclose(weights, weights)
    torch.where(future, torch.zeros(()), torch.full((), float("-inf")))
    torch.tril(torch.ones(4, 4)).bool() | torch.eye(4, dtype=torch.bool)
    torch.arange(5).unsqueeze(-1) >= torch.arange(5).unsqueeze(0)
    F.one_hot(scores.argmax(dim=-1), 5).float()
    x = torch.randn(5, 4, generator=g, requires_grad=True)
    (x @ x.T).softmax(dim=-1).sum().backward()
    torch.autograd.functional.jacobian(lambda t: torch.softmax(t @ t.T, dim=-1) @ t, torch.randn(4, 3, generator=g))
    layer = nn.Linear(4, 4)
    with torch.no_grad():
        layer(torch.randn(2, 5, 4)).view(2, 5, 2, 2).transpose(1, 2).reshape(2, 5, 4)
        nn.MultiheadAttention(4, 2, batch_first=True)(x[None], x[None], x[None], attn_mask=future,
                                                       need_weights=False)
        layer.load_state_dict(layer.state_dict())
        torch.cat([x, x], dim=0)
        torch.stack([x, x]).detach().double().tolist()


# ---------------------------------------------------------------- fallback isolation (root, no bwrap)
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18


def _mount(source, target, fstype, flags, data=None) -> None:
    if _libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(), flags,
                   data and data.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def private_mounts(hide: list[str], keep: list[str], writable: list[str], scratch_bytes: int = 0) -> dict:
    """Without bwrap but as root: a private mount namespace and no network for this zygote.

    Each directory in `hide` (the repository, the gradebook, the submissions)
    and each parent of a `keep` path that other users cannot traverse (/root)
    is covered by an empty tmpfs, into which only the `keep` paths below it are
    bound back, read-only. Children, which run under uids of their own, see the
    Python installation and nothing else of those trees.
    """
    done = {"network": False, "hidden": [], "error": ""}
    if _libc is None:
        done["error"] = "no libc"
        return done
    done["network"] = _libc.unshare(CLONE_NEWNET) == 0
    if _libc.unshare(CLONE_NEWNS) != 0:
        done["error"] = "unshare(CLONE_NEWNS): " + os.strerror(ctypes.get_errno())
        return done
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        keep = [os.path.realpath(k) for k in keep if os.path.exists(k)]
        writable = [os.path.realpath(w) for w in writable]
        covers = {os.path.realpath(h) for h in hide if os.path.isdir(h)}
        for path in keep:
            covers.update(p for p in _parents(path) if p != "/" and not os.stat(p).st_mode & 0o001)
        chosen: list[str] = []
        for cover in sorted(covers, key=len):
            if cover == "/" or any(_inside(cover, c) for c in chosen) or any(_inside(cover, k) for k in keep):
                continue
            chosen.append(cover)
        for cover in chosen:
            inside = sorted((k for k in keep if _inside(k, cover)), key=len)
            handle = os.open(cover, os.O_PATH | os.O_DIRECTORY)
            try:
                _mount("tmpfs", cover, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
                for path in inside:
                    os.makedirs(path, mode=0o755, exist_ok=True)
                    _mount(f"/proc/self/fd/{handle}{path[len(cover):]}", path, None, MS_BIND | MS_REC)
                    if path not in writable:
                        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
            finally:
                os.close(handle)
            done["hidden"].append(cover)
    except OSError as error:
        done["error"] = str(error)
    if not done["error"]:
        # Student code may then write nowhere on the host: each child mounts its own empty scratch folders.
        try:
            done["writable"] = read_only_host(writable)
            done["read_only"] = True
        except OSError as error:
            done["error"] = f"read-only host: {error}"
    if scratch_bytes and os.path.isdir("/dev/shm"):
        # The host's /dev/shm is an unbounded tmpfs shared with everyone: the children get a sized one.
        try:
            _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={scratch_bytes}")
            done["shm"] = True
        except OSError as error:
            done["shm"] = False
            done["error"] = done["error"] or str(error)
    return done


def _parents(path: str) -> list[str]:
    parents, current = [], os.path.dirname(path)
    while True:
        parents.append(current)
        if current == "/":
            return parents
        current = os.path.dirname(current)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode(errors="replace")
        return text[text.rfind(")") + 2:].split()[0]
    except (OSError, IndexError):
        return ""


def _names(directory) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _remove(root_fd: int, name: str) -> None:
    """Delete `name` of the directory `root_fd`, never following a symlink nor entering another mount.

    Every step goes through directory descriptors, so a link planted
    anywhere in the tree (`link -> /some/host/dir`) is unlinked, never
    chmod-ed or descended into. Directories deeper than MAX_DEPTH are first
    moved up into `root_fd`, so that the recursion and the open descriptors
    stay bounded whatever the child built.
    """
    try:
        device = os.fstat(root_fd).st_dev
    except OSError:
        return
    pending = [name]
    for _ in range(1 << 16):
        if not pending:
            return
        _remove_entry(root_fd, pending.pop(), device, 0, root_fd, pending)


def _remove_entry(dir_fd: int, name: str, device: int, depth: int, root_fd: int, pending: list[str]) -> None:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        _try(os.unlink, name, dir_fd=dir_fd)
        return
    if info.st_dev != device:
        return  # a mount point (bwrap's own binds): not a child's file
    if depth >= MAX_DEPTH:
        hoisted = f".wipe-{info.st_ino}-{depth}-{len(pending)}"
        if _try(os.rename, name, hoisted, src_dir_fd=dir_fd, dst_dir_fd=root_fd):
            pending.append(hoisted)
        return
    fd = _open_directory(dir_fd, name, info)
    if fd is None:
        return
    try:
        for child in _names(fd):
            _remove_entry(fd, child, device, depth + 1, root_fd, pending)
    finally:
        os.close(fd)
    _try(os.rmdir, name, dir_fd=dir_fd)


def _open_directory(dir_fd: int, name: str, expected: os.stat_result) -> int | None:
    """A readable descriptor of the directory `name`, the very one lstat saw (a child may leave it 0o000)."""
    flags = os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        handle = os.open(name, flags | os.O_PATH, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        now = os.fstat(handle)
        if (now.st_dev, now.st_ino) != (expected.st_dev, expected.st_ino):
            return None
        # chmod through the descriptor's /proc link acts on this directory itself, not on a path
        _try(os.chmod, f"/proc/self/fd/{handle}", 0o700)
        return os.open(".", os.O_RDONLY | flags, dir_fd=handle)
    except OSError:
        return None
    finally:
        os.close(handle)


def _try(function, *args, **kwargs) -> bool:
    try:
        function(*args, **kwargs)
        return True
    except OSError:
        return False


def _cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of one process (zombies included), in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode(errors="replace")
        fields = text[text.rfind(")") + 2:].split()
        return sum(int(fields[i]) for i in range(14 - 3, 18 - 3))
    except (OSError, IndexError, ValueError):
        return 0


SCRATCH_CANDIDATES = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run/shm", "/dev/mqueue", "/var/lock")


def scratch_roots(in_bwrap: bool) -> list[str]:
    """The folders any user may write to (mode o+w, not links): each child gets them empty.

    Inside bwrap only /tmp and /dev/shm are writable at all; in the fallback
    the zygote makes every other mount read-only (read_only_host).
    """
    found = []
    for path in (("/tmp", "/dev/shm") if in_bwrap else SCRATCH_CANDIDATES):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002 and path not in found:
            found.append(path)
    return found


def own_namespaces(privileged: bool, scratch: dict) -> str:
    """A mount and an IPC namespace of this process's own, an empty tmpfs on each scratch root; '' or why not.

    The next child, in a namespace of its own, starts from empty folders again:
    nothing a child leaves there (132 000 nested folders, a file in /run/lock)
    outlives it, whatever the zygote's wipe could remove. As root the child
    cannot undo the mounts once it has its own uid; without root it needs a
    user namespace (where it could, but it runs as the instructor anyway).
    """
    if _libc is None:
        return "no libc"
    wanted = CLONE_NEWNS | CLONE_NEWIPC
    if _libc.unshare(wanted) != 0:
        error = os.strerror(ctypes.get_errno())
        if privileged:
            return f"unshare: {error}"
        uid, gid = os.getuid(), os.getgid()
        if _libc.unshare(CLONE_NEWUSER | wanted) != 0:
            return f"unshare: {error}; with a user namespace: {os.strerror(ctypes.get_errno())}"
        for path, text in (("/proc/self/uid_map", f"{uid} {uid} 1"), ("/proc/self/setgroups", "deny"),
                           ("/proc/self/gid_map", f"{gid} {gid} 1")):
            _try(_write, path, text)
    try:
        fresh_scratch(list(scratch.get("roots", [])), list(scratch.get("keep", [])), int(scratch.get("size", 0)))
    except OSError as error:
        return f"scratch: {error}"
    return ""


def fresh_scratch(roots: list[str], keep: list[str], size: int) -> None:
    """Cover each root with an empty tmpfs of `size` bytes, binding back (read-only) what `keep` has inside
    it (a Python installation or the worker's files under /tmp)."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    umask = os.umask(0o022)  # the folders made for the binds: traversable by the child's uid
    try:
        for root in roots:
            _fresh_tmpfs(root, keep, size)
    finally:
        os.umask(umask)


def _fresh_tmpfs(root: str, keep: list[str], size: int) -> None:
    """An empty tmpfs on `root`; each `keep` path inside it bound back read-only from the view below."""
    below = os.open(root, os.O_PATH | os.O_DIRECTORY)  # the folder as it was, reachable once covered
    try:
        _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={max(size, 1 << 20)}")
        bound: list[str] = []
        for path in sorted((k for k in keep if _inside(k, root) and k != root), key=len):
            source = f"/proc/self/fd/{below}{path[len(root):]}"
            if any(_inside(path, b) for b in bound) or not os.path.isdir(source):
                continue
            os.makedirs(path, 0o755, exist_ok=True)
            _mount(source, path, None, MS_BIND | MS_REC)
            remount_read_only(path)
            bound.append(path)
    finally:
        os.close(below)


# statvfs flags and the mount flags that say the same
_KEPT_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, 8), (os.ST_NOATIME, 1024),
               (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21))


def remount_read_only(path: str) -> None:
    """Make the mount at `path` read-only, keeping its other flags (a user namespace may not clear them)."""
    flags = os.statvfs(path).f_flag
    extra = 0
    for st_flag, ms_flag in _KEPT_FLAGS:
        if flags & st_flag:
            extra |= ms_flag
    _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | extra)


def _mount_points() -> list[str]:
    points = []
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            for line in handle:
                fields = line.split(b" ")
                if len(fields) > 4:
                    point = _unescape_mountinfo(fields[4].decode("utf-8", "surrogateescape"))
                    if point not in points:
                        points.append(point)
    except OSError:
        pass
    return points


def _unescape_mountinfo(text: str) -> str:
    """mountinfo's escapes (\\040 for a space) back into characters."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 3 < len(text) and text[i + 1:i + 4].isdigit():
            out.append(chr(int(text[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def read_only_host(writable: list[str]) -> list[str]:
    """Every mount of this (private) namespace read-only, but /proc, /sys and `writable`; the mount points
    that could not be made so (they stay writable to whoever may write there)."""
    for path in writable:
        _mount(path, path, None, MS_BIND | MS_REC)  # a mount of its own, which stays writable
    failed = []
    for point in sorted(_mount_points(), key=len):
        if any(_inside(point, top) for top in ("/proc", "/sys", *writable)):
            continue
        try:
            remount_read_only(point)
        except OSError:
            failed.append(point)
    return failed


def _own_ipc_namespace(privileged: bool) -> str:
    """Give this process System V IPC and POSIX message queues of its own; '' or why not.

    The namespace, and every segment, semaphore and queue in it, goes away
    with the last process inside it: nothing of them survives the child.
    """
    if _libc is None:
        return "no libc"
    if _libc.unshare(CLONE_NEWIPC) == 0:
        return ""
    error = os.strerror(ctypes.get_errno())
    if privileged:
        return f"unshare(CLONE_NEWIPC): {error}"
    uid = os.getuid()
    # Without privileges: a user namespace of its own first, which maps the same uid (so files are as before)
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        return f"unshare(CLONE_NEWIPC): {error}; with a user namespace: {os.strerror(ctypes.get_errno())}"
    try:
        with open("/proc/self/uid_map", "w") as handle:
            handle.write(f"{uid} {uid} 1")
    except OSError:
        pass
    return ""


def _probe(action) -> str:
    """Run `action` in a throw-away fork: '' when it worked, else its reason (the zygote itself stays as it is)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            os.write(write_end, (action() or "").encode()[:500])
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        reason = handle.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return reason


# ---------------------------------------------------------------- child
class _Anything:
    """What `get_ipython()` returns here: every method exists and does nothing."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __bool__(self):
        return False

    def __repr__(self):
        return ""


class Child:
    def __init__(self, sock: socket.socket, out_fd: int, workdir: str, uid: int | None, request: dict,
                 config: dict):
        self.config = config
        self.sock = sock
        self.out_fd = out_fd
        self.workdir = workdir
        self.uid = uid
        self.request = request
        self.reader = None
        self.lock = threading.RLock()  # one message at a time on the socket (a test may use threads)
        self.pending: list[dict] = []  # requests read while waiting for a remote reply
        self.remote_seq = 0

    def setup(self) -> None:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(self.out_fd, 1)
        os.dup2(self.out_fd, 2)
        os.close(self.out_fd)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
            try:
                signal.signal(signum, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        limits = self.request.get("limits", {})
        env = {"HOME": self.workdir, "TMPDIR": self.workdir, "PATH": "/usr/bin:/bin",
               "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
        env.update(self.request.get("env", {}))
        os.environ.clear()
        os.environ.update(env)
        import tempfile

        tempfile.tempdir = None
        os.umask(0o077)

        def limit(which, soft, hard=None):
            try:
                resource.setrlimit(which, (soft, hard if hard is not None else soft))
            except (ValueError, OSError):
                pass

        memory = int(limits.get("memory_bytes", 2 << 30))
        cpu = int(limits.get("cpu_seconds", 120))
        limit(resource.RLIMIT_DATA, memory)
        limit(resource.RLIMIT_CPU, cpu, cpu + 5)
        limit(resource.RLIMIT_FSIZE, int(limits.get("file_bytes", 64 << 20)))
        limit(resource.RLIMIT_CORE, 0)
        # While still privileged: the first the OOM killer takes in the slot's cgroup, never the zygote,
        # and a score the child cannot lower again once it has lost CAP_SYS_RESOURCE.
        _try(_write, "/proc/self/oom_score_adj", "1000")
        # Empty scratch space and IPC of its own, whatever an earlier child left (the zygote also wipes)
        if own_namespaces(self.uid is not None, self.config.get("child_scratch", {})):
            _own_ipc_namespace(self.uid is not None)
        parent = os.path.dirname(self.workdir)  # on the new tmpfs, where there is one
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o711)
            os.chmod(parent, 0o711)  # traversable by the child's uid, whatever the umask
        os.makedirs(self.workdir, 0o700, exist_ok=True)
        if self.uid is not None:
            os.chown(self.workdir, self.uid, self.uid)
        os.chdir(self.workdir)
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
            limit(resource.RLIMIT_NPROC, int(limits.get("processes", 64)))
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        sys.argv = ["notebook"]

    def send(self, message: dict) -> None:
        try:
            data = json.dumps(message)
        except (TypeError, ValueError) as error:
            data = json.dumps({"id": message.get("id"), "result": {"error": {
                "type": "EncodingError", "message": str(error)[:MAX_MESSAGE]}}})
        if len(data) > MAX_ANSWER and "result" in message:  # the grader would not read it
            data = json.dumps({"id": message.get("id"), "result": {"error": {
                "type": "ValueError", "message": "the value is too large to send to the grader"}}})
        with self.lock:
            self.sock.sendall(data.encode("utf-8", "surrogatepass") + b"\n")

    def receive(self) -> dict | None:
        with self.lock:
            if self.pending:
                return self.pending.pop(0)
            return self._read()

    def _read(self) -> dict | None:
        line = self.reader.readline()
        if not line:
            return None
        return json.loads(line)

    def remote(self, message: dict) -> dict:
        """Ask the grader to run a function handed to the student's test (runtime.remote_function)."""
        with self.lock:
            self.remote_seq += 1
            message["seq"] = self.remote_seq
            self.send(message)
            while True:
                reply = self._read()
                if reply is None:
                    raise ConnectionError("the grader is gone")
                if reply.get("remote_reply") == self.remote_seq:
                    return reply
                self.pending.append(reply)

    def run(self) -> None:
        self.setup()
        self.reader = self.sock.makefile("rb")
        init = self.receive()
        if init is None:
            return
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        builtins.display = lambda *args, **kwargs: None
        builtins.get_ipython = lambda: _Anything()
        skip = set(init.get("skip", []))
        for index, source in enumerate(init.get("cells", [])):
            if index in skip:
                continue
            self.send({"cell": index})
            try:
                code = compile(source, f"<cell {index + 1}>", "exec")
                exec(code, namespace)
            except BaseException as error:  # SystemExit, KeyboardInterrupt too: the cell failed, the notebook goes on
                self.send({"cell_error": index, "type": type(error).__name__[:80], "message": _safe_str(error)})
            _flush()
        self.send({"ready": True})
        runtime = sys.modules["runtime"]
        runtime.connect_remote(self.remote)
        run_call = runtime.run_call
        while True:
            request = self.receive()
            if request is None:
                return
            try:
                result = run_call(namespace, request["call"])
            except BaseException as error:  # sys.exit() inside a student's function is that function's error
                result = {"error": {"type": type(error).__name__, "message": _safe_str(error)}}
            _flush()
            self.send({"id": request.get("id"), "result": result})


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _safe_str(error: BaseException) -> str:
    try:
        return str(str(error)[:MAX_MESSAGE])
    except BaseException:  # a __str__ that raises SystemExit must not end the child either
        return "<message unavailable>"


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def main(config: dict, ctrl: socket.socket) -> None:
    """Started by sandbox.BOOTSTRAP, which read `config` from the control socket `ctrl`."""
    if config["worker_dir"] not in sys.path:
        sys.path.insert(0, config["worker_dir"])
    sys.path.extend(config.get("site_packages", []))
    Zygote(config, ctrl).serve()
