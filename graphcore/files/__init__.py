"""Reading and writing a user's files safely.

- ``arrays``: the one bounded ``.npy``/``.npz`` reader (data, ``file:``/``--input``,
  ``--params``, checkpoints): headers checked against the element limit and the bytes the
  file or zip member holds before anything is allocated, data read in chunks never past its
  header, a name held twice refused, nothing unpickled;
- ``regular``: ``open_regular``: a file opened only when it is a regular file (a folder, FIFO
  or device refused from the opened descriptor, a FIFO never waited on);
- ``atomic``: ``write_atomic``: a temporary file beside the target, then one rename.
"""
