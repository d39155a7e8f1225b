"""Where the work units of a sweep run: in this process, in local worker processes, or on a Dask cluster.

A unit is a sweep point and a set of its trials (engine/kinds/learning/runner.py ``Unit``); its result depends only on
the unit, so every executor gives bit-identical results. ``run(units)`` yields results as units finish, so
the caller can store each one at once (an interrupted sweep keeps every finished unit); ``finished`` counts the
results the caller has taken and come back for (so, in a run that stores them, the units it stored).

Stopping (issue 19). Worker processes die with the process that started them, whatever ends it, even SIGKILL
(Linux: ``PR_SET_PDEATHSIG``; everywhere: a thread in each worker that exits it within ``WATCH_SECONDS`` of its
parent's death), and ignore SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent decides). On
KeyboardInterrupt, or when the caller closes the generator, the parent kills its workers at once instead of
waiting for the units they run (those are lost: a unit is the atomic piece) and cancels the queued ones, so
neither it nor the interpreter's exit waits for work that will be thrown away. ``stoppable()`` makes SIGTERM stop
a run the way Ctrl-C does and keeps a second signal from breaking the cleanup.
"""
from __future__ import annotations

import atexit
import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

from engine import allocator, threads

RETRIES = 2             # a unit whose worker died is run again this many times
WATCH_SECONDS = 0.5     # how often a worker checks that its parent is still there
JOIN_SECONDS = 1.0      # how long a stopped pool's manager thread gets to wind down (twice at most)
GRACE = 2.0             # a further signal this long after the first exits at once, without cleaning up
RESEND_SECONDS = 0.5    # a stop signal is sent again this often until its Interrupted is caught
_PR_SET_PDEATHSIG = 1   # <linux/prctl.h>


class ExecutorError(RuntimeError):
    pass


class Interrupted(KeyboardInterrupt):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM; ``code`` is the conventional exit status, 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.code = 128 + signum


class Stop:
    """The state of a ``stoppable()`` block: the first stop signal, and whether its Interrupted has been caught."""

    def __init__(self, grace: float = GRACE):
        self.grace = grace
        self.signum: int | None = None
        self.first = 0.0
        self.caught = False
        self.deferred = 0                           # > 0: hold the Interrupted back (see held_back)
        self.pending = False

    def handled(self) -> None:
        """Say that the Interrupted was caught and the cleanup is under way: further signals are ignored (for
        ``grace`` seconds) and no longer re-sent."""
        self.caught = True

    def handler(self, signum: int, frame) -> None:
        now = time.monotonic()
        if self.signum is None:
            self.signum, self.first = signum, now
            threading.Thread(target=self._again, name="privbench-stop", daemon=True).start()
        elif self.caught:
            if now - self.first > self.grace:
                os.write(2, b"interrupted again: exiting without cleaning up\n")
                os._exit(128 + signum)
            return
        if self.deferred:
            self.pending = True
            return
        raise Interrupted(self.signum)              # again, if not yet caught: the last one may have been swallowed

    def _again(self) -> None:
        """Until the Interrupted is caught, send the signal again now and then: Python swallows (and prints) an
        exception raised where it cannot propagate (in an at-fork hook, a __del__, a weakref callback)."""
        while not self.caught and self.signum is not None:
            time.sleep(RESEND_SECONDS)
            if not self.caught:
                os.kill(os.getpid(), self.signum)


_ACTIVE: Stop | None = None


