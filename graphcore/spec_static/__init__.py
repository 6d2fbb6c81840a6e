"""Static mode for specs: guarded plans per path, per batched group."""
