#!/bin/sh
# Regenerates docs/gallery/ from the example scenarios: one `dtsim report`
# per scenario. Run from the repository root:
#
#   sh docs/gallery/make.sh
#
# tests/gallery.rs re-runs the same reports and fails when a committed
# table or report.md no longer matches what dtsim produces.
set -eu
cargo build --release --quiet
for s in scaling-10gbe-vs-ib schedule-by-model stragglers vgg16-16gpu-10gbe \
    compression-h200-measured-kernels ps-dedicated-machines \
    sparse-ps-dedicated-machines; do
    rm -rf "docs/gallery/$s"
    ./target/release/dtsim report "scenarios/examples/$s.toml" -o "docs/gallery/$s"
done
# the papers' setups (docs/reproductions.md): name, then scenario
for pair in parallax-table2:parallax/table2 \
    parallax-whole-variables:parallax/whole-variables-images \
    embrace-fig7-gnmt8:embrace/fig7-gnmt8 \
    embrace-fig7-lm-rtx2080:embrace/fig7-lm-rtx2080 \
    embrace-fig9-gnmt8:embrace/fig9-gnmt8 embrace-fig4a:embrace/fig4a \
    gtopk-table4-vgg16:gtopk/table4-vgg16 dct-dp-sparsity:dct/dp-sparsity \
    dct-mp-sparsity:dct/mp-sparsity ring-lm-40gpu:ring/lm-40gpu; do
    name=${pair%%:*}
    rm -rf "docs/gallery/$name"
    ./target/release/dtsim report "scenarios/papers/${pair#*:}.toml" -o "docs/gallery/$name"
done
# why the scaling differs: how busy the busiest link is (the run's `links`)
./target/release/dtsim plot docs/gallery/scaling-10gbe-vs-ib/results.parquet \
    --x gpus --y busiest_link_utilisation --series cluster.network \
    --where strategy.dense=allreduce -o docs/gallery/scaling-10gbe-vs-ib/busiest-link.png
