"""The transforms, IR in and emit items out: reverse mode (``reverse``, with
``checkpoint``'s segments), forward mode (``forward``), batching (``vmap``), and the
rule inliner they share (``inline``)."""
