"""conda-lock.yml (version 1): the reader, the writer, and envguard's extras in custom_metadata."""
