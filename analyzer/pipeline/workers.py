"""The parse stage's worker processes: started by fork, sharing what the parent compiled, and
ending with the parent (analyzer/pipeline/extract.py hands them the files to parse)."""

from __future__ import annotations

import os
import sys
import threading
import time


# The tree-sitter queries the site facts run (analyzer/facts/enums.py; sites.py finds the matches
# of panic_calls.scm on its walk to the words, without the query).
SITE_QUERIES = ("enums.scm",)


def start_pool(jobs: int):
    """Parser processes, started before any pipe to git is open (a forked worker would hold the
    pipe's write end and git would never see the end of its input)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork is cheap (the parent has imported tree-sitter and the analyzer); Python 3.14 defaults
    # to forkserver on Linux, which imports all again per worker.
    ctx = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    if ctx is not None:
        # What every worker would compile on its first file is compiled once, here, and shared.
        from analyzer.facts.syntax import query
        for name in SITE_QUERIES:
            query(name)
        import ctypes  # noqa: F401  (what _exit_with_parent imports in every worker)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_exit_with_parent,
                               initargs=(os.getpid(),))
    for _ in range(jobs):
        pool.submit(int)  # with fork, the first submit starts every worker now
    hold = os.environ.get(HOLD_AFTER_POOL)
    if hold:
        _hold(pool, hold)
    return pool


# Test hook: with this variable set to a file name, the run writes its workers' process ids there
# once they are started and then waits forever, so a test can kill it at a known point.
HOLD_AFTER_POOL = "BURN_ERRORS_TEST_HOLD_AFTER_POOL"


def _hold(pool, path: str) -> None:
    pids = " ".join(str(p) for p in (pool._processes or {}))
    with open(path + ".tmp", "w") as f:
        f.write(pids)
    os.replace(path + ".tmp", path)
    threading.Event().wait()


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: the worker ends when the process that started it does. Killed with
    SIGKILL, the parent cannot shut its pool down, and its workers, blocked on the task queue,
    would live on holding the caller's stdout and stderr (a CI step waiting for them hangs).
    Linux delivers SIGKILL to the worker when its parent dies (PR_SET_PDEATHSIG); elsewhere, and
    for the moment before that call, a daemon thread checks the parent once a second."""
    if sys.platform == "linux":
        try:
            import ctypes
            import signal
            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
