"""Writes NetCDF-4 reference files with h5netcdf (over h5py's libhdf5, not libnetcdf) and
with xarray's `to_netcdf(engine="h5netcdf")`, each with the sidecar and `ncdump -h` output
`netcdf_classic.py` writes (what netCDF4-python reads back from it), so that
`crates/tensor-netcdf/tests/netcdf/` checks files netCDF-C did not write as it checks those
it did.

    python -m venv env && env/bin/pip install netCDF4==1.7.5.1.post1 h5netcdf==1.8.2 \\
        h5py==3.16.0 xarray==2026.9.0 numpy
    env/bin/python scripts/reference/netcdf_h5netcdf.py testdata/netcdf/h5netcdf
"""

import json
import subprocess
import sys
from pathlib import Path

import h5netcdf
import numpy as np
import xarray as xr

sys.path.insert(0, str(Path(__file__).parent))
from netcdf_classic import sidecar  # noqa: E402


def types_and_filters(path: Path) -> None:
    """Every numeric type, a coordinate variable, an unlimited dimension, chunked variables
    through gzip and shuffle (and Fletcher-32), a scalar, attributes of each type and
    variable-length strings."""
    rng = np.random.default_rng(11)
    with h5netcdf.File(path, "w") as f:
        f.dimensions = {"time": None, "x": 6, "y": 4}
        f.attrs["title"] = "written by h5netcdf"
        f.attrs["version"] = np.int32(3)
        f.attrs["sources"] = "era5"
        x = f.create_variable("x", ("x",), "f8")
        x[:] = np.linspace(0, 1, 6)
        x.attrs["units"] = "m"
        f.resize_dimension("time", 3)
        for code in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
            v = f.create_variable(f"v_{code}", ("time", "y", "x"), code, chunks=(1, 2, 3),
                                  compression="gzip", compression_opts=2, shuffle=True,
                                  fletcher32=code == "f4")
            info = np.iinfo(code) if code[0] in "iu" else np.finfo(code)
            v[...] = rng.uniform(max(info.min, -1e6), min(info.max, 1e6), (3, 4, 6)).astype(code)
            v.attrs["valid_max"] = np.array([info.max], dtype=code)
        s = f.create_variable("scalar", (), "i4")
        s[...] = 42
        s.attrs["long_name"] = "one value"


def xarray_written(path: Path) -> None:
    """A CF dataset as xarray writes it through h5netcdf: a time coordinate with its units
    and calendar, latitude and longitude, a packed variable with a fill value, compressed."""
    time = np.array(["2024-01-01T00", "2024-01-01T06", "2024-01-01T12"], dtype="datetime64[ns]")
    t2m = np.arange(3 * 5 * 8, dtype="f4").reshape(3, 5, 8) / 7 + 250
    t2m[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"t2m": (("time", "latitude", "longitude"), t2m, {"units": "K", "long_name": "2 metre temperature"})},
        coords={"time": time, "latitude": np.linspace(60, 40, 5), "longitude": np.linspace(-10, 25, 8)},
        attrs={"Conventions": "CF-1.8", "history": "written by xarray"},
    )
    ds.to_netcdf(path, engine="h5netcdf", unlimited_dims=["time"], encoding={
        "t2m": {"zlib": True, "complevel": 4, "dtype": "i2", "scale_factor": 0.01,
                "add_offset": 273.15, "_FillValue": np.int16(-32767)},
    })


FILES = [("h5netcdf_types.nc", types_and_filters), ("xarray_h5netcdf.nc", xarray_written)]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, write in FILES:
        path = out / name
        write(path)
        path.with_suffix(".json").write_text(json.dumps(sidecar(path), indent=1) + "\n")
        cdl = subprocess.run(["ncdump", "-h", name], cwd=out, capture_output=True, text=True, check=True)
        path.with_suffix(".cdl").write_text(cdl.stdout)
        print(name, path.stat().st_size)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
