"""An exclusive lock beside a file or folder, across threads and processes.

Used where a first call builds something once (the assembled model file, a community index
embedded on first use) and a second caller, in this process or another, must wait for it
rather than build it again.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``<target>.lock``. flock locks belong to an open file description,
    so this excludes other threads of this process (each opens the file anew) as well as processes."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
