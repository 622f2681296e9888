"""The frontend: a user's function, as source, lowered to s2s's IR.

``source`` reads and checks the function's text (libcst, positions for every node);
``normalize`` resolves its names by identity and lowers it to the A-normal, SSA IR of
:mod:`s2s.ir`.  Transforms ask it to lower a custom rule's or a callee's function too.
"""
