"""Environment attestations: what `envguard verify` proved, as a signed in-toto statement (statement.py: what
it says; envelope.py: signing and opening it)."""
