"""Repacks every GRIB 2 reference file with ecCodes' own `grib_set -r` and records what it
wrote: for each file and packing, the SHA-256 and length of ecCodes' output
(`testdata/grib/reference/repack.json`). tensor-grib's writer must give the same bytes
(`crates/tensor-grib/tests/grib/repack.rs`).

    python -m venv env && env/bin/pip install eccodes==2.50.0
    env/bin/python scripts/reference/grib_repack.py testdata/grib/reference

Packings: simple packing at the field's own bits per value (`packingType=grid_simple`), at 1,
8, 12, 16, 24 and 31 bits (`bitsPerValue=N`); CCSDS at the field's own bits and at 1, 8, 12,
16, 24 and 32 (`packingType=grid_ccsds`); and IEEE floats of 32 and 64 bits
(`packingType=grid_ieee,precision=1|2`). `png.grib2` is left out: ecCodes 2.50 aborts on an
assertion repacking it.
"""

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import eccodes
import eccodeslib

GRIB_SET = Path(eccodeslib.__file__).parent / "bin" / "grib_set"
# Each packing as the `grib_set -r -s` calls that make it, in turn: ecCodes refuses a change of
# packing and of bits per value in one call, so `ccsds:N` is CCSDS first, then N bits.
PACKINGS = {
    "simple": ["packingType=grid_simple"],
    **{f"simple:{b}": [f"packingType=grid_simple,bitsPerValue={b}"] for b in (1, 8, 12, 16, 24, 31)},
    "ccsds": ["packingType=grid_ccsds"],
    **{f"ccsds:{b}": ["packingType=grid_ccsds", f"bitsPerValue={b}"] for b in (1, 8, 12, 16, 24, 32)},
    "ieee32": ["packingType=grid_ieee,precision=1"],
    "ieee64": ["packingType=grid_ieee,precision=2"],
}
LEFT_OUT = {"png.grib2"}


def main(folder: str) -> None:
    root = Path(folder)
    entries = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in sorted(root.glob("*.grib2")):
            if src.name in LEFT_OUT:
                continue
            for name, steps in PACKINGS.items():
                current = src
                for k, keys in enumerate(steps):
                    out = Path(tmp) / f"out{k}.grib2"
                    subprocess.run([str(GRIB_SET), "-r", "-s", keys, str(current), str(out)], check=True)
                    current = out
                data = current.read_bytes()
                entries.append({
                    "file": src.name,
                    "packing": name,
                    "grib_set": steps,
                    "length": len(data),
                    "sha256": hashlib.sha256(data).hexdigest(),
                })
    doc = {"ecCodes": eccodes.codes_get_api_version(), "repacked": entries}
    (root / "repack.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
