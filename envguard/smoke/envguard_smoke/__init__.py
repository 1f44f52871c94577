"""The in-environment half of `envguard smoke`: runs under the TARGET environment's interpreter.

Standalone on purpose: it imports nothing from envguard, only the standard library and torch (numpy when
present), and keeps to Python 3.8 syntax, so it works in any environment that has torch. envguard starts it as
a top-level package (`envguard_smoke`) so DataLoader workers can import its datasets under fork, spawn or
forkserver alike.
"""
