"""GRIB as cfgrib's hypercubes: the xarray engine against cfgrib and ecCodes on files ecCodes
writes here (grib_cubes.py), and the same cubes from files converted to Tensogram."""

import json
import pickle
import warnings

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import grib_cubes
import tensorkit

# pyproj first: ecCodes' wheels bring a PROJ library of their own, and whichever loads
# first is the one pyproj's calls reach.
pyproj = pytest.importorskip("pyproj")
pyproj.CRS.from_proj4("+proj=longlat +R=6371229 +no_defs")
pytest.importorskip("cfgrib")
eccodes = pytest.importorskip("eccodes")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cubes")
    return {name: write(d / f"{name}.grib") for name, write in grib_cubes.ALL.items()}


def cfgrib(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_dataset(path, engine="cfgrib", indexpath="", **kwargs)


def ecc_longitudes(path):
    """ecCodes' `longitudes` of the first message's first row."""
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
        try:
            return eccodes.codes_get_array(h, "longitudes")[: eccodes.codes_get(h, "Ni")]
        finally:
            eccodes.codes_release(h)


def same_attrs(a, b):
    """Attribute dicts equal, array values (a reduced grid's `pl`) element by element."""
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def assert_same_cube(ours, theirs, coords_from=None):
    assert list(ours.data_vars) == list(theirs.data_vars)
    # Beyond cfgrib: a projected grid's x, y and CF grid mapping.
    mapping = {ours[v].attrs.get("grid_mapping") for v in ours.data_vars} - {None}
    extra = {"x", "y"} | mapping if mapping else set()
    assert set(ours.coords) == set(theirs.coords) | extra
    for name, c in theirs.coords.items():
        o = ours.coords[name]
        assert o.dims == c.dims, name
        if name == "longitude" and coords_from is not None:
            continue
        if np.issubdtype(c.dtype, np.floating):
            np.testing.assert_allclose(o.values, c.values, rtol=0, atol=1e-6, err_msg=name)
        else:
            assert o.dtype == c.dtype and (o.values == c.values).all(), name
        assert same_attrs(o.attrs, c.attrs), name
    for name, v in theirs.data_vars.items():
        o = ours[name]
        assert o.dims == v.dims and o.dtype == v.dtype == np.float32, name
        np.testing.assert_array_equal(o.values, v.values, err_msg=name)
        attrs = {k: a for k, a in o.attrs.items() if k != "grid_mapping"}
        assert same_attrs(attrs, v.attrs), (name, o.attrs, v.attrs)
    theirs_attrs = {k: v for k, v in theirs.attrs.items() if k != "history"}
    assert {k: v for k, v in ours.attrs.items() if k != "filter_by_keys"} == theirs_attrs


@pytest.mark.parametrize(
    "name",
    [
        "ensemble", "analyses", "forecasts", "accumulations", "model_levels", "bitmap", "gaussian",
        "reduced_gaussian", "grib1", "across_greenwich", "across_greenwich_grib1", "gaussian_across_greenwich",
    ],
)
def test_cubes_are_cfgrib_s(files, name):
    ours = xr.open_dataset(files[name], engine="tensorkit")
    assert_same_cube(ours, cfgrib(files[name]))


@pytest.mark.parametrize("name", list(grib_cubes.MORE))
def test_more_levels_steps_and_editions_are_cfgrib_s(tmp_path, name):
    path = grib_cubes.MORE[name](tmp_path / f"{name}.grib")
    assert_same_cube(xr.open_dataset(path, engine="tensorkit"), cfgrib(path))


@pytest.mark.parametrize("level", ["meanSea", "entireAtmosphere", "surface"])
def test_each_level_type_of_a_mixed_file_is_cfgrib_s(tmp_path, level):
    path = grib_cubes.level_types(tmp_path / "levels.grib")
    keys = {"typeOfLevel": level}
    ours = xr.open_dataset(path, engine="tensorkit", filter_by_keys=keys)
    assert_same_cube(ours, cfgrib(path, filter_by_keys=keys))


def test_the_ensemble_cube_has_cfgrib_s_shape(files):
    ds = xr.open_dataset(files["ensemble"], engine="tensorkit")
    assert ds.t.dims == ("number", "step", "isobaricInhPa", "latitude", "longitude")
    assert ds.t.shape == (5, 4, 5, 19, 36)
    assert ds.step.dtype == "timedelta64[ns]" and ds.valid_time.dims == ("step",)
    assert ds.time.values == np.datetime64("2026-11-20T00:00")
    assert list(ds.isobaricInhPa.values) == [1000, 850, 700, 500, 250]


def test_bitmapped_points_are_nan(files):
    sst = xr.open_dataset(files["bitmap"], engine="tensorkit").sst.values
    assert np.isnan(sst[::2, ::3]).all() and np.isnan(sst).sum() == 4 * 4


def test_west_scanning_longitudes_are_ecCodes_s(files):
    # cfgrib labels this grid with ecCodes' sorted `distinctLongitudes`; the points run
    # east to west, as ecCodes' `longitudes` says.
    ours = xr.open_dataset(files["scanning"], engine="tensorkit")
    np.testing.assert_allclose(ours.longitude.values, ecc_longitudes(files["scanning"]), atol=1e-6)
    assert_same_cube(ours, cfgrib(files["scanning"]), coords_from="ecCodes")


@pytest.mark.parametrize("name", ["across_greenwich", "across_greenwich_grib1", "gaussian_across_greenwich", "across_greenwich_west"])
def test_longitudes_across_greenwich_are_ecCodes_s(files, name):
    # ecCodes gives every point as the axis has it but the last, which it gives as coded
    # (0 to 360); the axis stays monotonic, so that one may differ by 360°.
    ours = xr.open_dataset(files[name], engine="tensorkit").longitude.values
    theirs = ecc_longitudes(files[name])
    np.testing.assert_allclose(ours[:-1], theirs[:-1], atol=1e-6)
    assert abs((ours[-1] - theirs[-1]) % 360.0) < 1e-6 or abs((ours[-1] - theirs[-1]) % 360.0 - 360.0) < 1e-6
    assert (np.diff(ours) > 0).all() or (np.diff(ours) < 0).all()


def test_float64_on_request(files):
    ds = xr.open_dataset(files["ensemble"], engine="tensorkit", values_dtype=np.float64)
    theirs = cfgrib(files["ensemble"], values_dtype=np.dtype("float64"))
    assert ds.t.dtype == np.float64
    np.testing.assert_array_equal(ds.t.values, theirs.t.values)


def test_cfgrib_s_keywords(files, tmp_path):
    path = files["ensemble"]
    for kwargs in [
        {"filter_by_keys": {"shortName": "u", "level": [500, 850]}},
        {"filter_by_keys": {"number": 3}, "read_keys": ["packingType", "bitsPerValue"]},
        {"time_dims": ["valid_time"]},
        {"extra_coords": {"typeOfLevel": "isobaricInhPa"}},
    ]:
        ours = xr.open_dataset(path, engine="tensorkit", **kwargs)
        assert_same_cube(ours, cfgrib(path, **kwargs))
    # indexpath is accepted and no index file is written anywhere.
    before = set(path.parent.iterdir())
    xr.open_dataset(path, engine="tensorkit", indexpath="{path}.{short_hash}.idx")
    assert set(path.parent.iterdir()) == before


def test_a_mixed_file_names_its_cubes(files):
    path = files["mixed_levels"]
    with pytest.raises(tensorkit.InvalidArgumentError) as e:
        xr.open_dataset(path, engine="tensorkit")
    assert "filter_by_keys={'typeOfLevel': 'heightAboveGround', 'level': 10}" in str(e.value)
    tree = xr.open_datatree(path, engine="tensorkit")
    assert list(tree.children) == ["isobaricInhPa", "heightAboveGround_2", "heightAboveGround_10", "surface"]
    for group in tree.children.values():
        ds = group.to_dataset()
        f = json.loads(ds.attrs["filter_by_keys"])
        assert_same_cube(ds, cfgrib(path, filter_by_keys=f))
        assert_same_cube(xr.open_dataset(path, engine="tensorkit", filter_by_keys=f), cfgrib(path, filter_by_keys=f))


def test_one_dask_chunk_per_message_and_pickles(files):
    ds = xr.open_dataset(files["ensemble"], engine="tensorkit", chunks={})
    assert ds.t.data.npartitions == 5 * 4 * 5
    assert ds.t.chunks[-2:] == ((19,), (36,))
    back = pickle.loads(pickle.dumps(ds))
    expected = cfgrib(files["ensemble"]).t.sel(number=2, isobaricInhPa=500).values
    np.testing.assert_array_equal(back.t.sel(number=2, isobaricInhPa=500).values, expected)
    # Indexing picks fields and points without reading the rest.
    part = ds.t.isel(number=[0, 2], step=slice(1, 3), latitude=4).compute()
    assert part.shape == (2, 2, 5, 36)


@pytest.mark.parametrize("ext", ["tgm", "zt"])
def test_converted_files_give_the_same_cubes(files, tmp_path, ext):
    out = tmp_path / f"ensemble.{ext}"
    tensorkit.convert(files["ensemble"], out)
    assert_same_cube(xr.open_dataset(out, engine="tensorkit"), cfgrib(files["ensemble"]))


def ecc_points(path):
    """ecCodes' `latitudes` and `longitudes` of the first message."""
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
        try:
            return eccodes.codes_get_array(h, "latitudes"), eccodes.codes_get_array(h, "longitudes")
        finally:
            eccodes.codes_release(h)


@pytest.fixture(scope="module")
def planes(tmp_path_factory):
    d = tmp_path_factory.mktemp("planes")
    return {name: write(d / f"{name}.grib") for name, write in grib_cubes.PLANES.items()}


@pytest.mark.parametrize("name", list(grib_cubes.PLANES))
def test_projected_grids_are_cfgrib_s_with_ecCodes_points(planes, name):
    path = planes[name]
    ours = xr.open_dataset(path, engine="tensorkit")
    assert_same_cube(ours, cfgrib(path))
    lat, lon = ecc_points(path)
    np.testing.assert_allclose(ours.latitude.values.ravel(), lat, rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours.longitude.values.ravel(), lon, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["rotated", "lambert", "lambert_secant", "polar"])
def test_grid_mappings_round_trip_through_pyproj(planes, name):
    ds = xr.open_dataset(planes[name], engine="tensorkit")
    mapping = ds[ds.t2m.attrs["grid_mapping"]]
    crs = pyproj.CRS.from_cf(dict(mapping.attrs))
    radius = mapping.attrs.get("earth_radius", 6371229.0)
    globe = pyproj.CRS.from_proj4(f"+proj=longlat +R={radius} +no_defs")
    x, y = np.meshgrid(ds.x.values, ds.y.values)
    lon, lat = pyproj.Transformer.from_crs(crs, globe, always_xy=True).transform(x, y)
    # ecCodes rounds a rotated grid's points to single-precision millionths of a degree
    # (up to 2e-6 off); the projections' points are exact.
    tolerance = 2.5e-6 if name == "rotated" else 1e-6
    np.testing.assert_allclose(lat, ds.latitude.values, rtol=0, atol=tolerance)
    np.testing.assert_allclose((lon - ds.longitude.values + 180) % 360 - 180, 0, rtol=0, atol=tolerance)


def test_open_mfdataset_in_parallel_on_worker_processes(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    paths = [grib_cubes.analyses(tmp_path / f"day{d}.grib", dates=((20261120 + d, 0), (20261120 + d, 1200))) for d in range(3)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            ds = xr.open_mfdataset(paths, engine="tensorkit", combine="by_coords", parallel=True)
            assert ds.t2m.dims == ("time", "latitude", "longitude") and ds.t2m.shape == (6, 7, 12)
            assert ds.t2m.data.npartitions == 6
            got = ds.t2m.mean("time").compute()
    theirs = xr.concat([cfgrib(p) for p in paths], dim="time")
    np.testing.assert_array_equal(ds.time.values, theirs.time.values)
    np.testing.assert_allclose(got.values, theirs.t2m.mean("time").values, rtol=1e-6)


def test_forty_parameters_are_named_and_grouped_as_cfgrib_does(tmp_path):
    path = grib_cubes.parameters(tmp_path / "params.grib2")
    tree = xr.open_datatree(path, engine="tensorkit")
    names = set()
    for group in tree.children.values():
        ds = group.to_dataset()
        f = json.loads(ds.attrs["filter_by_keys"])
        assert_same_cube(ds, cfgrib(path, filter_by_keys=f))
        names |= set(ds.data_vars)
    assert len(names) == 40 and {"u100", "v200", "d2m", "mx2t", "fg10", "tcc", "deg0l", "siconc"} <= names


def _resident_kib(path) -> int:
    """How much of ``path``'s mappings in this process is resident, from /proc/self/smaps."""
    total, inside = 0, False
    for line in open("/proc/self/smaps"):
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
            inside = line.rstrip().endswith(str(path))
        elif inside and head[:1] == ["Rss:"]:
            total += int(head[1])
    return total


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/smaps"), reason="Linux's smaps")
def test_a_loaded_cube_leaves_no_file_pages_resident(tmp_path):
    # cfgrib reads with fread; the engine maps the file, and the pages a field's decoding
    # touched would count toward the process's memory beside the decoded values.
    path = grib_cubes.ensemble(tmp_path / "big.grib", members=2, steps=(0, 6), levels=(1000, 500), ni=360, nj=181, d=1.0)
    size_kib = path.stat().st_size // 1024
    assert size_kib > 1000
    ds = xr.open_dataset(path, engine="tensorkit")
    values = ds.t.values
    assert np.isfinite(values).all()
    assert _resident_kib(path) < size_kib // 8, (_resident_kib(path), size_kib)
    np.testing.assert_array_equal(values, cfgrib(path).t.values)


def test_converted_fields_are_named_by_every_key_of_their_cube(tmp_path):
    # The same field has the same name in every file, whatever else the file holds.
    one = grib_cubes.ensemble(tmp_path / "one.grib", params=("t",), members=1, steps=(0,), levels=(500,))
    many = grib_cubes.ensemble(tmp_path / "many.grib", params=("t",), members=2, steps=(0, 6), levels=(500, 850))
    for src in (one, many):
        tensorkit.convert(src, src.with_suffix(".tgm"))
    with tensorkit.open(one.with_suffix(".tgm")) as a, tensorkit.open(many.with_suffix(".tgm")) as b:
        assert list(a) == ["t_isobaricInhPa_500_step0_20261120T0000_number1"]
        assert set(a) < set(b) and len(set(b)) == 8
        assert "t_isobaricInhPa_850_step6_20261120T0000_number2" in set(b)


def test_grib_into_grib_packs_again_as_eccodes_does(tmp_path, testdata):
    """convert(in.grib2, out.grib2, pipeline=...) writes the bytes ecCodes' `grib_set -r`
    writes (repack.json), and ecCodes reads the values back."""
    import hashlib
    import json

    import eccodes

    reference = testdata / "grib" / "reference"
    wanted = json.loads((reference / "repack.json").read_text())["repacked"]
    for file, packing, spec in [("ccsds.grib2", "simple:16", "simple:16"), ("simple.grib2", "ccsds", "ccsds"), ("complex.grib2", "ieee32", "ieee")]:
        out = tmp_path / f"{file}.{spec.replace(':', '_')}.grib2"
        assert tensorkit.convert(reference / file, out, pipeline=spec) == []
        sha = next(e["sha256"] for e in wanted if e["file"] == file and e["packing"] == packing)
        assert hashlib.sha256(out.read_bytes()).hexdigest() == sha, (file, spec)
        with open(out, "rb") as f:
            h = eccodes.codes_grib_new_from_file(f)
            assert eccodes.codes_get(h, "packingType") == {"simple:16": "grid_simple", "ccsds": "grid_ccsds", "ieee": "grid_ieee"}[spec]
            eccodes.codes_release(h)
    # Without a pipeline, each field is written again from its sections: the same bytes.
    tensorkit.convert(reference / "simple.grib2", tmp_path / "x.grib2")
    assert (tmp_path / "x.grib2").read_bytes() == (reference / "simple.grib2").read_bytes()
    tensorkit.save(tmp_path / "t.safetensors", {"x": np.zeros(3, np.float32)})
    with pytest.raises(tensorkit.UnsupportedError, match="no `discipline`, `paramId` or `shortName`"):
        tensorkit.convert(tmp_path / "t.safetensors", tmp_path / "x.grib2", pipeline="ccsds")


@pytest.mark.parametrize("name", ["simple.grib2", "ccsds.grib2", "ieee.grib2", "complex.grib2", "bitmap.grib2", "gaussian.grib2"])
@pytest.mark.parametrize("keep", [None, "none"])
def test_grib_through_tensogram_and_back_is_what_grib_compare_calls_identical(tmp_path, testdata, name, keep):
    """GRIB → .tgm → GRIB: ecCodes' grib_compare finds no difference (and the bytes are the
    same), whether the Tensogram file keeps the packing or holds float64; ecCodes reads what
    a pipeline repacks."""
    import subprocess

    import eccodeslib

    bin_dir = Path(eccodeslib.__file__).parent / "bin"
    src = testdata / "grib" / "reference" / name
    tgm, back = tmp_path / "x.tgm", tmp_path / "back.grib2"
    tensorkit.convert(src, tgm, pipeline=keep)
    tensorkit.convert(tgm, back)
    compared = subprocess.run([str(bin_dir / "grib_compare"), str(src), str(back)], capture_output=True, text=True)
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert back.read_bytes() == src.read_bytes()
    tensorkit.convert(tgm, back, pipeline="complex:16")
    listed = subprocess.run([str(bin_dir / "grib_ls"), "-p", "packingType", str(back)], capture_output=True, text=True, check=True)
    assert "grid_complex_spatial_differencing" in listed.stdout
