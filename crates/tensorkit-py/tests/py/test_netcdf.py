"""NetCDF-3 and NetCDF-4 against netCDF4-python (its wheel bundles libnetcdf), ncdump and xarray: tensorkit
reads every file netCDF4 wrote with its values, types and attributes; what tensorkit writes —
from NetCDF through Tensogram and zTensor, from plain arrays, from xarray's files — netCDF4,
ncdump and xarray read back with the same values, types and attributes."""

import shutil
import subprocess

import numpy as np
import pytest

import tensorkit

netCDF4 = pytest.importorskip("netCDF4")


def reference_files(testdata):
    files = sorted((testdata / "netcdf" / "reference").glob("*.nc"))
    assert len(files) >= 8
    return files


def netcdf4_files(testdata):
    """The same files as netCDF4-python writes them as NetCDF-4 (HDF5), and those h5netcdf
    and xarray through h5netcdf wrote."""
    files = sorted((testdata / "netcdf" / "reference4").glob("*.nc"))
    assert len(files) >= 8
    more = sorted((testdata / "netcdf" / "h5netcdf").glob("*.nc"))
    assert len(more) >= 2
    return files + more


def dataset(path):
    """What netCDF4 reads: format, dimensions, global attributes and, per variable, its
    dimensions, dtype, attributes (with their numpy types) and values, stored as they are."""
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        ds.set_auto_chartostring(False)

        def attrs(o):
            out = {}
            for k in o.ncattrs():
                v = o.getncattr(k)
                out[k] = (type(v).__name__ if isinstance(v, str) else np.asarray(v).dtype.str, np.asarray(v).tolist() if not isinstance(v, str) else v)
            return out

        return {
            "format": ds.data_model,
            "dims": [(d.name, len(d), d.isunlimited()) for d in ds.dimensions.values()],
            "attrs": attrs(ds),
            "vars": {
                name: (v.dimensions, v.dtype.str, attrs(v), np.array(v[...]))
                for name, v in ds.variables.items()
            },
        }


