"""The xarray engine: lazy, one dask chunk per tensor, picklable, named dimensions and
coordinates from the file, many files at once, and a reduction on worker processes."""

import hashlib
import json
import pickle

import numpy as np
import pytest
import xarray as xr

import tensorkit

LAT = np.linspace(-90, 90, 19)
LON = np.linspace(0, 350, 36)


def write_day(path, day, ext):
    rng = np.random.default_rng(day)
    fields = {
        "t2m": 280 + rng.normal(size=(1, LAT.size, LON.size)),
        "sp": 1e5 + rng.normal(size=(1, LAT.size, LON.size)),
        "time": np.array([float(day)]),
        "lat": LAT,
        "lon": LON,
    }
    dims = {"t2m": ["time", "lat", "lon"], "sp": ["time", "lat", "lon"]}
    if ext == "bt":
        dims = json.dumps(dims)  # BinTensors metadata holds strings: the JSON text works too
    tensorkit.save(path / f"day{day}.{ext}", fields, metadata={"dim_names": dims, "source": "test"})
    return fields


@pytest.mark.parametrize("ext", ["tgm", "zt", "bt"])
def test_open_dataset_is_lazy_named_and_exact(tmp_path, ext):
    fields = write_day(tmp_path, 0, ext)
    ds = xr.open_dataset(tmp_path / f"day0.{ext}", engine="tensorkit", chunks={})
    assert set(ds.data_vars) == {"t2m", "sp"}
    assert ds.t2m.dims == ("time", "lat", "lon")
    assert (ds.lat.values == LAT).all() and (ds.lon.values == LON).all()
    assert ds.attrs["source"] == "test"
    assert ds.t2m.data.chunks == ((1,), (19,), (36,))  # one chunk per tensor
    assert (ds.t2m.sel(lat=0.0).values == fields["t2m"][:, 9, :]).all()
    assert pickle.loads(pickle.dumps(ds.t2m.data)).compute().tobytes() == fields["t2m"].tobytes()


def test_default_dimension_names_never_give_one_name_two_sizes(tmp_path):
    tensorkit.save(tmp_path / "same.tgm", {"a": np.zeros((2, 3)), "b": np.zeros((2, 3))})
    ds = xr.open_dataset(tmp_path / "same.tgm", engine="tensorkit")
    assert ds.a.dims == ds.b.dims == ("dim_0", "dim_1")
    tensorkit.save(tmp_path / "clash.tgm", {"a": np.zeros((2, 3)), "b": np.zeros((4,))})
    ds = xr.open_dataset(tmp_path / "clash.tgm", engine="tensorkit", drop_variables="b")
    assert list(ds.data_vars) == ["a"] and ds.a.dims == ("dim_0", "dim_1")
    ds = xr.open_dataset(tmp_path / "clash.tgm", engine="tensorkit")
    assert ds.a.dims == ("a_dim_0", "a_dim_1") and ds.b.dims == ("b_dim_0",)
    ds = xr.open_dataset(tmp_path / "clash.tgm", engine="tensorkit", dim_names={"b": ["x"]})
    assert ds.b.dims == ("x",)


def test_open_mfdataset_reduces_on_a_local_cluster_of_processes(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    days = [write_day(tmp_path, d, "tgm") for d in range(4)]
    expected = np.concatenate([d["t2m"] for d in days]).mean(axis=0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            ds = xr.open_mfdataset(
                sorted(tmp_path.glob("day*.tgm")), engine="tensorkit", combine="by_coords"
            )
            assert ds.t2m.shape == (4, 19, 36)
            assert ds.t2m.data.npartitions == 4
            got = ds.t2m.mean("time").compute()
    np.testing.assert_allclose(got.values, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("convert", [None, "tgm", "zt"])
def test_grib_fields_are_cubes_named_and_geolocated(testdata, tmp_path, convert):
    src = testdata / "grib" / "reference" / "simple.grib2"
    path = src
    if convert:
        path = tmp_path / f"x.{convert}"
        tensorkit.convert(src, path)
    # Four cubes: 2 m temperature on six days, the surface pressure, and two pressure
    # levels whose fields differ in step (no one cube holds them).
    with pytest.raises(tensorkit.InvalidArgumentError, match="filter_by_keys=\\{'typeOfLevel': 'surface'\\}"):
        xr.open_dataset(path, engine="tensorkit")
    tree = xr.open_datatree(path, engine="tensorkit")
    assert sorted(tree.children) == ["heightAboveGround", "isobaricInhPa_500", "isobaricInhPa_850", "surface"]
    assert tree["heightAboveGround"].t2m.dims == ("time", "latitude", "longitude")
    ds = xr.open_dataset(path, engine="tensorkit", filter_by_keys={"shortName": "t"}, values_dtype=np.float64)
    assert list(ds.data_vars) == ["t"]
    assert ds.t.dims == ("latitude", "longitude")
    assert ds.latitude.values[0] == 90.0 and ds.latitude.values[-1] == -90.0
    assert (ds.longitude.values == np.arange(0.0, 360.0, 10.0)).all()
    assert ds.t.attrs["GRIB_shortName"] == "t" and ds.t.attrs["GRIB_typeOfLevel"] == "isobaricInhPa"
    assert float(ds.isobaricInhPa) == 500.0 and ds.step.values == np.timedelta64(6, "h")
    sidecar = json.loads((src.with_suffix(".json")).read_text())
    t = next(m for m in sidecar["messages"] if m["keys"]["shortName"] == "t")
    assert hashlib.sha256(ds.t.values.astype("<f8").tobytes()).hexdigest() == t["sha256_nan"]
    assert float(ds.t.sel(latitude=0.0, longitude=180.0)) == ds.t.values[9, 18]
