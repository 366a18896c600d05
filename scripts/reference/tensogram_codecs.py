"""Writes Tensogram files with the codecs tensogram 0.24 ships beyond the core ones (blosc2,
zfp, sz3),
each with a JSON sidecar: per object its descriptor's pipeline and the SHA-256 of its
little-endian elements as tensogram decodes them.

    python -m venv env && env/bin/pip install tensogram==0.24.0 numpy
    env/bin/python scripts/reference/tensogram_codecs.py testdata/tensogram/reference/codecs

Files:
- ``blosc2_codecs``: one float64 field per blosc2 codec (blosclz, lz4, lz4hc, zlib, zstd) at
  levels 1, 5 and 9; the codec left out (lz4 by default).
- ``blosc2_dtypes``: float32, int16, uint8, big-endian float64, and blosc2 after a shuffle and
  after 16-bit simple packing.
- ``zfp_modes``: float64 fields in each zfp mode (fixed rate 8/16/32, fixed precision 16/32,
  fixed accuracy 1e-2/1e-6), and big-endian float64, which the reference compresses as if it
  were native and decodes into big-endian bytes: the sidecar holds what tensogram decodes.
  (float32 is left out: tensogram 0.24 cannot decode its own float32 zfp objects.)
- ``sz3_bounds``: float64 fields under absolute, relative and PSNR error bounds, and
  big-endian float64.
``lossy_input.f64`` holds the field zfp and sz3 compressed, to encode again.
"""

import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np
import tensogram

VERSION = importlib.metadata.version("tensogram")


def field(n=20, m=30):
    y, x = np.mgrid[0:n, 0:m]
    return (250.0 + 20.0 * np.sin(x / 7.0) * np.cos(y / 5.0)).astype("<f8")


def desc(a, **params):
    d = {
        "type": "ntensor",
        "shape": list(a.shape),
        "dtype": {"f4": "float32", "f8": "float64", "i2": "int16", "u1": "uint8"}[a.dtype.str[1:]],
        "byte_order": "big" if a.dtype.str[0] == ">" else "little",
        "encoding": "none",
        "filter": "none",
        "compression": "none",
    }
    d.update(params)
    return d


def sha256_le(a):
    a = np.asarray(a)
    le = a.astype(a.dtype.newbyteorder("<"), copy=False)
    return hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest()


def write(out, name, objects):
    meta = {"base": [{"name": n} for n, _, _ in objects]}
    # Bytes, not arrays: the binding takes native-order arrays only.
    data = tensogram.encode(meta, [(desc(a, **p), np.ascontiguousarray(a).tobytes()) for _, a, p in objects])
    (out / f"{name}.tgm").write_bytes(data)
    msg = tensogram.decode(data, verify_hash=True)
    arrays = [arr for _, arr in msg[1]]
    sidecar = {
        "writer": f"tensogram {VERSION}",
        "objects": [
            {"name": n, "params": p, "dtype": desc(a)["dtype"], "shape": list(a.shape), "sha256": sha256_le(arr)}
            for (n, a, p), arr in zip(objects, arrays)
        ],
    }
    (out / f"{name}.json").write_text(json.dumps(sidecar, indent=1, sort_keys=True) + "\n")
    print(name, len(data))


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    f = field()
    codecs = [("default", f, {"compression": "blosc2"})]
    for codec in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]:
        for level in [1, 5, 9]:
            codecs.append(
                (f"{codec}_{level}", f, {"compression": "blosc2", "blosc2_codec": codec, "blosc2_clevel": level})
            )
    write(out, "blosc2_codecs", codecs)
    packing = tensogram.compute_packing_params(f.ravel(), 16, 0)
    dtypes = [
        ("f4", f.astype("<f4"), {"compression": "blosc2", "blosc2_codec": "zstd"}),
        ("i2", (f * 10).astype("<i2"), {"compression": "blosc2"}),
        ("u1", (f % 256).astype("u1"), {"compression": "blosc2", "blosc2_codec": "zlib"}),
        ("f8_big", f.astype(">f8"), {"compression": "blosc2"}),
        ("shuffled", f, {"filter": "shuffle", "shuffle_element_size": 8, "compression": "blosc2"}),
    ]
    sp = {k if k.startswith("sp_") else "sp_" + k: v for k, v in packing.items()}
    dtypes.append(("packed", f, {"encoding": "simple_packing", **sp, "compression": "blosc2", "blosc2_codec": "lz4"}))
    write(out, "blosc2_dtypes", dtypes)
    zfp = [
        (f"rate_{r}", f, {"compression": "zfp", "zfp_mode": "fixed_rate", "zfp_rate": float(r)}) for r in (8, 16, 32)
    ]
    zfp += [
        (f"precision_{p}", f, {"compression": "zfp", "zfp_mode": "fixed_precision", "zfp_precision": p})
        for p in (16, 32)
    ]
    zfp += [
        (f"accuracy_{t}", f, {"compression": "zfp", "zfp_mode": "fixed_accuracy", "zfp_tolerance": t})
        for t in (1e-2, 1e-6)
    ]
    zfp.append(("f8_big", f.astype(">f8"), {"compression": "zfp", "zfp_mode": "fixed_accuracy", "zfp_tolerance": 1e-6}))
    write(out, "zfp_modes", zfp)
    sz3 = [
        (f"{mode}_{bound}", f, {"compression": "sz3", "sz3_error_bound_mode": mode, "sz3_error_bound": bound})
        for mode, bound in [("abs", 1e-3), ("abs", 1e-6), ("rel", 1e-4), ("psnr", 80.0)]
    ]
    sz3.append(("f8_big", f.astype(">f8"), {"compression": "sz3", "sz3_error_bound_mode": "abs", "sz3_error_bound": 1e-6}))
    write(out, "sz3_bounds", sz3)
    # The values zfp_modes and sz3_bounds compressed (little-endian float64): encoding them
    # again must give tensogram's streams byte for byte.
    (out / "lossy_input.f64").write_bytes(f.astype("<f8").tobytes())


if __name__ == "__main__":
    main(sys.argv[1])
