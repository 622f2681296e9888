"""Tools built on the transformations: the command line, the teaching views, the
transform ledger, selfcheck and the conformance suite.  Only ``s2s`` itself (and its
``__main__``) imports from here."""