@contextlib.contextmanager
def stoppable(grace: float = GRACE) -> Iterator[Stop]:
    """While the block runs, SIGINT and SIGTERM raise ``Interrupted`` (a KeyboardInterrupt) in the main thread,
    again every RESEND_SECONDS until the block's code says it caught it (``stop.handled()``) or it leaves the
    block. Then the handlers stay installed until the process exits (its caller is stopping it): a further signal
    within ``grace`` seconds of the first is ignored, so it cannot break the cleanup (killing the workers, closing
    the store) nor the interpreter's exit with a traceback; one later than that exits at once (os._exit, 128 +
    signal): finished units are in the store already, the workers die with this process. At exit (after the
    threads are joined) both signals are then ignored: the interpreter's finalization gives a signal with a Python
    handler its default action back, so a late Ctrl-C would kill the process instead of letting it exit with its
    status. If no signal came, the previous handlers are put back. Outside the main thread (where handlers cannot
    be installed) it does nothing."""
    global _ACTIVE
    stop = Stop(grace)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {s: signal.signal(s, stop.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    _ACTIVE = stop
    try:
        yield stop
    finally:
        _ACTIVE = None
        stop.caught = True
        if stop.signum is not None:
            atexit.register(_ignore_stop_signals)
        else:
            for s, h in previous.items():
                signal.signal(s, h)


@contextlib.contextmanager
def held_back() -> Iterator[None]:
    """Inside a ``stoppable()`` block, hold a stop signal back while this block runs and raise it right after:
    for starting worker processes, where it would land in an at-fork hook and be swallowed."""
    stop = _ACTIVE
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    stop.deferred += 1
    try:
        yield
    finally:
        stop.deferred -= 1
        if not stop.deferred and stop.pending and not stop.caught and stop.signum is not None:
            stop.pending = False
            raise Interrupted(stop.signum)


def _ignore_stop_signals() -> None:
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)


def die_with_parent(signum: int) -> None:
    """Linux: have the kernel send ``signum`` to this process when the thread that forked it ends (prctl's
    PR_SET_DEATHSIG); elsewhere, or without prctl, nothing (the callers check the parent themselves too)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signum), ctypes.c_ulong(0),
                                                ctypes.c_ulong(0), ctypes.c_ulong(0))
    except (OSError, AttributeError):
        pass


def warm_kernels() -> None:
    """Load the numba kernels (algorithms/kernels.py) in this process before it forks, so that its workers or
    ``run --jobs`` children inherit them (about 0.3 s each). A speed-up only: if loading fails here, a process that
    needs a kernel loads it (or says why it cannot) in its own run."""
    from algorithms import kernels

    try:
        kernels.warm()
    except Exception:
        pass


def _worker_init(parent: int) -> None:
    """The first thing every worker process runs: die with the parent, leave Ctrl-C to it. ``parent``: the pid
    this worker's parent must have (0: unknown, a fork server's child)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    allocator.keep_freed_memory()                   # inherited through fork; a fork server's or spawned child sets it
    threads.one_blas_thread()                       # one process per core: BLAS threads on top would oversubscribe
    # SIGKILL this process when the thread that forked it ends (the pool's workers are started by the thread that
    # submits, here the one iterating run()): with its process, or if that thread alone exits; without prctl, the
    # watch below still ends this worker
    die_with_parent(signal.SIGKILL)
    ppid = os.getppid()
    if parent and ppid != parent:                   # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(ppid,), name="privbench-parent-watch", daemon=True).start()


def _watch_parent(ppid: int) -> None:
    while True:
        time.sleep(WATCH_SECONDS)
        if os.getppid() != ppid:                    # re-parented: the parent is gone
            os._exit(1)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    """Kill a pool's workers now (the units they run are lost), cancel its queued units and let its manager thread
    wind down, so that neither this call nor the interpreter's exit (which joins that thread) waits for a unit.
    Idempotent. Reaches into the pool's internals: concurrent.futures has no way to stop running work."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    thread = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)
    for p in processes:
        with contextlib.suppress(Exception):
            p.kill()
    pool.shutdown(wait=False, cancel_futures=True)
    if thread is None:
        return
    thread.join(JOIN_SECONDS)
    if thread.is_alive() and results is not None:
        # stuck reading a result a killed worker had half written (this process holds the pipe's other end):
        # closing that end gives the read its end of file, and the thread marks the pool broken and exits
        with contextlib.suppress(Exception):
            results._writer.close()
        thread.join(JOIN_SECONDS)


class Sequential:
    name = "sequential"

    def __init__(self) -> None:
        self.finished = 0

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        for u in units:
            yield fn(u)
            self.finished += 1

    def close(self) -> None:
        pass


class Processes:
    """Local worker processes (default: one per core). When a worker dies the pool breaks and every unit
    still in it fails; those units are then run again one at a time, each in a fresh single-worker pool,
    so a unit that kills its worker again is identified and retried at most RETRIES times. ``close()``
    kills the workers of a pool still running (after an interrupt)."""

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self.finished = 0
        self._pools: list[cf.ProcessPoolExecutor] = []

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        pending = list(units)
        if len(pending) <= 1 or self.workers == 1:       # nothing to spread: skip the pool's start-up
            for u in pending:
                yield fn(u)
                self.finished += 1
            return
        broken = yield from self._pool(fn, pending, min(self.workers, len(pending)))
        for unit in broken:                              # a break charges nobody: find the unit that breaks alone
            for _ in range(RETRIES + 1):
                again = yield from self._pool(fn, [unit], 1)
                if not again:
                    break
            else:
                raise ExecutorError(f"a worker died {RETRIES + 1} times running the same unit on its own; giving up")

    def _pool(self, fn: Callable, units: list, workers: int):
        """Run units in one pool, yielding results; returns the units lost to a broken pool."""
        broken = []
        context = multiprocessing.get_context()
        if context.get_start_method() == "fork":
            warm_kernels()                              # the workers inherit the loaded kernels
        # a fork server's children are not ours: they watch the fork server, which exits with this process
        parent = 0 if context.get_start_method() == "forkserver" else os.getpid()
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_init,
                                      initargs=(parent,))
        self._pools.append(pool)
        try:
            with held_back():                            # the first submit forks the workers
                futures = {pool.submit(fn, u): u for u in units}
            for fut in cf.as_completed(futures):
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken.append(futures[fut])
                    continue
                yield result
                self.finished += 1                       # the caller came back: it has stored the result
            pool.shutdown(wait=True)
        except cf.process.BrokenProcessPool:             # broke while submitting: everything is to redo
            _stop(pool)
            self._forget(pool)
            return list(units)
        except BaseException:                            # KeyboardInterrupt, the caller closing us, an error
            _stop(pool)                                  # (if a further signal cuts this short, close() redoes it)
            self._forget(pool)
            raise
        self._forget(pool)
        return broken

    def _forget(self, pool: cf.ProcessPoolExecutor) -> None:
        if pool in self._pools:
            self._pools.remove(pool)

    def close(self) -> None:
        while self._pools:
            _stop(self._pools[-1])
            self._pools.pop()


def _descends_from_us(pid: int, depth: int = 3) -> bool:
    """Whether pid is this process's child, grandchild, ... (a LocalCluster worker is a nanny's child); False where
    /proc cannot tell (then the cluster's own, slower shutdown stops it)."""
    for _ in range(depth):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])       # the parent's pid (field 4; the name may hold spaces)
        if pid == os.getpid():
            return True
    return False


