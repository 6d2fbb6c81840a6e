"""The version of the JSON documents the commands write (``run.json``, ``check --json``,
``train --json``, ``evaluate --json``, ``bench.json``, ...): one number, raised when any of
them changes in a way a reader must know about."""

SCHEMA_VERSION = 1
