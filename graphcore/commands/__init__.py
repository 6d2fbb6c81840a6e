"""The library function behind each ``graphtool`` command; ``cli/`` parses, calls one, renders.

- ``run``: what ``graphtool run`` reports (one run, summarized, as plain data);
- ``check`` (+ ``kinks``): gradients against finite differences for every parameter; where
  the loss has no derivative, the op and step that bend it, and a check at a nearby point;
- ``bench`` (+ ``bench_train``): forward/backward times per mode and batch size; whole
  training steps per mode and batching, predicting ``train``'s seconds per epoch;
- ``viz``: drawings of a run (clusters, ``--diff``); ``report``: the page of one spec;
- ``train``: a spec trained by a ``Trainer`` (settings, data, checkpoints, logs);
  ``sweep``: a spec at every point of a grid, as Dask tasks;
- ``summary``: each step's output shapes and parameter count, the totals, and what static
  mode's traced plan holds (Keras' ``model.summary()``);
- ``ops``: the registry as data; ``support``: which command supports which family of spec
  (``docs/support.md``, the product matrix test); ``schema``: the version of the JSON
  documents the commands write.

``graphtool export``'s function is ``graphcore.onnx.export_spec`` (the export layer).
"""
