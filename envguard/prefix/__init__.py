"""A live prefix: conda-meta records, pip dist-infos, history, file integrity, conda's config and the
probe."""
