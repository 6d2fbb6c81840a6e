"""Static mode for specs: traced plans replayed, guarded by the spec's live predicates.

- ``runner``: ``StaticSpecRunner``: a cache of traced paths (one plan per path taken), the
  live predicates as ``guard`` steps (its hook passed to the passes it traces,
  ``on_predicate``); a miss runs define-by-run and traces the new path;
- ``groups``: batched groups in static mode: each group replays its own cached plan (guards
  split groups); a full cache or a split key runs batched define-by-run; a call repeating
  the last one's whole group replays its plan at once;
- ``gradients``: the examples' gradients summed (one at a time and by groups).

Below it, ``graphcore.static`` knows nothing of specs.
"""
