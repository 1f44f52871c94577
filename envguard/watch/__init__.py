"""`envguard watch`: run (or attach to) a training job, sample its process tree and the host, time its
DataLoaders from inside (hook/), and say what bounds it and what to change.

measure: job.py (the job), sampler.py (psutil, NVML), hook/ with streams.py -> records: records.py (the
hook's lines decoded once by streams.py), roles.py -> verdicts: summary.py (the typed Summary), verdicts/ ->
render: render.py, live.py, plot.py.
"""
