"""The test corpus: which function, which arguments, which transform options.

Each case is differentiated by s2s and checked against JAX on the same source (live
when JAX is installed, else the values recorded in fixtures/corpus_grads.npz by
tools/record_fixtures.py) and against central finite differences.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import corpus_fns as F


@dataclass
class Case:
    name: str
    fn: Callable
    make_args: Callable[[np.random.Generator], tuple]
    argnums: Any = 0
    has_aux: bool = False
    kwargs: dict = field(default_factory=dict)
    jax: bool = True  # False where JAX cannot trace the source (math on scalars)

    def args(self) -> tuple:
        seed = sum(ord(c) * (i + 1) for i, c in enumerate(self.name)) % (2**31)
        return self.make_args(np.random.default_rng(seed))


def n(*shape):
    return lambda r: r.normal(size=shape)


def args(*makers):
    return lambda r: tuple(m(r) for m in makers)


def positive(*shape):
    return lambda r: r.uniform(0.5, 2.0, size=shape)


CASES = [
    Case("loss", F.loss, args(n(3), n(5, 3), n(5))),
    Case("loss_all_args", F.loss, args(n(3), n(5, 3), n(5)), argnums=(0, 1, 2)),
    Case("elementwise_chain", F.elementwise_chain, args(positive(4))),
    Case("every_unary", F.every_unary, args(n(6))),
    Case("arithmetic_ops", F.arithmetic_ops, args(n(4), n(4)), argnums=(0, 1)),
    Case("augmented", F.augmented, args(n(5))),
    Case("rebinding", F.rebinding, args(n(4))),
    Case("unpacking", F.unpacking, args(n(3), n(3)), argnums=(0, 1)),
    Case("broadcasting", F.broadcasting, args(n(3), n(3, 3)), argnums=(0, 1)),
    Case("broadcast_stretch", F.broadcast_stretch, args(n(1, 3), n(4, 3)), argnums=(0, 1)),
    Case("matvec", F.matvec, args(n(4, 3), n(3)), argnums=(0, 1)),
    Case("matmat", F.matmat, args(n(2, 3), n(3, 4)), argnums=(0, 1)),
    Case("vecmat", F.vecmat, args(n(3), n(3, 2)), argnums=(0, 1)),
    Case("vecvec", F.vecvec, args(n(4), n(4)), argnums=(0, 1)),
    Case("dot_matrix", F.dot_matrix, args(n(2, 3), n(3, 2)), argnums=(0, 1)),
    Case("batched_matmul", F.batched_matmul, args(n(2, 3, 4), n(4, 2)), argnums=(0, 1)),
    Case("batched_matmul_vec", F.batched_matmul, args(n(2, 3, 4), n(4)), argnums=(0, 1)),
    Case("reductions", F.reductions, args(n(3, 4))),
    Case("reductions_negative_axis", F.reductions_negative_axis, args(n(2, 3, 4))),
    Case("prod_with_zero", F.prod_with_zero,
         args(lambda r: np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]]))),
    Case("max_ties", F.max_ties, args(lambda r: np.array([0.5, 2.0, 2.0, -1.0]))),
    Case("where_select", F.where_select, args(n(6))),
    Case("methods_and_attributes", F.methods_and_attributes, args(n(3, 4))),
    Case("transposes", F.transposes, args(n(2, 3, 4))),
    Case("subscripts", F.subscripts, args(n(4, 3))),
    Case("integer_array_index", F.integer_array_index, args(n(3))),
    Case("constants", F.constants, args(n(3))),
    Case("import_spellings", F.import_spellings, args(n(3))),
    Case("if_else_true", F.if_else, args(positive(3))),
    Case("if_else_false", F.if_else, args(lambda r: -r.uniform(0.5, 2.0, size=3))),
    Case("if_elif_first", F.if_elif, args(lambda r: r.uniform(1.0, 2.0, size=3))),
    Case("if_elif_second", F.if_elif, args(lambda r: r.uniform(-0.2, 0.2, size=3))),
    Case("if_elif_third", F.if_elif, args(lambda r: -r.uniform(1.0, 2.0, size=3))),
    Case("if_without_else", F.if_without_else, args(n(4))),
    Case("early_return_taken", F.early_return, args(lambda r: r.uniform(2.0, 3.0, size=3))),
    Case("early_return_skipped", F.early_return, args(lambda r: r.uniform(-0.5, 0.5, size=3))),
    Case("conditional_expression", F.conditional_expression, args(n(4))),
    Case("comparison_chain", F.comparison_chain, args(lambda r: r.uniform(0.1, 0.9, size=3))),
    Case("math_scalars", F.math_scalars, args(lambda r: 0.7), jax=False),
    Case("calls_helper", F.calls_helper, args(n(3), n(3)), argnums=(0, 1)),
    Case("two_layers", F.two_layers,
         args(lambda r: {"w1": r.normal(size=(3, 4)), "w2": r.normal(size=(4, 2))}, n(5, 3))),
    Case("dict_params", F.dict_params,
         args(lambda r: {"w": r.normal(size=(3, 2)), "b": r.normal(size=2)}, n(4, 3)),
         argnums=(0, 1)),
    Case("nested_tree", F.nested_tree,
         args(lambda r: {"pair": (r.normal(size=2), r.normal(size=2)),
                         "list": [r.normal(size=3), 0.5]})),
    Case("tuple_arg", F.tuple_arg, args(lambda r: (r.normal(size=3), r.normal(size=3)))),
    Case("with_aux", F.with_aux, args(n(3)), has_aux=True),
    Case("keyword_args", F.keyword_args, args(n(3), n(3)), kwargs={"scale": 0.5}),
    Case("negative_argnums", F.keyword_args, args(n(3), n(3)), argnums=-1),
    Case("unused_arg", F.unused_arg, args(n(3), n(3)), argnums=(0, 1)),
    Case("float_conversion", F.float_conversion, args(n(3)), jax=False),
    Case("array_of_values", F.array_of_values, args(n(3), n(3)), argnums=(0, 1)),
    Case("softmax_xent", F.softmax_xent, args(n(5), lambda r: 2)),
    Case("rosenbrock", F.rosenbrock, args(n(6))),
    Case("powers", F.powers, args(positive(3), positive(3)), argnums=(0, 1)),
    Case("loop_carried", F.loop_carried, args(lambda r: r.uniform(0.1, 0.5, size=3), lambda r: 5)),
    Case("loop_zero_trips", F.loop_carried, args(n(3), lambda r: 0)),
    Case("loop_over_rows", F.loop_over_rows, args(n(4, 3), n(3)), argnums=(0, 1)),
    Case("loop_enumerate_if", F.loop_enumerate_if, args(n(5, 3), n(3)), argnums=(0, 1)),
    Case("loop_zip", F.loop_zip, args(n(4, 2), n(4, 2)), argnums=(0, 1)),
    Case("loop_nested", F.loop_nested, args(n(3), lambda r: 3)),
    Case("loop_indexing", F.loop_indexing, args(n(7))),
    Case("loop_with_helper", F.loop_with_helper, args(n(3), lambda r: 3)),
    Case("loop_unused_index", F.loop_unused_index, args(n(3))),
    Case("while_shrinks", F.while_shrinks, args(lambda r: r.uniform(0.5, 1.5, size=3))),
    Case("while_never_runs", F.while_shrinks, args(lambda r: r.uniform(0.0, 0.2, size=3))),
    Case("while_in_for", F.while_in_for, args(lambda r: r.uniform(0.2, 0.9, size=3),
                                             lambda r: 4)),
    Case("loop_dict_params", F.loop_dict_params,
         args(lambda r: {"w": r.normal(size=(3, 3)) * 0.5, "b": r.normal(size=3)}, n(3),
              lambda r: 3)),
    Case("loop_continue", F.loop_continue, args(n(8))),
    Case("loop_break_taken", F.loop_break, args(lambda r: r.uniform(0.5, 1.0, size=3),
                                                 lambda r: 6)),
    Case("loop_break_not_taken", F.loop_break, args(lambda r: r.uniform(-1.0, -0.5, size=3),
                                                    lambda r: 4)),
    Case("break_after_rebinding", F.break_after_rebinding,
         args(lambda r: r.uniform(0.35, 0.45, size=3))),  # breaks in the second iteration
    Case("break_after_rebinding_late", F.break_after_rebinding,
         args(lambda r: r.uniform(0.1, 0.2, size=3))),  # never breaks
    Case("while_break", F.while_break, args(lambda r: r.uniform(0.5, 1.0, size=3))),
    Case("fill_in_loop", F.fill_in_loop, args(lambda r: r.uniform(0.3, 1.2, size=5)), jax=False),
    Case("slice_updates", F.slice_updates, args(n(4, 3)), jax=False),
    Case("recurrence", F.recurrence, args(n(3), lambda r: 4), jax=False),
    Case("list_append_loop", F.list_append_loop, args(n(3), lambda r: 4)),
    Case("list_literal_append", F.list_literal_append, args(n(3))),
    Case("recursion", F.recursive_sum, args(n(3), lambda r: 3)),
    Case("recursion_base_case", F.recursive_sum, args(n(3), lambda r: 0)),
    Case("return_in_loop_taken", F.first_large, args(lambda r: r.uniform(0.5, 1.0, size=3),
                                                     lambda r: 6)),
    Case("return_in_loop_not_taken", F.first_large,
         args(lambda r: r.uniform(-1.0, -0.5, size=3), lambda r: 3)),
    Case("closure", F.closure_fn, args(n(4))),
    Case("lambda", F.lambda_fn, args(n(4))),
    Case("python_float_input", F.lambda_fn, args(lambda r: 1.3)),
    Case("float32", F.loss, args(lambda r: r.normal(size=3).astype(np.float32),
                                 lambda r: r.normal(size=(5, 3)).astype(np.float32),
                                 lambda r: r.normal(size=5).astype(np.float32))),
]

BY_NAME = {c.name: c for c in CASES}
