"""`envguard clean`: a package-cache cleaner that reads what environments and locks still use.

discovery (caches, environments) -> usage (what is referenced) -> scan (what a cache holds) -> plan (pure:
what goes, what it frees) -> execute (trash, undo, purge), with locks guarding against a running
conda/mamba/rattler.
"""
