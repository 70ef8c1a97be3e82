#!/usr/bin/env python3
"""Which of TensorFlow's threads carry a parameter-server partition's cost.

dtsim charges a server's push transfers to TensorFlow 1.6's eight gRPC
polling threads and its pulls to its compute pool (docs/models.md §4.2),
and said which share of a transfer's measured CPU falls on the polling
thread was an assumption (the whole of it: an upper bound). This measures
that share. It runs `partition_cost.py`'s step (one parameter server, one
worker, two processes on localhost, an embedding table in P partitions,
a lookup and an SGD update a step) and reads, for every thread of both
processes, its CPU time over the timed steps (/proc/PID/task/TID/stat, in
clock ticks of 10 ms: over 200 steps a resolution of 0.05 ms a step).
Each thread is named by its role from a backtrace that gdb takes once
(the functions TensorFlow's threads loop in):

* `polling`: the gRPC client's completion-queue threads
  (`GrpcWorkerCache::GrpcWorkerCacheThread`, eight in TensorFlow 1.6;
  one in 1.5), which complete the process's own fetches of tensors;
* `serving`: the gRPC server's threads (`GrpcWorkerServiceThread`,
  eight in 1.6), which take incoming calls;
* `pool`: the Eigen thread pools (`NonBlockingThreadPool`), where the
  executor runs ops and a served call's handler runs;
* `grpc`: gRPC's own (`grpc_executor`, `grpc_global_timer`);
* `other`: the rest (Python's main thread, the master service).

The names are TensorFlow 1.6's (docs/research/tf-ps-costs.md §0.5); under
2.x the pools' threads have other names and fall under `other`.

Fitted against P by least squares, each role's CPU a step gives what one
more partition costs it. With one worker, the server fetches every push
through one polling thread (the worker is its one target) and the worker
fetches every pull through one of its own. With `--batches` the ids a
step vary instead, at the first of `--parts` partitions, and the fits
give what an id costs each role: its row's bytes pushed (values and an
8-byte index) and pulled (values), so the polling threads' cost a byte
of a sparse transfer.

    /tmp/tf16/bin/python scripts/tf-ps/thread_cost.py [--steps 200]
    /tmp/tf16/bin/python scripts/tf-ps/thread_cost.py --parts 8 --batches 1024,4096,16384,65536

Needs gdb, and the right to attach to the processes (root, or
ptrace_scope 0). Prints Markdown.
"""
import argparse
import multiprocessing as mp
import os
import re
import subprocess
import tempfile
import time

from tfps import embedding_step, free_port, quartiles, run_ps, tf1, thread_ticks

ROLES = ["polling", "serving", "pool", "grpc", "other"]


def thread_cpu(pid):
    """{tid: user + system clock ticks} of every thread of `pid`."""
    return {tid: ticks for tid, (_, ticks) in thread_ticks(pid).items()}


def roles(pid):
    """{tid: role} from one gdb backtrace of every thread of `pid`."""
    # into a file, not a pipe: gdb stops the process it attaches to, which
    # may be this one, and a pipe's reader must not be stopped
    with tempfile.TemporaryFile("w+") as f:
        subprocess.run(
            ["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 40"],
            stdout=f,
            stderr=subprocess.DEVNULL,
            timeout=300,
        )
        f.seek(0)
        bt = f.read()
    out = {}
    tid, frames = None, []

    def name():
        text = "\n".join(frames)
        if "GrpcWorkerCacheThread" in text:
            return "polling"
        if "GrpcWorkerServiceThread" in text:
            return "serving"
        if "NonBlockingThreadPool" in text:
            return "pool"
        if "grpc_executor" in text or "timer_thread" in text or "grpc_global" in text:
            return "grpc"
        return "other"

    for line in bt.splitlines():
        m = re.match(r"Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)( \"([^\"]*)\")?", line)
        if m:
            if tid is not None:
                out[tid] = name()
            tid, frames = int(m.group(1)), [m.group(3) or ""]
        elif tid is not None:
            frames.append(line)
    if tid is not None:
        out[tid] = name()
    if not out:
        raise SystemExit(f"gdb gave no backtrace of process {pid}: can it attach (root, ptrace_scope)?")
    return out


def roles_now(pid, known):
    """`known` ({tid: role} of process `pid`), or a new backtrace's
    `roles(pid)` where the process has threads `known` does not name."""
    return roles(pid) if set(thread_ticks(pid)) - set(known) else known


def by_role(before, after, names):
    """Ticks each role spent between two thread_cpu snapshots, and the
    ticks of each role's busiest thread."""
    total = {r: 0 for r in ROLES}
    busiest = {r: 0 for r in ROLES}
    for tid, t in after.items():
        d = t - before.get(tid, 0)
        r = names.get(tid, "other")
        total[r] += d
        busiest[r] = max(busiest[r], d)
    return total, busiest


