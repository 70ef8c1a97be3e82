#!/bin/bash
# The checks of scripts/gpu/first-run.sh for a GPU machine without a Rust
# toolchain, as the H100 run did (docs/calibration.md, "The H100 run"):
# build and strip here, carry the directory over, run there.
#
#   scripts/gpu/prebuilt-run.sh prepare    # here: fills $B (default target/gpu-carry)
#   OUT=gpu-run scripts/gpu/prebuilt-run.sh   # there (TOPK=1: PyTorch's Top-k too)
#
# Profiles and a log go to $OUT (default ./gpu-run). Where only versioned
# library names exist (pip's libnccl.so.2, libnvrtc.so.13), it links the
# unversioned names cudarc opens in a directory of its own.
set -u -o pipefail
B=${B:-target/gpu-carry}
if [ "${1:-}" = prepare ]; then
    set -e
    cargo build --release --features cuda
    rm -rf "$B" && mkdir -p "$B"
    strip -o "$B/dtsim" target/release/dtsim
    # the test targets' executables (their profile says "test":true)
    cargo test -p kernels --features cuda --release --no-run --message-format=json 2>/dev/null \
        | grep -E '"profile":\{[^}]*"test":true' | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 \
        | while read -r t; do strip -o "$B/test-$(basename "$t")" "$t"; done
    ls -l "$B"
    exit 0
fi
OUT=${OUT:-gpu-run}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
lscpu | grep -E "Model name|^CPU\(s\)"
echo "== libraries =="
cache=$(ldconfig -p)
grep -E "libcuda\.so|libnvrtc|libnccl" <<<"$cache" | head
links=$(mktemp -d)
for base in libnccl.so libnvrtc.so; do
    # ldconfig -p indents each name with a tab (the H100 run's version of
    # this check looked for a space, and so linked names that existed)
    if ! grep -P "^\s+${base//./\\.}\s" <<<"$cache" >/dev/null; then
        f=$(find / -name "$base.[0-9]*" -not -path '/proc/*' 2>/dev/null | grep -v alt | head -1)
        [ -n "$f" ] && ln -sf "$f" "$links/$base" && echo "linked $base -> $f"
    fi
done
export LD_LIBRARY_PATH=$links${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if python3 -c "import torch, torchvision; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "== PyTorch training steps of the vision presets =="
    time timeout 300 python3 "$(dirname "$0")/torch-train-profile.py" "$OUT/torch-train.json"
fi
echo "== tests =="
for t in "$B"/test-*; do
    echo "-- $t"
    timeout 120 "$t" --test-threads 1 --nocapture 2>&1 | tail -25 || echo "TESTS FAILED ($t)"
done
echo "== calibrate kernels, 64 Ki to 16 Mi =="
time timeout 200 "$B/dtsim" calibrate kernels --backend cuda \
    --sizes 65536,262144,1048576,4194304,16777216 --densities 0.001,0.01 --repeats 7 \
    -o "$OUT/cuda-kernels.toml"
echo "== calibrate collectives on this host's GPUs =="
time timeout 60 "$B/dtsim" calibrate collectives --backend nccl -o "$OUT/nccl.toml"
if [ -n "${TOPK:-}" ] && python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "== PyTorch Top-k cross-check =="
    timeout 90 python3 "$(dirname "$0")/torch-topk-crosscheck.py"
fi
date -u
