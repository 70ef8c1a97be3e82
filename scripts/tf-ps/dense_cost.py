#!/usr/bin/env python3
"""What a dense variable costs a TensorFlow parameter server, measured.

Parallax's synchronous PS aggregates each dense variable's gradients in a
`tf.ConditionalAccumulator` on the variable's server (snuspl/parallax,
`graph_transform_lib.py`, `_get_accum_apply_and_agg_grad`: `apply_grad`
per worker, `take_grad(num_workers)` once), then applies the average by
SGD. TensorFlow's dense kernel (`conditional_accumulator.h`,
`AddToAccumGradFunction`) adds each push into the sum in place: N pushes
of E elements cost about N E element additions, not the sparse kernel's
N (N + 1) / 2 E copies. Each push reaches the server, and each pull leaves
it, through TensorFlow's gRPC: the tensor's bytes serialised, copied and
parsed.

Two measurements, on the machine it runs on:

1. `accumulate`: in one process, one thread a pool, N pushes of E fp32
   elements into a `ConditionalAccumulator`, taken once and applied to a
   variable by `assign_sub`. The median over `--repeats` runs, minus the
   same graph that only reads the pushes' tensors, fitted by least squares
   as a + c_add N E + c_apply E over every (N, E), and again over the
   sizes of at least `--fit-from` elements (smaller ones stay in the
   caches).
2. `transfer`: one parameter server and one worker in two processes on
   localhost, TensorFlow's gRPC between them. A push: the worker's tensor
   of S bytes added into a server variable (`assign_add` on the server,
   which fetches the tensor); a pull: the server's variable read into the
   worker. The server's CPU a step (from /proc, 10 ms ticks; over
   `--steps` steps) fitted as a + b S for each direction gives b, the
   server's CPU per byte of a transfer, and a, per transfer with its op;
   the same fit of the server thread that spent the most says how much
   of it one thread carries.

TensorFlow 2.x (tf.compat.v1 graph mode) or 1.x (Parallax ran 1.6; `tfps.py`).

    /tmp/tfenv/bin/python scripts/tf-ps/dense_cost.py [--what accumulate,transfer]

Prints Markdown tables and the fits.
"""
import argparse
import multiprocessing as mp
import os
import statistics
import time

from tfps import cpu_seconds, free_port, run_ps, tf1, thread_ticks
from thread_cost import roles_now


def lstsq(rows, ys):
    """Least squares of ys on the columns of rows (normal equations)."""
    import numpy as np

    a = np.array(rows, dtype=float)
    return np.linalg.lstsq(a, np.array(ys, dtype=float), rcond=None)[0]


def accumulate(pushes, sizes, repeats):
    import numpy as np
    tf = tf1()
    config = tf.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
    )
    res = {}
    for e in sizes:
        for n in pushes:
            times = {}
            for with_accum in (True, False):
                graph = tf.Graph()
                with graph.as_default():
                    grads = [
                        tf.get_variable(
                            f"g{i}", [e], initializer=tf.random_normal_initializer()
                        )
                        for i in range(n)
                    ]
                    var = tf.get_variable(
                        "v", [e], initializer=tf.zeros_initializer()
                    )
                    if with_accum:
                        acc = tf.ConditionalAccumulator(tf.float32, shape=[e])
                        # pushes one after another, as the accumulator's
                        # lock runs them; a take raises the accumulator's
                        # global step, and it drops pushes of a smaller
                        # local step: every push is of a step far ahead
                        deps = []
                        for g in grads:
                            with tf.control_dependencies(deps):
                                deps = [acc.apply_grad(g.read_value(), local_step=1 << 40)]
                        with tf.control_dependencies(deps):
                            taken = acc.take_grad(n)
                        step = tf.assign_sub(var, 0.01 * taken).op
                    else:
                        step = tf.group(*[tf.reduce_sum(g.read_value()[:1]) for g in grads])
                    init = tf.global_variables_initializer()
                with tf.Session(graph=graph, config=config) as sess:
                    sess.run(init)
                    for _ in range(3):
                        sess.run(step)
                    t = []
                    for _ in range(repeats):
                        t0 = time.perf_counter()
                        sess.run(step)
                        t.append(time.perf_counter() - t0)
                times[with_accum] = statistics.median(t)
            res[(n, e)] = times[True] - times[False]
    return res








def thread_seconds(pid):
    """CPU seconds of each thread of process `pid` so far, by "name/tid"."""
    ticks = os.sysconf("SC_CLK_TCK")
    return {f"{name}/{tid}": t / ticks for tid, (name, t) in thread_ticks(pid).items()}


