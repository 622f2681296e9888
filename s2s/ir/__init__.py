"""The IR every transform reads: statements over atoms (``nodes``) and the kinds of
values (``kinds``: leaves, tuples and lists of arrays) a call binds to its parameters."""
