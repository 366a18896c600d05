#!/usr/bin/env bash
# Runs every fuzz target for a while. Usage: fuzz/run.sh [seconds per target, default 600]
# Needs the nightly toolchain and cargo-fuzz (`cargo +nightly install cargo-fuzz`).
# Corpora start from the reference-written files in testdata/conformance; crashes land in
# fuzz/artifacts/<target>/ and become regression tests once fixed.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
failed=()
for target in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$target"
    find ../testdata/conformance -type f ! -name '*.json' -size -64k -exec cp -n {} "corpus/$target/" \;
    echo "=== $target (${seconds}s)"
    cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb=2048 -timeout=10 || failed+=("$target")
done
if ((${#failed[@]})); then
    echo "findings in: ${failed[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
