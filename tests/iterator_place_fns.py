"""Iterators where s2s does not walk them (tests/test_errors.py)."""



def nested_zip(x):
    s = 0.0
    for i, (a, (b, c)) in enumerate(zip(x, zip(x, x))):
        s = s + a * b * c
    return s


def sorted_zip(x):
    s = 0.0
    for k, v in sorted(zip((2, 0, 1), (x[0], x[1], x[2]))):
        s = s + k * v
    return s
