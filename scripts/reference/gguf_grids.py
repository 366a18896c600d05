"""Writes the lattice tables of ggml's "IQ" quantizations, as gguf-py 0.19.0 decodes them,
to crates/tensor-gguf/src/dequant/grids.bin: for each of IQ2_XXS (256 rows of 8), IQ2_XS
(512 x 8), IQ2_S (1024 x 8), IQ3_XXS (256 x 4), IQ3_S (512 x 4) and IQ1_S/IQ1_M (2048 x 8),
in that order, every grid value as one byte (a signed byte for IQ1's -1, 0, 1). The values
are ggml's (ggml-common.h, MIT licence); they define the formats, so a reader must have them.

    env/bin/python scripts/reference/gguf_grids.py crates/tensor-gguf/src/dequant/grids.bin
"""

import sys

import numpy as np
from gguf import quants

out = bytearray()
for cls in (quants.IQ2_XXS, quants.IQ2_XS, quants.IQ2_S, quants.IQ3_XXS, quants.IQ3_S, quants.IQ1_S):
    cls.init_grid()
    grid = cls.grid.reshape(cls.grid_shape)
    assert (grid == np.round(grid)).all()
    out += grid.astype(np.int8).tobytes()
open(sys.argv[1], "wb").write(bytes(out))
print(len(out), "bytes")
