#!/usr/bin/env python3
"""Does a parameter server's cost a partition grow with its workers as N times one?

dtsim charges a server's CPU a partition per worker pushing and pulling
(docs/models.md §4.2): N workers cost N times the one worker that
`partition_cost.py` and `thread_cost.py` measure. This checks that on the
machine it runs on: one parameter server and N workers, each in a process
of its own on localhost, every worker running `partition_cost.py`'s step
(a lookup of B random rows of a table in P partitions on the server, and
their SGD update) at once, asynchronously, as many steps each. The
server's CPU over the timed steps, by thread role (`thread_cost.py`:
gRPC polling, serving, the compute pool, gRPC's own, the rest), is
divided by the steps all the workers ran: what one worker's step costs
the server. Fitted against P, what a partition costs it per worker.
If N workers cost N times one, that slope does not change with N.

On a machine with fewer cores than processes the workers take turns;
the CPU each step costs is still counted, the step times are not the
workers' alone.

    /tmp/tf16/bin/python scripts/tf-ps/workers_cost.py --workers 1,2,4

Needs gdb (thread_cost.py). Prints Markdown.
"""
import argparse
import multiprocessing as mp
import os

from tfps import embedding_step, free_port, run_ps, tf1
from thread_cost import ROLES, by_role, roles_now, thread_cpu


def worker(cluster, index, parts, rows, dim, batch, steps, warmup, barrier):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    tf = tf1()
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=index)
    for p in parts:
        graph = tf.Graph()
        with graph.as_default():
            train, init = embedding_step(
                tf, p, rows, dim, batch, f"emb_p{p}", worker=index, seed=1 + index
            )
        with tf.Session(server.target, graph=graph) as sess:
            if index == 0:
                sess.run(init)
            barrier.wait()  # the table exists
            for _ in range(warmup):
                sess.run(train)
            barrier.wait()  # all warm: the server's CPU is read
            barrier.wait()  # go
            for _ in range(steps):
                sess.run(train)
            barrier.wait()  # done: the server's CPU is read


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--parts", default="8,32,128")
    ap.add_argument("--rows", type=int, default=1 << 18)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    ctx = mp.get_context("spawn")
    parts = [int(x) for x in a.parts.split(",")]
    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    table = {}
    for n in [int(x) for x in a.workers.split(",")]:
        cluster = {
            "ps": [f"localhost:{free_port()}"],
            "worker": [f"localhost:{free_port()}" for _ in range(n)],
        }
        ps = ctx.Process(target=run_ps, args=(cluster, 0), daemon=True)
        ps.start()
        # a worker that dies breaks the barrier within the timeout
        barrier = ctx.Barrier(n + 1, timeout=600)
        procs = [
            ctx.Process(
                target=worker,
                args=(cluster, i, parts, a.rows, a.dim, a.batch, a.steps, a.warmup, barrier),
                daemon=True,
            )
            for i in range(n)
        ]
        for w in procs:
            w.start()
        names = {}
        try:
            for p in parts:
                barrier.wait()
                barrier.wait()
                names = roles_now(ps.pid, names)
                before = thread_cpu(ps.pid)
                barrier.wait()
                barrier.wait()
                total, _ = by_role(before, thread_cpu(ps.pid), names)
                table[(n, p)] = {r: total[r] * tick / (a.steps * n) for r in ROLES}
            for w in procs:
                w.join()
        finally:
            for w in procs:
                w.terminate()
            ps.terminate()
    import tensorflow

    print(
        f"TensorFlow {tensorflow.__version__}; {os.cpu_count()} CPUs; table {a.rows} x {a.dim} fp32; "
        f"{a.batch} ids a step; {a.steps} timed steps a worker after {a.warmup}\n"
    )
    print("The server's CPU a worker's step (ms), by role:\n")
    print("| workers | partitions | all | " + " | ".join(ROLES) + " |")
    print("|---:|---:|---:|" + "---:|" * len(ROLES))
    for (n, p), by in sorted(table.items()):
        print(
            f"| {n} | {p} | {sum(by.values()) * 1e3:.2f} | "
            + " | ".join(f"{by[r] * 1e3:.2f}" for r in ROLES)
            + " |"
        )

    def slope(ys):
        k = len(parts)
        mx, my = sum(parts) / k, sum(ys) / k
        return sum((x - mx) * (y - my) for x, y in zip(parts, ys)) / sum(
            (x - mx) ** 2 for x in parts
        )

    print("\nWhat a partition costs the server a worker (us), fitted over the partitions:\n")
    for n in sorted({n for n, _ in table}):
        rows = [table[(n, p)] for p in parts]
        print(
            f"{n} workers: all {slope([sum(r.values()) for r in rows]) * 1e6:.1f}; "
            + "; ".join(f"{role} {slope([r[role] for r in rows]) * 1e6:.1f}" for role in ROLES)
        )


if __name__ == "__main__":
    main()
