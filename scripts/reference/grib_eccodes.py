"""Writes small GRIB files with ecCodes, each with a JSON sidecar: per message the keys users
search by, the packing, the shape, and the SHA-256 of the float64 values (little-endian) as
ecCodes decodes them, with missing points as NaN (`NAME.json`); the values themselves go to
`NAME.values` (float64, little-endian, every message in turn, ecCodes' missing value kept) so a
mismatch can be located.

    python -m venv env && env/bin/pip install eccodes==2.50.0 numpy
    env/bin/python scripts/reference/grib_eccodes.py testdata/grib/reference

Files (edition 2 unless the name says grib1):
- ``simple``: grid_simple at 8, 12, 16 and 24 bits, with decimal scale factors 0 and 2, a
  constant field (0 bits), and a pressure-level field.
- ``ccsds``: grid_ccsds at 8, 12, 16 and 24 bits, decimal scale 0 and 1.
- ``complex``: grid_complex and grid_complex_spatial_differencing at 12 and 16 bits.
- ``ieee``: grid_ieee at 32 and 64 bits.
- ``bitmap``: missing points (a bitmap) with simple, CCSDS and complex packing.
- ``gaussian``: a regular Gaussian grid.
- ``grib1_simple``: edition 1, simple packing at 12 and 16 bits, decimal scale 0 and 1, a
  bitmap, a pressure level and a forecast step.
- ``mixed``: an edition 1 and an edition 2 message in one file.
- ``jpeg``: grid_jpeg (JPEG 2000, template 5.40) at 12, 16 and 24 bits, and with a bitmap.
- ``second_order``: grid_second_order in edition 2 (ECMWF's template 5.50002) and edition 1,
  on a regular lat/lon and a reduced Gaussian grid, and with boustrophedonic ordering.
- ``png``: grid_png (PNG, template 5.41) at 8, 12, 16, 24 and 32 bits (grey of 8 and 16 bits,
  RGB, RGBA), with a decimal scale factor, and with a bitmap.
"""

import hashlib
import json
import math
import sys
from pathlib import Path

import eccodes as ec
import numpy as np

VERSION = ec.codes_get_api_version()

KEYS_STR = ["shortName", "typeOfLevel", "packingType", "gridType", "stepRange", "name", "units"]
KEYS_LONG = [
    "edition", "paramId", "level", "dataDate", "dataTime", "Ni", "Nj", "bitsPerValue",
    "decimalScaleFactor", "binaryScaleFactor", "numberOfValues", "numberOfMissing",
    "iScansNegatively", "jScansPositively", "jPointsAreConsecutive", "centre",
    "discipline", "parameterCategory", "parameterNumber", "indicatorOfParameter", "table2Version",
]
KEYS_DOUBLE = [
    "latitudeOfFirstGridPointInDegrees", "longitudeOfFirstGridPointInDegrees",
    "latitudeOfLastGridPointInDegrees", "longitudeOfLastGridPointInDegrees",
    "iDirectionIncrementInDegrees", "jDirectionIncrementInDegrees", "referenceValue",
]
MARS = ["class", "type", "stream", "expver", "date", "time", "step", "levtype", "levelist", "param"]


def field(ni, nj, seed=0.0, scale=20.0, base=250.0):
    y, x = np.mgrid[0:nj, 0:ni]
    return (base + scale * np.sin(x / 5.0 + seed) * np.cos(y / 4.0)).astype("<f8")


def new(sample, **keys):
    h = ec.codes_grib_new_from_samples(sample)
    for k, v in keys.items():
        ec.codes_set(h, k, v)
    return h


def put(h, values, packing=None, bits=None, decimal=None, bitmap=False, boustrophedonic=False):
    if packing == "grid_second_order":
        # Second-order packing needs values before the switch (and again after it).
        ec.codes_set_values(h, values.ravel())
        if boustrophedonic and ec.codes_get_long(h, "edition") == 1:
            # Edition 1 takes the ordering with the packing type.
            packing = "grid_second_order_boustrophedonic"
        ec.codes_set(h, "packingType", packing)
        if boustrophedonic and ec.codes_get_long(h, "edition") == 2:
            ec.codes_set(h, "boustrophedonicOrdering", 1)
    if bitmap:
        ec.codes_set(h, "bitmapPresent", 1)
    if packing:
        ec.codes_set(h, "packingType", packing)
    if decimal is not None:
        ec.codes_set(h, "decimalScaleFactor", decimal)
    if bits is not None:
        ec.codes_set(h, "bitsPerValue", bits)
    ec.codes_set_values(h, values.ravel())
    return h


def get(h, key, kind):
    try:
        if not ec.codes_is_defined(h, key) or ec.codes_is_missing(h, key):
            return None
        return kind(h, key)
    except ec.KeyValueNotFoundError:
        return None
    except ec.GribInternalError:
        return None


