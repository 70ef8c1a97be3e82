#!/usr/bin/env bash
# An emulated Ethernet cluster on one Linux machine, for calibrating dtsim
# across hosts as a user would (issue 13): N network namespaces ("hosts")
# behind a bridge, each host's link shaped by tc (tbf: the rate; htb:
# TCP's acknowledgements first, then each destination in turn; netem: a
# one-way delay, where the kernel has it),
# Open MPI (or MPICH, MPI=mpich) across them with the simulator's
# algorithms forced (Open MPI's broadcast: its binomial tree, algorithm 6;
# docs/calibration.md) or left to the library,
# `dtsim calibrate collectives --backend mpi` at two
# rank counts, then the smaller count's fits predicting the larger's
# measurements (`dtsim validate --measurements A --predict B`).
#
# Needs root (namespaces, tc), Open MPI (or MPICH), and dtsim built with
# MPI against that library:
#
#   cargo build --release --features mpi
#   sudo scripts/emulated-cluster.sh            # 4 and 8 hosts, 100 Mbit/s, 50 us
#   sudo HOSTS="2 4" RATE=10gbit DELAY=20us scripts/emulated-cluster.sh
#   sudo ALGORITHMS=library scripts/emulated-cluster.sh   # Open MPI's own choice
#   sudo TCP_PUT=on scripts/emulated-cluster.sh   # Open MPI's TCP put left on
#   sudo MPI=mpich HOSTS=2 DTSIM=target-mpich/release/dtsim scripts/emulated-cluster.sh
#        (dtsim built with MPICC=mpicc.mpich CARGO_TARGET_DIR=target-mpich)
#
# ALGORITHMS=forced (the default) forces the textbook ring for allreduce
# and allgather, the pairwise exchange for alltoall and Open MPI's
# binomial tree for broadcast; ALGORITHMS=library leaves all four to Open
# MPI's fixed decision (as a user who sets nothing runs them), which the
# profile records by naming the library, so that the fits model its
# choice (allreduce=ompi, allgather=ompi, alltoall=ompi, broadcast=ompi;
# before 2026-11-27 library mode forced the alltoall and the broadcast,
# and until that evening the broadcast).
#
# The rate must be one the machine's cores can drive for every rank at
# once: on a 2-core VM, 4 and 8 ranks at 1 Gbit/s are CPU-bound (their
# times 2.5-8x what the links allow, with either shaper), at 100 Mbit/s
# they are the links' (docs/calibration.md). Forced, the broadcast is Open MPI's binomial tree
# (algorithm 6), which sends to every child at once: the profiles are
# fitted, and the larger counts predicted, with that algorithm's model
# (--algo broadcast=ompi-binomial).
#
# Outputs (OUT, default /tmp/dtsim-emulated): profile-<N>.toml for each
# rank count, validate-<A>-to-<B>.txt and .json, and shaper.txt (how the
# links were shaped: where htb, u32 or netem is missing, the harness
# falls back and says so there; and for each rank count the packets the
# shapers dropped and the TCP segments the hosts retransmitted while it
# ran, so that a slow run can be told from a lossy one). Everything it creates
# (namespaces dtsimN, bridge dtsimbr0) is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

HOSTS=${HOSTS:-"4 8"}
RATE=${RATE:-100mbit}
DELAY=${DELAY:-50us}
OUT=${OUT:-/tmp/dtsim-emulated}
DTSIM=${DTSIM:-$PWD/target/release/dtsim}
MIN_SIZE=${MIN_SIZE:-64KiB}
MAX_SIZE=${MAX_SIZE:-4MiB}
REPEATS=${REPEATS:-5}
ALGORITHMS=${ALGORITHMS:-forced}
# The MPI library: openmpi (mpirun) or mpich (MPICH's mpiexec.hydra; dtsim
# built against it: MPICC=mpicc.mpich cargo build --release --features
# mpi, in a target directory of its own, named by DTSIM). MPICH runs over
# UCX's TCP transport on the hosts' eth0 (UCX_TLS=tcp,self; where the
# ranks share a machine UCX would otherwise take shared memory).
MPI=${MPI:-openmpi}
# Open MPI's TCP transport sends a message of 192 KiB or more with its
# put, and two ranks sending each other such messages take both
# messages' time one after the other (measured here: 4 MiB each way, one
# rank's receive done at 351 ms and the other's at 699 ms, where one
# direction alone takes 350; likely the rank's reply to its peer's
# request to send waits behind its own message). TCP_PUT=off (the
# default) takes put out of the transport's flags, as a user of Open MPI
# over TCP may, so that exchanges run both ways at once and the fits
# meet the network (docs/calibration.md, "Open MPI's TCP put and the
# hosts' queues"); TCP_PUT=on keeps Open MPI's default. The profile
# records the setting (OMPI_MCA_btl_tcp_flags).
TCP_PUT=${TCP_PUT:-off}
# The queue each of a host's classes holds before it drops (a drop costs
# TCP a timeout of 200 ms or more, which no collective's model has; with
# netem the queues count 16,384 packets instead), and the bucket a host
# may send at line speed: at least the rate over the kernel's HZ
# (tc-tbf(8)), so raise BURST with the rate (16 kB suits 100 Mbit/s; a
# lone 1 Gbit/s stream still reached its rate with it)
BURST=${BURST:-16kb}
LIMIT=${LIMIT:-16mb}
BR=dtsimbr0
SUBNET=10.77.0

