#!/usr/bin/env bash
# Creates or refreshes one of the Python tests' virtual environments:
#   test-env.sh ENV_DIR REQUIREMENTS_FILE
# The environment is rebuilt only when the requirements file differs from the copy stamped
# into it at the last install. tests/python.rs calls this for each suite; `.ci/run` calls it
# for the torch suite before anything builds, so that its install (about 7 GB, plus the
# wheels pip holds until it finishes) does not meet a full target/ on a small disk.
set -euo pipefail
env_dir=$1
requirements=$2
stamp="$env_dir/requirements.installed"
if [[ -f "$stamp" ]] && cmp -s "$stamp" "$requirements"; then
    exit 0
fi
python="${TENSORKIT_PYTHON:-python3}"
"$python" -m venv --clear "$env_dir"
# pip keeps every wheel it downloads in a temporary folder until the install ends (about 3 GB
# for torch's). Where /dev/shm (memory) has room for them, they go there, so that the disk
# holds the installed environment alone; one CI run ran out of disk with 9.5 GB free.
if [[ -z "${TMPDIR:-}" && -d /dev/shm ]] \
    && (( $(df -k --output=avail /dev/shm | tail -1) > 6 * 1024 * 1024 )); then
    pip_tmp=$(mktemp -d /dev/shm/tensorkit-pip.XXXXXX)
    trap 'rm -rf "$pip_tmp"' EXIT
    export TMPDIR=$pip_tmp
fi
if ! "$env_dir/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --no-compile \
    -r "$requirements"; then
    echo "test-env.sh: installing $requirements into $env_dir failed;" \
        "free space where it installs: $(df -h --output=avail "$env_dir" | tail -1 | tr -d ' ')" >&2
    exit 1
fi
cp "$requirements" "$stamp"
