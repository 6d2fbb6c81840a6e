"""Bounded .npy/.npz reading, regular files only, atomic writes."""
