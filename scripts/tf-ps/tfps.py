"""What the scripts of scripts/tf-ps share: a TensorFlow parameter server
in a process of its own on localhost, the step they time (a partitioned
embedding's lookup and update, `embedding_step`), and the CPU a process
and its threads spend (`cpu_seconds`, `thread_ticks`).

Imported by the scripts of this directory (Python puts a script's
directory on its path). They run under TensorFlow 2.x (its `tf.compat.v1`
graph mode) and under 1.x itself, Parallax's TensorFlow 1.6 included:

    /root/.pyenv/versions/3.6.15/bin/python -m venv /tmp/tf16
    /tmp/tf16/bin/pip install tensorflow==1.6.0 numpy==1.19.5 "protobuf<3.20"
"""
import os
import socket
import warnings


def tf1():
    """TensorFlow's 1.x graph API: `tf.compat.v1` under 2.x (eager
    execution turned off), `tf` itself under 1.x."""
    warnings.filterwarnings("ignore", category=FutureWarning)
    import tensorflow as tf

    v1 = getattr(getattr(tf, "compat", None), "v1", None)
    if v1 is None:
        return tf
    v1.disable_eager_execution()
    return v1


def quartiles(xs):
    """First and third quartiles of `xs` (statistics.quantiles' default
    method, which Python 3.6 lacks)."""
    t = sorted(xs)
    n = len(t)

    def at(q):
        pos = q * (n + 1) - 1
        lo = min(max(int(pos // 1), 0), n - 1)
        hi = min(lo + 1, n - 1)
        frac = min(max(pos - lo, 0.0), 1.0)
        return t[lo] + (t[hi] - t[lo]) * frac

    return at(0.25), at(0.75)


def free_port():
    """A TCP port free on localhost now."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def run_ps(cluster, threads):
    """Serve task 0 of job "ps" of `cluster`, `threads` threads a pool
    (0: TensorFlow's default), until killed."""
    tf = tf1()
    config = tf.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    server = tf.train.Server(
        tf.train.ClusterSpec(cluster), job_name="ps", task_index=0, config=config
    )
    server.join()


def embedding_step(tf, partitions, rows, dim, batch, name, worker=0, seed=1):
    """The step the scripts time, built into the default graph: a table of
    `rows` x `dim` fp32 on the parameter server in `partitions` pieces
    (`fixed_size_partitioner`, reference variables as TensorFlow 1.x made
    them), and on worker `worker` a lookup of `batch` random ids (a gather
    per partition on the server, sent to the worker) and the SGD update of
    their rows (sent back, a scatter per partition). Returns the step's op
    and the initialiser."""
    with tf.device("/job:ps/task:0"):
        emb = tf.get_variable(
            name,
            [rows, dim],
            initializer=tf.zeros_initializer(),
            partitioner=tf.fixed_size_partitioner(partitions),
            use_resource=False,
        )
    with tf.device(f"/job:worker/task:{worker}"):
        ids = tf.random_uniform([batch], 0, rows, dtype=tf.int64, seed=seed)
        looked = tf.nn.embedding_lookup(emb, ids)
        loss = tf.reduce_sum(looked * looked)
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return train, tf.global_variables_initializer()


def thread_ticks(pid):
    """{tid: (name, user + system clock ticks)} of every thread of process
    `pid` so far (Linux /proc; a thread that ends meanwhile is left out)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        out[int(tid)] = (name, int(fields[11]) + int(fields[12]))
    return out


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
