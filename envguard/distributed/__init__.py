"""`envguard check --distributed` / `smoke --distributed` under torchrun, Slurm or MPI: environments, locks
and shards across ranks (launcher, rendezvous, measure, records, exchange, verdicts, render)."""