def same_values(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def same_dataset(ours, theirs):
    assert ours["format"] == theirs["format"]
    assert ours["dims"] == theirs["dims"]
    assert repr(ours["attrs"]) == repr(theirs["attrs"])
    assert list(ours["vars"]) == list(theirs["vars"])
    for name, (dims, dtype, attrs, values) in theirs["vars"].items():
        o = ours["vars"][name]
        assert o[:3] == (dims, dtype, attrs) or repr(o[:3]) == repr((dims, dtype, attrs)), name
        assert same_values(o[3], values), name


def test_every_file_netcdf4_wrote_reads_with_its_values_and_attributes(testdata):
    for path in reference_files(testdata) + netcdf4_files(testdata):
        want = dataset(path)
        with tensorkit.open(path) as f:
            assert f.format == "netcdf"
            assert list(f) == list(want["vars"]), path
            for name, (dims, dtype, attrs, values) in want["vars"].items():
                got = f[name]
                info = f.info(name)
                if info["dtype"] == "bool":
                    assert "dtype" in attrs and same_values(got.astype("i1"), values), name
                    continue
                # char arrays are bytes (uint8) here, |S1 in netCDF4.
                if dtype == "|S1":
                    got = got.view("S1")
                assert same_values(got.astype(got.dtype.newbyteorder("=")), values.astype(values.dtype.newbyteorder("="))), name
                assert info["attributes"]["netcdf"]["_dims"] == list(dims), name
                for k, (_, v) in attrs.items():
                    ours = info["attributes"][k]
                    if isinstance(v, str):
                        assert ours.rstrip("\0") == v, (name, k)
                    else:
                        assert np.array_equal(np.atleast_1d(ours).astype(float), np.atleast_1d(v).astype(float), equal_nan=True), (name, k)
            if want["attrs"]:
                assert set(f.metadata) == set(want["attrs"])


@pytest.mark.parametrize("via", ["tgm", "zt", "nc"])
def test_netcdf_through_other_formats_and_back_is_what_netcdf4_reads(testdata, tmp_path, via):
    for path in reference_files(testdata):
        middle = tmp_path / f"{path.stem}.{via}"
        back = tmp_path / f"{path.stem}_back.nc"
        tensorkit.convert(path, middle)
        tensorkit.convert(middle, back)
        same_dataset(dataset(back), dataset(path))
        # The same bytes, but for the padding netCDF-C may leave after a lone record
        # variable's last record.
        a, b = back.read_bytes(), path.read_bytes()
        assert a == b or (b.startswith(a) and len(b) - len(a) < 4 and not b[len(a):].strip(b"\0"))


def test_arrays_saved_as_netcdf_read_in_netcdf4_and_xarray(tmp_path):
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(3)
    arrays = {
        "t": rng.standard_normal((4, 5)).astype("f4"),
        "w": rng.integers(-100, 100, (5,)).astype("i8"),
        "u": np.arange(6, dtype="u2").reshape(2, 3),
        "mask": rng.random((4, 5)) > 0.5,
        "scalar": np.float64(2.5),
    }
    path = tmp_path / "arrays.nc"
    tensorkit.save(path, arrays, attributes={"t": {"units": "K", "scale": 0.5}}, metadata={"title": "saved"})
    with netCDF4.Dataset(path) as ds:
        ds.set_auto_maskandscale(False)
        assert ds.data_model == "NETCDF3_64BIT_DATA"  # int64 and uint16 need CDF-5
        assert ds.title == "saved"
        assert ds["t"].units == "K" and ds["t"].getncattr("scale") == 0.5
        assert ds["t"].dimensions == ("dim_4", "dim_5")
        assert ds["mask"].dtype == np.int8 and ds["mask"].getncattr("dtype") == "bool"
        for name, a in arrays.items():
            got = np.array(ds[name][...])
            assert np.array_equal(got.astype(np.asarray(a).dtype), a), name
    with xr.open_dataset(path, engine="netcdf4") as ds:
        assert ds["mask"].dtype == bool and np.array_equal(ds["mask"].values, arrays["mask"])
        assert np.array_equal(ds["t"].values, arrays["t"])
    with tensorkit.open(path) as f:
        assert f["mask"].dtype == bool and np.array_equal(f["mask"], arrays["mask"])


def test_files_xarray_writes_read_as_xarray_reads_them(tmp_path):
    xr = pytest.importorskip("xarray")
    time = np.array(["2024-01-01T00", "2024-01-01T06", "2024-01-01T12"], dtype="datetime64[ns]")
    ds = xr.Dataset(
        {
            "t2m": (("time", "lat", "lon"), np.arange(24, dtype="f4").reshape(3, 2, 4), {"units": "K"}),
            "flag": (("lat",), np.array([True, False])),
        },
        coords={"time": time, "lat": [10.0, 20.0], "lon": np.arange(4.0)},
        attrs={"Conventions": "CF-1.8"},
    )
    for fmt in ["NETCDF3_CLASSIC", "NETCDF3_64BIT"]:
        path = tmp_path / f"{fmt}.nc"
        ds.to_netcdf(path, format=fmt, unlimited_dims=["time"])
        raw = dataset(path)
        with tensorkit.open(path) as f:
            for name, (_, _, _, values) in raw["vars"].items():
                got = f[name]
                assert np.array_equal(got.astype(values.dtype) if got.dtype != bool else got, values.astype(bool) if got.dtype == bool else values), name
        # Written again by tensorkit, xarray decodes the same dataset.
        again = tmp_path / f"{fmt}_again.nc"
        tensorkit.convert(path, again)
        with xr.open_dataset(path) as a, xr.open_dataset(again) as b:
            xr.testing.assert_identical(a.load(), b.load())


def test_ncdump_reads_what_tensorkit_writes(testdata, tmp_path):
    ncdump = shutil.which("ncdump")
    if ncdump is None:
        pytest.skip("ncdump (Debian's netcdf-bin) is not installed")
    for path in reference_files(testdata):
        tgm = tmp_path / f"{path.stem}.tgm"
        back = tmp_path / f"{path.stem}.nc"
        tensorkit.convert(path, tgm)
        tensorkit.convert(tgm, back)
        theirs = subprocess.run([ncdump, str(path)], capture_output=True, text=True, check=True).stdout
        ours = subprocess.run([ncdump, str(back)], capture_output=True, text=True, check=True).stdout
        assert ours.split("\n", 1)[1] == theirs.split("\n", 1)[1], path.name


def test_damaged_files_are_errors_with_a_kind(testdata, tmp_path):
    rng = np.random.default_rng(9)
    for path in reference_files(testdata):
        data = bytearray(path.read_bytes())
        for trial in range(40):
            damaged = bytearray(data)
            if trial % 2:
                damaged = damaged[: int(rng.integers(4, len(damaged)))]
            else:
                for _ in range(4):
                    damaged[int(rng.integers(4, min(len(damaged), 200)))] = int(rng.integers(0, 256))
            p = tmp_path / "damaged.nc"
            p.write_bytes(bytes(damaged))
            try:
                with tensorkit.open(p) as f:
                    for name in f:
                        f[name]
            except tensorkit.TensorkitError as e:
                assert e.kind in {"truncated", "malformed", "unsupported", "limit_exceeded"}, e


@pytest.mark.parametrize("via", ["nc", "tgm", "zt"])
def test_netcdf_converted_opens_in_our_engine_as_xarray_opens_the_netcdf_file(testdata, tmp_path, via):
    xr = pytest.importorskip("xarray")
    sources = reference_files(testdata)
    # And what xarray itself writes: CF time, coordinates, a boolean, packed integers.
    made = tmp_path / "xarray_made.nc"
    xr.Dataset(
        {
            "t2m": (("time", "lat"), np.array([[1, 2], [3, -32767]], "i2"),
                    {"scale_factor": np.float32(0.5), "add_offset": np.float32(270), "_FillValue": np.int16(-32767), "units": "K"}),
            "mask": (("lat",), np.array([True, False])),
            "name": (("lat",), np.array(["north", "south"], dtype="S5")),
        },
        coords={"time": np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[ns]"), "lat": [45.0, -45.0]},
        attrs={"title": "made by xarray"},
    ).to_netcdf(made, format="NETCDF3_64BIT")
    for path in [*sources, made]:
        target = tmp_path / f"{path.stem}.{via}"
        if via == "nc":
            target = path
        else:
            tensorkit.convert(path, target)
        with xr.open_dataset(path) as theirs, xr.open_dataset(target, engine="tensorkit") as ours:
            theirs, ours = theirs.load(), ours.load()
            xr.testing.assert_identical(ours, theirs)
            for name in theirs.variables:
                assert ours[name].dtype == theirs[name].dtype, (path.name, name)
                for k, v in theirs[name].attrs.items():
                    assert type(ours[name].attrs[k]) is type(v), (path.name, name, k)


def test_unpacked_on_request_as_xarray_decodes(testdata, tmp_path):
    xr = pytest.importorskip("xarray")
    src = testdata / "netcdf" / "reference" / "cf_packed.nc"
    for via in ["nc", "tgm"]:
        out = tmp_path / f"unpacked.{via}"
        tensorkit.convert(src, out, unpack=True)
        with tensorkit.open(out) as f:
            assert f["t2m"].dtype == np.float64
            assert not {"scale_factor", "add_offset", "_FillValue", "missing_value"} & set(f.info("t2m")["attributes"])
        with xr.open_dataset(src) as theirs, xr.open_dataset(out, engine="tensorkit") as ours:
            np.testing.assert_array_equal(ours["t2m"].values, theirs["t2m"].values)
            assert ours["t2m"].attrs["units"] == "K"


@pytest.mark.parametrize("via", ["tgm", "zt"])
def test_netcdf4_through_other_formats_is_the_same_dataset_as_netcdf3(testdata, tmp_path, via):
    """A NetCDF-4 file through Tensogram or zTensor comes back as NetCDF-4 (the format it
    carries), and as NetCDF-3 on request, with the same dimensions, variables, attributes
    (types too) and values, and opens in the engine as xarray opens the NetCDF-4 file."""
    xr = pytest.importorskip("xarray")
    for path in netcdf4_files(testdata):
        middle = tmp_path / f"{path.stem}.{via}"
        back = tmp_path / f"{path.stem}_back.nc"
        tensorkit.convert(path, middle)
        tensorkit.convert(middle, back)
        same_dataset(dataset(back), dataset(path))
        tensorkit.convert(middle, back, pipeline="cdf5")
        ours, theirs = dataset(back), dataset(path)
        assert ours["format"] == "NETCDF3_64BIT_DATA"
        theirs["format"] = ours["format"]
        same_dataset(ours, theirs)
        with xr.open_dataset(path) as a, xr.open_dataset(middle, engine="tensorkit") as b:
            xr.testing.assert_identical(b.load(), a.load())


@pytest.mark.parametrize("pipeline", ["netcdf4", "netcdf4,shuffle,deflate:4,fletcher32"])
def test_netcdf4_tensorkit_writes_reads_in_netcdf4_as_the_file_it_came_from(testdata, tmp_path, pipeline):
    """Every reference file, NetCDF-3 or NetCDF-4, written as NetCDF-4 (plain, or chunked
    through every filter) reads in netCDF4-python with the same dimensions, variables,
    attributes (types too) and values, and in ncdump as the same dataset."""
    ncdump = shutil.which("ncdump")
    for path in reference_files(testdata) + netcdf4_files(testdata):
        out = tmp_path / f"{path.parent.name}_{path.stem}.nc"
        tensorkit.convert(path, out, pipeline=pipeline)
        ours, theirs = dataset(out), dataset(path)
        assert ours["format"] == "NETCDF4"
        theirs["format"] = "NETCDF4"
        same_dataset(ours, theirs)
        with netCDF4.Dataset(out) as ds:
            for v in ds.variables.values():
                if "deflate" in pipeline and v.dimensions:
                    assert v.filters()["zlib"] and v.filters()["shuffle"] and v.filters()["fletcher32"], v.name
        if ncdump:
            a = subprocess.run([ncdump, str(path)], capture_output=True, text=True, check=True).stdout
            b = subprocess.run([ncdump, str(out)], capture_output=True, text=True, check=True).stdout
            assert a.split("\n", 1)[1] == b.split("\n", 1)[1], path.name


def test_netcdf4_features_netcdf4_python_writes_come_back_through_tensogram(tmp_path):
    """What NetCDF-4 holds beyond NetCDF-3 — the unsigned and 64-bit types, string
    attributes of several strings, two unlimited dimensions, a scalar, fill values, a
    variable of many deflated chunks — written by netCDF4-python, through Tensogram and back
    to NetCDF-4, reads in netCDF4-python and xarray as the file it came from."""
    xr = pytest.importorskip("xarray")
    src = tmp_path / "features.nc"
    rng = np.random.default_rng(7)
    with netCDF4.Dataset(src, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("member", None)
        ds.createDimension("lat", 181)
        ds.createDimension("lon", 360)
        ds.setncattr_string("sources", ["era5", "ifs", ""])
        ds.history = "made by netCDF4-python"
        ds.version = np.uint64(2**63 + 5)
        lat = ds.createVariable("lat", "f8", ("lat",))
        lat[:] = np.linspace(90, -90, 181)
        lat.units = "degrees_north"
        t = ds.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, complevel=3, shuffle=True, chunksizes=(1, 45, 90), fill_value=np.float32(-1e30))
        t[0:3] = rng.standard_normal((3, 181, 360)).astype("f4")
        t.setncattr_string("cell_methods", ["time: mean"])
        u = ds.createVariable("counts", "u8", ("member",))
        u[0:4] = np.array([0, 1, 2**64 - 1, 7], dtype="u8")
        b = ds.createVariable("flags", "u1", ("lat",))
        b[:] = np.arange(181) % 256
        s = ds.createVariable("scalar", "i8")
        s[...] = -(2**62)
    out = tmp_path / "features.tgm"
    back = tmp_path / "features_back.nc"
    tensorkit.convert(src, out)
    tensorkit.convert(out, back, pipeline="shuffle,deflate:1")
    ours, theirs = dataset(back), dataset(src)
    same_dataset(ours, theirs)
    with xr.open_dataset(src) as a, xr.open_dataset(back) as b:
        xr.testing.assert_identical(b.load(), a.load())
    try:
        import h5netcdf  # noqa: F401
    except ImportError:
        return
    with xr.open_dataset(src, engine="h5netcdf") as a, xr.open_dataset(back, engine="h5netcdf") as b:
        xr.testing.assert_identical(b.load(), a.load())


def test_arrays_saved_as_netcdf4_read_in_netcdf4_and_xarray(tmp_path):
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(5)
    arrays = {
        "t": rng.standard_normal((40, 50)).astype("f4"),
        "mask": rng.random((40,)) > 0.5,
        "big": np.arange(3 * 1024 * 512, dtype="f8").reshape(3, 1024, 512),
    }
    path = tmp_path / "arrays4.nc"
    tensorkit.save(path, arrays, attributes={"t": {"units": "K"}}, metadata={"title": "saved"}, pipeline="deflate:1")
    with netCDF4.Dataset(path) as ds:
        assert ds.data_model == "NETCDF4" and ds.title == "saved"
        assert ds["t"].units == "K" and ds["t"].filters()["zlib"]
        assert ds["big"].chunking() == [1, 256, 512]
        for name, a in arrays.items():
            got = np.array(ds[name][...])
            assert np.array_equal(got.astype(a.dtype), a), name
    with xr.open_dataset(path) as ds:
        assert ds["mask"].dtype == bool and np.array_equal(ds["mask"].values, arrays["mask"])


def test_split_by_record_and_variable_as_tensogram_reads_them(testdata, tmp_path):
    """``split_by`` groups a NetCDF file's variables into messages as tensogram's
    ``convert-netcdf --split-by`` does; the reference package reads every message, each
    record variable's record with the static variables, the values the variable's slabs."""
    reference = pytest.importorskip("tensogram")
    src = testdata / "netcdf" / "reference" / "records_classic.nc"
    theirs = dataset(src)
    out = tmp_path / "records.tgm"
    tensorkit.convert(src, out, split_by="record")
    f = reference.TensogramFile.open(str(out))
    records = theirs["dims"][0][1]
    assert len(f) == records
    for r in range(records):
        meta, objects = f.decode_message(r, verify_hash=True)
        names = [b["name"] for b in meta.base]
        assert names == list(theirs["vars"]), r
        for (name, (dims, _, _, values)), base, (_, array) in zip(theirs["vars"].items(), meta.base, objects):
            record = dims[:1] == ("time",)
            want = values[r] if record else values
            assert base["netcdf"]["_dims"] == list(dims[1:] if record else dims), name
            got = np.asarray(array)
            if want.dtype.kind == "S":
                got = got.view("S1")
            assert np.array_equal(got.reshape(want.shape), want.astype(want.dtype.newbyteorder("="))), (r, name)
    out = tmp_path / "variables.tgm"
    tensorkit.convert(src, out, split_by="variable")
    assert len(reference.TensogramFile.open(str(out))) == len(theirs["vars"])
    with pytest.raises(tensorkit.TensorkitError, match="one of file, variable, record"):
        tensorkit.convert(src, tmp_path / "x.tgm", split_by="month")


def test_variables_of_types_not_read_are_left_out_and_refused_by_name(testdata, tmp_path):
    """Compound, enum, variable-length and string variables (netCDF4-python's files): the
    file opens with the variables a tensor holds, the same values netCDF4 reads; the other
    is listed in ``not_read`` with its type, asking for it is an ``unsupported`` error
    naming it, and a conversion says it left it out."""
    for path, name, kind in [
        ("compound_variable.nc", "pairs", "compound"),
        ("enum_variable.nc", "sky", "enum"),
        ("vlen_variable.nc", "rows", "variable-length sequence"),
        ("string_variable.nc", "station", "string"),
    ]:
        src = testdata / "netcdf" / "unsupported" / path
        f = tensorkit.open(src)
        assert list(f.keys()) == ["plain"], path
        with netCDF4.Dataset(src) as theirs:
            assert np.array_equal(np.asarray(f["plain"]), theirs["plain"][:].data), path
        [(missing, why)] = f.not_read
        assert missing == name and kind in why, (path, f.not_read)
        with pytest.raises(tensorkit.TensorkitError) as e:
            f[name]
        assert e.value.kind == "unsupported", path
        assert name in str(e.value) and kind in str(e.value) and "not read" in str(e.value), str(e.value)
        notes = tensorkit.convert(src, tmp_path / f"{name}.tgm")
        assert any(name in n and "not read" in n for n in notes), notes
        if kind == "string":
            with netCDF4.Dataset(src) as theirs:
                want = theirs[name][...]
            got = f.strings(name)
            assert got.shape == want.shape and got.tolist() == want.tolist(), (got, want)
        else:
            assert f.strings(name) is None
    assert f.strings("plain") is None


def test_nested_groups_read_and_written_as_netcdf4_does(testdata, tmp_path):
    """A NetCDF-4 file with nested groups (netCDF4-python's): every group's variables by
    path (``forecast/t2m``) with netCDF4's values, and its attributes in the metadata by path
    (``forecast/source``); converted to Tensogram and back to NetCDF-4, the groups are made
    again — netCDF4 reads the same groups, values and attributes, and ``ncdump`` prints the
    same file. NetCDF-3 and the classic model, which have no groups, refuse them by name."""
    src = testdata / "netcdf" / "groups" / "groups.nc"

    def groups_of(path):
        with netCDF4.Dataset(path) as ds:
            ds.set_auto_maskandscale(False)
            out = {}

            def walk(g, prefix):
                out[prefix + "@"] = {k: np.asarray(g.getncattr(k)).tolist() for k in g.ncattrs()}
                out[prefix + "#"] = {k: len(d) for k, d in g.dimensions.items()}
                for name, v in g.variables.items():
                    out[prefix + name] = (v.dimensions, str(v.dtype), v[...].tolist())
                for name, sub in g.groups.items():
                    walk(sub, prefix + name + "/")

            walk(ds, "")
            return out

    theirs = groups_of(src)
    f = tensorkit.open(src)
    assert list(f.keys()) == [k for k in theirs if not k.endswith(("@", "#"))]
    assert f.metadata["forecast/source"] == "model"
    assert list(f.metadata["forecast/members/weights"]) == [0.25, 0.75]
    for name in f.keys():
        assert np.asarray(f[name]).tolist() == theirs[name][2], name
    tgm = tmp_path / "groups.tgm"
    tensorkit.convert(src, tgm)
    for pipeline in [None, "netcdf4,shuffle,deflate:4"]:
        back = tmp_path / f"groups_back_{pipeline is None}.nc"
        tensorkit.convert(tgm, back, pipeline=pipeline)
        assert groups_of(back) == theirs, pipeline
        if shutil.which("ncdump"):
            dump = lambda p: subprocess.run(["ncdump", str(p)], capture_output=True, text=True, check=True).stdout
            assert dump(back).split("\n", 1)[1] == dump(src).split("\n", 1)[1]
    for pipeline in ["classic", "netcdf4-classic"]:
        with pytest.raises(tensorkit.TensorkitError, match="forecast/"):
            tensorkit.convert(tgm, tmp_path / f"groups_{pipeline}.nc", pipeline=pipeline)
        assert not (tmp_path / f"groups_{pipeline}.nc").exists()


def test_tensogram_to_netcdf_writes_the_messages_back_as_the_file(testdata, tmp_path):
    """``tensorkit.tensogram.to_netcdf`` (tensogram's ``to_netcdf``): the messages of a
    NetCDF file converted whole or one per variable are written back as NetCDF-4 that
    netCDF4-python reads as the source; no messages, or a variable twice, is a ValueError."""
    from tensorkit import tensogram

    for path in [testdata / "netcdf" / "reference" / "cf_packed.nc", *netcdf4_files(testdata)[:3]]:
        theirs = dataset(path)
        for split_by in ["file", "variable"]:
            tgm = tmp_path / f"{path.stem}_{split_by}.tgm"
            tensorkit.convert(path, tgm, split_by=split_by)
            buf = tgm.read_bytes()
            messages = [buf[o : o + n] for o, n in tensogram.scan(buf)]
            assert len(messages) == (1 if split_by == "file" else len(theirs["vars"]))
            back = tmp_path / f"{path.stem}_{split_by}.nc"
            tensogram.to_netcdf(messages, back)
            ours = dataset(back)
            assert ours["format"] == "NETCDF4"
            theirs["format"] = "NETCDF4"
            same_dataset(ours, theirs)
    with pytest.raises(ValueError):
        tensogram.to_netcdf([], tmp_path / "none.nc")
    with pytest.raises(ValueError):
        tensogram.to_netcdf([messages[0], messages[0]], tmp_path / "twice.nc")
    assert not (tmp_path / "twice.nc").exists()
    assert not list(tmp_path.glob(".to_netcdf.*"))


def test_tensogram_convert_netcdf_makes_messages_as_tensogram_does(testdata, tmp_path):
    """``tensorkit.tensogram.convert_netcdf`` (tensogram's, without libnetcdf): packed
    variables unpacked to float64, ``char`` variables left out, attributes inside each
    object's ``netcdf`` entry and CF's lifted into ``cf``, the stages asked for, messages
    split as asked; tensogram's own package decodes them."""
    from tensorkit import tensogram

    reference = pytest.importorskip("tensogram")
    packed = testdata / "netcdf" / "reference" / "cf_packed.nc"
    [message] = tensogram.convert_netcdf(packed, cf=True, filter="shuffle", compression="zstd")
    meta, objects = reference.decode(message, verify_hash=True)
    by_name = {b["name"]: (b, d, a) for b, (d, a) in zip(meta.base, objects)}
    base, d, t2m = by_name["t2m"]
    assert d.dtype == "float64" and d.filter == "shuffle" and d.compression == "zstd"
    assert base["cf"]["standard_name"] == "air_temperature" and base["netcdf"]["units"] == "K"
    assert "scale_factor" not in base["netcdf"]
    with xr_open(packed) as ds:
        np.testing.assert_allclose(t2m, ds["t2m"].values, rtol=1e-6, equal_nan=True)
    records = testdata / "netcdf" / "reference" / "records_classic.nc"
    numeric = [n for n, v in dataset(records)["vars"].items() if v[1] != "|S1"]
    assert len(tensogram.convert_netcdf(records, split_by="variable")) == len(numeric)
    assert len(tensogram.convert_netcdf(records, split_by="record")) == 5
    # Simple packing applies to float64 (`time` here) and refuses NaN (`t2m`'s fill, unpacked).
    [m] = tensogram.convert_netcdf(records, encoding="simple_packing", bits=24)
    packed_meta, packed_objects = reference.decode(m)
    kinds = {b["name"]: d.encoding for b, (d, _) in zip(packed_meta.base, packed_objects)}
    assert kinds["time"] == "simple_packing" and kinds["temp"] == "none"
    with pytest.raises(ValueError, match="NaN"):
        tensogram.convert_netcdf(packed, encoding="simple_packing")
    back = tmp_path / "back.nc"
    tensogram.to_netcdf(tensogram.convert_netcdf(records, split_by="variable"), back)
    assert list(dataset(back)["vars"]) == numeric
    for bad in [dict(split_by="month"), dict(hash="md5"), dict(compression="gzip"), dict(bits=0)]:
        with pytest.raises(ValueError):
            tensogram.convert_netcdf(records, **bad)
    with pytest.raises(FileNotFoundError):
        tensogram.convert_netcdf(tmp_path / "missing.nc")


def xr_open(path):
    xr = pytest.importorskip("xarray")
    return xr.open_dataset(path)
