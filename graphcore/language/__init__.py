"""The spec language: YAML text -> a validated ``Spec`` (every error at once, located)."""
