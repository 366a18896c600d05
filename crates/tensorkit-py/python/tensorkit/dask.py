"""Conversions on dask: one task per input file, on a ``dask.distributed`` cluster or the
local threads — each file into a file of another format (:func:`convert`), or an archive
into one Zarr v3 store, region by region (:func:`to_zarr`).

    >>> report = tensorkit.dask.convert(sorted(Path("archive").glob("*.grib2")), "out",
    ...                                 to="tensogram", client=client)

Each input becomes ``<output>/<input's stem>.<the format's extension>``, written by the
atomic writer (a file appears only complete: a task killed halfway leaves nothing behind,
and dask runs it again elsewhere). The run is restartable: an output that already exists
is checked — it validates in full and holds the input's tensors — and skipped; one that
fails the check is converted again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import _tensorkit
from ._errors import InvalidArgumentError
from ._file import PathLike
from ._file import convert as _convert
from ._file import open as _open
from ._file import validate as _validate


def _format(to: str) -> tuple[str, str]:
    """The id and the usual extension of the writable format ``to`` names (an id or an
    extension)."""
    writable = [f for f in _tensorkit.formats() if f["writes"]]
    for f in writable:
        if f["id"] == to or to in f["extensions"]:
            return f["id"], f["extensions"][0]
    ids = ", ".join(f["id"] for f in writable)
    raise InvalidArgumentError(f"to={to!r} is not a format tensorkit writes ({ids})")


def _names(path: str) -> list[str]:
    with _open(path) as f:
        return sorted(f)


def _finished(dst: str, names: list[str]) -> bool:
    """Whether ``dst`` is a sound file holding exactly the tensors ``names``."""
    if not os.path.exists(dst):
        return False
    try:
        return bool(_validate(dst)["valid"]) and _names(dst) == names
    except Exception:
        return False


def convert_one(src: str, dst: str, to: str, pipeline: str | None) -> dict[str, Any]:
    """Converts one file into format ``to`` (an id; one task of :func:`convert`); its line
    of the report."""
    start = time.perf_counter()
    entry: dict[str, Any] = {"input": src, "output": dst}
    try:
        names = _names(src)
        if _finished(dst, names):
            entry["status"] = "skipped"
        else:
            entry["left_out"] = _convert(src, dst, format=to, pipeline=pipeline)
            if not _finished(dst, names):
                raise InvalidArgumentError(f"{dst}: the output does not validate or lacks tensors of {src}")
            entry["status"] = "converted"
        entry["tensors"] = len(names)
        entry["bytes"] = os.path.getsize(dst)
    except Exception as e:  # one file's failure is its line of the report
        entry["status"] = "failed"
        entry["error"] = f"{type(e).__name__}: {e}"
    entry["seconds"] = time.perf_counter() - start
    return entry


def convert(
    inputs: PathLike | Iterable[PathLike],
    output: PathLike,
    *,
    to: str = "tensogram",
    pipeline: str | None = None,
    client: Any = None,
    errors: str = "raise",
) -> list[dict[str, Any]]:
    """Converts every input file into the directory ``output``, in format ``to`` (an id such
    as ``"tensogram"`` or ``"safetensors"``, or an extension), one task per file: on
    ``client`` (a ``dask.distributed.Client``), else on the local threads. ``pipeline`` is
    Tensogram's, as in :func:`tensorkit.convert` (by default GRIB packing is kept).

    Returns one entry per input, in order: ``input``, ``output``, ``status``
    (``converted``, ``skipped`` — already there and sound — or ``failed``), ``tensors``,
    ``bytes``, ``seconds``, what the format ``left_out``, and for a failure its ``error``.
    With ``errors="raise"`` (the default) a failure raises once every task has finished,
    naming the files; ``errors="report"`` returns the report as it is."""
    import dask

    if errors not in ("raise", "report"):
        raise InvalidArgumentError(f"errors={errors!r}: 'raise' or 'report'")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    srcs = [os.fspath(p) for p in inputs]
    to, ext = _format(to)
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    dsts = [os.fspath(out / f"{Path(s).stem}.{ext}") for s in srcs]
    if len(set(dsts)) != len(dsts):
        raise InvalidArgumentError("two inputs have the same stem and would write one output")
    if client is None:
        tasks = [dask.delayed(convert_one, pure=False)(s, d, to, pipeline) for s, d in zip(srcs, dsts)]
        report = list(dask.compute(*tasks, scheduler="threads"))
    else:
        keys = [f"tensorkit-convert-{dask.base.tokenize(s, d, to, pipeline)}" for s, d in zip(srcs, dsts)]
        futures = [client.submit(convert_one, s, d, to, pipeline, key=k, pure=False) for s, d, k in zip(srcs, dsts, keys)]
        report = client.gather(futures)
    failed = [r for r in report if r["status"] == "failed"]
    if failed and errors == "raise":
        lines = "\n".join(f"    {r['input']}: {r['error']}" for r in failed)
        raise InvalidArgumentError(f"{len(failed)} of {len(report)} conversions failed:\n{lines}")
    return report


def write_region(src: str, store: str, dim: str, start: int, open_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Writes one file's cube into its region of the Zarr store (one task of
    :func:`to_zarr`); its line of the report."""
    import xarray as xr

    t0 = time.perf_counter()
    with xr.open_dataset(src, engine="tensorkit", **open_kwargs) as ds:
        n = ds.sizes[dim]
        # Only what runs along the dimension is the file's own: the rest was written with the
        # store's metadata, and a region write must not touch it.
        part = ds.drop_vars([v for v in ds.variables if dim not in ds[v].dims])
        part.to_zarr(store, region={dim: slice(start, start + n)}, zarr_format=3, consolidated=False)
    return {"input": src, "region": [start, start + n], "seconds": time.perf_counter() - t0}