max=0
for n in $HOSTS; do [ "$n" -gt "$max" ] && max=$n; done
[ "$max" -ge 2 ] || { echo "HOSTS must name rank counts of 2 or more" >&2; exit 2; }
case "$MPI:$ALGORITHMS" in
    openmpi:forced) textbook=(--mca coll_tuned_allreduce_algorithm 4 --mca coll_tuned_allgather_algorithm 4
        --mca coll_tuned_alltoall_algorithm 2 --mca coll_tuned_bcast_algorithm 6)
        binomial=(--algo broadcast=ompi-binomial) ;;
    # MPICH's control variables: the ring allgather, the pairwise
    # exchange and the textbook binomial tree, the simulator's own
    # algorithms, and Rabenseifner's allreduce (4.0 has no ring allreduce)
    mpich:forced) textbook=(-genv MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM reduce_scatter_allgather
        -genv MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM ring
        -genv MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM pairwise
        -genv MPIR_CVAR_BCAST_INTRA_ALGORITHM binomial)
        binomial=() ;;
    openmpi:library | mpich:library) textbook=(); binomial=() ;;
    openmpi:* | mpich:*) echo "ALGORITHMS must be forced or library, not $ALGORITHMS" >&2; exit 2 ;;
    *) echo "MPI must be openmpi or mpich, not $MPI" >&2; exit 2 ;;
esac
case "$TCP_PUT" in
    off) transport=(--mca btl_tcp_flags send,inplace,need-ack,need-csum,hetero-rdma) ;;
    on) transport=() ;;
    *) echo "TCP_PUT must be off or on, not $TCP_PUT" >&2; exit 2 ;;
esac
if [ "$MPI" = mpich ]; then
    build="MPICC=mpicc.mpich CARGO_TARGET_DIR=target-mpich cargo build --release --features mpi"
else
    build="cargo build --release --features mpi"
fi
[ -x "$DTSIM" ] || { echo "$DTSIM: build it with: $build" >&2; exit 2; }
# MPICH's ranks poll without yielding: more ranks than cores run at the
# cores' pace, not the links' (docs/calibration.md, "MPICH across the
# emulated hosts")
if [ "$MPI" = mpich ] && [ "$max" -gt "$(nproc)" ]; then
    echo "warning: $max MPICH ranks on $(nproc) cores: their times will be the cores'" >&2
fi
if [ "$MPI" = openmpi ]; then
    command -v mpirun >/dev/null || { echo "mpirun not found: install Open MPI" >&2; exit 2; }
else
    command -v mpiexec.hydra >/dev/null || { echo "mpiexec.hydra not found: install MPICH" >&2; exit 2; }
fi

teardown() {
    for i in $(seq 0 $((max - 1))); do
        ip netns del "dtsim$i" 2>/dev/null || true
        ip link del "dv$i" 2>/dev/null || true
    done
    ip link del "$BR" 2>/dev/null || true
}
trap teardown EXIT
teardown

