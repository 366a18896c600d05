"""Writes small JPEG 2000 codestreams with OpenJPEG (through Pillow), one per coding option
GRIB writers use or may use, each with the samples OpenJPEG decodes from it: `NAME.j2k` and
`NAME.samples` (16 bits each, little-endian, row by row: unsigned, or signed for the
codestreams marked `signed`).
`index.json` lists every case with its size, the options it was written with and whether
the samples equal the image written (lossless).

    python -m venv env && env/bin/pip install pillow==13.0.0 numpy
    env/bin/python scripts/reference/jpeg2000_openjpeg.py testdata/grib/reference/jpeg2000

tensor-grib's JPEG 2000 decoder must give these samples for every case it decodes, and
must refuse (as unsupported) only the cases marked `general` (several precincts per
resolution), which go to the general decoder.
"""

import io
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image, features


def field(width: int, height: int, seed: int, bits: int) -> np.ndarray:
    """A smooth field with noise, scaled to `bits` unsigned bits, as packed GRIB values are."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    smooth = np.sin(x / 9.0) + np.cos(y / 7.0) + (x + y) / max(width + height, 1)
    v = smooth - smooth.min()
    v = v / max(v.max(), 1e-9) * (2**bits - 1) * 0.9 + rng.integers(0, 2 ** (bits - 4), v.shape)
    return np.clip(v, 0, 2**bits - 1).astype(np.uint16)


CASES = [
    # name, width, height, mode, options, general
    ("default", 61, 47, "I;16", {}, False),
    ("irreversible", 61, 47, "I;16", {"irreversible": True}, False),
    ("tiles_and_offsets", 61, 47, "I;16",
     {"offset": (3, 5), "tile_size": (16, 16), "tile_offset": (1, 2)}, False),
    ("odd_origin", 61, 47, "I;16", {"offset": (1, 1), "tile_size": (62, 48)}, False),
    ("odd_origin_irreversible", 61, 47, "I;16",
     {"offset": (7, 3), "tile_size": (68, 50), "irreversible": True}, False),
    ("layers_lossy", 61, 47, "I;16", {"quality_mode": "rates", "quality_layers": [40, 20, 10]}, False),
    ("layers_irreversible", 61, 47, "I;16",
     {"quality_mode": "dB", "quality_layers": [30, 40, 50], "irreversible": True}, False),
    ("rlcp", 61, 47, "I;16", {"progression": "RLCP", "quality_layers": [20, 5, 1],
                              "quality_mode": "rates"}, False),
    ("rpcl", 61, 47, "I;16", {"progression": "RPCL", "quality_layers": [20, 5, 1],
                              "quality_mode": "rates"}, False),
    ("pcrl", 61, 47, "I;16", {"progression": "PCRL", "quality_layers": [20, 1],
                              "quality_mode": "rates"}, False),
    ("cprl_tiles", 61, 47, "I;16", {"progression": "CPRL", "tile_size": (32, 32)}, False),
    ("small_blocks", 61, 47, "I;16", {"codeblock_size": (16, 16), "num_resolutions": 3}, False),
    ("narrow_blocks", 61, 47, "I;16", {"codeblock_size": (8, 32)}, False),
    ("no_transform", 61, 47, "I;16", {"num_resolutions": 1}, False),
    ("eight_bits", 61, 47, "L", {}, False),
    ("signed", 61, 47, "I;16", {"signed": True}, False),
    ("plt_markers", 61, 47, "I;16", {"plt": True}, False),
    ("one_sample", 1, 1, "I;16", {"num_resolutions": 1}, False),
    ("two_rows", 7, 2, "I;16", {"num_resolutions": 2}, False),
    ("two_columns_odd", 2, 7, "I;16", {"num_resolutions": 2, "offset": (1, 0), "tile_size": (3, 7)},
     False),
    ("larger", 160, 120, "I;16", {"codeblock_size": (32, 32), "quality_mode": "rates",
                                  "quality_layers": [30, 10, 1]}, False),
    ("large_precinct_one_per_resolution", 61, 47, "I;16",
     {"precinct_size": (128, 128), "num_resolutions": 3}, False),
    ("precincts", 61, 47, "I;16", {"precinct_size": (32, 32), "num_resolutions": 3}, True),
]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    index = {"openjpeg": features.version("jpg_2000"), "cases": []}
    for seed, (name, width, height, mode, options, general) in enumerate(CASES):
        bits = 8 if mode == "L" else 16
        values = field(width, height, seed, bits)
        image = Image.frombytes(mode, (width, height), values.astype(
            np.uint8 if bits == 8 else "<u2").tobytes())
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG2000", no_jp2=True, **options)
        data = buffer.getvalue()
        decoded = np.array(Image.open(io.BytesIO(data))).astype(np.int64)
        if options.get("signed"):
            # Pillow hands signed 16-bit samples back offset by 2^15.
            decoded -= 2**15
        lossless = bool(np.array_equal(decoded, values.astype(np.int64)))
        (out / f"{name}.j2k").write_bytes(data)
        signed = bool(options.get("signed"))
        (out / f"{name}.samples").write_bytes(decoded.astype("<i2" if signed else "<u2").tobytes())
        index["cases"].append({"name": name, "width": width, "height": height, "bits": bits,
                               "options": {k: list(v) if isinstance(v, tuple) else v
                                           for k, v in options.items()},
                               "signed": signed, "lossless": lossless, "general": general})
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
