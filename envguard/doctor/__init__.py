"""`envguard doctor`: the GPU-starvation checklist for a machine and an environment (measure, records,
verdicts, render)."""
