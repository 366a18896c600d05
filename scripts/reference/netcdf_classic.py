"""Writes the NetCDF-3 reference files (classic CDF-1, 64-bit offset CDF-2, 64-bit data
CDF-5) through netCDF4-python (its wheel bundles libnetcdf), each with a JSON sidecar saying
what netCDF4-python reads back from it: the format, the dimensions (name, length, whether
unlimited), the global attributes and every variable's type, dimensions, attributes (each
with its NetCDF type) and the SHA-256 of its values as little-endian C-order bytes, with the
first values; and what `ncdump -h` prints of it (`.cdl`). `crates/tensor-netcdf/tests/netcdf/`
reads every file and checks each of these. The same files are written as NetCDF-4 (the
classic data model, or the full one for those of CDF-5's types) into `<out>4/`.

    python -m venv env && env/bin/pip install netCDF4==1.7.5.1.post1 numpy
    env/bin/python scripts/reference/netcdf_classic.py testdata/netcdf/reference

Values are written with netCDF4's automatic masking and scaling off, so what is stored is
what is given.
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import netCDF4
import numpy as np

NC_TYPES = {
    "i1": "byte", "S1": "char", "i2": "short", "i4": "int", "f4": "float", "f8": "double",
    "u1": "ubyte", "u2": "ushort", "u4": "uint", "i8": "int64", "u8": "uint64",
}


def nc_type(value, vlen: bool = False) -> str:
    """The attribute's NetCDF type: netCDF4-python gives `char` text and `string` values
    alike as text (several strings as a list), so `vlen` says which it is."""
    if isinstance(value, str) or (isinstance(value, list) and value and isinstance(value[0], str)):
        return "string" if vlen else "char"
    return NC_TYPES[np.asarray(value).dtype.str[1:]]


def vlen_attributes(path: Path) -> set:
    """`(variable or None, attribute)` of every variable-length string attribute of a
    NetCDF-4 file, as h5py sees them (none in a classic file, or without h5py)."""
    if path.read_bytes()[:4] != b"\x89HDF":
        return set()
    try:
        import h5py
    except ImportError:
        return set()
    out = set()
    with h5py.File(path, "r") as f:
        for obj, name in [(f, None)] + [(d, d.name.lstrip("/").removeprefix("_nc4_non_coord_")) for d in f.values() if isinstance(d, h5py.Dataset)]:
            for k in obj.attrs:
                t = obj.attrs.get_id(k).get_type()
                if isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str():
                    out.add((name, k))
    return out


def attr_json(value):
    if isinstance(value, str) or (isinstance(value, list) and value and isinstance(value[0], str)):
        return value
    a = np.atleast_1d(np.asarray(value))
    out = []
    for v in a.tolist():
        if isinstance(v, float) and not np.isfinite(v):
            out.append(str(v))
        else:
            out.append(v)
    return out


def attrs_of(obj, vlen=frozenset()) -> list:
    name = obj.name if isinstance(obj, netCDF4.Variable) else None
    return [{"name": k, "type": nc_type(obj.getncattr(k), (name, k) in vlen), "value": attr_json(obj.getncattr(k))}
            for k in obj.ncattrs()]


def sidecar(path: Path) -> dict:
    vlen = vlen_attributes(path)
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        ds.set_auto_chartostring(False)
        variables = []
        for v in ds.variables.values():
            data = np.array(v[...], order="C")  # keeps a scalar's shape ()
            raw = data.astype(data.dtype.newbyteorder("<")).tobytes()
            first = data.ravel()[:4]
            variables.append({
                "name": v.name,
                "type": NC_TYPES[v.dtype.str[1:]],
                "dims": list(v.dimensions),
                "shape": list(data.shape),
                "attributes": attrs_of(v, vlen),
                "sha256": hashlib.sha256(raw).hexdigest(),
                "first": [x.decode("latin-1") if isinstance(x, bytes) else
                          (str(x) if isinstance(x, float) and not np.isfinite(x) else x)
                          for x in first.tolist()],
            })
        return {
            "format": ds.data_model,
            "dimensions": [{"name": d.name, "len": len(d), "unlimited": d.isunlimited()}
                           for d in ds.dimensions.values()],
            "attributes": attrs_of(ds, vlen),
            "variables": variables,
        }


def classic_types(ds):
    ds.createDimension("x", 5)
    ds.createDimension("y", 3)
    ds.createDimension("s", 7)
    ds.title = "every classic type"
    ds.history = "written by scripts/reference/netcdf_classic.py"
    ds.setncattr("int_att", np.int32(-7))
    ds.setncattr("ints_att", np.array([1, 2, 3], "i4"))
    ds.setncattr("short_att", np.int16(300))
    ds.setncattr("byte_att", np.array([-1, 2], "i1"))
    ds.setncattr("float_att", np.float32(1.5))
    ds.setncattr("double_att", np.array([0.1, np.nan, -np.inf], "f8"))
    ds.setncattr("empty_text", "")
    rng = np.random.default_rng(5)
    for code, name in [("i1", "b"), ("i2", "s"), ("i4", "i"), ("f4", "f"), ("f8", "d")]:
        v = ds.createVariable(name, code, ("y", "x"))
        if code[0] == "f":
            data = rng.standard_normal((3, 5)).astype(code)
            data[1, 2] = np.nan
        else:
            info = np.iinfo(code)
            data = rng.integers(info.min, info.max, (3, 5), endpoint=True).astype(code)
        v[...] = data
        v.long_name = f"a {name} variable"
    c = ds.createVariable("text", "S1", ("y", "s"))
    c[...] = netCDF4.stringtochar(np.array(["alpha", "be", "gamma12"], "S7"))
    scalar = ds.createVariable("scalar", "f8", ())
    scalar[...] = 2.718281828459045
    scalar.units = "1"
    odd = ds.createVariable("odd", "i1", ("s",))
    odd[...] = np.arange(7, dtype="i1")
    unwritten = ds.createVariable("unwritten", "i2", ("x",), fill_value=-99)
    unwritten.comment = "never written: reads as its fill value"
    default_fill = ds.createVariable("default_fill", "f4", ("x",))
    default_fill.comment = "never written: reads as the default fill value"


def records(ds):
    ds.createDimension("time", None)
    ds.createDimension("lat", 3)
    ds.createDimension("lon", 4)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = "hours since 1900-01-01 00:00:00"
    t.calendar = "gregorian"
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat[:] = [10.0, 0.0, -10.0]
    lat.units = "degrees_north"
    lon = ds.createVariable("lon", "f4", ("lon",))
    lon[:] = [0.0, 90.0, 180.0, 270.0]
    temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"))
    flag = ds.createVariable("flag", "i1", ("time", "lon"))  # 4 bytes a record: no padding
    level = ds.createVariable("level", "i2", ("time", "lat"))  # 6 bytes a record: padded to 8
    code = ds.createVariable("code", "S1", ("time",))  # 1 byte a record: padded to 4
    for r in range(5):
        t[r] = 1_000_000.0 + 6 * r
        temp[r] = np.arange(12, dtype="f4").reshape(3, 4) + 100 * r
        flag[r] = np.array([r, -r, 2 * r, 127], "i1")
        level[r] = np.array([1000, 850, 500], "i2") - r
        code[r] = b"ABCDE"[r : r + 1]


def one_record_variable(ds):
    # A file whose only record variable takes 6 bytes a record: records are not padded.
    ds.createDimension("time", None)
    ds.createDimension("n", 3)
    v = ds.createVariable("series", "i2", ("time", "n"))
    for r in range(4):
        v[r] = np.array([r, r + 1, r + 2], "i2") * 1000
    v.units = "m"


def one_byte_record_variable(ds):
    ds.createDimension("time", None)
    v = ds.createVariable("b", "i1", ("time",))
    v[0:7] = np.arange(7, dtype="i1") - 3


def empty_records(ds):
    ds.createDimension("time", None)
    ds.createDimension("x", 2)
    ds.createVariable("t", "f8", ("time",))
    ds.createVariable("v", "f4", ("time", "x"))
    c = ds.createVariable("c", "i4", ("x",))
    c[:] = [1, 2]


def cf_packed(ds):
    ds.Conventions = "CF-1.7"
    ds.createDimension("valid_time", 2)
    ds.createDimension("latitude", 3)
    ds.createDimension("longitude", 4)
    vt = ds.createVariable("valid_time", "i8", ("valid_time",))
    vt.units = "seconds since 1970-01-01"
    vt.calendar = "proleptic_gregorian"
    vt[:] = [1704067200, 1704070800]
    la = ds.createVariable("latitude", "f8", ("latitude",))
    la[:] = [90.0, 89.75, 89.5]
    la.units = "degrees_north"
    la.standard_name = "latitude"
    lo = ds.createVariable("longitude", "f8", ("longitude",))
    lo[:] = [0.0, 0.25, 0.5, 0.75]
    lo.units = "degrees_east"
    t2m = ds.createVariable("t2m", "i2", ("valid_time", "latitude", "longitude"), fill_value=np.int16(-32767))
    t2m.scale_factor = np.float64(0.0015)
    t2m.add_offset = np.float64(270.0)
    t2m.missing_value = np.int16(-32767)
    t2m.units = "K"
    t2m.long_name = "2 metre temperature"
    t2m.standard_name = "air_temperature"
    t2m.grid_mapping = "crs"
    t2m.set_auto_maskandscale(False)  # the packed integers as given
    packed = np.arange(24, dtype="i2").reshape(2, 3, 4) * 1000 - 12000
    packed[1, 2, 3] = -32767
    t2m[...] = packed
    crs = ds.createVariable("crs", "i4", ())
    crs.grid_mapping_name = "latitude_longitude"
    crs.semi_major_axis = 6371229.0


def cdf5_types(ds):
    ds.createDimension("n", 3)
    ds.createDimension("rec", None)
    ds.setncattr("u8_att", np.array([0, 2**64 - 1], "u8"))
    ds.setncattr("i8_att", np.int64(-(2**62)))
    ds.setncattr("u1_att", np.array([255, 0], "u1"))
    ds.setncattr("u2_att", np.uint16(65535))
    ds.setncattr("u4_att", np.uint32(4_000_000_000))
    for code in ["u1", "u2", "u4", "i8", "u8"]:
        v = ds.createVariable(f"v_{code}", code, ("n",))
        info = np.iinfo(code)
        v[:] = np.array([info.min, info.max, 7], code)
    r = ds.createVariable("r_u2", "u2", ("rec", "n"))
    r[0:2] = np.array([[1, 2, 3], [65535, 0, 9]], "u2")


FILES = [
    ("classic_types.nc", "NETCDF3_CLASSIC", classic_types),
    ("records_offset64.nc", "NETCDF3_64BIT_OFFSET", records),
    ("records_classic.nc", "NETCDF3_CLASSIC", records),
    ("one_record_variable.nc", "NETCDF3_CLASSIC", one_record_variable),
    ("one_byte_record_variable.nc", "NETCDF3_CLASSIC", one_byte_record_variable),
    ("empty_records.nc", "NETCDF3_CLASSIC", empty_records),
    ("cf_packed.nc", "NETCDF3_64BIT_DATA", cf_packed),
    ("cdf5_types.nc", "NETCDF3_64BIT_DATA", cdf5_types),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # The same files as NetCDF-4 (HDF5) and NetCDF-4 classic model, in `<out>4/`.
    netcdf4 = Path(str(out) + "4")
    netcdf4.mkdir(parents=True, exist_ok=True)
    for name, fmt, fill in FILES:
        path = netcdf4 / name
        model = "NETCDF4" if fmt == "NETCDF3_64BIT_DATA" else "NETCDF4_CLASSIC"
        with netCDF4.Dataset(path, "w", format=model) as ds:
            ds.set_auto_maskandscale(False)
            fill(ds)
        path.with_suffix(".json").write_text(json.dumps(sidecar(path), indent=1) + "\n")
        cdl = subprocess.run(["ncdump", "-h", name], cwd=netcdf4, capture_output=True, text=True, check=True)
        path.with_suffix(".cdl").write_text(cdl.stdout)
    for name, fmt, fill in FILES:
        path = out / name
        with netCDF4.Dataset(path, "w", format=fmt) as ds:
            ds.set_auto_maskandscale(False)
            fill(ds)
        (out / name).with_suffix(".json").write_text(json.dumps(sidecar(path), indent=1) + "\n")
        # What `ncdump -h` (Debian's netcdf-bin) prints: `tensorkit inspect`'s outline.
        cdl = subprocess.run(["ncdump", "-h", name], cwd=out, capture_output=True, text=True, check=True)
        (out / name).with_suffix(".cdl").write_text(cdl.stdout)
        print(name, path.stat().st_size)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
