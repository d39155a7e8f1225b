"""Where the work units of a sweep run: in this process, in local worker processes, or on a Dask cluster.

A unit is a sweep point and a set of its trials (engine/kinds/learning/runner.py ``Unit``); its result depends only on
the unit, so every executor gives bit-identical results. ``run(units)`` yields results as units finish, so
the caller can store each one at once (an interrupted sweep keeps every finished unit).
"""
from __future__ import annotations

import concurrent.futures as cf
import os
from typing import Callable, Iterable, Iterator

RETRIES = 2     # a unit whose worker died is run again this many times


class ExecutorError(RuntimeError):
    pass


class Sequential:
    name = "sequential"

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        for u in units:
            yield fn(u)

    def close(self) -> None:
        pass


class Processes:
    """Local worker processes (default: one per core). When a worker dies the pool breaks and every unit
    still in it fails; those units are then run again one at a time, each in a fresh single-worker pool,
    so a unit that kills its worker again is identified and retried at most RETRIES times."""

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        pending = list(units)
        if len(pending) <= 1 or self.workers == 1:       # nothing to spread: skip the pool's start-up
            yield from Sequential().run(fn, pending)
            return
        broken = yield from self._pool(fn, pending, min(self.workers, len(pending)))
        for unit in broken:                              # a break charges nobody: find the unit that breaks alone
            for _ in range(RETRIES + 1):
                again = yield from self._pool(fn, [unit], 1)
                if not again:
                    break
            else:
                raise ExecutorError(f"a worker died {RETRIES + 1} times running the same unit on its own; giving up")

    @staticmethod
    def _pool(fn: Callable, units: list, workers: int):
        """Run units in one pool, yielding results; returns the units lost to a broken pool."""
        broken = []
        pool = cf.ProcessPoolExecutor(max_workers=workers)
        try:
            futures = {pool.submit(fn, u): u for u in units}
            for fut in cf.as_completed(futures):
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken.append(futures[fut])
                    continue
                yield result
        except cf.process.BrokenProcessPool:             # broke while submitting: everything is to redo
            return list(units)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return broken

    def close(self) -> None:
        pass


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
        self.cluster = None
        if address:
            self.client = Client(address, timeout="20s")
        else:
            self.cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            try:
                self.client = Client(self.cluster)
            except BaseException:
                self.cluster.close()
                raise

    def run(self, fn: Callable, units: Iterable) -> Iterator:
        from dask.distributed import as_completed

        # no task retries: the scheduler already reruns the tasks of a worker that dies, and a unit that
        # raises (a numerical error, say) would only raise again
        futures = [self.client.submit(fn, u, pure=False) for u in units]
        try:
            for fut in as_completed(futures):
                yield fut.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    def close(self) -> None:
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
