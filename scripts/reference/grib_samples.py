"""Writes ecCodes' own GRIB samples (the templates it builds every message from) as files, one
message each, with a JSON sidecar of the grid keys ecCodes reads from them: a reader's grid
checks must refuse none of what ecCodes itself writes (a polar stereographic sample with
zero grid lengths, reduced Gaussian grids of N32 to N1280, rotated grids).

    python -m venv env && env/bin/pip install eccodes==2.50.0 numpy
    env/bin/python scripts/reference/grib_samples.py testdata/grib/reference/samples
"""

import json
import sys
from pathlib import Path

import eccodes as ec

SAMPLES = [
    "polar_stereographic_pl_grib1", "reduced_gg_ml_grib1", "reduced_gg_pl_32_grib1",
    "reduced_gg_pl_640_grib1", "reduced_gg_pl_1280_grib1", "reduced_gg_sfc_grib1",
    "reduced_ll_sfc_grib1", "reduced_rotated_gg_sfc_grib1", "regular_gg_ml_grib1",
    "regular_gg_pl_grib1", "regular_gg_sfc_grib1", "regular_ll_sfc_grib1", "rotated_ll_sfc_grib1",
    "polar_stereographic_sfc_grib2", "reduced_gg_pl_640_grib2", "regular_gg_sfc_grib2",
    "regular_ll_sfc_grib2", "rotated_ll_sfc_grib2",
]
KEYS = ["edition", "gridType", "numberOfDataPoints", "packingType", "bitsPerValue"]


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in SAMPLES:
        h = ec.codes_grib_new_from_samples(name)
        try:
            (out / f"{name}.grib").write_bytes(ec.codes_get_message(h))
            side = {k: ec.codes_get(h, k) for k in KEYS}
            side["writer"] = f"eccodes {ec.codes_get_api_version()}"
        finally:
            ec.codes_release(h)
        (out / f"{name}.json").write_text(json.dumps(side, indent=1) + "\n")


if __name__ == "__main__":
    main()
