"""`envguard export` (a portable environment.yml or an explicit spec) and `envguard snapshot` (envguard
JSON)."""
