"""`envguard sync`: repair an environment in place to match its lock (plan, apply, render)."""
