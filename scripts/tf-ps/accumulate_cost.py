#!/usr/bin/env python3
"""What TensorFlow's sparse gradient accumulator costs a parameter server.

Parallax's synchronous PS aggregates the workers' sparse gradients of each
variable partition in a `tf.SparseConditionalAccumulator` on the
partition's server (snuspl/parallax, `graph_transform_lib.py`,
`_get_accum_apply_and_agg_grad`: `apply_indexed_slices_grad` per worker,
`take_indexed_slices_grad(num_workers)` once). TensorFlow's kernel
(`tensorflow/core/kernels/sparse_conditional_accumulator.h`,
`AddToAccumGradFunction`, "modeled after sparse_add_op") merges each
pushed gradient with the sum so far into a new tensor: the k-th push
copies every row accumulated before it as well as its own. Its indices
are not sorted (an embedding's gradient lists the looked-up ids in batch
order), so the merge finds few equal rows and the sum grows by about a
push's rows each time: N pushes of r rows copy about r N (N + 1) / 2 rows,
not r N.

This measures the kernel: N pushes of R rows of D fp32 values (ids drawn
uniformly from V rows, unsorted as an embedding's gradient gives them;
`--sorted` sorts and dedups each push), applied one after the other and
taken once, in one process, one thread a pool (the accumulator holds its
lock through a push, so a partition's pushes run one after another
anyway). For each N the median of `--repeats` runs, minus the same graph
without the accumulator (reading the pushes' variables); and the time the
aggregate's SGD update of the partition (`scatter_sub`) adds, per element
pushed. The model

    time(N) = a + c * (rows copied, as the kernel's merge counts them) * D

is fitted by least squares of the relative error (every N weighs the
same); c is the cost of an element copied. The rows copied are counted
by replaying the kernel's merge on the same ids. The fit of a cost per
element pushed, a + d * N * R * D, is printed beside it.

    /tmp/tfenv/bin/python scripts/tf-ps/accumulate_cost.py [--sorted]
    /tmp/tf16/bin/python scripts/tf-ps/accumulate_cost.py   (TensorFlow 1.6, tfps.py)
"""
import argparse
import os
import statistics
import time

import numpy as np

from tfps import tf1


def merged_rows(pushes):
    """Rows each push's merge writes, replaying the kernel's two-pointer
    merge (equal ids summed, the rest copied in merge order)."""
    accum = None
    copied = []
    for ids in pushes:
        if accum is None:
            accum = list(ids)
            copied.append(len(ids))
            continue
        out = []
        i = j = 0
        a, g = accum, ids
        while i < len(a) and j < len(g):
            if a[i] < g[j]:
                out.append(a[i])
                i += 1
            elif a[i] > g[j]:
                out.append(g[j])
                j += 1
            else:
                out.append(a[i])
                i += 1
                j += 1
        out.extend(a[i:])
        out.extend(g[j:])
        accum = out
        copied.append(len(out))
    return copied


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", type=int, default=100_000, help="rows of the partition")
    ap.add_argument("--rows", type=int, default=1_000, help="rows a push")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--pushes", default="1,2,4,8,16,24,32,48")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--sorted", action="store_true", help="sort and dedup each push")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    tf = tf1()
    import tensorflow
    rng = np.random.default_rng(a.seed)
    counts = [int(x) for x in a.pushes.split(",")]
    most = max(counts)
    pushes = []
    for _ in range(most):
        ids = rng.integers(0, a.vocab, a.rows, dtype=np.int64)
        if a.sorted:
            ids = np.unique(ids)
        pushes.append(ids)
    config = tf.ConfigProto(
        intra_op_parallelism_threads=1, inter_op_parallelism_threads=1
    )
    results = []
    applies = []
    for n in counts:
        graph = tf.Graph()
        with graph.as_default():
            idx = [tf.constant(p) for p in pushes[:n]]
            vals = [
                tf.get_variable(
                    f"v{k}",
                    initializer=rng.standard_normal((len(pushes[k]), a.dim)).astype(np.float32),
                    use_resource=False,
                )
                for k in range(n)
            ]
            acc = tf.SparseConditionalAccumulator(
                tf.float32, shape=[a.vocab, a.dim], shared_name=f"acc{n}"
            )
            last = None
            for k in range(n):
                deps = [last] if last is not None else []
                with tf.control_dependencies(deps):
                    last = acc.apply_indexed_slices_grad(
                        tf.IndexedSlices(vals[k], idx[k], tf.constant([a.vocab, a.dim], tf.int64)),
                        local_step=2**62,
                    )
            with tf.control_dependencies([last]):
                take = acc.take_indexed_slices_grad(n)
            # the update of the partition by the aggregate (SGD)
            table = tf.get_variable(
                "table", [a.vocab, a.dim], initializer=tf.zeros_initializer(),
                use_resource=False,
            )
            apply = tf.scatter_sub(table, take.indices, take.values).op
            # the same reads without the accumulator: what is not its work
            base = tf.group(*[tf.identity(v) for v in vals], *idx)
            init = tf.global_variables_initializer()
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(init)
            sess.run(take.values.op)
            sess.run(base)
            sess.run(apply)
            ts, bs, us = [], [], []
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                sess.run(take.values.op)
                ts.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                sess.run(base)
                bs.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                sess.run(apply)
                us.append(time.perf_counter() - t0)
        t = statistics.median(ts) - statistics.median(bs)
        applied = statistics.median(us) - statistics.median(ts)
        copied = sum(merged_rows([list(p) for p in pushes[:n]]))
        pushed = sum(len(p) for p in pushes[:n])
        results.append((n, t, copied, pushed))
        applies.append(applied / (pushed * a.dim))

    print(
        f"TensorFlow {tensorflow.__version__}; {os.cpu_count()} CPUs, one thread a pool; "
        f"partition {a.vocab} x {a.dim} fp32; {a.rows} ids a push"
        f"{' (sorted, distinct)' if a.sorted else ' (unsorted, as drawn)'}; "
        f"median of {a.repeats}\n"
    )
    print(
        "| pushes N | time (ms) | rows copied | rows pushed "
        "| ns per element copied | ns per element pushed |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for n, t, copied, pushed in results:
        print(
            f"| {n} | {t * 1e3:.2f} | {copied} | {pushed} | "
            f"{t / (copied * a.dim) * 1e9:.3f} | {t / (pushed * a.dim) * 1e9:.2f} |"
        )
    y = np.array([t for _, t, _, _ in results])

    def relative_fit(cols):
        # least squares of (fit - t) / t: divide each row by t
        x = np.array(cols)
        coef, *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)
        fit = x @ coef
        return coef, max(abs(f - t) / t for f, t in zip(fit, y))

    (c0, c), worst = relative_fit([[1.0, copied * a.dim] for _, _, copied, _ in results])
    print(
        f"\nfit: time = {c0 * 1e3:.3f} ms + {c * 1e9:.3f} ns x (elements copied); "
        f"worst residual {worst * 100:.1f}%"
    )
    # the linear alternative: a cost per element pushed
    (d0, d), worst2 = relative_fit([[1.0, pushed * a.dim] for _, _, _, pushed in results])
    print(
        f"linear alternative: time = {d0 * 1e3:.3f} ms + {d * 1e9:.3f} ns x (elements pushed); "
        f"worst residual {worst2 * 100:.1f}%"
    )
    print(
        "apply (scatter_sub of the aggregate, beyond the take): "
        + ", ".join(f"N={n}: {u * 1e9:.2f}" for n, u in zip(counts, applies))
        + " ns per element pushed"
    )


if __name__ == "__main__":
    main()
