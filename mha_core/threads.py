"""The app server's use of the machine: one thread per computation, and a heap that gives memory back.

One thread per computation in the app server: its sessions already run side by side (mha_core.turns lets two
compute at once on a 2-core machine), so numpy's OpenBLAS and torch each starting a pool as large as the machine
only oversubscribe the cores, and both pools busy-wait for work (benchmarks/bench_real.py --class shows the cost).
"""

from __future__ import annotations

import ctypes
import gc
import sys
from dataclasses import dataclass
from pathlib import Path

# OpenBLAS's thread setter under the names its builds export: numpy's wheels (scipy-openblas, 64-bit ints) and
# a system OpenBLAS.
_BLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
                 "openblas_set_num_threads")
_BLAS_GETTERS = tuple(s.replace("set_", "get_") for s in _BLAS_SETTERS)


def _loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS libraries this process has loaded (Linux: /proc/self/maps; elsewhere none)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    return sorted({line.split()[-1] for line in maps.splitlines() if "openblas" in line.rsplit("/", 1)[-1].lower()
                   and line.split()[-1].startswith("/")})


def _blas_call(names: tuple[str, ...], *args: int) -> list[int]:
    """Call the first of ``names`` that each loaded OpenBLAS exports; what each call returned."""
    out = []
    for path in _loaded_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        fn = next((getattr(lib, n) for n in names if hasattr(lib, n)), None)
        if fn is not None:
            out.append(int(fn(*args) or 0))
    return out


def blas_threads() -> list[int]:
    """Each loaded OpenBLAS's thread count (empty when numpy uses another BLAS)."""
    return _blas_call(_BLAS_GETTERS)


M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8   # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 256 * 1024             # blocks from this size are mapped on their own and unmapped when freed
ARENA_MAX = 4                           # malloc arenas at most (glibc's default: 8 per core)


def bounded_heap() -> bool:
    """glibc only: keep large blocks (a sentence's attention, its temporaries) out of the heap, so that freeing them
    gives the memory back, and bound the per-thread arenas that each session's script thread may create; False
    elsewhere. glibc raises its mmap threshold after each large free (up to 32 MiB), after which a class's arrays
    land in heap arenas that malloc_trim cannot shrink, and the server would stay far above its start after a class
    (benchmarks/bench_real.py --class measures it)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX))
    except (OSError, AttributeError):
        return False


def set_threads(n: int) -> None:
    """numpy's BLAS and, once loaded, torch's intra-op pool to ``n`` threads each (process-wide)."""
    _blas_call(_BLAS_SETTERS, n)
    torch = sys.modules.get("torch")  # never imported here: a page without a model must not pay for torch
    if torch is not None and torch.get_num_threads() != n:
        torch.set_num_threads(n)


SWITCH_INTERVAL_S = 0.001  # Python's default: 0.005


def quick_handoffs() -> None:
    """The GIL handed over after 1 ms instead of Python's 5 (process-wide). The server's event loop lets go of the
    GIL at every message it sends (a socket write, a look at its sockets), and while a page's script holds it,
    waited up to the switch interval to get it back each time: in a class of 60 being redrawn, a ballot's answer
    left the server about 0.2 s after its run ended, and a vote took 0.6 s (p50) to be confirmed; with 1 ms,
    0.17–0.25 s (benchmarks/bench_live, issue 26). More switches between two busy scripts cost little against that."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def one_thread_each() -> None:
    """One thread each (idempotent): what the app server computes with."""
    set_threads(1)


YOUNG_COLLECTION = 10_000  # new objects (net) that start a young collection (Python's default: 700)
FREEZES_MAX = 8            # waves of imports frozen at most (each may also freeze what later becomes a cycle)


def quiet_collector() -> None:
    """Python's garbage collector started by 10,000 new objects instead of 700 (process-wide). Every script run
    leaves a dozen small cycles (its runner, thread, locks and pool) and each of a lesson's 60 redraws a move made
    several young collections: with 700, 1.1 s of young and 0.4 s of middle collections in a 60-student lesson's
    moves and votes; with 10,000, 0.4 s and 0.2 s (benchmarks/bench_live with a collector callback, issue 26). A
    young collection's cost follows the objects still alive when it starts, and most of a run's are gone by then."""
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])


@dataclass
class Frozen:
    """How far the process's code is frozen out of the garbage collector (``settle``)."""

    modules: int = 0  # modules loaded at the last freeze
    freezes: int = 0


FROZEN = Frozen()  # process-wide, as the collector is


def settle(frozen: Frozen = FROZEN) -> bool:
    """Move everything the collector tracks now into its permanent generation, once per wave of imports (True:
    moved now), at most FREEZES_MAX times. A run ends with code loaded that lives as long as the process (modules,
    their tables, the caches' models), and each full collection walked all of it again: 200,000 objects, 70-290 ms
    with the GIL held, seven times in a 60-student lesson, a pause for whoever was being redrawn (issue 26); frozen,
    one full collection in that lesson, of 7,000 objects. ``gc.freeze`` is one list move. What it also moves and
    later dies is freed by its reference count; only a cycle among such objects stays, which the bound keeps small."""
    loaded = len(sys.modules)
    if loaded <= frozen.modules or frozen.freezes >= FREEZES_MAX:
        return False
    gc.freeze()
    frozen.modules, frozen.freezes = loaded, frozen.freezes + 1
    return True
