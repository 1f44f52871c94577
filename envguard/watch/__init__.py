"""`envguard watch`: run (or attach to) a training job, sample its process tree and the host, time its
DataLoaders from inside (hook/), and say what bounds it and what to change."""
