"""GRIB 2 out from keys, judged by ecCodes and cfgrib: fields ecCodes writes for each grid ×
product × packing are read by tensorkit, their `grib` sections dropped, and written again from
their keys alone; ecCodes reads the same keys and values (within the packing's step) back, and
cfgrib opens the file."""

import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tensorkit

eccodes = pytest.importorskip("eccodes")

GRIDS = {
    "regular_ll": ("regular_ll_sfc_grib2", {}),
    "regular_ll_pl": ("regular_ll_pl_grib2", {}),
    "regular_gg": ("regular_gg_sfc_grib2", {}),
    "reduced_gg": ("reduced_gg_pl_32_grib2", {}),
    "rotated_ll": ("rotated_ll_sfc_grib2", {}),
    "polar_stereographic": ("polar_stereographic_sfc_grib2", {}),
    "lambert": ("GRIB2", {
        "gridDefinitionTemplateNumber": 30, "Nx": 24, "Ny": 18, "latitudeOfFirstGridPointInDegrees": 35.5,
        "longitudeOfFirstGridPointInDegrees": 350.25, "LaDInDegrees": 50.0, "LoVInDegrees": 10.0,
        "DxInMetres": 25000, "DyInMetres": 25000, "Latin1InDegrees": 50.0, "Latin2InDegrees": 50.0,
        "numberOfDataPoints": 24 * 18,
    }),
    "mercator": ("GRIB2", {
        "gridDefinitionTemplateNumber": 10, "Ni": 30, "Nj": 20, "latitudeOfFirstGridPointInDegrees": -10.0,
        "longitudeOfFirstGridPointInDegrees": 100.0, "LaDInDegrees": 20.0, "latitudeOfLastGridPointInDegrees": 10.0,
        "longitudeOfLastGridPointInDegrees": 130.0, "DiInMetres": 100000, "DjInMetres": 100000,
        "numberOfDataPoints": 30 * 20,
    }),
}
PRODUCTS = {
    "4.0": {"stepRange": "6"},
    "4.1": {"productDefinitionTemplateNumber": 1, "perturbationNumber": 3, "numberOfForecastsInEnsemble": 51, "stepRange": "12"},
    "4.8": {"productDefinitionTemplateNumber": 8, "typeOfStatisticalProcessing": 1, "stepRange": "0-6"},
    "4.11": {"productDefinitionTemplateNumber": 11, "perturbationNumber": 5, "numberOfForecastsInEnsemble": 51, "typeOfStatisticalProcessing": 2, "stepRange": "6-12"},
}
PACKINGS = {
    "simple": {"packingType": "grid_simple", "bitsPerValue": 16},
    "ccsds": {"packingType": "grid_ccsds", "bitsPerValue": 16},
    "complex": {"packingType": "grid_complex_spatial_differencing", "bitsPerValue": 16},
    "complex1": {"packingType": "grid_complex", "bitsPerValue": 12},
    "png": {"packingType": "grid_png", "bitsPerValue": 16},
    "ieee": {"packingType": "grid_ieee"},
}
KEYS = [
    "shortName", "paramId", "typeOfLevel", "level", "dataDate", "dataTime", "stepRange", "stepUnits",
    "gridType", "Ni", "Nj", "N", "numberOfDataPoints", "latitudeOfFirstGridPointInDegrees",
    "longitudeOfFirstGridPointInDegrees", "latitudeOfLastGridPointInDegrees", "longitudeOfLastGridPointInDegrees",
    "iDirectionIncrementInDegrees", "jDirectionIncrementInDegrees", "latitudeOfSouthernPoleInDegrees",
    "productDefinitionTemplateNumber", "perturbationNumber", "numberOfForecastsInEnsemble",
    "typeOfStatisticalProcessing", "lengthOfTimeRange", "packingType", "centre", "discipline",
    "parameterCategory", "parameterNumber", "marsClass", "marsType", "marsStream", "experimentVersionNumber",
    "Nx", "Ny", "LaDInDegrees", "LoVInDegrees", "DxInMetres", "DyInMetres", "DiInMetres", "DjInMetres",
    "Latin1InDegrees", "Latin2InDegrees", "projectionCentreFlag", "shapeOfTheEarth",
]


