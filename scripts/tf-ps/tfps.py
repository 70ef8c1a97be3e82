"""What the scripts of scripts/tf-ps share: a TensorFlow parameter server
in a process of its own on localhost, and the CPU a process spends.

Imported by `partition_cost.py` and `dense_cost.py`, which run from this
directory (Python puts a script's directory on its path).
"""
import os
import socket


def free_port():
    """A TCP port free on localhost now."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def run_ps(cluster, threads):
    """Serve task 0 of job "ps" of `cluster`, `threads` threads a pool
    (0: TensorFlow's default), until killed."""
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    server = tf.distribute.Server(
        tf.train.ClusterSpec(cluster), job_name="ps", task_index=0, config=config
    )
    server.join()


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
