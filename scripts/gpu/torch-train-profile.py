#!/usr/bin/env python3
"""One GPU's training step of dtsim's vision presets, measured with PyTorch.

dtsim's compute model (docs/models.md, sections 3 and 4) takes a model's
single-GPU training throughput from a published measurement (or derives it,
rule R1), makes the iteration time linear in the batch, T(b) = b / rate,
splits it one third forward and two thirds backward, and shares each pass
over the preset's entries by their forward multiply-accumulates. This
measures each of those on the GPU it runs on, for the presets' own
networks (torchvision's `resnet50`, `inception_v3` without its auxiliary
head, `vgg16`, `alexnet`; the CIFAR `resnet20` and `vgg16_cifar` built here
as the gTop-k authors' code builds them):

* the step's time (forward, loss, backward, SGD with momentum; synthetic
  inputs already on the GPU; fp32 weights, PyTorch's defaults for TF32:
  cuDNN's convolutions in TF32, matrix products in fp32; cudnn.benchmark
  on), the median of 20 steps timed with CUDA events after 5 warm-up
  steps, at several batches (each step timed alone, the GPU synchronised
  after it: at launch-bound batches a little slower than a loop that
  queues the next step's kernels while the GPU runs);
* at one batch a model, an instrumented run: a CUDA event where each preset
  entry's forward starts (a forward pre-hook on the entry's first module),
  at the loss, and each time a parameter's gradient is accumulated
  (`register_post_accumulate_grad_hook`), so each entry's forward time and
  the time into the backward pass at which its gradients are all ready,
  which is what dtsim's overlap of communication with the backward pass
  depends on. Medians over the instrumented steps.

Writes one JSON object (argument 1, default torch-train.json) and prints a
summary. Usage on the GPU machine:

    python3 scripts/gpu/torch-train-profile.py OUT.json [MODEL,MODEL...]
    TRAIN_BATCHES="resnet50=32,64;vgg16=640" python3 scripts/gpu/torch-train-profile.py OUT.json resnet50,vgg16
"""
import json
import os
import statistics
import sys
import time
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

torch.backends.cudnn.benchmark = True


# --- the CIFAR networks as the gTop-k authors' code builds them ---------------


