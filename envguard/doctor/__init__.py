"""`envguard doctor`: the GPU-starvation checklist for a machine and an environment (facts, rules, render)."""