def describe(h):
    values = ec.codes_get_values(h)
    missing = ec.codes_get_double(h, "missingValue")
    bitmap = ec.codes_get_long(h, "bitmapPresent") == 1
    nan = values.copy()
    if bitmap:
        nan[values == missing] = np.nan
    keys = {}
    for k in KEYS_STR:
        keys[k] = get(h, k, ec.codes_get_string)
    for k in KEYS_LONG:
        keys[k] = get(h, k, ec.codes_get_long)
    for k in KEYS_DOUBLE:
        keys[k] = get(h, k, ec.codes_get_double)
    mars = {k: get(h, "mars." + k, ec.codes_get_string) for k in MARS}
    mars = {k: v for k, v in mars.items() if v is not None}
    ni, nj = keys["Ni"], keys["Nj"]
    shape = [nj, ni] if ni and nj and ni * nj == len(values) else [len(values)]
    return {
        "keys": {k: v for k, v in keys.items() if v is not None},
        "mars": mars,
        "shape": shape,
        "missing_value": missing,
        "bitmap": bitmap,
        "sha256_nan": hashlib.sha256(nan.astype("<f8").tobytes()).hexdigest(),
        "min": float(np.nanmin(nan)) if not np.isnan(nan).all() else None,
        "max": float(np.nanmax(nan)) if not np.isnan(nan).all() else None,
    }, values


def write(out, name, handles):
    ext = ".grib1" if all(ec.codes_get_long(h, "edition") == 1 for h in handles) else ".grib2"
    if any(ec.codes_get_long(h, "edition") == 1 for h in handles) and ext == ".grib2":
        ext = ".grib"
    path = out / (name + ext)
    messages, values = [], []
    with open(path, "wb") as f:
        for h in handles:
            # Decode what was written, from the bytes, as a reader would.
            msg = ec.codes_get_message(h)
            f.write(msg)
            r = ec.codes_new_from_message(msg)
            d, v = describe(r)
            messages.append(d)
            values.append(v.astype("<f8"))
            ec.codes_release(r)
            ec.codes_release(h)
    path.with_suffix(".values").write_bytes(b"".join(v.tobytes() for v in values))
    sidecar = {"written_by": f"eccodes {VERSION}", "messages": messages}
    path.with_suffix(".json").write_text(json.dumps(sidecar, indent=1, sort_keys=True) + "\n")
    print(path, len(messages), "messages", path.stat().st_size, "bytes")


def ll(edition, ni=36, nj=19, step=10.0, **keys):
    """A regular lat/lon field of ni × nj points from 90°N, 0°E, ``step`` degrees apart."""
    sample = "regular_ll_sfc_grib%d" % edition
    h = new(sample)
    ec.codes_set(h, "Ni", ni)
    ec.codes_set(h, "Nj", nj)
    ec.codes_set(h, "latitudeOfFirstGridPointInDegrees", 90.0)
    ec.codes_set(h, "longitudeOfFirstGridPointInDegrees", 0.0)
    ec.codes_set(h, "latitudeOfLastGridPointInDegrees", 90.0 - step * (nj - 1))
    ec.codes_set(h, "longitudeOfLastGridPointInDegrees", step * (ni - 1))
    ec.codes_set(h, "iDirectionIncrementInDegrees", step)
    ec.codes_set(h, "jDirectionIncrementInDegrees", step)
    for k, v in keys.items():
        ec.codes_set(h, k, v)
    return h


