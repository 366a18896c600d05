"""Virtual Zarr over GRIB: tensorkit.virtualizarr.GribParser and the tensorkit.grib codec,
through VirtualiZarr, zarr 3 and Icechunk, against the xarray engine's cubes and
tensorkit.open's values, on files ecCodes writes here."""

import json
import re
import warnings

import numpy as np
import pytest
import xarray as xr

import grib_cubes
import tensorkit

virtualizarr = pytest.importorskip("virtualizarr")
zarr = pytest.importorskip("zarr")
pytest.importorskip("eccodes")
from obspec_utils.registry import ObjectStoreRegistry  # noqa: E402
from obstore.store import LocalStore  # noqa: E402

import tensorkit.virtualizarr as tv  # noqa: E402


@pytest.fixture()
def registry():
    return ObjectStoreRegistry({"file://": LocalStore()})


def url(path):
    return "file://" + str(path)


@pytest.mark.parametrize("name", ["ensemble", "forecasts", "bitmap", "reduced_gaussian", "grib1"])
def test_the_virtual_store_reads_the_engine_s_cube(tmp_path, registry, name):
    path = grib_cubes.ALL[name](tmp_path / f"{name}.grib")
    store = tv.GribParser()(url(path), registry)
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    assert list(ds.data_vars) == list(ref.data_vars)
    assert set(ds.coords) == set(ref.coords)
    for v in ref.data_vars:
        assert ds[v].dims == ref[v].dims and ds[v].dtype == np.float64
        # Bit for bit the values tensorkit.open gives, NaN where points are missing.
        np.testing.assert_array_equal(ds[v].values, ref[v].values)
        assert ds[v].attrs.keys() == ref[v].attrs.keys()
        assert all(np.array_equal(ds[v].attrs[k], ref[v].attrs[k]) for k in ref[v].attrs), v
    for c in ref.coords:
        assert ds[c].dims == ref[c].dims, c
        np.testing.assert_array_equal(ds[c].values, ref[c].values, err_msg=c)
    assert ds.attrs["GRIB_centre"] == ref.attrs["GRIB_centre"]


def test_one_chunk_per_message_at_its_byte_range(tmp_path, registry):
    path = grib_cubes.ensemble(tmp_path / "ens.grib2")
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.GribParser(), loadable_variables=[])
    manifest = vds.t.data.manifest
    assert manifest.shape_chunk_grid == (5, 4, 5, 1, 1)
    data = path.read_bytes()
    offsets, lengths = manifest._offsets.ravel(), manifest._lengths.ravel()
    assert len(set(offsets.tolist())) == 100
    for o, n in zip(offsets.tolist(), lengths.tolist()):
        assert data[o : o + 4] == b"GRIB" and data[o + n - 4 : o + n] == b"7777"
    # Every message of the file is referenced once, by t or by u.
    all_offsets = sorted(offsets.tolist() + vds.u.data.manifest._offsets.ravel().tolist())
    starts, at = [], 0
    while at < len(data):
        starts.append(at)
        at += int.from_bytes(data[at + 8 : at + 16], "big")
    assert all_offsets == starts


def test_mixed_files_give_stable_groups(tmp_path, registry):
    paths = [grib_cubes.mixed_levels(tmp_path / f"day{d}.grib2") for d in range(2)]
    trees = [tv.GribParser(tree=True)(url(p), registry) for p in paths]
    groups = [sorted(t._group.groups) for t in trees]
    assert groups[0] == groups[1] == sorted(["isobaricInhPa", "heightAboveGround_2", "heightAboveGround_10", "surface"])
    ds = xr.open_zarr(trees[0], group="heightAboveGround_10", consolidated=False, zarr_format=3)
    ref = xr.open_dataset(paths[0], engine="tensorkit", values_dtype=np.float64,
                          filter_by_keys={"typeOfLevel": "heightAboveGround", "level": 10})
    np.testing.assert_array_equal(ds.u10.values, ref.u10.values)
    with pytest.raises(tensorkit.InvalidArgumentError, match="filter_by_keys"):
        tv.GribParser()(url(paths[0]), registry)
    one = tv.GribParser(filter_by_keys={"typeOfLevel": "surface"})(url(paths[0]), registry)
    assert list(xr.open_zarr(one, consolidated=False, zarr_format=3).data_vars) == ["sp"]


COORDS = ["number", "time", "step", "isobaricInhPa", "latitude", "longitude", "valid_time"]


