"""The cycle collector paused around a build that makes many objects and no reference cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused for the block: what an extraction or a coverage matrix builds
    holds no reference cycles, yet every collection while it piles up walks it and all that was
    imported again. Refcounting still frees what is dropped; a cycle made inside waits for the
    first collection after. Processes forked inside run without it too. What is alive at the end
    is moved out of the collector's reach (`gc.freeze`): else the first collections after, in
    whatever the caller builds next, walk all of it again; refcounting still frees it when it is
    dropped."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
