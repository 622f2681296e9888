"""The teaching views of ``s2s teach``: derivations explained, checked against finite
differences, emitted as standalone modules and rendered as HTML."""