@pytest.mark.parametrize("loadable", [[], None, COORDS], ids=["virtual", "default", "coordinates"])
@pytest.mark.parametrize("kind", ["grib", "tgm"])
def test_an_icechunk_repository_of_virtual_references(tmp_path, registry, kind, loadable):
    # VirtualiZarr's usual path loads coordinates (`loadable_variables`, or dimension
    # coordinates by default): they are written as values, with no codec that only decodes.
    icechunk = pytest.importorskip("icechunk")
    if kind == "grib":
        path, parser = grib_cubes.ensemble(tmp_path / "ens.grib2"), tv.GribParser()
    else:
        # The same cube from the file converted to Tensogram: chunks are its data frames.
        path, parser = converted(tmp_path / "ens.tgm", "ensemble", tmp_path)[1], tv.TensogramParser()
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=parser, loadable_variables=loadable)
    for name in loadable or []:
        assert not hasattr(vds[name].data, "manifest"), name
        assert "tensorkit" not in json.dumps(vds[name].encoding, default=str), (name, vds[name].encoding)
    assert hasattr(vds.t.data, "manifest")
    prefix = f"file://{tmp_path}/"
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(str(tmp_path))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        repo = icechunk.Repository.create(
            icechunk.local_filesystem_storage(str(tmp_path / "repo")), config,
            authorize_virtual_chunk_access={prefix: None},
        )
    session = repo.writable_session("main")
    vds.vz.to_icechunk(session.store)
    session.commit(f"one {kind} file, virtually")
    ds = xr.open_zarr(repo.readonly_session("main").store, consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    np.testing.assert_array_equal(ds.t.values, ref.t.values)
    for name in COORDS:
        np.testing.assert_array_equal(ds[name].values, ref[name].values, err_msg=name)


def test_the_codec_is_registered_and_refuses_writes(tmp_path):
    from zarr.registry import get_codec_class

    from tensorkit.zarr import GribCodec

    assert get_codec_class("tensorkit.grib") is GribCodec
    config = {"output": "coordinate", "name": "latitude", "dtype": "float64"}
    codec = GribCodec.from_dict({"name": "tensorkit.grib", "configuration": config})
    assert codec.to_dict() == {"name": "tensorkit.grib", "configuration": config}
    assert json.dumps(codec.to_dict())
    with pytest.raises(tensorkit.InvalidArgumentError):
        GribCodec(output="pixels")
    store = zarr.storage.MemoryStore()
    a = zarr.create_array(store, shape=(4,), chunks=(4,), dtype="float64", compressors=[GribCodec()])
    with pytest.raises(tensorkit.UnsupportedError, match="does not write"):
        a[:] = 1.0


def test_numcodecs_finds_the_codecs_as_filters_for_zarr_v2():
    import numcodecs

    from tensorkit.zarr import GribFilter, TensogramFilter

    grib = numcodecs.get_codec({"id": "tensorkit.grib", "output": "values", "dtype": "float32"})
    assert isinstance(grib, GribFilter) and grib.get_config() == {
        "id": "tensorkit.grib", "output": "values", "name": None, "field": 0, "dtype": "float32"}
    d = {"id": "tensorkit.tensogram", "descriptor": {"dtype": "int32", "shape": [3]}}
    assert isinstance(numcodecs.get_codec(d), TensogramFilter) and numcodecs.get_codec(d).get_config() == d
    with pytest.raises(tensorkit.UnsupportedError, match="does not write"):
        grib.encode(np.zeros(3))


def open_kerchunk(refs):
    return xr.open_dataset(
        "reference://", engine="zarr", consolidated=False, zarr_format=2,
        backend_kwargs={"storage_options": {"fo": str(refs)}},
    )


@pytest.mark.parametrize("name", ["ensemble", "bitmap", "grib1"])
def test_kerchunk_json_reads_the_engine_s_cube(tmp_path, registry, name):
    pytest.importorskip("fsspec")
    path = grib_cubes.ALL[name](tmp_path / f"{name}.grib")
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.GribParser(), loadable_variables=[])
    refs = tmp_path / "refs.json"
    tv.to_kerchunk(vds, refs)
    text = json.loads(refs.read_text())
    filters = [json.loads(v)["filters"] for k, v in text["refs"].items() if k.endswith("/.zarray")]
    assert any(f and f[0]["id"] == "tensorkit.grib" for f in filters)
    ds = open_kerchunk(refs)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    assert list(ds.data_vars) == list(ref.data_vars)
    for v in ref.data_vars:
        assert ds[v].dims == ref[v].dims
        np.testing.assert_array_equal(ds[v].values, ref[v].values)
    for c in ref.coords:
        np.testing.assert_array_equal(ds[c].values, ref[c].values, err_msg=c)


