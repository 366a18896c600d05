"""Writes Tensogram wire version 2 files with a tensogram release that writes them (0.14.0 to
0.16.1), each with a JSON sidecar: what every object decodes to (dtype, shape, SHA-256 of its
little-endian elements) and the metadata the reader must keep.

    python -m venv env && env/bin/pip install tensogram==0.16.1 numpy
    env/bin/python scripts/reference/tensogram_v2.py testdata/tensogram/reference/v2

Files (prefixed with the version, e.g. ``v2_0.16.1_``):
- ``raw``: three objects stored as they are (float32, int16, big-endian float64), names and
  MARS keys in ``base``, an ``_extra_`` entry, xxh3 hashes.
- ``packed``: simple packing + szip, zstd, lz4, shuffle + zstd.
- ``nohash``: no hashes at all.
- ``streamed``: the streaming encoder (length left out, index and hashes in the footer).
- ``multi``: a buffered and a streamed message, one after the other.
- ``unaligned``: buffered messages of one object each whose data frame ends off an 8-byte
  boundary (float32 with xxh3, float64 without a hash, uint8 through lz4 without a hash, 1
  to 8 elements): these releases write the postamble straight after such a frame, unpadded.
"""

import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np
import tensogram

VERSION = importlib.metadata.version("tensogram")


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


def field(n, m):
    y, x = np.mgrid[0:n, 0:m]
    return (250.0 + 20.0 * np.sin(x / 7.0) * np.cos(y / 5.0)).astype("<f8")


def raw_objects():
    return [
        ({"name": "t2m", "mars": {"param": "2t", "levtype": "sfc"}}, np.arange(20, dtype="<f4").reshape(4, 5) / 3),
        ({"name": "counts"}, np.array([-3, 0, 7, 32767, -32768, 1, 2], dtype="<i2")),
        ({"name": "big"}, (np.arange(6, dtype=">f8") * 1.5 - 2).reshape(2, 3)),
    ]


def packed_objects():
    f = field(20, 30)
    return [
        (
            {"name": "packed"},
            f,
            {
                "encoding": "simple_packing",
                # Version 2 names the packing parameters without the `sp_` prefix.
                **tensogram.compute_packing_params(f.ravel(), 16, 0),
                "compression": "szip",
                "szip_rsi": 128,
                "szip_block_size": 16,
                "szip_flags": 8,
            },
        ),
        ({"name": "zstd"}, (np.arange(1000, dtype="<f4") * 0.25).reshape(10, 100), {"compression": "zstd", "zstd_level": 3}),
        ({"name": "lz4"}, np.arange(256, dtype="u1"), {"compression": "lz4"}),
        (
            {"name": "shuffled"},
            np.linspace(0, 1, 64, dtype="<f4"),
            {"filter": "shuffle", "shuffle_element_size": 4, "compression": "zstd", "zstd_level": 1},
        ),
    ]


def encode(objects, hash="xxh3"):
    meta = {"version": 2, "base": [o[0] for o in objects], "_extra_": {"source": "tensorkit fixtures"}}
    pairs = [(desc(o[1], **(o[2] if len(o) > 2 else {})), o[1]) for o in objects]
    return tensogram.encode(meta, pairs, hash=hash)


def streamed(objects):
    enc = tensogram.StreamingEncoder({"version": 2, "_extra_": {"source": "tensorkit fixtures"}})
    for o in objects:
        enc.write_object(desc(o[1], **(o[2] if len(o) > 2 else {})), o[1])
    return enc.finish()


def sidecar(data):
    messages = []
    for msg in tensogram.iter_messages(data, verify_hash=True):
        meta, objects = msg[0], msg[1]
        out = []
        for d, arr in objects:
            a = np.asarray(arr)
            le = a.astype(a.dtype.newbyteorder("<"), copy=False)
            out.append({
                "dtype": d.dtype if hasattr(d, "dtype") else str(a.dtype),
                "shape": list(a.shape),
                "sha256": hashlib.sha256(np.ascontiguousarray(le).tobytes()).hexdigest(),
            })
        base = [{k: v for k, v in b.items() if k != "_reserved_"} for b in (meta.base or [])]
        messages.append({"objects": out, "base": base, "extra": dict(meta.extra or {})})
    return {"writer": f"tensogram {VERSION}", "wire_version": 2, "messages": messages}


def unaligned():
    data = b""
    for n in range(1, 9):
        data += encode([({"name": f"f32_{n}"}, np.arange(n, dtype="<f4") / 3)])
        data += encode([({"name": f"f64_{n}"}, np.arange(n, dtype="<f8") * 1.5)], hash=None)
        data += encode([({"name": f"u8_{n}"}, np.arange(n, dtype="u1"), {"compression": "lz4"})], hash=None)
    return data


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = raw_objects()
    files = {
        "raw": encode(raw),
        "packed": encode(packed_objects()),
        "nohash": encode(raw, hash=None),
        "streamed": streamed(raw),
        "multi": encode(raw[:2]) + streamed(packed_objects()[1:3]),
        "unaligned": unaligned(),
    }
    for name, data in files.items():
        stem = f"v2_{VERSION}_{name}"
        (out / f"{stem}.tgm").write_bytes(data)
        (out / f"{stem}.json").write_text(json.dumps(sidecar(data), indent=1, sort_keys=True) + "\n")
        print(stem, len(data))


if __name__ == "__main__":
    main(sys.argv[1])