def _ecmwf_field(path: Path, sample: str, product: dict, packing: dict) -> np.ndarray:
    h = eccodes.codes_grib_new_from_samples(sample)
    try:
        # The packing first: changing it packs the sample's values again, and ecCodes then
        # counts the grid's points from those.
        for k, v in list(packing.items()) + [("dataDate", 20261129), ("dataTime", 1200)] + list(product.items()):
            eccodes.codes_set(h, k, v)
        n = eccodes.codes_get(h, "numberOfDataPoints")
        values = 250.0 + 30.0 * np.sin(np.linspace(0.0, 12.0, n)) + np.linspace(0.0, 3.0, n) ** 2
        eccodes.codes_set_values(h, values)
        path.write_bytes(eccodes.codes_get_message(h))
    finally:
        eccodes.codes_release(h)
    return values


def _keys(path: Path) -> tuple[dict, np.ndarray]:
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
    try:
        keys = {}
        for k in KEYS:
            if eccodes.codes_is_defined(h, k) and not eccodes.codes_is_missing(h, k):
                keys[k] = eccodes.codes_get(h, k)
        return keys, eccodes.codes_get_values(h)
    finally:
        eccodes.codes_release(h)


@pytest.mark.parametrize("grid,product,packing", list(itertools.product(GRIDS, PRODUCTS, PACKINGS)))
def test_fields_written_from_keys_read_back_in_eccodes(tmp_path, grid, product, packing):
    sample, extra = GRIDS[grid]
    original = tmp_path / "original.grib2"
    _ecmwf_field(original, sample, {**extra, **PRODUCTS[product]}, PACKINGS[packing])
    with tensorkit.open(original) as f:
        (name,) = f.keys()
        attributes = {k: v for k, v in f.info(name)["attributes"].items() if k != "grib"}
        values = f[name]
    ours = tmp_path / "ours.grib2"
    tensorkit.save(ours, {name: values}, format="grib2", attributes={name: attributes})
    want, want_values = _keys(original)
    got, got_values = _keys(ours)
    assert got == want
    step = 2.0 ** eccodes_step(ours)
    assert np.allclose(got_values, want_values, rtol=0, atol=step / 2 + 1e-3)


def eccodes_step(path: Path) -> int:
    with open(path, "rb") as f:
        h = eccodes.codes_grib_new_from_file(f)
    try:
        if eccodes.codes_get(h, "packingType") == "grid_ieee":
            return -30
        return eccodes.codes_get(h, "binaryScaleFactor")
    finally:
        eccodes.codes_release(h)


