"""Keep freed memory in the process (glibc's malloc), so numpy's large temporaries are not page-faulted in afresh at
every allocation.

By default glibc serves a block above its mmap threshold (128 KiB, adapting up to 32 MiB) with a fresh mmap and
returns it to the system when freed, and trims the heap's free top above 128 KiB: an array of a few MiB allocated
and freed in every round of a run (a gradient, a logistic's temporaries) then costs a page fault per 4 KiB each
time. Measured (issue 17): 0.5 (1 + tanh(t / 2)) on a (20, 3000, 8) array took 4.2 ms by default, 0.6 ms with the
thresholds below. Blocks above 32 MiB (glibc's largest mmap threshold) were still mapped and returned one by one,
and on this machine a page fault costs about 9 us (0.45 s for a fresh 200 MB array): no block is mapped on its own
any more (M_MMAP_MAX = 0), every block of the main thread comes from the heap, whose freed memory is reused
(threads other than the main one keep glibc's own arenas). A freed block below a live one stays in the heap, so a
later, larger array may grow the heap instead of reusing it: a learning unit starts by handing the heap's free pages
back (``release_freed_memory``), so that such growth stays within one unit. sdp_mbsgd_convex_d1 at
50 trials (a data set of 2.5 x 10^7 records per unit, drawn with a few array temporaries): 3.9-4.8 s of system
time -> 2.4 s, 28-30 s wall -> 25 s (with the trim per unit; the same peak memory, 1.3 GB). Where the memory comes from changes no number a run computes;
a process keeps up to TRIM_THRESHOLD of freed heap top for reuse (freed blocks below the top are reused, not
returned). Linux with glibc only; elsewhere nothing changes."""
from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4       # mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 2**20                        # glibc's largest allowed value on 64-bit
TRIM_THRESHOLD = 512 * 2**20


def keep_freed_memory() -> bool:
    """Set the thresholds for this process (and the worker processes it forks afterwards); whether they were set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):              # not glibc (e.g. musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return (bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) & bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
            & bool(mallopt(M_MMAP_MAX, 0)))


def release_freed_memory() -> bool:
    """Give the heap's free pages back to the system (glibc's malloc_trim(0)); whether it ran. Called between units
    of work, never inside one: the next unit faults its pages in once."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True