class LambdaLayer(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


class BasicBlock(nn.Module):
    """He et al. 2016's CIFAR block with the option-A shortcut (parameter
    free: stride-2 subsampling and zero-padded channels)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            pad = cout // 4
            self.shortcut = LambdaLayer(
                lambda x: F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, pad, pad))
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        cin = 16
        for i, cout in enumerate([16, 32, 64], start=1):
            blocks = []
            for j in range(3):
                blocks.append(BasicBlock(cin, cout, 2 if (j == 0 and i > 1) else 1))
                cin = cout
            setattr(self, f"layer{i}", nn.Sequential(*blocks))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.avg_pool2d(out, out.size()[3]).flatten(1)
        return self.fc(out)


VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
VGG16_NAMES = ["conv1_1", "conv1_2", "conv2_1", "conv2_2", "conv3_1", "conv3_2", "conv3_3",
               "conv4_1", "conv4_2", "conv4_3", "conv5_1", "conv5_2", "conv5_3"]


class Vgg16Cifar(nn.Module):
    """gTop-k's models/vgg.py 'VGG16': 13 conv3x3 + BN + ReLU (max-pools with
    the conv before them), one fc 512 x 10."""

    def __init__(self, classes=10):
        super().__init__()
        blocks = OrderedDict()
        cin, names = 3, iter(VGG16_NAMES)
        last = None
        for v in VGG16_CFG:
            if v == "M":
                blocks[last].append(nn.MaxPool2d(2, 2))
                continue
            last = next(names)
            blocks[last] = [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            cin = v
        self.features = nn.Sequential(OrderedDict((k, nn.Sequential(*m)) for k, m in blocks.items()))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


# --- each preset's entries: (name, module where its forward starts, parameter prefixes)


def resnet50_entries():
    e = [("conv1", "conv1", ["conv1", "bn1"])]
    for i, n in zip([1, 2, 3, 4], [3, 4, 6, 3]):
        e += [(f"layer{i}.{j}", f"layer{i}.{j}", [f"layer{i}.{j}"]) for j in range(n)]
    return e + [("fc", "fc", ["fc"])]


def resnet20_entries():
    e = [("conv1", "conv1", ["conv1", "bn1"])]
    for i in [1, 2, 3]:
        e += [(f"layer{i}.{j}", f"layer{i}.{j}", [f"layer{i}.{j}"]) for j in range(3)]
    return e + [("fc", "fc", ["fc"])]


INCEPTION = ["Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "Conv2d_3b_1x1", "Conv2d_4a_3x3",
             "Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d",
             "Mixed_6e", "Mixed_7a", "Mixed_7b", "Mixed_7c", "fc"]
VGG16_CONVS = [0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28]


def vgg16_entries():
    e = [(n, f"features.{i}", [f"features.{i}"]) for n, i in zip(VGG16_NAMES, VGG16_CONVS)]
    return e + [("fc6", "classifier.0", ["classifier.0"]), ("fc7", "classifier.3", ["classifier.3"]),
                ("fc8", "classifier.6", ["classifier.6"])]


def alexnet_entries():
    e = [(f"conv{k + 1}", f"features.{i}", [f"features.{i}"]) for k, i in enumerate([0, 3, 6, 8, 10])]
    return e + [("fc6", "classifier.1", ["classifier.1"]), ("fc7", "classifier.4", ["classifier.4"]),
                ("fc8", "classifier.6", ["classifier.6"])]


def vgg16_cifar_entries():
    e = [(n, f"features.{n}", [f"features.{n}"]) for n in VGG16_NAMES]
    return e + [("fc", "fc", ["fc"])]


MODELS = OrderedDict([
    # name: (constructor, input side, classes, entries, batches timed, batch instrumented)
    ("resnet50", (lambda: torchvision.models.resnet50(), 224, 1000, resnet50_entries(),
                  [32, 64, 128, 256, 640, 1280], 256)),
    ("inception_v3", (lambda: torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False),
                      299, 1000, [(n, n, [n]) for n in INCEPTION], [64, 256, 640], 256)),
    ("vgg16", (lambda: torchvision.models.vgg16(), 224, 1000, vgg16_entries(), [64, 256], 256)),
    ("alexnet", (lambda: torchvision.models.alexnet(), 224, 1000, alexnet_entries(), [64, 256, 1280], 1280)),
    ("resnet20", (lambda: ResNet20(), 32, 10, resnet20_entries(), [128, 1024], 128)),
    ("vgg16_cifar", (lambda: Vgg16Cifar(), 32, 10, vgg16_cifar_entries(), [128, 1024], 128)),
])


def log(*a):
    print(*a, flush=True)


def ms(a, b):
    return a.elapsed_time(b)


def setup(ctor, side, classes, batch):
    model = ctor().cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, side, side, device="cuda")
    y = torch.randint(0, classes, (batch,), device="cuda")
    crit = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    return model, opt, x, y, crit, step


def timed(step, warmup, steps):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(steps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
        ts.append(ms(a, b))
    return ts


def instrumented(model, opt, x, y, crit, entries, steps):
    mods = dict(model.named_modules())
    starts = {}
    handles = []
    for name, first, _ in entries:
        def pre(_m, _i, name=name):
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            starts[name] = ev
        handles.append(mods[first].register_forward_pre_hook(pre))
    owner = {}
    for pname, p in model.named_parameters():
        for name, _, prefixes in entries:
            if any(pname == q or pname.startswith(q + ".") for q in prefixes):
                owner[pname] = name
        if pname not in owner:
            raise SystemExit(f"parameter {pname} belongs to no entry")
    ready = {}
    for pname, p in model.named_parameters():
        def hook(_p, pname=pname):
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            ready[pname] = ev
        handles.append(p.register_post_accumulate_grad_hook(hook))
    rows = []
    for _ in range(steps):
        starts.clear()
        ready.clear()
        t0, tl, tb, tu = (torch.cuda.Event(enable_timing=True) for _ in range(4))
        t0.record()
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        tl.record()
        loss.backward()
        tb.record()
        opt.step()
        tu.record()
        torch.cuda.synchronize()
        names = [n for n, _, _ in entries]
        fwd = {}
        for i, n in enumerate(names):
            end = starts[names[i + 1]] if i + 1 < len(names) else tl
            fwd[n] = ms(starts[n], end)
        grad = {n: 0.0 for n in names}
        for pname, ev in ready.items():
            grad[owner[pname]] = max(grad[owner[pname]], ms(tl, ev))
        rows.append({"step_ms": ms(t0, tu), "forward_ms": ms(t0, tl), "backward_ms": ms(tl, tb),
                     "update_ms": ms(tb, tu), "entry_forward_ms": fwd, "entry_grad_ready_ms": grad})
    for h in handles:
        h.remove()
    med = {k: statistics.median(r[k] for r in rows) for k in ["step_ms", "forward_ms", "backward_ms", "update_ms"]}
    for k in ["entry_forward_ms", "entry_grad_ready_ms"]:
        med[k] = {n: statistics.median(r[k][n] for r in rows) for n, _, _ in entries}
    return med


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "torch-train.json"
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else list(MODELS)
    # TRAIN_BATCHES="resnet50=32,64;vgg16=640" times those batches instead
    # (and instruments none unless its batch is among them)
    override = {}
    for item in filter(None, os.environ.get("TRAIN_BATCHES", "").split(";")):
        model, batches = item.split("=")
        override[model] = [int(b) for b in batches.split(",")]
    p = torch.cuda.get_device_properties(0)
    result = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0),
        "multiprocessors": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "warmup": 5, "steps": 20, "instrumented_steps": 10,
        "models": {},
    }
    log(json.dumps({k: v for k, v in result.items() if k != "models"}))
    for name in only:
        ctor, side, classes, entries, batches, ibatch = MODELS[name]
        batches = override.get(name, batches)
        rec = {"input_side": side, "batches": {}}
        result["models"][name] = rec
        for b in batches:
            t = time.time()
            try:
                model, opt, x, y, crit, step = setup(ctor, side, classes, b)
                ts = timed(step, 5, 20)
                med = statistics.median(ts)
                rec["batches"][str(b)] = {"step_ms_median": med, "step_ms_min": min(ts),
                                          "step_ms_max": max(ts), "samples_per_s": b / med * 1e3,
                                          "peak_memory_bytes": torch.cuda.max_memory_allocated()}
                log(f"{name} batch {b}: {med:.2f} ms a step (min {min(ts):.2f}, max {max(ts):.2f}), "
                    f"{b / med * 1e3:.1f} samples/s, peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB, "
                    f"{time.time() - t:.1f} s")
                if b == ibatch:
                    rec["instrumented_batch"] = b
                    rec["instrumented"] = instrumented(model, opt, x, y, crit, entries, 10)
                    i = rec["instrumented"]
                    log(f"  instrumented: step {i['step_ms']:.2f} ms = forward {i['forward_ms']:.2f} + "
                        f"backward {i['backward_ms']:.2f} + update {i['update_ms']:.2f}")
                    log("  " + " ".join(f"{n}:{i['entry_forward_ms'][n]:.2f}/{i['entry_grad_ready_ms'][n]:.2f}"
                                        for n, _, _ in entries))
            except Exception as err:  # noqa: BLE001 (a model's failure must not lose the others)
                rec["batches"][str(b)] = {"error": repr(err)[:500]}
                log(f"{name} batch {b}: FAILED {err!r}"[:600])
            finally:
                model = opt = x = y = crit = step = None
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            with open(out, "w") as f:
                json.dump(result, f, indent=1)
    log("wrote", out)


if __name__ == "__main__":
    main()
