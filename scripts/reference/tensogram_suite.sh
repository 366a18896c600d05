#!/usr/bin/env bash
# Runs tensogram's own Python test-suite against `tensorkit.tensogram`, as issue #68 asks:
# `python/tests` of tensogram's repository at a release, with the `examples/`, `tests/` and
# fixture folders it reads, under a conftest of ours (written here, above theirs) that makes
# `import tensogram` load tensorkit's module. Nothing of tensogram's is committed here: the
# suite is read from a clone of github.com/ecmwf/tensogram (bare or not) that you give.
#
#   scripts/reference/tensogram_suite.sh REPO [REF] [-- PYTEST ARGS...]
#
# REF defaults to the 0.24.0 release. The Python is target/python-env's (tests/requirements.txt
# of the Python package, with tensorkit built into it by `maturin develop`); $PYTHON overrides it.
#
# The run passes when the tests that fail are exactly those listed in
# scripts/reference/tensogram_suite.expected — each one a test asserting something tensorkit
# deliberately does otherwise, or a capability another issue brings; docs/tensogram-suite.md
# gives each one's reason. A listed test that passes fails the run too (the list is kept true).
set -euo pipefail

repo=${1:?"usage: $0 REPO [REF] [-- PYTEST ARGS...]"}
shift
ref=0.24.0
if (($#)) && [[ $1 != -- ]]; then
    ref=$1
    shift
fi
[[ ${1:-} == -- ]] && shift

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-$root/target/python-env/bin/python}
expected=$here/tensogram_suite.expected

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive "$ref" python/tests examples tests rust/tensogram/tests/golden \
    rust/tensogram-grib/testdata rust/tensogram-netcdf/testdata | tar -x -C "$work"
cat >"$work/conftest.py" <<'EOF'
# Written by tensorkit's scripts/reference/tensogram_suite.sh: tensogram's tests import
# `tensogram`; they get tensorkit's module under that name.
import sys

import tensorkit.tensogram

sys.modules["tensogram"] = tensorkit.tensogram
EOF

cd "$work"
set +e
"$python" -m pytest -p no:cacheprovider -q -rf python/tests "$@" >"$work/out.txt" 2>&1
set -e
tail -n 1 "$work/out.txt"
grep -E '^FAILED ' "$work/out.txt" | sed -e 's/^FAILED //' -e 's/ - .*//' | sort -u >"$work/failed.txt"
grep -vE '^(#|$)' "$expected" | sed 's/[[:space:]].*//' | sort -u >"$work/expected.txt"
unexpected=$(comm -23 "$work/failed.txt" "$work/expected.txt")
fixed=$(comm -13 "$work/failed.txt" "$work/expected.txt")
if grep -qE '^ERROR ' "$work/out.txt"; then
    grep -E '^ERROR ' "$work/out.txt" >&2
    exit 1
fi
if [[ -n $unexpected ]]; then
    echo "failed, and not listed in $expected:" >&2
    echo "$unexpected" >&2
    grep -A30 -F "$(echo "$unexpected" | head -1 | sed 's/.*:://')" "$work/out.txt" | head -40 >&2
    exit 1
fi
if [[ -n $fixed ]]; then
    echo "listed in $expected, but passed (remove them from the list):" >&2
    echo "$fixed" >&2
    exit 1
fi
echo "tensogram $ref's suite: every failure is one of the $(wc -l <"$work/expected.txt") listed"
