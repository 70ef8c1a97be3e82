#!/bin/bash
# The checks to run on a machine with an NVIDIA GPU, as dtsim's first GPU
# run did (docs/calibration.md, "The first GPU run"): the CUDA backend's
# tests, the kernel calibration, NCCL on this host's GPUs, and PyTorch's
# Top-k beside dtsim's. Profiles and a log go to $OUT (default ./gpu-run).
#
#   cargo build --release --features cuda
#   cargo test -p kernels --features cuda --release --no-run
#   scripts/gpu/first-run.sh
#
# Where only pip's libnccl.so.2 or libnvrtc.so.13 exist, link them first
# (docs/calibration.md, "What to know before running on your GPUs").
set -u -o pipefail
OUT=${OUT:-gpu-run}
DTSIM=${DTSIM:-target/release/dtsim}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
echo "== tests =="
cargo test -p kernels --features cuda --release -- --nocapture --test-threads 1 2>&1 | tail -40 \
    || echo "TESTS FAILED (exit $?): see the lines above"
echo "== calibrate kernels, 64 Ki to 16 Mi =="
time "$DTSIM" calibrate kernels --backend cuda \
    --sizes 65536,262144,1048576,4194304,16777216 --densities 0.001,0.01 --repeats 7 \
    -o "$OUT/cuda-kernels.toml"
echo "== calibrate collectives on this host's GPUs =="
time "$DTSIM" calibrate collectives --backend nccl -o "$OUT/nccl.toml"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "== PyTorch cross-check =="
    python3 "$(dirname "$0")/torch-topk-crosscheck.py"
fi
date -u
