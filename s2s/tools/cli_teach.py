"""``s2s show``, ``emit``, ``check``, ``explain`` and ``html``: the commands for reading,
saving, editing-and-checking and teaching emitted derivatives.

Each takes ``MODULE_OR_FILE:FUNC`` and the transform flags (``--grad`` by default,
``--argnums``, ``--value-and-grad``, ``--jvp``, ``--vmap IN_AXES``, ``--hessian``,
``--jacfwd``, ``--jacrev``); example inputs are drawn at the shapes ``--shapes`` gives
(see ``docs/getting-started.md`` for the convention without it).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import TransformError
from .teach.check import check
from .teach.common import (
    Target,
    TeachError,
    TransformChoice,
    add_transform_arguments,
    add_transform_flags,
    derive,
    load_target,
    write_code,
)
from .teach.emit import read_meta, standalone_module
from .teach.explain import explain
from .teach.html import html_page


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


def _derivation(args: argparse.Namespace, target: Target | None = None):
    target = target or load_target(args.target)
    choice = TransformChoice.from_args(args)
    return derive(target, choice, args.shapes, args.domain, args.seed, args.batch,
                  args.example)


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):  # (through symlinks, dangling too)
        return True
    try:
        return os.path.samefile(a, b)  # (hard links, case-insensitive file systems)
    except OSError:
        return False


def _output_path(output: str, target: Target, force: bool) -> Path:
    """Where ``-o`` may write: never the function's source file (by its real path,
    so not through a symlink or hard link either), and an existing file only with
    ``--force``."""
    path = Path(output)
    sources = {target.file, getattr(target.module, "__file__", None)}
    for source in sorted(s for s in sources if s):
        if _same_file(path, Path(source)):
            raise TeachError(
                f"-o {output} is the source file of {target.spec} ({source}): refusing to "
                f"overwrite it; write to another file, e.g. -o "
                f"{path.with_name(path.stem + '_' + target.name + '_derivative' + path.suffix)}")
    if os.path.lexists(path):
        if path.is_dir():
            raise TeachError(f"-o {output} is a directory: give the path of a file")
        if not force:
            raise TeachError(f"-o {output} exists: refusing to overwrite it; pass --force "
                             "to replace it, or choose another path")
    return path


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` without following a symlink there (``--force``
    replaces the link itself, not the file it points to)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        if path.is_symlink():
            path.unlink()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | nofollow
        fd = os.open(path, flags, 0o666)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise TeachError(f"cannot write {path}: {exc.strerror or exc}") from None


def _show(args: argparse.Namespace) -> int:
    d = _derivation(args)
    write_code(d.text, sys.stdout, args.color)
    return 0


def _emit(args: argparse.Namespace) -> int:
    target = load_target(args.target)
    path = None if args.output == "-" else _output_path(args.output, target, args.force)
    d = _derivation(args, target)
    text = standalone_module(d, output=args.output)
    if path is None:
        sys.stdout.write(text)
    else:
        _output_path(args.output, target, args.force)  # (still: nothing appeared since)
        _write(path, text)
        entry = (read_meta(text) or {}).get("entry", d.entry)
        print(f"wrote {args.output}: {d.choice.describe(d.target.name)}, entry {entry}",
              file=sys.stderr)
    return 0


def _check(args: argparse.Namespace) -> int:
    return check(args)


def _explain(args: argparse.Namespace) -> int:
    sys.stdout.write(explain(load_target(args.target), TransformChoice.from_args(args),
                             args.shapes, args.domain, args.seed, args.batch,
                             color=args.color, example=args.example))
    return 0


def _html(args: argparse.Namespace) -> int:
    target = load_target(args.target)
    path = _output_path(args.output, target, args.force)
    page = html_page(_derivation(args, target))
    _output_path(args.output, target, args.force)
    _write(path, page)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true",
                   help="replace the -o file if it exists (a symlink there is replaced, "
                        "not followed; the function's source file is always refused)")


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
    p.add_argument("-o", "--output", required=True,
                   help="PATH.py (- for stdout); never the function's source file")
    _force(p)
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
    p.add_argument("-o", "--output", required=True,
                   help="PAGE.html; never the function's source file")
    _force(p)
    p.set_defaults(handler=_guard(_html))


__all__ = ["register", "add_transform_flags"]
