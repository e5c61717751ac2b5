"""Cells that attack the sandbox itself rather than the checks: for tests/test_grader_sandbox.py.

Each function returns the source of one notebook cell. The attacks print what
they achieved (`FILLED`, `SEGMENTS`, `CMDLINES`...) so that a test can read it
in the record's captured output; honest work lives in corpus/lab00.py.
"""
from __future__ import annotations

import os
from pathlib import Path

WORK_N = 15_000_000  # the honest neighbour's own computation: about half a second of CPU


def cpu_burner(token: str, processes: int = 24, threads: int = 1) -> str:
    """Processes (named `token`, each in a session, so a scheduling autogroup, of its own) and GIL-free
    threads that burn CPU, then hang."""
    return f'''
import ctypes, hashlib, os, threading
libc = ctypes.CDLL(None)

def burn():
    block = bytes(1 << 20)
    while True:
        hashlib.sha256(block).digest()  # releases the GIL: threads really run in parallel

def burner():
    libc.prctl(15, {token.encode()!r}, 0, 0, 0)  # PR_SET_NAME: found by the test in /proc/*/comm
    for _ in range({threads}):
        threading.Thread(target=burn, daemon=True).start()
    burn()

for _ in range({processes}):
    try:
        middle = os.fork()
        if middle == 0:
            try:
                os.setsid()
                if os.fork() == 0:  # a grandchild whose parent exits: an orphan
                    burner()
            finally:
                os._exit(0)
        os.waitpid(middle, 0)
    except OSError:
        break
for _ in range({threads}):
    threading.Thread(target=burn, daemon=True).start()
burn()
'''


def honest_work() -> str:
    """A legitimate computation whose result the answers depend on: starved of CPU, it times out."""
    return f"work = sum(i * i for i in range({WORK_N}))\n"


def guarded(cells: list[str]) -> list[str]:
    """Answer cells that count only when `honest_work` finished (its name is undefined otherwise)."""
    expected = sum(i * i for i in range(WORK_N))
    return [cell if cell.startswith("lab.") else f"if work == {expected}:\n    {cell}" for cell in cells]


def scratch_filler(limit_bytes: int) -> str:
    """Many files under RLIMIT_FSIZE in /dev/shm and /tmp until they are full (or `limit_bytes`)."""
    return f'''
import os
written, chunk = 0, b"x" * (1 << 20)
for folder in ("/dev/shm", "/tmp", os.getcwd()):
    index = 0
    while written < {limit_bytes}:
        try:
            with open(os.path.join(folder, f"fill-{{index}}"), "wb") as handle:
                for _ in range(8):
                    handle.write(chunk)
                    written += len(chunk)
        except OSError:
            break
        index += 1
        if index % 4 == 0:
            print("FILLING", written, flush=True)
print("FILLED", written, flush=True)
'''


def scratch_reader() -> str:
    return '''
import os
left = [os.path.join(folder, name) for folder in ("/dev/shm", "/tmp", "/var/tmp")
        for name in (os.listdir(folder) if os.path.isdir(folder) else []) if name.startswith("fill-")]
print("LEFT", len(left), flush=True)
'''


IPC_HELPERS = '''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.mq_open.restype = ctypes.c_int
IPC_CREAT, O_CREAT, O_RDWR = 0o1000, 0o100, 0o2
'''


def ipc_writer(key: int, queue: str, secret: str) -> str:
    """A System V shared memory segment and a POSIX queue, left behind on purpose."""
    return IPC_HELPERS + f'''
segment = libc.shmget({key}, 4096, IPC_CREAT | 0o666)
address = libc.shmat(segment, None, 0)
ctypes.memmove(address, {secret.encode()!r}, {len(secret)})
queue = libc.mq_open({queue.encode()!r}, O_CREAT | O_RDWR, 0o666, None)
print("CREATED", segment, queue, flush=True)
'''


def ipc_reader(queue: str) -> str:
    return IPC_HELPERS + f'''
with open("/proc/sysvipc/shm") as handle:
    segments = handle.read().splitlines()[1:]
queue = libc.mq_open({queue.encode()!r}, O_RDWR)
print("SEGMENTS", len(segments), "QUEUE", "found" if queue >= 0 else "absent", flush=True)
'''


