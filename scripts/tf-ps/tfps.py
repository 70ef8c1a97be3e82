"""What the scripts of scripts/tf-ps share: a TensorFlow parameter server
in a process of its own on localhost, and the CPU a process spends.

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


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
