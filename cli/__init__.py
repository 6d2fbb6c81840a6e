"""The ``graphtool`` command line (Typer + Rich), thin over ``graphcore``.

Each command (``cli/commands/<name>.py``) parses its options, calls one library function and
renders the result; ``output.py`` decides human vs JSON output, ``errors.py`` maps library
errors to messages and exit codes, ``files.py`` writes artifacts atomically. ``entry.py`` is
the process entry (signals and standard streams set up before the heavy imports), ``stdout.py``
what a failing or abandoned stdout means, ``warning_lines.py`` Python warnings as one line.
"""