def to_zarr(
    inputs: PathLike | Iterable[PathLike],
    store: PathLike,
    *,
    dim: str = "time",
    client: Any = None,
    **open_kwargs: Any,
) -> list[dict[str, Any]]:
    """Builds one Zarr v3 store from an archive of files that hold the same cube at different
    values of ``dim`` (a day of analyses per file, say), through the xarray engine: the
    files are opened lazily (their headers) and concatenated along ``dim`` to lay the store
    out — every array chunked one step of ``dim`` at a time, the coordinates written —
    then each file writes its own region (``to_zarr(region=...)``) as one task, on
    ``client`` (a ``dask.distributed.Client``) or else the local threads. Regions never
    share a chunk, so the tasks do not race. ``open_kwargs`` go to every
    ``xr.open_dataset(..., engine="tensorkit")`` (``filter_by_keys``, ``values_dtype``...).

    Returns one entry per input, in order: ``input``, its ``region`` along ``dim`` and
    ``seconds``."""
    import dask
    import xarray as xr

    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    srcs = [os.fspath(p) for p in inputs]
    if not srcs:
        raise InvalidArgumentError("to_zarr needs at least one input")
    parts = [xr.open_dataset(s, engine="tensorkit", chunks={}, **open_kwargs) for s in srcs]
    for s, p in zip(srcs, parts):
        if dim not in p.dims:
            raise InvalidArgumentError(f"{s}: the cube has no dimension {dim!r} (its dimensions: {list(p.dims)})")
    starts = [0]
    for p in parts[:-1]:
        starts.append(starts[-1] + p.sizes[dim])
    template = xr.concat(parts, dim=dim, data_vars="minimal", coords="minimal", compat="override", join="override")
    # What does not run along `dim` is written with the layout, loaded (no task writes it).
    for name in [v for v in template.variables if dim not in template[v].dims]:
        template[name] = template[name].load()
    template = template.chunk({dim: 1})
    for v in template.variables.values():
        v.encoding.pop("chunks", None)
        v.encoding.pop("preferred_chunks", None)
    template.to_zarr(os.fspath(store), compute=False, mode="w", zarr_format=3, consolidated=False)
    for p in parts:
        p.close()
    dst = os.fspath(store)
    if client is None:
        tasks = [dask.delayed(write_region, pure=False)(s, dst, dim, a, open_kwargs) for s, a in zip(srcs, starts)]
        return list(dask.compute(*tasks, scheduler="threads"))
    futures = [client.submit(write_region, s, dst, dim, a, open_kwargs, pure=False) for s, a in zip(srcs, starts)]
    return client.gather(futures)
