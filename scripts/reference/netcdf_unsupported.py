"""Writes NetCDF-4 files netCDF4-python writes whose variables tensorkit does not read —
one each of a compound type, an enum type, a variable-length type and strings — beside a
plain variable, into `testdata/netcdf/unsupported/`: tensorkit opens each file with its
plain variable, and leaves the other out, naming it and its type (asked for by name, it is
an `unsupported` error).

    python -m venv env && env/bin/pip install netCDF4==1.7.5.1.post1 numpy
    env/bin/python scripts/reference/netcdf_unsupported.py testdata/netcdf/unsupported
"""

import sys
from pathlib import Path

import netCDF4
import numpy as np


def write(path: Path, kind: str) -> None:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("n", 3)
        plain = ds.createVariable("plain", "f4", ("n",))
        plain[:] = [1, 2, 3]
        if kind == "compound":
            t = ds.createCompoundType(np.dtype([("a", "i4"), ("b", "f8")]), "pair")
            v = ds.createVariable("pairs", t, ("n",))
            v[:] = np.array([(1, 1.5), (2, 2.5), (3, 3.5)], dtype=t.dtype)
        elif kind == "enum":
            t = ds.createEnumType("u1", "cloud", {"clear": 0, "cloudy": 1})
            v = ds.createVariable("sky", t, ("n",))
            v[:] = np.array([0, 1, 0], dtype="u1")
        elif kind == "vlen":
            t = ds.createVLType("i4", "ragged")
            v = ds.createVariable("rows", t, ("n",))
            data = np.empty(3, dtype=object)
            data[:] = [np.array([1], "i4"), np.array([1, 2], "i4"), np.array([3], "i4")]
            v[:] = data
        elif kind == "string":
            v = ds.createVariable("station", str, ("n",))
            v[:] = np.array(["brest", "oslo", "rome"], dtype=object)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for kind in ["compound", "enum", "vlen", "string"]:
        path = out / f"{kind}_variable.nc"
        write(path, kind)
        print(path.name, path.stat().st_size)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
