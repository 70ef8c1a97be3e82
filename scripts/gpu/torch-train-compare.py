#!/usr/bin/env python3
"""dtsim's compute model against the training steps PyTorch measured.

Reads the measurements `scripts/gpu/torch-train-profile.py` wrote
(calibration/measurements/h200-torch-train-*.json) and the presets'
entries (their forward multiply-accumulates, from
sim/src/workload/preset_data.rs), and prints Markdown tables:

1. each model's training throughput at each batch measured (the runs'
   mean, and their spread) beside the rate dtsim's `h200` takes there;
2. each batch between two others held out and predicted by dtsim's
   interpolation from the rest, and by the largest batch's rate alone;
3. the forward pass's share of forward + backward, which dtsim takes as 1/3;
4. each entry's share of the forward pass, measured and by MACs (dtsim's);
5. the time into the backward pass at which each entry's gradients are
   all ready, as a fraction of the backward pass, measured and as the
   MAC shares place it (entries' backward times in reverse order, each
   2/3 of the iteration times its MAC share: dtsim's rule where no entry
   was timed; docs/model_tables.py gives the H200's ImageNet models the
   measured shares).

Runs here, with no GPU: python3 scripts/gpu/torch-train-compare.py
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def presets():
    """{model: ([(entry, fwd_macs)], {gpu: (batch, samples_per_s)})} from the generated table."""
    text = open(os.path.join(ROOT, "sim/src/workload/preset_data.rs")).read()
    out = {}
    for m in re.finditer(r"const (\w+)_LAYERS: &\[PresetLayer\] = &\[(.*?)\n\];", text, re.S):
        key = m.group(1)
        layers = re.findall(r'name: "([^"]+)",\s*params: [\d_]+,\s*fwd_macs: ([\d_]+)', m.group(2))
        tp = re.search(rf"const {key}_THROUGHPUTS: &\[GpuThroughput\] = &\[(.*?)\n\];", text, re.S)
        rates = {}
        if tp:
            for g, b, r, curve in re.findall(
                    r'gpu: "([^"]+)",\s*batch: (\d+),\s*samples_per_s: ([\d.]+),.*?by_batch: &\[(.*?)\]', tp.group(1), re.S):
                pts = [(int(cb), float(cr)) for cb, cr in re.findall(r"\((\d+),\s*([\d.]+)\)", curve)]
                rates[g] = pts + [(int(b), float(r))]
        out[key.lower()] = ([(n, int(v.replace("_", ""))) for n, v in layers], rates)
    return out


def iteration_s(points, batch):
    """GpuThroughput::iteration_s: the step time between measured batches, each end's rate beyond."""
    if batch <= points[0][0]:
        return batch / points[0][1]
    if batch >= points[-1][0]:
        return batch / points[-1][1]
    for (b0, r0), (b1, r1) in zip(points, points[1:]):
        if batch <= b1:
            return b0 / r0 + (b1 / r1 - b0 / r0) * (batch - b0) / (b1 - b0)


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "calibration/measurements/h200-torch-train-*.json")))
    runs = [json.load(open(f)) for f in files]
    table = presets()
    print(f"runs: {', '.join(os.path.basename(f) for f in files)}; {runs[0]['gpu']}, torch {runs[0]['torch']}\n")
    print("| model | batch | measured samples/s (runs) | mean | dtsim's h200 | dtsim / measured |")
    print("|---|---:|---|---:|---:|---:|")
    for model in runs[0]["models"]:
        _, rates = table[model]
        batches = sorted({int(b) for r in runs for b, v in r["models"].get(model, {}).get("batches", {}).items()
                          if "samples_per_s" in v})
        for b in batches:
            got = [r["models"][model]["batches"][str(b)]["samples_per_s"] for r in runs
                   if str(b) in r["models"].get(model, {}).get("batches", {})]
            mean = sum(got) / len(got)
            rate = b / iteration_s(rates["h200"], b)
            print(f"| {model} | {b} | {', '.join(f'{g:.0f}' for g in got)} | {mean:.0f} | {rate:.0f} | {rate / mean:.2f} |")
    print("\nHeld out: each batch between two others predicted from the rest of the curve "
          "(dtsim's interpolation), and from the largest batch's rate alone (the linear rule); "
          "predicted / measured - 1\n")
    print("| model | batch | interpolated | linear |")
    print("|---|---:|---:|---:|")
    for model in runs[0]["models"]:
        pts = table[model][1]["h200"]
        for i in range(1, len(pts) - 1):
            b, r = pts[i]
            held = b / iteration_s(pts[:i] + pts[i + 1:], b)
            print(f"| {model} | {b} | {held / r - 1:+.1%} | {pts[-1][1] / r - 1:+.1%} |")
    print("\n| model | batch | forward ms | backward ms | update ms | forward / (forward + backward) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in runs:
        for model, rec in r["models"].items():
            if "instrumented" not in rec:
                continue
            i = rec["instrumented"]
            f, b = i["forward_ms"], i["backward_ms"]
            print(f"| {model} | {rec['instrumented_batch']} | {f:.2f} | {b:.2f} | {i['update_ms']:.2f} | {f / (f + b):.3f} |")
    run = runs[0]
    for model, rec in run["models"].items():
        if "instrumented" not in rec:
            continue
        layers, _ = table[model]
        i = rec["instrumented"]
        total = sum(m for _, m in layers)
        fwd = sum(i["entry_forward_ms"].values())
        back = i["backward_ms"]
        # dtsim: entry l's gradients are ready once every entry from the last
        # to l has run its backward, each 2/3 of T times its MAC share
        after, model_ready = 0.0, {}
        for n, m in reversed(layers):
            after += m / total
            model_ready[n] = after
        print(f"\n{model} at batch {rec['instrumented_batch']}: forward share (measured, MACs) and "
              "gradients ready (fraction of the backward pass: measured, and by MAC shares)\n")
        print("| entry | forward share | MAC share | ready, measured | ready, by MACs |")
        print("|---|---:|---:|---:|---:|")
        worst = 0.0
        for n, m in layers:
            fm = i["entry_forward_ms"][n] / fwd
            rm = i["entry_grad_ready_ms"][n] / back
            worst = max(worst, abs(rm - model_ready[n]))
            print(f"| {n} | {fm:.3f} | {m / total:.3f} | {rm:.3f} | {model_ready[n]:.3f} |")
        print(f"\nlargest difference in readiness: {worst:.3f} of the backward pass")


if __name__ == "__main__":
    main()