# the hosts: a veth pair each, the host side on the bridge, the namespace
# side shaped (egress: every packet a host sends). tbf holds the rate (it
# cuts TCP's large segments to its bucket, so the rate holds packet by
# packet). Under it htb orders what waits: TCP's bare acknowledgements
# (20-byte IP header, under 128 bytes, the ACK flag alone) first, then a
# class per destination host, served in turn, as a host's fair queueing
# serves its flows (fq_codel, RFC 8290, the default queue of most Linux
# distributions). With one queue, what a host sends held back what it
# receives (the acknowledgements of the data coming in) and its replies
# to other hosts (MPI's clear-to-send), and collectives that send and
# receive at once ran 1.2-1.7 times their link time from 256-512 KiB;
# with the order, the forced collectives run at 1.03-1.09 times it at 4
# and 8 hosts (docs/calibration.md, "Open MPI's TCP put and the hosts'
# queues"). htb serves a packet from each class in turn (quantum 1514;
# tbf passes segments of up to its bucket), and its rates are far above
# any RATE, so that tbf alone sets the rate.
# Each class's queue is netem's delay where the kernel has it (not run on
# our machine, which lacks sch_netem), otherwise a plain byte queue (the
# delay is then the stack's own).
class_of() { printf '2:%x' $(($1 + 16)); }
shape() {
    local ns=$1 i=$2 cls j prio
    local tc=(ip netns exec "$ns" tc)
    local classes=(2:2 2:3)
    for j in $(seq 0 $((max - 1))); do
        [ "$j" = "$i" ] || classes+=("$(class_of "$j")")
    done
    "${tc[@]}" qdisc add dev eth0 root handle 1: tbf rate "$RATE" burst "$BURST" limit "$LIMIT"
    if ! "${tc[@]}" qdisc add dev eth0 parent 1:1 handle 2: htb default 3 2>/dev/null; then
        # no htb here: one queue a host, as before 2026-11-27 evening
        # (netem's delay, where the kernel has it, as that queue)
        if [ "$i" = 0 ]; then
            echo "htb unavailable: one queue a host (slower exchanges)" >&2
            echo "one queue a host (no htb)" >> "$OUT/shaper.txt"
        fi
        if [ "$netem" = 1 ]; then
            "${tc[@]}" qdisc add dev eth0 parent 1:1 netem delay "$DELAY" limit $((16 * 1024))
        fi
        return 0
    fi
    "${tc[@]}" class add dev eth0 parent 2: classid 2:1 htb rate 100gbit ceil 100gbit quantum 1514
    for cls in "${classes[@]}"; do
        # the acknowledgements' class (2:2) first, the rest in turn
        prio=1
        [ "$cls" = 2:2 ] && prio=0
        "${tc[@]}" class add dev eth0 parent 2:1 classid "$cls" htb rate 1gbit ceil 100gbit \
            quantum 1514 prio "$prio"
        # (netem's queue counts packets: 16,384 of 1,500 bytes, about 24 MB)
        if [ "$netem" = 1 ]; then
            "${tc[@]}" qdisc add dev eth0 parent "$cls" netem delay "$DELAY" limit $((16 * 1024))
        else
            "${tc[@]}" qdisc add dev eth0 parent "$cls" bfifo limit "$LIMIT"
        fi
    done
    # (without the u32 classifier everything stays in the default class:
    # one queue a host)
    "${tc[@]}" filter add dev eth0 parent 2: protocol ip prio 1 u32 \
        match ip protocol 6 0xff match u8 0x05 0x0f at 0 \
        match u16 0x0000 0xff80 at 2 match u8 0x10 0xff at 33 flowid 2:2 2>/dev/null || {
        if [ "$i" = 0 ]; then
            echo "u32 unavailable: one queue a host (slower exchanges)" >&2
            echo "one queue a host (no u32)" >> "$OUT/shaper.txt"
        fi
        return 0
    }
    [ "$i" = 0 ] && echo "tbf $RATE; htb: acknowledgements first, then each destination in turn" >> "$OUT/shaper.txt"
    for j in $(seq 0 $((max - 1))); do
        [ "$j" = "$i" ] && continue
        "${tc[@]}" filter add dev eth0 parent 2: protocol ip prio 2 u32 \
            match ip dst "$SUBNET.$((j + 1))/32" flowid "$(class_of "$j")"
    done
}
mkdir -p "$OUT"
rm -f "$OUT/shaper.txt"
ip link add "$BR" type bridge
ip link set "$BR" up
netem=1
for i in $(seq 0 $((max - 1))); do
    ns="dtsim$i"
    ip netns add "$ns"
    ip link add "dv$i" type veth peer name eth0 netns "$ns"
    ip link set "dv$i" master "$BR"
    ip link set "dv$i" up
    ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [ "$i" = 0 ] && ! ip netns exec "$ns" tc qdisc add dev lo root netem delay 0ms 2>/dev/null; then
        echo "netem unavailable: the rate alone, no added delay" >&2
        echo "no netem: no added delay" >> "$OUT/shaper.txt"
        netem=0
    fi
    [ "$i" = 0 ] && [ "$netem" = 1 ] && ip netns exec "$ns" tc qdisc del dev lo root
    shape "$ns" "$i"
done

