"""Per-example runs batched: groups, batch rules, split branches, padded buckets."""