def test_grib_keys_make_a_field_that_cfgrib_opens(tmp_path):
    """tensorkit.save(..., format="grib2", grib_keys=...) from a bare array."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("cfgrib")
    t = 273.15 + np.arange(19 * 36, dtype=np.float64).reshape(19, 36) / 100.0
    keys = {
        "shortName": "t", "typeOfLevel": "isobaricInhPa", "level": 500, "dataDate": 20261129, "dataTime": 0,
        "stepRange": "6", "centre": "ecmf", "mars": {"class": "od", "type": "fc", "stream": "oper", "expver": "0001"},
        "gridType": "regular_ll", "Ni": 36, "Nj": 19, "latitudeOfFirstGridPointInDegrees": 90.0,
        "longitudeOfFirstGridPointInDegrees": 0.0, "latitudeOfLastGridPointInDegrees": -90.0,
        "longitudeOfLastGridPointInDegrees": 350.0, "iDirectionIncrementInDegrees": 10.0,
        "jDirectionIncrementInDegrees": 10.0, "packingType": "grid_ccsds", "bitsPerValue": 24,
    }
    path = tmp_path / "t.grib2"
    tensorkit.save(path, {"t": t}, format="grib2", grib_keys=keys)
    got, values = _keys(path)
    assert (got["shortName"], got["level"], got["typeOfLevel"], got["stepRange"]) == ("t", 500, "isobaricInhPa", "6")
    assert (got["marsClass"], got["marsType"], got["marsStream"], got["packingType"]) == ("od", "fc", "oper", "grid_ccsds")
    assert np.allclose(values.reshape(19, 36), t, atol=1e-4)
    ds = xr.open_dataset(path, engine="cfgrib", backend_kwargs={"indexpath": ""})
    assert np.allclose(ds["t"].values, t, atol=1e-4)
    assert float(ds["isobaricInhPa"]) == 500.0
    with pytest.raises(tensorkit.UnsupportedError, match="no `Nj`|no `Ni`|points"):
        tensorkit.save(tmp_path / "bad.grib2", {"t": t}, format="grib2", grib_keys={k: v for k, v in keys.items() if k != "Nj"})
    assert not (tmp_path / "bad.grib2").exists()


def test_to_grib_writes_a_cube_back_as_eccodes_reads_it(tmp_path, testdata):
    """tensorkit.to_grib(ds, path) of datasets opened by the cube engine: the same fields —
    keys and values within a packing step — as the file they came from, read by ecCodes;
    cfgrib opens the result as the same cube."""
    xr = pytest.importorskip("xarray")
    src = testdata / "grib" / "reference" / "simple.grib2"
    for by in ({"typeOfLevel": "isobaricInhPa", "level": 500}, {"typeOfLevel": "surface"}):
        ds = xr.open_dataset(src, engine="tensorkit", filter_by_keys=by)
        out = tmp_path / "cube.grib2"
        tensorkit.to_grib(ds, out, packing="ccsds:24")
        back = xr.open_dataset(out, engine="cfgrib", backend_kwargs={"indexpath": ""})
        for name in ds.data_vars:
            assert np.allclose(back[name].values, ds[name].values, atol=1e-3), name
            assert back[name].attrs["GRIB_paramId"] == ds[name].attrs["GRIB_paramId"]
        for c in ("time", "step", "latitude", "longitude"):
            assert np.array_equal(back[c].values, ds[c].values), c
    # A cube with a time dimension: one message per time, ecCodes' keys as they were.
    times = testdata / "grib" / "reference" / "complex.grib2"
    ds = xr.open_dataset(times, engine="tensorkit")
    assert ds.sizes["time"] == 4
    out = tmp_path / "times.grib2"
    tensorkit.to_grib(ds, out, packing="complex")
    with open(times, "rb") as a, open(out, "rb") as b:
        for _ in range(4):
            ha, hb = eccodes.codes_grib_new_from_file(a), eccodes.codes_grib_new_from_file(b)
            for k in ("shortName", "dataDate", "dataTime", "stepRange", "typeOfLevel", "Ni", "Nj"):
                assert eccodes.codes_get(ha, k) == eccodes.codes_get(hb, k), k
            assert eccodes.codes_get(hb, "packingType") == "grid_complex_spatial_differencing"
            assert np.allclose(eccodes.codes_get_values(ha), eccodes.codes_get_values(hb), atol=1.0)
            eccodes.codes_release(ha)
            eccodes.codes_release(hb)
    # Latitudes turned round are turned back.
    ds = xr.open_dataset(src, engine="tensorkit", filter_by_keys={"typeOfLevel": "isobaricInhPa", "level": 500})
    tensorkit.to_grib(ds.sortby("latitude"), tmp_path / "sorted.grib2")
    back = xr.open_dataset(tmp_path / "sorted.grib2", engine="tensorkit")
    assert np.allclose(back["t"].values, ds["t"].values, atol=1e-2)


def test_a_field_edited_in_tensogram_is_written_from_its_keys(tmp_path, testdata):
    """GRIB → .tgm, a key edited there (the step, and its MARS key) → GRIB: the field is
    written from its keys, said so in a note, and ecCodes reads the edited step; keys that
    contradict each other are refused, naming them, and nothing is written."""
    src = testdata / "grib" / "reference" / "simple.grib2"
    tgm = tmp_path / "x.tgm"
    tensorkit.convert(src, tgm)
    with tensorkit.open(tgm) as f:
        name = next(n for n in f.keys() if n.startswith("t_isobaricInhPa"))
        mars = dict(f.info(name)["attributes"]["mars"])
    mars["step"] = "12"
    tensorkit.edit(tgm, attributes={name: {"stepRange": "12", "mars": mars}})
    out = tmp_path / "edited.grib2"
    notes = tensorkit.convert(tgm, out)
    assert any("written from its keys" in n and ("stepRange" in n or "mars" in n) for n in notes), notes
    with open(out, "rb") as fh:
        steps = []
        while (h := eccodes.codes_grib_new_from_file(fh)) is not None:
            steps.append((eccodes.codes_get(h, "shortName"), eccodes.codes_get(h, "stepRange")))
            eccodes.codes_release(h)
    assert ("t", "12") in steps and len(steps) == 9
    tensorkit.edit(tgm, attributes={name: {"stepRange": "18"}})
    with pytest.raises(tensorkit.UnsupportedError, match="mars"):
        tensorkit.convert(tgm, tmp_path / "contradicting.grib2")
    assert not (tmp_path / "contradicting.grib2").exists()


def test_tensogram_grib_functions_make_messages_and_write_the_fields_back(testdata, tmp_path):
    """``tensorkit.tensogram.convert_grib`` / ``convert_grib_buffer`` / ``to_grib`` (tensogram's
    GRIB functions, without ecCodes) on ecCodes' reference files: one float64 object per field
    with ecCodes' values, the MARS keys ecCodes gives under ``mars`` (and ``grid``, and
    ``area`` for a regular latitude-longitude grid), the ecCodes namespaces under ``grib``
    with ``preserve_all_keys``; grouped one message per field or all in one; bytes around
    the fields skipped; and ``to_grib`` writes the fields again byte for byte."""
    from tensorkit import tensogram

    files = sorted((testdata / "grib" / "reference").glob("*.grib2"))
    assert len(files) >= 6
    for path in files:
        raw = path.read_bytes()
        with open(path, "rb") as f:
            theirs = []
            while (h := eccodes.codes_grib_new_from_file(f)) is not None:
                keys = {k: eccodes.codes_get(h, k, ktype=str) for k in ("class", "stream", "date", "levtype", "param", "gridType")
                        if eccodes.codes_is_defined(h, k)}
                missing = eccodes.codes_get(h, "missingValue")
                values = eccodes.codes_get_values(h)
                theirs.append((keys, np.where(values == missing, np.nan, values)))
                eccodes.codes_release(h)
        [message] = tensogram.convert_grib(path)
        meta, objects = tensogram.decode(message)
        assert len(objects) == len(theirs) == len(meta.base), path.name
        for base, (_d, values), (keys, want) in zip(meta.base, objects, theirs):
            assert values.dtype == np.float64
            np.testing.assert_array_equal(values.ravel(), want, err_msg=path.name)
            mars = base["mars"]
            assert mars["grid"] == keys["gridType"], path.name
            for k in ("class", "stream", "date", "levtype", "param"):
                if k in keys and k in mars:
                    assert mars[k] == keys[k], (path.name, k, mars[k], keys[k])
            if keys["gridType"] == "regular_ll":
                assert len(mars["area"]) == 4, path.name
            assert "grib_repro" in base
        one = tensogram.convert_grib_buffer(b"junk" * 10 + raw + b"\0" * 100, grouping="one_to_one", preserve_all_keys=True)
        assert len(one) == len(theirs), path.name
        grib = tensogram.decode_metadata(one[0]).base[0]["grib"]
        assert {"ls", "geography", "parameter", "statistics"} <= set(grib), (path.name, set(grib))
        # Written back: the same values, fields in their order; the file's bytes but where
        # tensorkit's encoder is not ecCodes' library's — PNG (another deflate stream of the
        # same pixels), and JPEG 2000, written as simple packing with the same parameters
        # (said in a warning).
        if path.name == "jpeg.grib2":
            with pytest.warns(UserWarning, match="grid_jpeg is written as grid_simple"):
                again = tensogram.to_grib([message])
        else:
            again = tensogram.to_grib([message])
            assert tensogram.to_grib(one) == again, path.name
        [back] = tensogram.convert_grib_buffer(again)
        for (_d, a), (_e, b) in zip(objects, tensogram.decode(back)[1]):
            np.testing.assert_array_equal(a, b, err_msg=path.name)
        if path.name not in ("jpeg.grib2", "png.grib2"):
            assert again == raw, path.name
    with pytest.raises(ValueError, match="decode"):
        tensogram.to_grib([b"not a tensogram message"])
    with pytest.raises(ValueError, match="bits_per_value 65 exceeds maximum of 64"):
        tensogram.convert_grib(files[0], encoding="simple_packing", bits=65)
    with pytest.raises(ValueError, match="unknown compression"):
        tensogram.convert_grib(files[0], compression="snappy")
    with pytest.raises(FileNotFoundError):
        tensogram.convert_grib(tmp_path / "absent.grib2")
    assert tensogram.__has_grib__
