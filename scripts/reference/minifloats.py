"""Writes crates/tensor-dtype/tests/data/minifloats.txt: the value ml_dtypes gives every code
of every float narrower than 16 bits, as float32 bits in hex ("nan" for any NaN).

Run in a virtual environment with numpy and ml_dtypes:  python scripts/reference/minifloats.py
"""
import pathlib
import ml_dtypes
import numpy as np

TYPES = [  # our name, ml_dtypes name, bits
    ("float8_e4m3", "float8_e4m3fn", 8),
    ("float8_e5m2", "float8_e5m2", 8),
    ("float8_e4m3fnuz", "float8_e4m3fnuz", 8),
    ("float8_e5m2fnuz", "float8_e5m2fnuz", 8),
    ("float8_e8m0", "float8_e8m0fnu", 8),
    ("float6_e2m3", "float6_e2m3fn", 6),
    ("float6_e3m2", "float6_e3m2fn", 6),
    ("float4_e2m1", "float4_e2m1fn", 4),
]

lines = [f"# ml_dtypes {ml_dtypes.__version__}: dtype code float32-bits"]
for ours, theirs, bits in TYPES:
    codes = np.arange(1 << bits, dtype=np.uint8)
    values = codes.view(getattr(ml_dtypes, theirs)).astype(np.float32)
    for c, v in zip(codes, values):
        text = "nan" if np.isnan(v) else f"{int(v.view(np.uint32)):08x}"
        lines.append(f"{ours} {int(c):02x} {text}")
out = pathlib.Path(__file__).parents[2] / "crates/tensor-dtype/tests/data/minifloats.txt"
out.write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines) - 1} codes to {out}")