def test_tensogram_objects_as_kerchunk_json(tmp_path, registry):
    pytest.importorskip("fsspec")
    path = tensogram_file(tmp_path / "v.tgm")
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    refs = tmp_path / "refs.json"
    tv.to_kerchunk(vds, refs)
    assert tv.to_kerchunk(vds) == json.loads(refs.read_text())
    ds = open_kerchunk(refs)
    ref = xr.open_dataset(path, engine="tensorkit")
    for v in ref.variables:
        assert ds[v].dims == ref[v].dims and ds[v].dtype == ref[v].dtype, v
        np.testing.assert_array_equal(ds[v].values, ref[v].values, err_msg=v)


def tensogram_file(path):
    from tensorkit import tensogram as tg

    field = 250 + np.sin(np.arange(19 * 36).reshape(19, 36) / 9.0)
    packed = {"type": "ntensor", "dtype": "float64", "shape": [19, 36], "encoding": "simple_packing",
              "sp_bits_per_value": 16, "compression": "szip", "szip_rsi": 32, "szip_block_size": 16, "szip_flags": 8}
    first = tg.encode(
        {"base": [{"name": "t2m", "dim_names": ["lat", "lon"], "units": "K"}, {"name": "lat"}]},
        [(packed, field), ({"type": "ntensor"}, np.linspace(90, -90, 19))],
    )
    second = tg.encode(
        {"base": [{"name": "w"}, {"name": "mask"}]},
        [({"type": "ntensor", "compression": "zstd"}, np.arange(10, dtype=np.int32)),
         ({"type": "ntensor", "compression": "lz4"}, np.arange(16) % 3 == 0)],
    )
    path.write_bytes(first + second)
    return path


def test_tensogram_objects_are_virtual_arrays(tmp_path, registry):
    path = tensogram_file(tmp_path / "v.tgm")
    store = tv.TensogramParser()(url(path), registry)
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit")
    assert set(ds.variables) == set(ref.variables) == {"t2m", "lat", "w", "mask"}
    for v in ref.variables:
        assert ds[v].dims == ref[v].dims and ds[v].dtype == ref[v].dtype, v
        np.testing.assert_array_equal(ds[v].values, ref[v].values, err_msg=v)
    assert ds.t2m.attrs["units"] == "K"
    # Each array's one chunk is its object's payload, at its place in the file.
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    data = path.read_bytes()
    objects = [o for m in tensorkit._tensorkit.tgm_layout(str(path)) for o in m["objects"]]
    for name, o in zip(["t2m", "lat", "w", "mask"], objects):
        manifest = vds[name].data.manifest
        offset, length = o["payload"]
        assert int(manifest._offsets.ravel()[0]) == offset and int(manifest._lengths.ravel()[0]) == length
        assert not o["masked"] and offset + length <= len(data)


def test_files_tensogram_writes_read_as_tensogram_decodes_them(tmp_path, registry):
    """The real tensogram package writes the file (packing and szip, zstd, a NaN kept in a
    mask, two messages); the virtual store gives what its own decode gives."""
    tensogram = pytest.importorskip("tensogram")
    field = 250 + np.sin(np.arange(12 * 24).reshape(12, 24) / 7.0)
    holes = field.copy()
    holes[3, 4] = np.nan
    packed = {"type": "ntensor", "dtype": "float64", "shape": [12, 24], "encoding": "simple_packing",
              "sp_bits_per_value": 16, "compression": "szip", "szip_rsi": 32, "szip_block_size": 16, "szip_flags": 8}
    ids = {"type": "ntensor", "dtype": "int32", "shape": [7], "compression": "zstd"}
    raw = {"type": "ntensor", "dtype": "float64", "shape": [12, 24]}
    first = tensogram.encode({"base": [{"name": "t2m"}, {"name": "ids"}]},
                             [(packed, field), (ids, np.arange(7, dtype=np.int32))])
    second = tensogram.encode({"base": [{"name": "sst"}]}, [(raw, holes)], allow_nan=True)
    path = tmp_path / "theirs.tgm"
    path.write_bytes(first + second)
    ds = xr.open_zarr(tv.TensogramParser()(url(path), registry), consolidated=False, zarr_format=3)
    theirs = {}
    for msg in (first, second):
        meta, objects = tensogram.decode(msg)
        for base, (_, values) in zip(meta.base, objects):
            theirs[base["name"]] = values
    assert set(ds.data_vars) | set(ds.coords) == set(theirs)
    for name, values in theirs.items():
        np.testing.assert_array_equal(ds[name].values, values, err_msg=name)


