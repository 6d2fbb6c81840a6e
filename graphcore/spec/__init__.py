"""YAML model specs: load with locations, validate, build, interpret (DESIGN section 4)."""
