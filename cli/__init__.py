"""The ``graphtool`` command line (Typer + Rich), thin over ``graphcore``.

Commands arrive with the CLI issue; the package exists now so the project layout is final.
"""
