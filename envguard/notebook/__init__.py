"""envguard inside IPython and Jupyter (`%load_ext envguard`): magics.py registers `%envguard ARGS` and
`%%envguard_watch`; runner.py runs a command in the kernel's process; shown.py is what a notebook displays."""
