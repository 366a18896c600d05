"""Open files per process, reused by every lazy array that reads from them (the xarray
engine's variables and cubes)."""

from __future__ import annotations

import threading

from ._file import File, open

_OPEN: dict[tuple[str, ...], File] = {}
_OPEN_LOCK = threading.Lock()


def cached(paths: tuple[str, ...]) -> File:
    """The file of ``paths`` opened once per process (again once closed)."""
    with _OPEN_LOCK:
        f = _OPEN.get(paths)
        if f is None or f.closed:
            f = open(list(paths))
            _OPEN[paths] = f
        return f