_WORKER_SET_UP = False          # set in each of our LocalCluster's Dask workers by _dask_worker_setup


def _dask_worker_setup() -> None:
    """What a pool worker sets for itself (``_worker_init``), on each worker of our own LocalCluster, now and after a
    restart: freed memory kept for reuse (Dask's nanny starts its workers with MALLOC_TRIM_THRESHOLD_=65536, which
    hands every freed block back at once); one BLAS thread, which the nanny's environment (OMP/MKL/OPENBLAS_NUM_THREADS
    = 1) already gives, set here too so that it does not depend on Dask's configuration. Results do not depend on
    either. ``_WORKER_SET_UP`` says whether the allocator's settings took (Linux with glibc)."""
    global _WORKER_SET_UP
    threads.one_blas_thread()
    _WORKER_SET_UP = allocator.keep_freed_memory()


def _dask_worker_state() -> bool:
    return _WORKER_SET_UP


class Dask:
    """A Dask distributed cluster: ``address`` of a running scheduler (tcp://host:port), or an in-process
    LocalCluster when no address is given. Dask re-runs the tasks of a worker that dies (up to its
    ``distributed.scheduler.allowed-failures``)."""

    name = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError("the dask executor needs dask[distributed]: pip install -e .[cluster]") from None
        self.finished = 0
        self.cluster = None
        self._pids: list[int] = []
        if address:
            self.client = Client(address, timeout="20s")
        else:
            self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            try:
                self.client = Client(self.cluster)
                # our own workers get a pool worker's settings (a remote cluster's workers are configured by
                # whoever runs them)
                self.client.register_worker_callbacks(setup=_dask_worker_setup)
                # the local workers' pids: on an interrupt they are killed at once (a busy worker ignores the
                # nanny's polite stop for 4 s)
                self._pids = [int(p) for p in self.client.run(os.getpid).values()]
            except BaseException:
                self.cluster.close()
                raise
        self._interrupted = False

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        from dask.distributed import as_completed

        # no task retries: the scheduler already reruns the tasks of a worker that dies, and a unit that
        # raises (a numerical error, say) would only raise again
        futures = [self.client.submit(fn, u, pure=False) for u in units]
        try:
            for fut in as_completed(futures):
                yield fut.result()
                self.finished += 1
        except BaseException as e:
            self._interrupted = isinstance(e, KeyboardInterrupt)
            for f in futures:
                f.cancel()
            raise

    def close(self) -> None:
        if self.cluster is not None and self._interrupted:
            import logging

            # stopped by the user: our own local workers die now (their units are dropped anyway) and the
            # cluster's shutdown, which would otherwise wait for them, says nothing about it
            for name in ("distributed", "distributed.nanny", "distributed.worker", "distributed.scheduler"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            for pid in self._pids:
                if _descends_from_us(pid):          # a restarted worker's old pid may be someone else's by now
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make(name: str, *, workers: int | None = None, scheduler: str | None = None):
    if name == "sequential":
        return Sequential()
    if name == "processes":
        return Processes(workers)
    if name == "dask":
        return Dask(scheduler, workers)
    raise ExecutorError(f"unknown executor {name!r}; allowed: sequential, processes, dask")