def transfer(cluster, sizes, steps, warmup, threads, ps_pid, by_role=False):
    tf = tf1()
    # with `by_role`, each server thread is named by its role, from a gdb
    # backtrace (thread_cost.py: polling, serving, pool, grpc, other)
    roles = {}
    config = tf.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    server = tf.train.Server(
        tf.train.ClusterSpec(cluster), job_name="worker", task_index=0, config=config
    )
    out = {}
    for s in sizes:
        e = s // 4
        for way in ("push", "pull"):
            graph = tf.Graph()
            with graph.as_default():
                with tf.device("/job:ps/task:0"):
                    v = tf.get_variable(
                        f"v{e}", [e], initializer=tf.zeros_initializer(), use_resource=False
                    )
                with tf.device("/job:worker/task:0"):
                    w = tf.get_variable(
                        f"w{e}", [e], initializer=tf.ones_initializer(), use_resource=False
                    )
                if way == "push":
                    # the worker's tensor, fetched by the server's add
                    with tf.device("/job:worker/task:0"):
                        g = w * 1.0
                    with tf.device("/job:ps/task:0"):
                        step = tf.assign_add(v, g).op
                else:
                    # the server's variable, read into the worker
                    with tf.device("/job:worker/task:0"):
                        step = tf.assign(w, v.read_value() * 1.0).op
                init = tf.global_variables_initializer()
            with tf.Session(server.target, graph=graph, config=config) as sess:
                sess.run(init)
                for _ in range(warmup):
                    sess.run(step)
                if by_role:
                    roles = roles_now(ps_pid, roles)
                times = []
                ps0 = cpu_seconds(ps_pid)
                th0 = thread_seconds(ps_pid)
                for _ in range(steps):
                    t0 = time.perf_counter()
                    sess.run(step)
                    times.append(time.perf_counter() - t0)
                ps_cpu = (cpu_seconds(ps_pid) - ps0) / steps
                th1 = thread_seconds(ps_pid)
                # the server threads that spent the most a step
                spent = sorted(
                    ((th1[t] - th0.get(t, 0.0)) / steps, t) for t in th1
                )[::-1]
                top = spent[0][0] if spent else 0.0
                def name(t):
                    comm, tid = t.rsplit("/", 1)
                    return roles.get(int(tid), comm) if by_role else comm

                busiest = ", ".join(f"{name(t)} {c * 1e3:.2f}" for c, t in spent[:3])
            out[(way, s)] = (statistics.median(times), ps_cpu, top, busiest)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--what", default="accumulate,transfer")
    ap.add_argument("--pushes", default="1,4,16,48")
    ap.add_argument("--elements", default="262144,1048576,4194304")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--fit-from", type=int, default=1 << 20, help="least E of the second fit")
    ap.add_argument("--bytes", default="65536,1048576,4194304,16777216,67108864")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="TF thread pools of both processes")
    ap.add_argument(
        "--roles", action="store_true", help="name the server's threads by role (gdb; thread_cost.py)"
    )
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    what = a.what.split(",")
    import tensorflow as tf

    print(f"TensorFlow {tf.__version__}; {os.cpu_count()} CPUs\n")
    if "accumulate" in what:
        pushes = [int(x) for x in a.pushes.split(",")]
        sizes = [int(x) for x in a.elements.split(",")]
        res = accumulate(pushes, sizes, a.repeats)
        print("| pushes N | elements E | accumulate + apply (ms) | ns per element pushed |")
        print("|---:|---:|---:|---:|")
        rows, ys = [], []
        for (n, e), t in sorted(res.items()):
            print(f"| {n} | {e} | {t * 1e3:.2f} | {t / (n * e) * 1e9:.3f} |")
            rows.append([1.0, n * e, e])
            ys.append(t)
        # relative least squares: each point weighs the same; once over
        # every size, once over the sizes of at least --fit-from elements
        # (a variable of a megabyte or less stays in the caches)
        for least in (0, a.fit_from):
            pts = [(r, y) for r, y in zip(rows, ys) if r[2] >= least]
            w = [[c / y for c in r] for r, y in pts]
            a0, c_add, c_apply = lstsq(w, [1.0] * len(pts))
            worst = max(abs(a0 + c_add * r[1] + c_apply * r[2] - y) / y for r, y in pts)
            print(
                f"\nfit, E >= {least}: {a0 * 1e6:.1f} us + {c_add * 1e9:.3f} ns x N E"
                f" + {c_apply * 1e9:.3f} ns x E (worst point {worst * 100:.0f}% off)"
            )
        print()
    if "transfer" in what:
        sizes = [int(x) for x in a.bytes.split(",")]
        cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
        ctx = mp.get_context("spawn")
        ps = ctx.Process(target=run_ps, args=(cluster, a.threads), daemon=True)
        ps.start()
        try:
            res = transfer(cluster, sizes, a.steps, a.warmup, a.threads, ps.pid, a.roles)
        finally:
            ps.terminate()
        print(f"{a.threads} thread(s) a pool in each process; {a.steps} timed steps after {a.warmup}\n")
        print(
            "| way | bytes | median step (ms) | server CPU a step (ms) | its busiest thread (ms) "
            "| its three busiest threads (name, ms) |"
        )
        print("|---|---:|---:|---:|---:|---|")
        for (way, s), (t, cpu, top, busiest) in sorted(res.items()):
            print(f"| {way} | {s} | {t * 1e3:.2f} | {cpu * 1e3:.2f} | {top * 1e3:.2f} | {busiest} |")
        for way in ("push", "pull"):
            pts = [(s, res[(way, s)]) for s in sizes]
            x = [[1.0, s] for s, _ in pts]
            a0, b = lstsq(x, [v[1] for _, v in pts])
            h0, hb = lstsq(x, [v[2] for _, v in pts])
            t0, tb = lstsq(x, [v[0] for _, v in pts])
            print(
                f"\nfit {way}: server CPU = {a0 * 1e6:.0f} us + {b * 1e9:.3f} ns x bytes;"
                f" its busiest thread = {h0 * 1e6:.0f} us + {hb * 1e9:.3f} ns x bytes;"
                f" step = {t0 * 1e6:.0f} us + {tb * 1e9:.3f} ns x bytes",
                end="",
            )
        print()


if __name__ == "__main__":
    main()
