"""Emitted code: the items transforms build (lines, comments, blocks), rendered,
formatted by black, checked against the output invariants and compiled."""