def test_objects_with_masks_are_read_from_their_frames(tmp_path, registry):
    from tensorkit import tensogram as tg

    path = tmp_path / "nan.tgm"
    values = np.array([1.0, np.nan, np.inf, -2.5])
    path.write_bytes(tg.encode({"base": [{"name": "x"}]}, [({"type": "ntensor"}, values)], allow_nan=True, allow_inf=True))
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    # The chunk is the whole data frame: the masks lie in it, outside the payload.
    (o,) = tensorkit._tensorkit.tgm_layout(str(path))[0]["objects"]
    assert int(vds.x.data.manifest._offsets.ravel()[0]) == o["frame"][0] and o["masked"]
    ds = xr.open_zarr(tv.TensogramParser()(url(path), registry), consolidated=False, zarr_format=3)
    np.testing.assert_array_equal(ds.x.values, values)


def converted(path, name, tmp_path):
    """The GRIB file `name` of grib_cubes, converted to Tensogram by tensorkit (one message)."""
    grib = grib_cubes.ALL[name](tmp_path / f"{name}.grib")
    tensorkit.convert(grib, path)
    return grib, path


def one_object_per_message(src, dst):
    """`src`'s objects, each in a message of its own with its metadata (as writers that
    stream one field at a time lay files out)."""
    from tensorkit import tensogram as tg

    msg = tg.decode(src.read_bytes())
    out = b""
    for base, (descriptor, array) in zip(msg.metadata.base, msg.objects):
        entry = {k: v for k, v in base.items() if k != "_reserved_"}
        out += tg.encode({"base": [entry]}, [({"type": "ntensor", "encoding": "none", "compression": "zstd"}, array)])
    dst.write_bytes(out)
    return dst


def assert_same_dataset(ds, ref):
    assert list(ds.data_vars) == list(ref.data_vars)
    assert set(ds.coords) == set(ref.coords)
    for v in ref.data_vars:
        assert ds[v].dims == ref[v].dims and ds[v].dtype == np.float64, v
        np.testing.assert_array_equal(ds[v].values, ref[v].values, err_msg=v)
        assert all(np.array_equal(ds[v].attrs[k], ref[v].attrs[k]) for k in ref[v].attrs), v
    for c in ref.coords:
        assert ds[c].dims == ref[c].dims, c
        np.testing.assert_array_equal(ds[c].values, ref[c].values, err_msg=c)


