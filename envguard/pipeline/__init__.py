"""The one model of a DataLoader input pipeline that smoke, watch and doctor all ask, so they cannot disagree.

`costs.py` holds what a pipeline costs per batch as the tools measure it (loading CPU and wall time in a
worker, the training step's CPU and wall time, the main process's own CPU per batch, transfer, start-up) and
the cores the job may use with the other load beside it; `model.py` predicts the rate of any setting from
those records and gives the final setting in one step with its predicted gain and the rule that produced it.
Pure: records in, records out; no clock, no torch.
"""

from envguard.pipeline.costs import RECEIVE_S, BatchCosts, Cores, Pipeline, Setting, others_from_share
from envguard.pipeline.model import MAX_WORKERS, Advice, advise, most_workers, rate
from envguard.pipeline.threads import Threads, too_many_threads

__all__ = [
    "MAX_WORKERS",
    "RECEIVE_S",
    "Advice",
    "BatchCosts",
    "Cores",
    "Pipeline",
    "Setting",
    "Threads",
    "advise",
    "most_workers",
    "others_from_share",
    "rate",
    "too_many_threads",
]
