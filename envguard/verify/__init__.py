"""`envguard verify`: rebuild a lock in a temporary prefix, every archive hash-checked, then check it (CI)."""
