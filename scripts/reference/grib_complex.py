"""Packs every field of every GRIB 2 reference file with complex packing through ecCodes'
Python binding, as a program encodes a field: the message cloned, `packingType` set (and
`orderOfSpatialDifferencing`), `bitsPerValue` set, then the field's decoded values set
(`codes_set_values`). Records, for each file, order and bits, the SHA-256 and length of the
messages written (`testdata/grib/reference/complex_pack.json`); tensor-grib's
`Repacking::Complex` must give the same bytes (`crates/tensor-grib/tests/grib/repack.rs`).

    python -m venv env && env/bin/pip install eccodes==2.50.0
    env/bin/python scripts/reference/grib_complex.py testdata/grib/reference

`grib_set -r -s packingType=grid_complex...` is not the reference here: it packs a field
again after each key it sets, each time at the bits per value the last packing left (the
width of the group references), so that its result depends on the order of the calls.
`png.grib2` is left out, as in `grib_repack.py`.
"""

import hashlib
import json
import sys
from pathlib import Path

import eccodes

CASES = [(0, 12), (0, 16), (1, 12), (1, 16), (2, 8), (2, 12), (2, 16), (2, 23)]
LEFT_OUT = {"png.grib2"}


def pack(src: Path, order: int, bits: int) -> bytes:
    out = b""
    with open(src, "rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            values = eccodes.codes_get_values(h)
            c = eccodes.codes_clone(h)
            name = "grid_complex" if order == 0 else "grid_complex_spatial_differencing"
            eccodes.codes_set(c, "packingType", name)
            if order:
                eccodes.codes_set(c, "orderOfSpatialDifferencing", order)
            eccodes.codes_set(c, "bitsPerValue", bits)
            eccodes.codes_set_values(c, values)
            out += eccodes.codes_get_message(c)
            eccodes.codes_release(c)
            eccodes.codes_release(h)
    return out


def main(folder: str) -> None:
    root = Path(folder)
    entries = []
    # What ecCodes refuses: a grid_complex field into spatial differencing ("Unsupported
    # orderOfSpatialDifferencing=0").
    refused = []
    for src in sorted(root.glob("*.grib2")):
        if src.name in LEFT_OUT:
            continue
        for order, bits in CASES:
            try:
                data = pack(src, order, bits)
            except eccodes.CodesInternalError as e:
                refused.append({"file": src.name, "order": order, "bits": bits, "error": str(e)})
                continue
            entries.append({
                "file": src.name,
                "order": order,
                "bits": bits,
                "length": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            })
    doc = {"ecCodes": eccodes.codes_get_api_version(), "packed": entries, "refused": refused}
    (root / "complex_pack.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