def png(out, ni=36, nj=19):
    fields = []
    for i, (bits, dec) in enumerate([(8, 0), (12, 0), (16, 0), (16, 1)]):
        h = ll(2, ni, nj, shortName="2t", dataDate=20260501 + i)
        fields.append(put(h, field(ni, nj, i), "grid_png", bits, dec))
    # 24 and 32 bits (RGB and RGBA pixels): ecCodes sizes its output buffer to the raw
    # integers and fails an assertion when the PNG comes out larger, as it does for 36 × 19
    # points of this field, so a smoother field on a 5° grid.
    y, x = np.mgrid[0:37, 0:72]
    smooth = 250.0 + 20.0 * np.sin(x / 24.0) * np.cos(y / 18.5)
    for i, bits in enumerate((24, 32)):
        h = ll(2, 72, 37, step=5.0, shortName="2t", dataDate=20260511 + i)
        fields.append(put(h, smooth, "grid_png", bits))
    # With a bitmap the image is one row of the present values (the same buffer limit).
    h = ll(2, 72, 37, step=5.0, shortName="sst")
    v = smooth + 35.0
    ec.codes_set(h, "missingValue", 9999.0)
    v[(np.arange(v.size).reshape(v.shape) % 7) == 3] = 9999.0
    fields.append(put(h, v, "grid_png", 16, bitmap=True))
    write(out, "png", fields)


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ni, nj = 36, 19

    simple = []
    for i, (bits, dec) in enumerate([(8, 0), (12, 0), (16, 0), (24, 0), (12, 2), (16, 1)]):
        h = ll(2, ni, nj, shortName="2t", dataDate=20260101 + i, dataTime=1200)
        simple.append(put(h, field(ni, nj, i), "grid_simple", bits, dec))
    h = ll(2, ni, nj, shortName="sp")
    simple.append(put(h, np.full((nj, ni), 101325.0), "grid_simple", 16))
    h = ll(2, ni, nj, typeOfLevel="isobaricInhPa", level=500, shortName="t", stepRange="6")
    simple.append(put(h, field(ni, nj, 7, 15.0, 255.0), "grid_simple", 16))
    h = ll(2, ni, nj, shortName="z", typeOfLevel="isobaricInhPa", level=850)
    simple.append(put(h, field(ni, nj, 3, 3000.0, 14000.0), "grid_simple", 16))
    write(out, "simple", simple)

    ccsds = []
    for i, (bits, dec) in enumerate([(8, 0), (12, 0), (16, 0), (24, 0), (16, 1)]):
        h = ll(2, ni, nj, shortName="2t", dataDate=20260201 + i)
        ccsds.append(put(h, field(ni, nj, i), "grid_ccsds", bits, dec))
    h = ll(2, ni, nj, shortName="tp")
    tp = np.maximum(field(ni, nj, 1, 0.01, 0.0), 0.0)
    ccsds.append(put(h, tp, "grid_ccsds", 16))
    write(out, "ccsds", ccsds)

    complex_ = []
    for i, (packing, bits) in enumerate(
        [("grid_complex", 12), ("grid_complex", 16),
         ("grid_complex_spatial_differencing", 12), ("grid_complex_spatial_differencing", 16)]
    ):
        h = ll(2, ni, nj, shortName="msl", dataDate=20260301 + i)
        complex_.append(put(h, field(ni, nj, i, 2000.0, 101000.0), packing, bits))
    write(out, "complex", complex_)

    ieee = []
    for bits in (32, 64):
        h = ll(2, ni, nj, shortName="2t")
        ieee.append(put(h, field(ni, nj, bits), "grid_ieee", bits))
    write(out, "ieee", ieee)

    bitmap = []
    for packing in ("grid_simple", "grid_ccsds", "grid_complex"):
        h = ll(2, ni, nj, shortName="sst")
        v = field(ni, nj, 2, 5.0, 285.0)
        ec.codes_set(h, "missingValue", 9999.0)
        v[(np.arange(v.size).reshape(v.shape) % 7) == 3] = 9999.0
        bitmap.append(put(h, v, packing, 16, bitmap=True))
    write(out, "bitmap", bitmap)

    h = new("regular_gg_sfc_grib2")
    n = ec.codes_get_size(h, "values")
    g = field(n, 1, 0.5).ravel()
    write(out, "gaussian", [put(h, g, "grid_simple", 16)])

    g1 = []
    for i, (bits, dec) in enumerate([(12, 0), (16, 0), (None, 1), (None, 2)]):
        h = ll(1, ni, nj, shortName="2t", dataDate=20260401 + i)
        g1.append(put(h, field(ni, nj, i), "grid_simple", bits, dec))
    h = ll(1, ni, nj, shortName="sst")
    v = field(ni, nj, 2, 5.0, 285.0)
    v[(np.arange(v.size).reshape(v.shape) % 5) == 1] = 9999.0
    g1.append(put(h, v, "grid_simple", 16, bitmap=True))
    h = ll(1, ni, nj, indicatorOfTypeOfLevel=100, level=500, shortName="t", stepRange="12")
    g1.append(put(h, field(ni, nj, 4, 15.0, 255.0), "grid_simple", 16))
    write(out, "grib1_simple", g1)

    jpeg = []
    for bits in (12, 16, 24):
        h = ll(2, ni, nj, shortName="2t")
        jpeg.append(put(h, field(ni, nj, bits), "grid_jpeg", bits))
    h = ll(2, ni, nj, shortName="sst")
    v = field(ni, nj, 2, 5.0, 285.0)
    ec.codes_set(h, "missingValue", 9999.0)
    v[(np.arange(v.size).reshape(v.shape) % 7) == 3] = 9999.0
    jpeg.append(put(h, v, "grid_jpeg", 16, bitmap=True))
    write(out, "jpeg", jpeg)

    rng = np.random.default_rng(5)
    second = []
    for edition in (2, 1):
        h = ll(edition, ni, nj, shortName="2t")
        noisy = field(ni, nj, 1) + rng.normal(size=(nj, ni))
        second.append(put(h, noisy, "grid_second_order", 16))
        h = new("reduced_gg_pl_grib%d" % edition)
        n = ec.codes_get_size(h, "values")
        second.append(put(h, field(n, 1, 3).ravel() + rng.normal(size=n), "grid_second_order", 16))
        h = ll(edition, ni, nj, shortName="2t")
        noisy = field(ni, nj, 4) + rng.normal(size=(nj, ni))
        second.append(put(h, noisy, "grid_second_order", 16, boustrophedonic=True))
    write(out, "second_order", second)

    mixed = [
        put(ll(1, ni, nj, shortName="2t"), field(ni, nj, 1), "grid_simple", 16),
        put(ll(2, ni, nj, shortName="2t"), field(ni, nj, 1), "grid_simple", 16),
    ]
    write(out, "mixed", mixed)

    png(out, ni, nj)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/grib/reference")