# Open MPI starts its daemons, and MPICH's hydra its proxies, with this
# "remote shell": the host is the namespace whose address it names
agent="$OUT/netns-agent.sh"
cat > "$agent" <<'EOF'
#!/bin/sh
# usage (as Open MPI and hydra call ssh): netns-agent.sh [options] HOST COMMAND...
while [ "${1#-}" != "$1" ]; do shift; done
host=$1; shift
i=${host##*.}
exec ip netns exec "dtsim$((i - 1))" sh -c "$*"
EOF
chmod +x "$agent"

# One launch of the measurement across n hosts. rtc_hwloc_vmhole none:
# Open MPI's daemons otherwise map the hardware topology into a "hole" of
# their address space that they search for at start-up, and a daemon whose
# stack lay where the hole was found died of it (a segmentation fault in
# hwloc_shmem_topology_write, seen once in CI): the topology in shared
# memory only saves the ranks a re-discovery, which the measurement does
# not time.
calibrate() {
    local n=$1 hosts
    hosts=$(seq -s, -f "$SUBNET.%g" 1 "$n")
    if [ "$MPI" = mpich ]; then
        ip netns exec dtsim0 mpiexec.hydra -launcher ssh -launcher-exec "$agent" \
            -iface eth0 -hosts "$hosts" -n "$n" \
            -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 \
            ${textbook[@]+"${textbook[@]}"} \
            "$DTSIM" calibrate collectives --backend mpi \
            --min-size "$MIN_SIZE" --max-size "$MAX_SIZE" --repeats "$REPEATS" \
            -o "$OUT/profile-$n.toml"
        return
    fi
    ip netns exec dtsim0 mpirun --allow-run-as-root --oversubscribe -np "$n" \
        --host "$hosts" \
        --mca plm_rsh_agent "$agent" \
        --mca rtc_hwloc_vmhole none \
        --mca mpi_yield_when_idle 1 \
        --mca btl tcp,self --mca btl_tcp_if_include "$SUBNET.0/24" \
        --mca oob_tcp_if_include "$SUBNET.0/24" \
        --mca coll_tuned_use_dynamic_rules 1 \
        ${transport[@]+"${transport[@]}"} \
        ${textbook[@]+"${textbook[@]}"} \
        "$DTSIM" calibrate collectives --backend mpi \
        ${binomial[@]+"${binomial[@]}"} \
        --min-size "$MIN_SIZE" --max-size "$MAX_SIZE" --repeats "$REPEATS" \
        -o "$OUT/profile-$n.toml"
}

# What the first n hosts have lost so far: packets their shapers
# dropped (the root qdisc counts its children's drops too) and TCP
# segments they retransmitted (each namespace's own /proc/net/snmp).
losses() {
    local n=$1 i drops=0 retrans=0 d r
    for i in $(seq 0 $((n - 1))); do
        d=$(ip netns exec "dtsim$i" tc -s qdisc show dev eth0 |
            awk '/ root / {root = 1; next} root && /dropped/ {gsub(",", "", $7); print $7; exit}')
        r=$(ip netns exec "dtsim$i" cat /proc/net/snmp |
            awk '/^Tcp:/ {if (!col) {for (k = 1; k <= NF; k++) if ($k == "RetransSegs") col = k} else print $col}')
        drops=$((drops + ${d:-0}))
        retrans=$((retrans + ${r:-0}))
    done
    echo "$drops $retrans"
}

for n in $HOSTS; do
    echo "=== $n hosts ($RATE, $DELAY one way): calibrate collectives"
    read -r drops0 retrans0 <<< "$(losses "$n")"
    # a launch that fails before it measures (a daemon that did not start)
    # is tried once more; a second failure stops the harness
    if ! calibrate "$n"; then
        echo "=== $n hosts: the launch failed; trying once more" >&2
        rm -f "$OUT/profile-$n.toml"
        calibrate "$n"
    fi
    read -r drops1 retrans1 <<< "$(losses "$n")"
    echo "$n hosts: the shapers dropped $((drops1 - drops0)) packets, the hosts retransmitted $((retrans1 - retrans0)) TCP segments" |
        tee -a "$OUT/shaper.txt"
done

set -- $HOSTS
first=$1
for n in "$@"; do
    [ "$n" = "$first" ] && continue
    echo "=== fit at $first ranks, predict $n"
    # a fit that fails (a collective whose times do not grow over the
    # sizes, on a noisy machine) is reported, and the harness goes on
    "$DTSIM" validate --measurements "$OUT/profile-$first.toml" \
        --predict "$OUT/profile-$n.toml" ${binomial[@]+"${binomial[@]}"} \
        > "$OUT/validate-$first-to-$n.txt" ||
        echo "validate failed: see above" >&2
    cat "$OUT/validate-$first-to-$n.txt"
    "$DTSIM" validate --measurements "$OUT/profile-$first.toml" \
        --predict "$OUT/profile-$n.toml" ${binomial[@]+"${binomial[@]}"} --json \
        > "$OUT/validate-$first-to-$n.json" || true
done
echo "=== done: $OUT"
