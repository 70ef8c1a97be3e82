# An independent reference for `dtsim calibrate kernels --backend cuda`:
# PyTorch's own Top-k (and k-th value) and copy on the same GPU, timed with
# CUDA events (median of 11 after 2 warm-ups), at dtsim's sizes and
# densities. Its output on an H200 is quoted in docs/calibration.md ("The
# first GPU run"). Usage: python3 scripts/gpu/torch-topk-crosscheck.py
import torch, statistics
torch.manual_seed(0)
print("torch", torch.__version__, torch.cuda.get_device_name(0))
def med(f, n=11):
    for _ in range(2): f()
    ts = []
    for _ in range(n):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)
for m in [65536, 262144, 1048576, 4194304, 16777216]:
    x = torch.randn(m, device="cuda")
    for d in [0.001, 0.01]:
        k = max(1, int(m * d))
        t = med(lambda: torch.topk(x.abs(), k, sorted=False))
        tk = med(lambda: torch.kthvalue(x.abs(), m - k + 1))
        print(f"torch topk m={m} k={k} {t*1e6:.1f} us; kthvalue {tk*1e6:.1f} us")
    y = torch.empty_like(x)
    tc = med(lambda: y.copy_(x))
    print(f"torch copy m={m} {tc*1e6:.1f} us = {8*m/tc/1e9:.0f} GB/s")
x = torch.empty(256 << 20 >> 2, device="cuda"); y = torch.empty_like(x)
tc = med(lambda: y.copy_(x)); print(f"torch copy 256 MiB {8*x.numel()/tc/1e9:.0f} GB/s")
