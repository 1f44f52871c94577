"""`envguard export` (a portable environment.yml or an explicit spec) and `envguard snapshot` (envguard
JSON)."""

from envguard.export.written import replaced_warning, tracked_by_git

__all__ = ["replaced_warning", "tracked_by_git"]
