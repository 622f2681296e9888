"""``s2s show``, ``emit``, ``check``, ``explain`` and ``html``: the commands for reading,
saving, editing-and-checking and teaching emitted derivatives.

Each takes ``MODULE_OR_FILE:FUNC`` and the transform flags (``--grad`` by default,
``--argnums``, ``--value-and-grad``, ``--jvp``, ``--vmap IN_AXES``, ``--hessian``,
``--jacfwd``, ``--jacrev``); example inputs are drawn at the shapes ``--shapes`` gives
(see ``docs/getting-started.md`` for the convention without it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import TransformError
from .teach_common import (
    TeachError,
    TransformChoice,
    add_transform_arguments,
    add_transform_flags,
    derive,
    load_target,
    write_code,
)


def _guard(handler):
    """Report user errors (bad target, refused transform) as one message, exit 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except (TeachError, TransformError) as exc:
            print(f"s2s {args.command}: error: {exc}", file=sys.stderr)
            return 2

    run.__name__ = handler.__name__
    return run


def _derivation(args: argparse.Namespace):
    target = load_target(args.target)
    choice = TransformChoice.from_args(args)
    return derive(target, choice, args.shapes, args.domain, args.seed, args.batch)


def _show(args: argparse.Namespace) -> int:
    d = _derivation(args)
    write_code(d.text, sys.stdout, args.color)
    return 0


def _emit(args: argparse.Namespace) -> int:
    from .teach_emit import standalone_module

    d = _derivation(args)
    text = standalone_module(d, output=args.output)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
        from .teach_emit import read_meta

        entry = (read_meta(text) or {}).get("entry", d.entry)
        print(f"wrote {args.output}: {d.choice.describe(d.target.name)}, entry {entry}",
              file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> int:
    from .teach_check import check

    return check(args)


def _explain(args: argparse.Namespace) -> int:
    from .teach_explain import explain

    sys.stdout.write(explain(load_target(args.target), TransformChoice.from_args(args),
                             args.shapes, args.domain, args.seed, args.batch,
                             color=args.color))
    return 0


def _html(args: argparse.Namespace) -> int:
    from .teach_html import html_page

    d = _derivation(args)
    Path(args.output).write_text(html_page(d))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _color(p: argparse.ArgumentParser) -> None:
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the code (auto: only on a terminal)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print the emitted source of a transform")
    add_transform_arguments(p)
    _color(p)
    p.set_defaults(handler=_guard(_show))

    p = sub.add_parser("emit", help="write a standalone module (imports only numpy)")
    add_transform_arguments(p)
    p.add_argument("-o", "--output", required=True, help="PATH.py (- for stdout)")
    p.set_defaults(handler=_guard(_emit))

    p = sub.add_parser(
        "check", help="check an edited derivative module against the function numerically")
    p.add_argument("module", metavar="PATH.py", help="the edited derivative module")
    add_transform_arguments(p)
    p.add_argument("--entry", default=None,
                   help="the function in PATH.py to check (default: the header's, else "
                        "the one s2s would name)")
    p.add_argument("--trials", type=int, default=3, help="random draws of inputs (3)")
    p.add_argument("--rtol", type=float, default=1e-6,
                   help="tolerance against the fresh s2s derivative, relative to the "
                        "largest value (1e-6)")
    p.add_argument("--fd-rtol", type=float, default=1e-4,
                   help="tolerance against finite differences (1e-4)")
    p.set_defaults(handler=_guard(_check))

    p = sub.add_parser("explain", help="the pipeline's stages, labelled, for teaching")
    add_transform_arguments(p)
    _color(p)
    p.set_defaults(handler=_guard(_explain))

    p = sub.add_parser("html", help="a self-contained page: function and derivative "
                                    "side by side, linked, with the computation graph")
    add_transform_arguments(p)
    p.add_argument("-o", "--output", required=True, help="PAGE.html")
    p.set_defaults(handler=_guard(_html))


__all__ = ["register", "add_transform_flags"]
