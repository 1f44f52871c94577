"""envguard inside conda: `conda doctor` health checks and a post-command hook (hooks.py is the entry point
conda loads; actions.py what the hooks do; health.py what is reported, render.py how it reads, remedy.py the
commands that restore or accept)."""
