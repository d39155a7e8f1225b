"""One BLAS thread per compute process.

The engine spreads work over processes, one per core (the executors' workers, ``--jobs``' children, the test
suite's xdist workers); numpy's OpenBLAS would add its own threads, one per core, in each of them. On 2 cores
that is 4 busy threads, and OpenBLAS's threads spin while they wait: element_sgd_fig3's quick run took 43 CPU-s
with the default threads against 36 CPU-s (and less wall time, 38 s against 44 s) with one, the same numbers
either way (its BLAS products are split over threads by blocks of the output, each block computed alike).
threadpoolctl (scikit-learn's own dependency, declared as ours) sets the limit at run time, so it works after
numpy is imported; a process that computes alone (a sequential run in the command's process) keeps the default.
"""
from __future__ import annotations


def one_blas_thread() -> None:
    """Limit the BLAS libraries loaded in this process to one thread, for the rest of the process."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
