"""`envguard smoke`: DataLoader determinism and throughput, run in the environment's own interpreter."""
