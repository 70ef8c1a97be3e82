//! MPI collectives (feature `mpi`). Placeholder.
