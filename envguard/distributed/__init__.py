"""`envguard check --distributed` / `smoke --distributed` under torchrun, Slurm or MPI: environments, locks
and shards across ranks, and every rank against its lock (launcher, rendezvous, measure, records, exchange,
verdicts, render). One check under two commands: `run_distributed(DistributedOptions(...))`."""

from envguard.distributed.result import DistributedResult
from envguard.distributed.run import DEFAULT_TIMEOUT_S, DistributedOptions, run_distributed

__all__ = ["DEFAULT_TIMEOUT_S", "DistributedOptions", "DistributedResult", "run_distributed"]
