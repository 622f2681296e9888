"""Optimizations of emitted code for one call signature (the specializer), applied
only where the facts it assumes follow from the signature or are guarded."""
