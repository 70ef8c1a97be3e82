#!/usr/bin/env python3
"""What a parameter-server partition costs TensorFlow, measured.

Issue 11 (Parallax Table 2) needs the per-partition cost of TensorFlow's
parameter servers, which no source gives (docs/research/tf-ps-costs.md).
This measures it on the machine it runs on: one parameter server and one
worker in two processes on localhost, TensorFlow's gRPC between them, an
embedding table of V rows x D columns on the server in P partitions
(`fixed_size_partitioner`), and a training step that looks up B random
rows (a gather per partition on the server, its rows sent to the worker)
and applies their gradient by SGD (the gradient's rows sent back, a
scatter per partition on the server). The step time against P, fitted as
a + b*P by least squares, gives b: the time one more partition adds to a
step of one worker, every partition's ops and its two tensor transfers.
The CPU time each process spends a step (the server's from /proc, in
whole clock ticks, 10 ms on Linux: over 100 steps a resolution of 0.1 ms
a step; the worker's from the process clock), its mean over the timed
steps fitted the same way, says what each process spends of a
partition; the two overlap, so their slopes add to more than b.

TensorFlow 2.x (tf.compat.v1 graph mode) or 1.x: Parallax ran 1.6,
which PyPI still serves for Python 3.6 (`tfps.py` says how to install
it; docs/research/tf-ps-costs.md §0.5 has its figures).

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu
    /tmp/tfenv/bin/python scripts/tf-ps/partition_cost.py [--steps 100]
    /tmp/tf16/bin/python scripts/tf-ps/partition_cost.py

Prints one line per P (median and quartiles of the step time, and each
process's mean CPU a step) and the three fits, as Markdown.
"""
import argparse
import multiprocessing as mp
import os
import statistics
import time

from tfps import cpu_seconds, embedding_step, free_port, quartiles, run_ps, tf1








def measure(cluster, parts, rows, dim, batch, steps, warmup, threads, ps_pid):
    tf = tf1()
    config = tf.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    server = tf.train.Server(
        tf.train.ClusterSpec(cluster), job_name="worker", task_index=0, config=config
    )
    out = {}
    for p in parts:
        graph = tf.Graph()
        with graph.as_default():
            train, init = embedding_step(tf, p, rows, dim, batch, f"emb_p{p}")
        with tf.Session(server.target, graph=graph, config=config) as sess:
            sess.run(init)
            for _ in range(warmup):
                sess.run(train)
            times = []
            ps0, me0 = cpu_seconds(ps_pid), time.process_time()
            for _ in range(steps):
                t0 = time.perf_counter()
                sess.run(train)
                times.append(time.perf_counter() - t0)
            ps_cpu = (cpu_seconds(ps_pid) - ps0) / steps
            me_cpu = (time.process_time() - me0) / steps
        out[p] = (times, ps_cpu, me_cpu)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--rows", type=int, default=1 << 18)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0, help="TF thread pools (0: TF's default)")
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    cluster = {
        "ps": [f"localhost:{free_port()}"],
        "worker": [f"localhost:{free_port()}"],
    }
    ctx = mp.get_context("spawn")
    ps = ctx.Process(target=run_ps, args=(cluster, a.threads), daemon=True)
    ps.start()
    parts = [int(x) for x in a.parts.split(",")]
    try:
        res = measure(
            cluster, parts, a.rows, a.dim, a.batch, a.steps, a.warmup, a.threads, ps.pid
        )
    finally:
        ps.terminate()
    import tensorflow as tf

    print(
        f"TensorFlow {tf.__version__}; {os.cpu_count()} CPUs; table {a.rows} x {a.dim} fp32; "
        f"{a.batch} ids a step; {a.steps} timed steps after {a.warmup}\n"
    )
    print("| partitions | median step (ms) | quartiles (ms) | server CPU a step (ms) | worker CPU a step (ms) |")
    print("|---:|---:|---|---:|---:|")
    xs, ys, ss, ws = [], [], [], []
    for p in parts:
        times, ps_cpu, me_cpu = res[p]
        t = sorted(times)
        q = quartiles(t)
        med = statistics.median(t)
        print(
            f"| {p} | {med * 1e3:.2f} | {q[0] * 1e3:.2f}–{q[1] * 1e3:.2f} "
            f"| {ps_cpu * 1e3:.2f} | {me_cpu * 1e3:.2f} |"
        )
        xs.append(p)
        ys.append(med)
        ss.append(ps_cpu)
        ws.append(me_cpu)

    def line(ys):
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        return my - b * mx, b

    for what, v in [("step", ys), ("server CPU", ss), ("worker CPU", ws)]:
        a0, b = line(v)
        print(f"\nfit: {what} = {a0 * 1e3:.2f} ms + {b * 1e6:.1f} us x partitions", end="")
    print()


if __name__ == "__main__":
    main()
