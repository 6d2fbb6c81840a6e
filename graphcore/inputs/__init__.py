"""A spec's inputs as arrays: generated, from files and stdin, from ``data:`` files."""
