//! CUDA kernels and NCCL collectives (feature `cuda`). Placeholder.
