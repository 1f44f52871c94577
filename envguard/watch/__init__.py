"""`envguard watch`: run (or attach to) a training job, sample its process tree and the host, time its
DataLoaders from inside (hook/), and say what bounds it and what to change.

measure: job.py (the job), sampler.py (psutil, NVML), hook/ with streams.py -> records: records.py, wire.py
(the hook's lines parsed once), roles.py -> verdicts: summary.py (the typed Summary), verdicts/ -> render:
render.py, live.py, plot.py.
"""