@pytest.mark.parametrize("name", ["ensemble", "forecasts", "bitmap", "reduced_gaussian", "grib1"])
def test_a_tensogram_file_converted_from_grib_is_the_engine_s_cube(tmp_path, registry, name):
    grib, path = converted(tmp_path / f"{name}.tgm", name, tmp_path)
    ds = xr.open_zarr(tv.TensogramParser()(url(path), registry), consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    assert_same_dataset(ds, ref)
    # The values are the GRIB file's, bit for bit, bitmapped points NaN.
    assert_same_dataset(ds, xr.open_dataset(grib, engine="tensorkit", values_dtype=np.float64))
    # One chunk per object, at its data frame; coordinates from the metadata frame.
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    (m,) = tensorkit._tensorkit.tgm_layout(str(path))
    frames = {tuple(o["frame"]) for o in m["objects"]}
    var = next(iter(ref.data_vars))
    manifest = vds[var].data.manifest
    assert {(int(o), int(n)) for o, n in zip(manifest._offsets.ravel(), manifest._lengths.ravel()) if n} <= frames
    assert manifest.shape_chunk_grid[: ref[var].ndim - 2] == ref[var].shape[: ref[var].ndim - 2]
    time = vds["time"].data.manifest
    assert (int(time._offsets.ravel()[0]), int(time._lengths.ravel()[0])) == tuple(m["metadata"])


def test_one_object_per_message_gives_a_coordinate_chunk_per_field(tmp_path, registry):
    _, single = converted(tmp_path / "one.tgm", "ensemble", tmp_path)
    path = one_object_per_message(single, tmp_path / "many.tgm")
    layout = tensorkit._tensorkit.tgm_layout(str(path))
    assert len(layout) == 200 and all(len(m["objects"]) == 1 for m in layout)
    ds = xr.open_zarr(tv.TensogramParser()(url(path), registry), consolidated=False, zarr_format=3)
    assert_same_dataset(ds, xr.open_dataset(single, engine="tensorkit", values_dtype=np.float64))
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    assert vds["step"].data.manifest.shape_chunk_grid == (4,)


def test_a_converted_mixed_file_gives_the_engine_s_groups(tmp_path, registry):
    grib = grib_cubes.mixed_levels(tmp_path / "mixed.grib2")
    path = tmp_path / "mixed.tgm"
    tensorkit.convert(grib, path)
    tree = tv.TensogramParser(tree=True)(url(path), registry)
    assert sorted(tree._group.groups) == sorted(["isobaricInhPa", "heightAboveGround_2", "heightAboveGround_10", "surface"])
    ds = xr.open_zarr(tree, group="heightAboveGround_10", consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64,
                          filter_by_keys={"typeOfLevel": "heightAboveGround", "level": 10})
    assert_same_dataset(ds, ref)
    with pytest.raises(tensorkit.InvalidArgumentError, match="filter_by_keys"):
        tv.TensogramParser()(url(path), registry)


def test_a_converted_cube_as_kerchunk_json(tmp_path, registry):
    pytest.importorskip("fsspec")
    _, path = converted(tmp_path / "ens.tgm", "ensemble", tmp_path)
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.TensogramParser(), loadable_variables=[])
    refs = tmp_path / "refs.json"
    tv.to_kerchunk(vds, refs)
    ds = open_kerchunk(refs)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    for v in ref.data_vars:
        np.testing.assert_array_equal(ds[v].values, ref[v].values, err_msg=v)
    for c in ref.coords:
        np.testing.assert_array_equal(ds[c].values, ref[c].values, err_msg=c)


def test_the_tensogram_codec_is_registered(tmp_path):
    from zarr.registry import get_codec_class

    from tensorkit.zarr import TensogramCodec

    assert get_codec_class("tensorkit.tensogram") is TensogramCodec
    d = {"name": "tensorkit.tensogram", "configuration": {"descriptor": {"dtype": "float32", "shape": [2]}}}
    assert TensogramCodec.from_dict(d).to_dict() == d
    with pytest.raises(tensorkit.InvalidArgumentError):
        TensogramCodec(descriptor={"shape": [2]})
    frame = {"name": "tensorkit.tensogram", "configuration": {"output": "values"}}
    assert TensogramCodec.from_dict(frame).to_dict() == frame
    coordinate = {"name": "tensorkit.tensogram",
                  "configuration": {"output": "coordinate", "name": "time", "cube": {"time_dims": ["time"]}, "dtype": "int64"}}
    assert TensogramCodec.from_dict(coordinate).to_dict() == coordinate
    with pytest.raises(tensorkit.InvalidArgumentError, match="needs a name"):
        TensogramCodec(output="coordinate")
    with pytest.raises(tensorkit.InvalidArgumentError, match="values only"):
        TensogramCodec(descriptor={"dtype": "float32", "shape": [2]}, output="coordinate", name="time")


def test_byte_ranges_are_kerchunk_s(tmp_path, registry, monkeypatch):
    import copy

    import cfgrib

    kerchunk_grib = pytest.importorskip("kerchunk.grib2")
    # scan_grib adds `_ARRAY_DIMENSIONS` to cfgrib's own coordinate attributes, in place:
    # it works on a copy, so that cfgrib's datasets in later tests stay cfgrib's.
    monkeypatch.setattr(cfgrib.dataset, "COORD_ATTRS", copy.deepcopy(cfgrib.dataset.COORD_ATTRS))
    path = grib_cubes.ensemble(tmp_path / "ens.grib2", members=2, steps=(0, 6), levels=(850, 500))
    theirs = set()
    for refs in kerchunk_grib.scan_grib(str(path)):
        for key, value in refs["refs"].items():
            if isinstance(value, list) and len(value) == 3 and key.split("/")[-1][0].isdigit():
                theirs.add((value[1], value[2]))
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry, parser=tv.GribParser(), loadable_variables=[])
    ours = set()
    for v in ("t", "u"):
        m = vds[v].data.manifest
        ours |= set(zip(m._offsets.ravel().tolist(), m._lengths.ravel().tolist()))
    assert ours == theirs and len(ours) == 16


