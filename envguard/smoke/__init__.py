"""`envguard smoke`: DataLoader determinism and throughput, run in the environment's own interpreter.

What other features use (doctor, verify): `run_smoke(options) -> SmokeReport`, `advise_workers(options) ->
WorkerAdvice` and, for a renderer that shows a smoke report inside its own, `report_dict(report)`.
"""

from envguard.smoke.render import to_dict as report_dict
from envguard.smoke.report import SmokeOptions, SmokeReport, WorkerAdvice
from envguard.smoke.run import advise_workers, run_smoke

__all__ = ["SmokeOptions", "SmokeReport", "WorkerAdvice", "advise_workers", "report_dict", "run_smoke"]