def measure(cluster, configs, rows, dim, steps, warmup, ps_pid):
    """Each (partitions, ids a step) of `configs`: its step times and each
    process's CPU by role."""
    tf = tf1()
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=0)
    me = os.getpid()
    names = {}
    out = {}
    for p, batch in configs:
        graph = tf.Graph()
        with graph.as_default():
            train, init = embedding_step(tf, p, rows, dim, batch, f"emb_p{p}_b{batch}")
        with tf.Session(server.target, graph=graph) as sess:
            sess.run(init)
            for _ in range(warmup):
                sess.run(train)
            for pid in (ps_pid, me):
                names[pid] = roles_now(pid, names.get(pid, {}))
            times = []
            ps0, me0 = thread_cpu(ps_pid), thread_cpu(me)
            for _ in range(steps):
                t0 = time.perf_counter()
                sess.run(train)
                times.append(time.perf_counter() - t0)
            ps1, me1 = thread_cpu(ps_pid), thread_cpu(me)
        out[(p, batch)] = (
            times,
            by_role(ps0, ps1, names[ps_pid]),
            by_role(me0, me1, names[me]),
        )
    counts = {pid: {r: sum(1 for v in n.values() if v == r) for r in ROLES} for pid, n in names.items()}
    return out, counts[ps_pid], counts[me]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="1,8,32,64,128,256")
    ap.add_argument("--rows", type=int, default=1 << 18)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument(
        "--batches",
        default="",
        help="ids a step to vary instead of the partitions (at the first of --parts): "
        "what a byte of the transfers costs each role",
    )
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ctx = mp.get_context("spawn")
    ps = ctx.Process(target=run_ps, args=(cluster, 0), daemon=True)
    ps.start()
    parts = [int(x) for x in a.parts.split(",")]
    if a.batches:
        configs = [(parts[0], int(b)) for b in a.batches.split(",")]
        xs = [b for _, b in configs]
        what, unit, scale = "ids a step", "ns an id", 1e9
    else:
        configs = [(p, a.batch) for p in parts]
        xs = parts
        what, unit, scale = "partitions", "us a partition", 1e6
    try:
        res, ps_threads, me_threads = measure(
            cluster, configs, a.rows, a.dim, a.steps, a.warmup, ps.pid
        )
    finally:
        ps.terminate()
    import tensorflow

    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    print(
        f"TensorFlow {tensorflow.__version__}; {os.cpu_count()} CPUs; table {a.rows} x {a.dim} fp32; "
        + (
            f"{parts[0]} partitions; " if a.batches else f"{a.batch} ids a step; "
        )
        + f"{a.steps} timed steps after {a.warmup}\n"
    )
    for who, threads in [("server", ps_threads), ("worker", me_threads)]:
        print(f"{who} threads: " + ", ".join(f"{threads[r]} {r}" for r in ROLES))
    print()
    head = " | ".join(f"{w} {r}" for w in ("server", "worker") for r in ROLES)
    print(f"| {what} | median step (ms) | quartiles (ms) | {head} |")
    print("|---:|---:|---|" + "---:|" * (2 * len(ROLES)))
    series = {(w, r): [] for w in ("server", "worker") for r in ROLES}
    busiest = {(w, r): [] for w in ("server", "worker") for r in ROLES}
    meds = []
    for c, x in zip(configs, xs):
        times, (ps_tot, ps_top), (me_tot, me_top) = res[c]
        q = quartiles(times)
        med = sorted(times)[len(times) // 2]
        meds.append(med)
        cells = []
        for w, tot, top in [("server", ps_tot, ps_top), ("worker", me_tot, me_top)]:
            for r in ROLES:
                ms = tot[r] * tick / a.steps
                series[(w, r)].append(ms)
                busiest[(w, r)].append(top[r] * tick / a.steps)
                cells.append(f"{ms * 1e3:.2f}")
        print(f"| {x} | {med * 1e3:.2f} | {q[0] * 1e3:.2f}–{q[1] * 1e3:.2f} | " + " | ".join(cells) + " |")
    print(f"\nCPU a step in ms, by role; fits of each against the {what} ({unit}):\n")

    def slope(ys):
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        return (
            sum((x - mx) * (y - my) for x, y in zip(xs, ys))
            / sum((x - mx) ** 2 for x in xs)
            * scale
            / 1e6
        )

    if a.batches:
        print(
            f"(an id moves {a.dim * 4} bytes of values each way, and its 8-byte index "
            "with the push)"
        )
    print(f"step: {slope(meds) * 1e6:.1f}")
    for w in ("server", "worker"):
        total = [sum(series[(w, r)][i] for r in ROLES) for i in range(len(xs))]
        print(
            f"{w}: all {slope(total) * 1e6:.1f}; "
            + "; ".join(
                f"{r} {slope(series[(w, r)]) * 1e6:.1f} (busiest thread {slope(busiest[(w, r)]) * 1e6:.1f})"
                for r in ROLES
            )
        )


if __name__ == "__main__":
    main()
