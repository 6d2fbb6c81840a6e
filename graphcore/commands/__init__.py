"""The library function behind each ``graphtool`` command (``cli/`` calls these)."""
