"""Writes the HDF5 files tensor-hdf5's tests read, through h5py and netCDF4-python (whose
wheels bundle libhdf5 and libnetcdf), each with a JSON sidecar saying what h5py reads back:
the superblock version, and for every object (by path) whether it is a group or a dataset,
its attributes (name, numpy dtype string, value) and, for a dataset, its shape, dtype,
layout (contiguous, compact, chunked and its chunk shape), filters and, for numbers, the
SHA-256 of its values as little-endian C-order bytes.

    python -m venv env && env/bin/pip install h5py==3.16.0 netCDF4==1.7.5.1.post1 numpy
    env/bin/python scripts/reference/hdf5_files.py testdata/hdf5/reference
"""

import hashlib
import json
import sys
from pathlib import Path

import h5py
import netCDF4
import numpy as np


def jsonable(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray):
        return [jsonable(x) for x in v.tolist()] if v.dtype.kind not in "SO" else [jsonable(x) for x in v.ravel().tolist()]
    if isinstance(v, (np.generic,)):
        return jsonable(v.item())
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    if isinstance(v, h5py.Reference):
        return "<reference>"
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def sidecar(path: Path) -> dict:
    objects = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            entry = {"kind": "group" if isinstance(obj, h5py.Group) else "dataset",
                     "attributes": {k: {"dtype": str(obj.attrs.get_id(k).dtype), "value": jsonable(obj.attrs[k])}
                                    for k in obj.attrs.keys()}}
            if isinstance(obj, h5py.Dataset):
                layout = obj.id.get_create_plist().get_layout()
                entry.update(shape=list(obj.shape), dtype=obj.dtype.str if obj.dtype.kind != "O" else "vlen-str",
                             layout={0: "compact", 1: "contiguous", 2: "chunked"}.get(layout, str(layout)),
                             chunks=list(obj.chunks) if obj.chunks else None,
                             compression=obj.compression, shuffle=bool(obj.shuffle), fletcher32=bool(obj.fletcher32))
                if obj.dtype.kind in "iuf":
                    values = np.ascontiguousarray(obj[()]).reshape(obj.shape)
                    entry["sha256"] = hashlib.sha256(values.astype(values.dtype.newbyteorder("<")).tobytes()).hexdigest()
            objects["/" + name] = entry
        objects["/"] = {"kind": "group", "attributes": {k: {"dtype": str(f.attrs.get_id(k).dtype), "value": jsonable(f.attrs[k])} for k in f.attrs.keys()}}
        f.visititems(visit)
    raw = path.read_bytes()
    return {"superblock_version": raw[8], "objects": objects}


def h5py_v0(path):
    # libver earliest: superblock 0, object header 1, symbol-table groups.
    with h5py.File(path, "w", libver="earliest") as f:
        f.attrs["title"] = "h5py, earliest"
        f.attrs["answer"] = np.int32(42)
        f.create_dataset("contiguous", data=np.arange(12, dtype="<f8").reshape(3, 4))
        f.create_dataset("big_endian", data=np.arange(6, dtype=">i4"))
        g = f.create_group("group")
        g.attrs["scale"] = np.float32(0.5)
        # A compact dataset: its data in its object header (the low-level API's layout).
        space = h5py.h5s.create_simple((5,))
        plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        plist.set_layout(h5py.h5d.COMPACT)
        d = h5py.h5d.create(g.id, b"compact", h5py.h5t.STD_U16LE, space, plist)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(5, dtype="<u2"))
        g.create_dataset("chunked", data=np.arange(100, dtype="i8").reshape(10, 10), chunks=(4, 5), compression="gzip", shuffle=True)


def h5py_latest(path):
    with h5py.File(path, "w", libver="latest") as f:
        f.attrs["title"] = "h5py, latest"
        for i in range(20):  # dense attribute storage past 8
            f.attrs[f"a{i:02d}"] = np.int16(i)
        for i in range(12):  # dense link storage past 8
            f.create_dataset(f"v{i:02d}", data=np.full(3, i, dtype="f4"))
        f.create_dataset("chunked", data=np.arange(60, dtype="f4").reshape(6, 10), chunks=(3, 5), compression="gzip", fletcher32=True)
        f.create_dataset("unlimited", data=np.arange(8, dtype="i2"), maxshape=(None,), chunks=(3,))
        # Chunks past the extensible array's index block: data blocks, then super blocks.
        f.create_dataset("unlimited_many", data=np.arange(300, dtype="i4"), maxshape=(None,), chunks=(2,))
        f.create_dataset("records", data=np.arange(120, dtype="f8").reshape(30, 4), maxshape=(None, 4), chunks=(1, 4), compression="gzip")


def netcdf4_simple(path):
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 4)
        ds.title = "netCDF-4"
        t = ds.createVariable("t", "f4", ("time", "x"), zlib=True, shuffle=True)
        t[0:3] = np.arange(12, dtype="f4").reshape(3, 4)
        t.units = "K"
        x = ds.createVariable("x", "f8", ("x",))
        x[:] = [0.0, 0.5, 1.0, 1.5]
        c = ds.createVariable("c", "i2", ("x",))
        c[:] = [1, 2, 3, 4]


def netcdf4_many(path):
    # Past netCDF-C's compact storage: many variables (dense links) and a variable of many
    # attributes (dense attributes), creation order tracked as netCDF-C tracks it.
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("n", 3)
        for i in range(12):
            v = ds.createVariable(f"var{i:02d}", "i4", ("n",))
            v[:] = [i, i + 1, i + 2]
        v = ds["var00"]
        for k in range(12):
            v.setncattr(f"attr{k:02d}", np.float64(k) / 4)
        v.units = "m"
        for k in range(10):
            ds.setncattr(f"global{k}", f"text {k}")


def netcdf4_remote(path):
    # Metadata first, then data far larger than it: what a remote reader lists from the
    # first bytes and fetches a variable of alone.
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("x", 50_000)
        ds.title = "remote"
        a = ds.createVariable("contiguous", "f8", ("x",), contiguous=True)
        a.units = "m"
        b = ds.createVariable("chunked", "f4", ("x",), zlib=True, chunksizes=(10_000,))
        a[:] = np.arange(50_000, dtype="f8") / 7
        b[:] = np.sin(np.arange(50_000, dtype="f4"))


FILES = [
    ("h5py_earliest.h5", h5py_v0),
    ("h5py_latest.h5", h5py_latest),
    ("netcdf4_simple.nc", netcdf4_simple),
    ("netcdf4_many.nc", netcdf4_many),
    ("netcdf4_remote.nc", netcdf4_remote),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, make in FILES:
        path = out / name
        make(path)
        path.with_suffix(".json").write_text(json.dumps(sidecar(path), indent=1) + "\n")
        print(name, path.stat().st_size, "superblock", path.read_bytes()[8])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
