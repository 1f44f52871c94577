"""Facts about this machine: platform, virtual packages, CPUs, memory, shared memory, disks and GPUs."""