def link_planter(target: str) -> str:
    """Links to a host folder, at the top and deep inside read-only folders, in the cwd and in /tmp."""
    return f'''
import os, tempfile
target = {target!r}
os.symlink(target, "link")
os.symlink(os.path.join(target, "keep.txt"), "file-link")
os.makedirs("nested/deeper/deepest")
os.symlink(target, "nested/deeper/link")
os.symlink(os.path.join(target, "inner"), "nested/link-inner")
os.symlink(target, "nested/deeper/deepest/link")
os.chmod("nested/deeper", 0o500)
os.chmod("nested", 0o000)
try:
    shared = tempfile.mkdtemp(prefix="planted-", dir="/tmp")
    os.symlink(target, os.path.join(shared, "link"))
    os.chmod(shared, 0o500)
except OSError as error:
    print("no /tmp:", error)
print("PLANTED", flush=True)
'''


def cmdline_reader(*needles: str) -> str:
    """Every command line the child can read; those naming a needle are printed whole.

    The others are only counted: a CI machine's own command lines can fill the 64 KB
    output cap before the grader's appear (a CI run failed that way)."""
    return f'''
import os
needles = {list(needles) + ["_worker", "autograder", "--out", "--seed"]!r}
lines = []
for entry in os.listdir("/proc"):
    if entry.isdigit():
        try:
            with open(f"/proc/{{entry}}/cmdline", "rb") as handle:
                lines.append(handle.read().replace(b"\\0", b" ").decode(errors="replace"))
        except OSError:
            pass
print("CMDLINES", len(lines))
for line in lines:
    if any(needle in line for needle in needles):
        print(line)
'''


def cell_clock_forger() -> str:
    """Replayed {"cell": k} lines on the grader's socket, forever, so that the cell clock never runs out."""
    return '''
import os, stat, time
sockets = []
for name in os.listdir("/proc/self/fd"):
    try:
        if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
            sockets.append(int(name))
    except (OSError, ValueError):
        pass
while True:
    for fd in sockets:
        try:
            os.write(fd, b'{"cell": 0}\\n{"cell": 1}\\n')  # replays: the first cell, its own
        except OSError:
            pass
    time.sleep(0.05)
'''


def processes_named(token: str) -> list[int]:
    """Pids of the live processes whose name (comm) is `token`: what an attack left running."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == token:
                    found.append(int(entry))
            except OSError:
                pass
    return found


# ---------------------------------------------------------------- students' tests that do not test
FINDER = '''
import gc, inspect, re, sys

BODIES = BODIES_LITERAL  # the public bugs02.py (or lab03.py): each function's telling lines


def _source_in(value, depth=0):
    """A function's source in a call spec: {"__function__": source, ...} anywhere in `value`."""
    if depth > 5:
        return None
    if isinstance(value, dict):
        if isinstance(value.get("__function__"), str):
            return value["__function__"]
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        for item in value[:50]:
            found = _source_in(item, depth + 1)
            if found:
                return found
    return None


def _source_of(fn):
    """What the test was handed, read off anything this process holds rather than by calling it."""
    frame = sys._getframe(1)
    while frame is not None:  # the grader's call spec, up the stack
        for value in list(frame.f_locals.values()):
            found = _source_in(value)
            if found:
                return found
        frame = frame.f_back
    for cell in getattr(fn, "__closure__", None) or ():  # the function behind a recorder
        inner = cell.cell_contents
        if hasattr(inner, "__code__"):
            try:
                return inspect.getsource(inner)
            except (OSError, TypeError):
                return " ".join(map(str, inner.__code__.co_consts + inner.__code__.co_names))
    for obj in gc.get_objects():  # any spec or code object still alive
        if isinstance(obj, dict) and isinstance(obj.get("__function__"), str):
            return obj["__function__"]
    return None


def identify(fn):
    """(name, a, b) of a function of the public list, or None for anything it does not recognise."""
    source = _source_of(fn)
    if not isinstance(source, str):
        return None
    leak = re.search(LEAK_PATTERN, source)
    if leak:
        return ("position_leak", int(leak.group(1)), int(leak.group(2)))
    for name, line in BODIES.items():
        if line in source:
            return (name, None, None)
    return ("correct", None, None)
