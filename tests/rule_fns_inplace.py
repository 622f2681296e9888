"""Functions for the rule-table rows of rule_rows_inplace.py: ``np.add.at`` into an
array the function made, and ``list(x)`` of an array's rows."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])
IDX = np.array([0, 2, 2, 1])


def f_add_at(x):
    buf = np.zeros((3, 3))
    np.add.at(buf, IDX, np.sin(x))
    np.add.at(buf, np.s_[:, 1], x[0] ** 2)
    return np.sum(buf * W)


def f_list_rows(x):
    rows = list(x)
    rows.append(np.sin(x[0]))
    return np.sum(np.stack(rows) * W)
