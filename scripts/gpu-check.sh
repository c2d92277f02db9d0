#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (driver installed): build, run the device tests
# (GpuEvaluator against SampledEvaluator on Kuhn, Leduc and matrix games, same seeds; networks
# on cuBLAS against their host twin and the CPU, logits and connect-four matches) and the
# throughput example, which prints GPU and 2-thread CPU episodes per second and their ratio,
# for tables on Leduc and for network rollouts on connect four. Budget: under 5 minutes.
#
# The kernels are compiled at run time by NVRTC and the networks' SGEMMs call cuBLAS: both
# from the CUDA toolkit, or from the PyPI wheels nvidia-cuda-nvrtc-cu12 (target/nvrtc-venv,
# which scripts/nvrtc-check.sh installs) and nvidia-cublas-cu12 in the same venv.
set -euo pipefail
cd "$(dirname "$0")/.."

# The first folder holding lib<name>.so* goes on LD_LIBRARY_PATH: the toolkit's, or the
# PyPI wheel's (its folder under nvidia/ in target/nvrtc-venv).
add_lib() {
    local name=$1 wheel=$2 dir
    for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 \
        target/nvrtc-venv/lib/python3*/site-packages/nvidia/"$wheel"/lib; do
        if compgen -G "$dir/lib$name.so*" >/dev/null; then
            export LD_LIBRARY_PATH="$(cd "$dir" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            echo "$name: $dir"
            return
        fi
    done
}
add_lib nvrtc cuda_nvrtc
add_lib cublas cublas
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

start=$SECONDS
timeout 290 bash -c '
    set -euo pipefail
    cargo build --release -p metagame-cuda --tests --examples
    cargo test --release -p metagame-cuda -- --include-ignored
    cargo run --release -p metagame-cuda --example gpu_throughput
'
echo "gpu-check: done in $((SECONDS - start)) s"
