"""`envguard diff`: two-way comparison of any two sources (exact, or by satisfaction against an
environment.yml)."""
