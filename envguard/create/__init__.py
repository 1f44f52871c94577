"""`envguard create` and `envguard name`: plan, name, check the machine, install, register, lock, Jupyter."""
