"""The app server's use of the machine: one thread per computation, and a heap that gives memory back.

One thread per computation in the app server: its sessions already run side by side (mha_core.turns lets two
compute at once on a 2-core machine), so numpy's OpenBLAS and torch each starting a pool as large as the machine
only oversubscribe the cores, and both pools busy-wait for work (benchmarks/bench_real.py --class shows the cost).
"""

from __future__ import annotations

import ctypes
import sys
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
