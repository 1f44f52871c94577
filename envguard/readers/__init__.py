"""Readers: one module per format, each turning a file or prefix into an envguard.model.Environment."""