def test_a_grib_file_over_http_is_parsed_from_its_headers(served):
    from obstore.store import HTTPStore

    root, base, handler = served
    # Twenty fields of 520 KB: listing reads each message's headers (GRIB's own read-ahead,
    # 4 KiB, not the reader's 64 KiB), not its data.
    path = grib_cubes.ensemble(root / "ens.grib2", members=1, steps=(0, 6), levels=(850, 500, 250, 100, 50),
                               ni=720, nj=361, d=0.5)
    size = path.stat().st_size
    registry = ObjectStoreRegistry({base: HTTPStore.from_url(base, client_options={"allow_http": True})})
    store = tv.GribParser()(f"{base}/ens.grib2", registry)
    listed = sum(int(r.split("-")[1]) - int(r.split("=")[1].split("-")[0]) + 1
                 for r, p in zip(handler.requests, handler.paths)
                 if p == "/ens.grib2" and re.fullmatch(r"bytes=\d+-\d+", r))
    # What opening reads (the reader's 64 KiB at each end), then at most 8 KiB a message.
    assert listed <= 2 * (64 << 10) + 20 * (8 << 10), (listed, size, handler.requests)
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3)
    ref = xr.open_dataset(path, engine="tensorkit", values_dtype=np.float64)
    # One chunk through the virtual store: one range request, of its message.
    handler.requests.clear()
    handler.paths.clear()
    one = ds.t.isel(step=1, isobaricInhPa=2).values
    np.testing.assert_array_equal(one, ref.t.isel(step=1, isobaricInhPa=2).values)
    assert handler.paths == ["/ens.grib2"], handler.requests
    for v in ref.data_vars:
        np.testing.assert_array_equal(ds[v].values, ref[v].values)
    for c in ref.coords:
        np.testing.assert_array_equal(ds[c].values, ref[c].values, err_msg=c)
    manifest = virtualizarr.open_virtual_dataset(f"{base}/ens.grib2", registry=registry, parser=tv.GribParser(),
                                                 loadable_variables=[]).t.data.manifest
    assert set(manifest._paths.ravel().tolist()) == {f"{base}/ens.grib2"}
    # An ECMWF index beside the file is read (and gives the same store); use_index=False
    # does not look for one.
    data = path.read_bytes()
    lines, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at + 8 : at + 16], "big")
        lines.append(json.dumps({"param": "t", "_offset": at, "_length": n}))
        at += n
    (root / "ens.grib2.index").write_text("\n".join(lines) + "\n")
    handler.paths.clear()
    indexed = xr.open_zarr(tv.GribParser()(f"{base}/ens.grib2", registry), consolidated=False, zarr_format=3)
    assert "/ens.grib2.index" in handler.paths
    np.testing.assert_array_equal(indexed.t.values, ref.t.values)
    handler.paths.clear()
    tv.GribParser(use_index=False)(f"{base}/ens.grib2", registry)
    assert not any(p.endswith((".idx", ".index")) for p in handler.paths)


@pytest.mark.parametrize("kind", ["grib", "tgm"])
def test_a_month_of_files_concatenates_with_open_virtual_mfdataset(tmp_path, registry, kind):
    # One file a day, two analysis times each: the same groups and names in every file,
    # concatenated along time and read back through kerchunk JSON; the same days converted
    # to Tensogram concatenate alike.
    paths = [grib_cubes.analyses(tmp_path / f"day{k}.grib2", dates=((20261101 + k, 0), (20261101 + k, 1200)))
             for k in range(3)]
    parser = tv.GribParser()
    if kind == "tgm":
        for p in paths:
            tensorkit.convert(p, p.with_suffix(".tgm"))
        paths, parser = [p.with_suffix(".tgm") for p in paths], tv.TensogramParser()
    vds = virtualizarr.open_virtual_mfdataset(
        [url(p) for p in paths], registry=registry, parser=parser,
        combine="nested", concat_dim="time", coords="minimal", compat="override", join="override",
    )
    assert vds.t2m.data.manifest.shape_chunk_grid == (6, 1, 1)
    refs = tmp_path / "month.json"
    tv.to_kerchunk(vds, refs)
    ds = open_kerchunk(refs)
    want = xr.concat([xr.open_dataset(p, engine="tensorkit", values_dtype=np.float64) for p in paths], dim="time")
    for v in want.data_vars:
        np.testing.assert_array_equal(ds[v].values, want[v].values)
    np.testing.assert_array_equal(ds.time.values, want.time.values)
    np.testing.assert_array_equal(ds.valid_time.values, want.valid_time.values)
