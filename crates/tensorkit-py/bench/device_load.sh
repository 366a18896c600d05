#!/usr/bin/env bash
# The device-load measurement on a machine with a CUDA GPU, torch and safetensors, and no
# network (the lent GPU machines: see docs/python.md, "Loading to a GPU").
#
# Build the wheel here first, into a folder the device run carries:
#   CARGO_TARGET_DIR=target/pip-build target/python-env/bin/maturin build --release \
#       -o target/device-wheels --manifest-path crates/tensorkit-py/Cargo.toml
# then run this script there with `target/device-wheels` carried; results go to $OUT.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${OUT:-target/device-load}"
mkdir -p "$out"
python3 -m pip install --quiet --no-deps --no-index --force-reinstall target/device-wheels/tensorkit-*.whl
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
dir="${DEVICE_LOAD_DIR:-$PWD/target}"
mkdir -p "$dir"
df -h "$dir" | tail -1
python3 crates/tensorkit-py/bench/device_load.py --dir "$dir" --json "$out/device_load.json" "$@" 2>&1 | tee "$out/device_load.txt"
