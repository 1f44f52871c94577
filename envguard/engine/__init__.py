"""The engine: rattler solves and installs, archives proven by hash, pip installs, and the backends."""
