#!/usr/bin/env bash
# Compile the GPU kernel (cuda/kernels/*.cu*) with NVRTC on a machine without a GPU.
#
# NVRTC comes from the PyPI wheel nvidia-cuda-nvrtc-cu12 (no toolkit, no driver needed),
# installed once into target/nvrtc-venv. When it cannot be installed (offline), the test
# still runs and prints a note that the compilation was not checked, except under CI=true
# (.ci/run), where it fails (METAGAME_REQUIRE_NVRTC=1).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/nvrtc-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import nvidia.cuda_nvrtc' 2>/dev/null; then
    "$venv/bin/pip" install --quiet nvidia-cuda-nvrtc-cu12 \
        || echo "note: could not install nvidia-cuda-nvrtc-cu12; NVRTC check will be skipped" >&2
fi
lib=$("$venv/bin/python" - <<'PY' 2>/dev/null || true
import os, nvidia.cuda_nvrtc as m
print(os.path.join(list(m.__path__)[0], "lib"))
PY
)
if [ -n "$lib" ] && [ -d "$lib" ]; then
    export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "nvrtc: $lib" >&2
fi
if [[ ${CI:-} == true ]]; then
    export METAGAME_REQUIRE_NVRTC=1
fi
cargo test -p metagame-cuda --test parity nvrtc_compiles_the_kernel_when_installed -- --nocapture
