"""Iterators where s2s does not walk them (tests/test_errors.py)."""


def kept_zip(x):  # (walked twice: Python's second walk gets no items)
    pairs = zip(x, x)
    s = 0.0
    for a, b in pairs:
        s = s + a * b
    for a, b in pairs:
        s = s + a
    return s


def len_of_zip(x):
    pairs = zip(x, x)
    return len(pairs) * x[0]
