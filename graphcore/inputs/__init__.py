"""A spec's inputs as arrays: generated, read from files and stdin, or from ``data:`` files.

- ``make``: ``make_inputs``: each ``InputSpec`` -> an array (random, seeded per input name;
  zeros/ones; a file; stdin), and per-example inputs (sequences, ``examples``);
- ``files``: one input's array from an ``.npy``/``.npz``/``.csv`` file or stdin, without
  pickle, refused before reading when it cannot fit (headers, rows, the size limit);
- ``data_files``: the arrays a spec's ``data:`` section names, from one file (CSV by column
  name, npz/npy keeping integer dtypes, sequences, JSON Lines; the same from stdin's bytes;
  declared shapes checked, never reshaped); ``data_text`` streams CSV and JSON Lines line by
  line, keeping only the columns read, every line, record and field bounded;
- ``kept_columns``: columns of a data file no input reads, as their text (``predict --keep``);
- ``stacked``: ``StackedExamples``, per-example inputs of one shape made as the rows of one
  array, which batching reads whole while the list is unchanged.

Every read of a user's file goes through ``graphcore.files`` (bounded, regular files only).
"""
