"""`envguard check --distributed` / `smoke --distributed` under torchrun: environments and shards across
ranks (measure, records, verdicts, render)."""
