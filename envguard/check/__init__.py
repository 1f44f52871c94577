"""`envguard check`: the live environment against a lock or environment.yml, with a stat-cache fast path."""
