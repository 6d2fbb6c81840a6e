"""``graphtool train``, ``evaluate`` and ``predict``: a spec trained by a ``Trainer``.

- ``settings``: the ``train:`` section with the caller's overrides, the optimizer and its
  gradient hooks (weight decay, clipping); the learning-rate schedule is
  ``graphcore.training.learning_rate``'s, an extension of the session's trainer;
- ``data``: the spec's data split into batched rows, shared inputs and the held-out test and
  validation parts; ``evaluation``/``evaluate_arrays``/``predict_arrays`` in evaluation mode;
  ``metrics``: accuracy, mse, mae, precision, recall, f1, auc, r2 and the confusion matrix,
  as scikit-learn defines them, over every row of an evaluation;
- ``predictions``: what ``predict`` writes: the spec it runs (no loss, no labels), the class
  and probabilities of a classification loss, named by class (``class_names``), kept columns;
- ``session``: ``TrainingSession``, the ``Trainer`` a spec configures (checkpoints,
  ``best.npz``, curves, resume; interruptions wait until a file is whole; the test rows and
  the confusion picture evaluated once at the end);
- ``run_folders``: a new ``runs/N/`` per run (numbered race-free), ``runs/latest``, the run
  ``evaluate``/``predict``/``report``/``--resume`` read;
- ``checkpoint``, ``run_identity``, ``train_log``, ``run_lock``: the run's files, read back as
  untrusted (whose run it is, the command's options, ``train.csv`` appended and cut back to
  the checkpoint on resume, one writer per run folder);
- ``batching_choice``: the batching a run uses when none is named, measured on its first steps;
- ``steps``: a spec without ``data:`` trained on its own inputs for ``--steps`` iterations,
  through the same ``TrainingSession``.
"""
