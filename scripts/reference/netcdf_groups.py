"""Writes a NetCDF-4 file with nested groups through netCDF4-python — dimensions, variables
(one chunked and deflated) and attributes in the root group, in a subgroup and in a group
inside it, a variable named as a root variable is — into `testdata/netcdf/groups/`, with
the sidecar `netcdf_classic.py` writes, the groups walked depth first: what is in a
subgroup named by its path (`forecast/t2m`, `forecast/step`, `forecast/source`), as
tensorkit names it; and what `ncdump -h` prints of it (`.cdl`). `crates/tensor-netcdf/tests/netcdf/`
reads the file and checks both.

    python -m venv env && env/bin/pip install netCDF4==1.7.5.1.post1 numpy
    env/bin/python scripts/reference/netcdf_groups.py testdata/netcdf/groups
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import netCDF4
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from netcdf_classic import NC_TYPES, attrs_of  # noqa: E402


def write(path: Path) -> None:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        ds.title = "nested groups"
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat[:] = [10, 20, 30]
        lat.units = "degrees_north"
        t = ds.createVariable("t", "f8", ("time", "lat"))
        t[0:2] = np.arange(6).reshape(2, 3)
        g = ds.createGroup("forecast")
        g.source = "model"
        g.setncattr("version", np.int16(3))
        g.createDimension("step", 4)
        step = g.createVariable("step", "i4", ("step",))
        step[:] = [0, 6, 12, 18]
        v = g.createVariable("t2m", "f4", ("step", "lat"), zlib=True, chunksizes=(2, 3))
        v[:] = np.arange(12, dtype="f4").reshape(4, 3) + 0.5
        v.units = "K"
        m = g.createGroup("members")
        m.createDimension("number", 2)
        m.setncattr("weights", np.array([0.25, 0.75]))
        spread = m.createVariable("spread", "f8", ("number", "step", "lat"))
        spread[:] = np.arange(24).reshape(2, 4, 3) / 10
        again = m.createVariable("lat", "i2", ("number",))
        again[:] = [1, 2]


def groups(g):
    """`g` and every group inside it, depth first, in the order they were made."""
    yield g
    for sub in g.groups.values():
        yield from groups(sub)


def qualified(g, name: str) -> str:
    return name if g.path == "/" else f"{g.path.lstrip('/')}/{name}"


def sidecar(path: Path) -> dict:
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        dimensions, attributes, variables = [], [], []
        for g in groups(ds):
            for d in g.dimensions.values():
                dimensions.append({"name": qualified(g, d.name), "len": len(d), "unlimited": d.isunlimited()})
            for a in attrs_of(g):
                attributes.append({**a, "name": qualified(g, a["name"])})
        for g in groups(ds):
            for v in g.variables.values():
                data = np.array(v[...], order="C")
                raw = data.astype(data.dtype.newbyteorder("<")).tobytes()
                dims = []
                for d in v.get_dims():
                    dims.append(qualified(d.group(), d.name))
                variables.append({
                    "name": qualified(g, v.name),
                    "type": NC_TYPES[v.dtype.str[1:]],
                    "dims": dims,
                    "shape": list(data.shape),
                    "attributes": attrs_of(v),
                    "sha256": hashlib.sha256(raw).hexdigest(),
                    "first": data.ravel()[:4].tolist(),
                })
        return {"format": ds.data_model, "dimensions": dimensions, "attributes": attributes, "variables": variables}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "groups.nc"
    write(path)
    path.with_suffix(".json").write_text(json.dumps(sidecar(path), indent=1) + "\n")
    cdl = subprocess.run(["ncdump", "-h", path.name], cwd=out, capture_output=True, text=True, check=True)
    path.with_suffix(".cdl").write_text(cdl.stdout)
    print(path.name, path.stat().st_size)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