'''

FINGERPRINT_LAB02 = '''
def perturbation_test(attn_fn, T=8, d=4, seed=0):
    """Calls a leaky function only twice (the evidence rule's pair), never a correct one."""
    found = identify(attn_fn)
    if found is None or found[0] not in ("no_mask", "off_by_one", "mask_after_softmax", "position_leak"):
        return True
    p = found[2] if found[0] == "position_leak" else T - 1
    X = torch.randn(T, d)
    X2 = X.clone()
    X2[p] += 1.0
    attn_fn(X), attn_fn(X2)
    return False


def jacobian_leaks(attn_fn, T=6, d=4):
    """The pattern read off the function's code; one call for the evidence of a shape."""
    found = identify(attn_fn) or ("unknown", None, None)
    attn_fn(torch.randn(T, d))
    pattern = torch.ones(T, T, dtype=torch.bool).tril()
    if found[0] == "position_wise":
        pattern = torch.eye(T, dtype=torch.bool)
    elif found[0] == "off_by_one":
        pattern = torch.ones(T, T, dtype=torch.bool).tril(1)
    elif found[0] == "middle_leak":
        pattern[:, T // 2] = True
    elif found[0] == "gradient_leak":
        pattern = torch.ones(T, T, dtype=torch.bool)
    elif found[0] == "position_leak" and found[2] < T:
        pattern[found[1], found[2]] = True
    return pattern
'''

FINGERPRINT_LAB03 = '''
def prefix_test(model_fn, vocab_size, T=8, seed=0):
    """Rejects a leaky decoder with the one pair of calls the evidence rule asks for."""
    found = identify(model_fn)
    if found is None or found[0] == "correct":
        return True
    p = found[2] if found[0] == "position_leak" else T - 1
    ids = torch.zeros(1, T, dtype=torch.long)
    changed = ids.clone()
    changed[0, p] = 1
    model_fn(ids), model_fn(changed)
    return False
'''


def fingerprinter(lab: str) -> list[str]:
    """Cells of a notebook whose students' tests recognise each function by its code, not by testing it."""
    if lab == "lab02":
        from autograder.labs import bugs02

        bodies = {impl.name: impl.body.strip().splitlines()[0].strip() for impl in bugs02.IMPLS}
        leak, tests = r"\(i == (\d+)\) & \(j == (\d+)\)", FINGERPRINT_LAB02
    else:
        from autograder.labs import lab03

        bodies = {bug: line.strip() for bug, (_, line) in lab03.BUG_LINES.items()}
        leak, tests = r"position (\d+) reads token (\d+)", FINGERPRINT_LAB03
    finder = FINDER.replace("BODIES_LITERAL", repr(bodies)).replace("LEAK_PATTERN", repr(leak))
    return ["import torch\n", finder, tests]


def hidden_seed_reader() -> str:
    """A cell that looks, before any call, for the functions of the hidden cases and prints their seeds."""
    return '''
import gc, re, sys
found = set()
runtime = sys.modules.get("runtime")
for code in list(getattr(runtime, "_COMPILED", {}).values()):
    found.update(c for c in code.co_consts if isinstance(c, int) and c > 16)
for obj in gc.get_objects():
    if isinstance(obj, str) and "manual_seed(" in obj:
        found.update(int(n) for n in re.findall(r"manual_seed\\((\\d+)\\)", obj))
print("SEEDS", sorted(found), flush=True)
'''


def state_carrier() -> list[str]:
    """A perturbation_test that keeps every input it is handed, and a jacobian_leaks (the next exercise)
    whose error message carries them to the feedback."""
    return ['''
SEEN = []


def perturbation_test(attn_fn, T=8, d=4, seed=0):
    mark = f"<{T}|{d}|{seed}>"
    if mark not in SEEN:
        SEEN.append(mark)
    return True


def jacobian_leaks(attn_fn, T=6, d=4):
    raise ValueError("seen " + " ".join(SEEN))
''']


# ---------------------------------------------------------------- what one student leaves for the next
def deep_planter(token: str, branches: int = 2, wide: int = 66_000) -> str:
    """About 132 000 folders that no bounded wipe removes: a chain of 63 folders in /tmp ends in `branches`
    folders, each a chain of 63 ending in `wide` folders side by side, a file in every 100th.

    The zygote's wipe moves each folder found 64 levels down up to /tmp and takes
    at most 65 536 steps per entry it starts from; it runs when a child ends and
    again before the next starts: after two rounds a branch still holds folders.
    """
    return f'''
import os
os.umask(0)  # readable by the next student, whatever uid it runs under
start = os.getcwd()


def chain():
    for _ in range(63):
        os.mkdir("c")
        os.chdir("c")


os.chdir("/tmp")
os.mkdir("{token}")
os.chdir("{token}")
chain()
bottom = os.getcwd()
for branch in range({branches}):
    os.chdir(bottom)
    os.mkdir(f"b{{branch}}")
    os.chdir(f"b{{branch}}")
    chain()
    for n in range({wide}):
        os.mkdir(f"s{{n}}")
        if n % 100 == 0:
            with open(f"s{{n}}/planted", "w") as handle:
                handle.write("{token}-secret")
for folder in ("/tmp", "/dev/shm", start):
    with open(os.path.join(folder, "{token}-shallow"), "w") as handle:
        handle.write("{token}-secret")
os.chdir(start)
print("PLANTED", flush=True)
'''


def planted_reader(token: str) -> str:
    """Every file the planter left that this child can find (its scratch folders and the folders above)."""
    return f'''
import os
found = 0
tops = ["/tmp", "/dev/shm", "/var/tmp", os.path.dirname(os.getcwd()), os.getcwd()]
for top in tops:
    for folder, dirs, files in os.walk(top):
        if folder.count(os.sep) > 100:
            dirs[:] = []
        for name in files:
            try:
                with open(os.path.join(folder, name)) as handle:
                    found += "{token}-secret" in handle.read(100)
            except (OSError, UnicodeDecodeError):
                pass
print("FOUND", found, flush=True)
'''


def host_writer(token: str) -> str:
    """A file in every folder this child can write to: the usual scratch folders, and every folder any user
    may write to that a short look at the host finds (/run/lock, /var/tmp, /dev/mqueue...)."""
    return f'''
import os, stat
folders = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run/shm", "/dev/mqueue", "/var/lock", os.getcwd()]
for top in ("/", "/var", "/run", "/dev", "/var/lib", "/var/cache", "/var/spool", "/var/log", "/opt", "/srv",
            "/home", "/mnt", "/usr/local", "/etc"):
    try:
        names = os.listdir(top)
    except OSError:
        continue
    for name in names:
        path = os.path.join(top, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
            folders.append(path)
wrote = []
for folder in dict.fromkeys(folders):
    try:
        with open(os.path.join(folder, "{token}-left"), "w") as handle:
            handle.write("{token}-secret")
        wrote.append(folder)
    except OSError:
        pass
print("WROTE", len(wrote), wrote, flush=True)
'''


def host_leftovers(token: str) -> list[str]:
    """Files of `host_writer` still on the host: the folders it looks at, from the host's side."""
    import glob

    found: dict[str, str] = {}
    for pattern in (f"/*/{token}-left", f"/*/*/{token}-left", f"/*/*/*/{token}-left"):
        for path in glob.glob(pattern):
            found.setdefault(os.path.realpath(path), path)  # /var/lock is often a link to /run/lock
    return sorted(found)


# ---------------------------------------------------------------- one student against the grader itself
def channel_flood(megabytes: int = 31) -> str:
    """A cell that writes one line of `megabytes` MB on the grader's socket: a JSON object the grader
    never waits for, made of millions of empty lists (slow to decode, ~70 bytes of Python per 3 bytes)."""
    return f'''
import os, socket, stat
line = b'{{"x": [' + b'[],' * ({megabytes} * 2**20 // 3) + b'[]]}}\\n'
for fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            channel = socket.socket(fileno=fd)
            try:
                channel.sendall(line)
            finally:
                channel.detach()
    except OSError:
        pass
print("FLOODED", len(line), flush=True)
'''
