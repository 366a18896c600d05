#!/usr/bin/env bash
# Installs the Python package the way users do — `pip install ./crates/tensorkit-py`: pip's
# isolated build fetches maturin from PyPI and builds a wheel — into a fresh virtual
# environment, then uses it from outside the source tree. `.ci/run` calls this.
#
# What is checked is the packaging (the build backend, the module name, the Python sources,
# the dependencies), not the optimiser: the wheel is built with cargo's dev profile in the
# target directory the Python tests build in (target/python-build), so that the workspace's
# crates compiled for those tests are reused instead of compiled again for release (about
# 7 minutes on a 2-core machine). A user's `pip install` builds for release; set
# PIP_CHECK_PROFILE=release to check exactly that.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
venv="$root/target/pip-install-check"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
profile=${PIP_CHECK_PROFILE:-dev}
if [[ $profile == release ]]; then target_dir="$root/target/pip-build"; else target_dir="$root/target/python-build"; fi
CARGO_TARGET_DIR="$target_dir" MATURIN_PEP517_ARGS="--profile $profile" \
    "$venv/bin/python" -m pip install --quiet "$root/crates/tensorkit-py"
cd "$(mktemp -d)"
"$venv/bin/python" - <<'PY'
import pathlib

import numpy as np

import tensorkit
from tensorkit import safetensors, stdlib_meta, tensogram

assert pathlib.Path(tensorkit.__file__).parent.parent.name == "site-packages", tensorkit.__file__
w = np.arange(12, dtype=np.float32).reshape(3, 4)
for ext in ("safetensors", "bt", "zt", "tgm"):
    tensorkit.save(f"w.{ext}", {"w": w}, metadata={"source": "pip check"})
    with tensorkit.open(f"w.{ext}") as f:
        assert f["w"].tobytes() == w.tobytes(), ext
assert safetensors.load(safetensors.save({"w": w}))["w"].tobytes() == w.tobytes()
msg = tensogram.encode({"base": [{"name": "w"}]}, [({"type": "ntensor", "shape": [3, 4], "dtype": "float32"}, w)])
assert tensogram.decode(msg, verify_hash=True).objects[0][1].tobytes() == w.tobytes()
assert len(stdlib_meta.serialize(w)) == 66
try:
    tensorkit.open_bytes(b"not a tensor file")
except tensorkit.TensorkitError as e:
    print(f"error[{e.kind}]: {e}")
print(f"tensorkit {tensorkit.__version__} installed by pip imports and works")
PY
