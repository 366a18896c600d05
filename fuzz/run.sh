#!/usr/bin/env bash
# Runs fuzz targets for a while. Usage: fuzz/run.sh [seconds per target, default 600] [target...]
# Needs the nightly toolchain and cargo-fuzz (`cargo +nightly install cargo-fuzz`).
# Corpora start from the files under testdata/ (each format's conformance, reference and
# malicious files); crashes land in
# fuzz/artifacts/<target>/ and become regression files under testdata/<format>/malicious/.
#
# Memory: AddressSanitizer returns null for any single allocation above 2 GiB
# (max_allocation_size_mb), as a process under a memory cap would see it fail: our code must
# turn that into an error, so an abort on allocation is a finding. The process limit is
# 4 GiB (-rss_limit_mb); libFuzzer's own per-allocation check is set above ASan's so that it
# does not report the fallible allocations the targets with default limits make on purpose.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=0"
# Targets run side by side, one per core (FUZZ_JOBS to change): libFuzzer runs one thread.
side_by_side=${FUZZ_JOBS:-$(nproc)}
mkdir -p logs
rm -f logs/*.failed
# -a: debug assertions, overflow checks among them, in the optimised build: arithmetic on a
# value from the input that overflows is a finding, not a wrap. Built once, every target
# together (both cores), so that the runs below only link-check.
cargo +nightly fuzz build -O -a

# One target's run; what it prints is printed at once at its end, so that runs side by side
# do not interleave. A finding leaves logs/<target>.failed.
run_one() {
    local target=$1 summary
    mkdir -p "corpus/$target"
    find ../testdata -type f ! -name '*.json' ! -name '*.values' ! -name '*.md' -size -64k \
        -exec cp -n {} "corpus/$target/" \; 2>/dev/null || true
    if cargo +nightly fuzz run -O -a "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb=1000000 -timeout=20 \
        -print_final_stats=1 >"logs/$target.log" 2>&1; then
        summary=$(grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "logs/$target.log" || true)
    else
        touch "logs/$target.failed"
        summary=$(tail -n 40 "logs/$target.log")
    fi
    printf '=== %s (%ss; log in fuzz/logs/%s.log)\n%s\n' "$target" "$seconds" "$target" "$summary"
}

for target in "${targets[@]}"; do
    while (($(jobs -rp | wc -l) >= side_by_side)); do
        wait -n || true
    done
    run_one "$target" &
done
wait
failed=()
for target in "${targets[@]}"; do
    if [[ -e "logs/$target.failed" ]]; then failed+=("$target"); fi
done
if ((${#failed[@]})); then
    echo "findings in: ${failed[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
