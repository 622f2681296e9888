"""What runs between the caller and JAX's jitted function in a call of
``s2s.jit(..., backend="jax")`` (``Jitted.__call__``).

Where nothing has to happen around the compiled code (no devices to place across, no
vmapped example to add outside the trace, no aux objects to rebuild), a call is one
Python frame of s2s around ``jax.jit``'s function behind a C-level call counter
(``functools.lru_cache(maxsize=0)``, which counts and calls, caching nothing;
``cache_info().misses`` reads it).  That frame is the ``__call__`` of a class of the
jit's own (:func:`own_call`), found on the type without ``Jitted.__call__``'s property.

The one thing ``jax.jit`` would get wrong is a dict's key order: it flattens a dict with
its keys sorted and rebuilds it sorted, in the trace and in the results
(``backends/jax_order.py``).  So a jit starts on the *bare* path
(:func:`direct_calls`): the arguments go to a jitted function as the caller gave them,
with no Python look at them, and the trace of that function raises
``jax_order.Unkeyed`` if a plain dict is among its dynamic arguments or results.  A
trace that raises is cached by no one, so no signature holding a dict ever runs bare;
the call that met it is made again on the *keyed* path (:func:`keyed_call`: dicts
passed as ``jax_order.Keyed`` nodes in their key order, the results' made plain
dicts again), which from then on takes every call of the jit.
"""

from __future__ import annotations

import functools
import inspect
import operator
from typing import TYPE_CHECKING, Any, Callable

from ..errors import TransformError
from . import jit_jax_free, records, trees
from .jit_jax_free import FreeInputs, NeedFree, same_bytes
from .transformed import Transformed
from .vectorize import Vmapped

if TYPE_CHECKING:
    from .jit import Jitted

__all__ = ["jitted_functions", "direct_calls", "keyed_call", "vmapped_calls", "vmapped_call",
           "own_call", "free_call", "python_call", "take_free"]


def _no_static_objects(self: Jitted, args: tuple, kwargs: dict) -> None:
    """A static argument that is an object of a plain class of yours: jax.jit keys its
    trace by the object (its identity), so an attribute changed between calls would
    not be seen; s2s reads such an object's attributes at each call where it is not
    static (on the NumPy backend), and refuses it here."""
    static = [a for i, a in enumerate(args) if self._is_static(i, len(args))] + [
        v for k, v in kwargs.items() if k in self.static_argnames]
    found = next((a for a in static if trees.plain_object(a)), None)
    if found is not None:
        raise TransformError(
            f"a static argument of s2s.jit(..., backend=\"jax\") is a "
            f"`{type(found).__name__}` object: JAX keys its compiled code by the object, "
            "and would not see its attributes changed between calls",
            hint="pass its values as arguments, or jit on the NumPy backend, which reads "
            "the object's attributes at each call")


def jitted_functions(self: Jitted, sig: Any, jit_jax: Any,
                     constrained: Callable) -> tuple[Callable, Callable]:
    """The jit's two ``jax.jit`` functions of one trace: the keyed path's (its dicts
    arrive as ``Keyed`` nodes and leave as them) and the bare path's (whose trace
    raises ``Unkeyed`` at a plain dict among the dynamic arguments or results)."""
    import jax

    from ..backends import jax_control, jax_numpy, jax_order

    self._flat_keyed = True  # (every trace's result so far one Keyed of leaves)

    def trace(args: tuple, kwargs: dict, bare: bool, free: tuple = (),
              token: Any = ((), ())) -> Any:
        if jax_order.unkeyed_dict(args, kwargs, self.static_argnums, self.static_argnames):
            # (bare: a dict; keyed: a dict inside a dict given as a Keyed of its values
            # unlooked at, by keyed_call's shallow form, which then stops: its caller's
            # order would be lost)
            raise jax_order.Unkeyed
        _no_static_objects(self, args, kwargs)
        args, kwargs = jax_order.plain_args(  # (dicts in the caller's key order)
            args, kwargs, self.static_argnums, self.static_argnames)
        texts: list[str] = []
        limit = jax_control.unroll_limit.set(
            jax_control.UNROLL_DEFAULT if self.unroll is None else self.unroll)
        memo = jax_numpy.transposes.set({})  # (this trace's transposed matrices)
        if type(token) is int:  # (the free path's static key, by its number)
            token = self._free.keys[token]
        reads = jit_jax_free.Reads(dict(zip(token[0], free)), frozenset(
            k for k, _ in token[1]))  # (the free names given: api/jit_jax_free.py)
        reading = jit_jax_free.READS.set(reads)
        try:
            out = jit_jax.call(self.backend, self.fun, args, kwargs,
                               self._examples, self._example_key(args, kwargs), texts,
                               self._unchecked)
            jit_jax.jit_jax_reads.read_ir_names(getattr(self.fun, "ir", None))  # (the
            # transform's free names: a callee it inlined is not read by its code)
        finally:
            jit_jax_free.READS.reset(reading)
            jax_numpy.transposes.reset(memo)
            jax_control.unroll_limit.reset(limit)
        missing = reads.missing()
        if missing is not None:  # (a free array or number the trace would bake in)
            raise missing
        self._source = texts[-1] if texts else self._plain_source()
        if bare:
            if jax_order.unordered_dict(out):
                raise jax_order.Unkeyed
        else:  # (the dicts it returns keep their order too)
            out = jax_order.keyed_results(out)
            self._dict_out = self._dict_out or jax_order.holds(out, jax_order.Keyed)
            # (whether every result so far is one Keyed of leaves: a call then makes it
            # a dict without looking at its values; False once any is not, for good)
            self._flat_keyed = self._flat_keyed and type(out) is jax_order.Keyed and \
                jax.tree_util.all_leaves(out[1])
        if self.shard_batch:
            out = constrained(self, out)
        self._compilations += 1  # a trace that got this far is compiled
        return out

    def traced(*args: Any, **kwargs: Any) -> Any:
        return trace(args, kwargs, False)

    def traced_bare(*args: Any, **kwargs: Any) -> Any:
        return trace(args, kwargs, True)

    def traced_free(free: tuple, token: int, *args: Any, **kwargs: Any) -> Any:
        return trace(args, kwargs, False, free, token)

    for fn in (traced, traced_bare, traced_free):
        fn.__name__ = self.__name__
        if sig is not None and fn is not traced_free:
            fn.__signature__ = sig  # type: ignore[attr-defined]
    if sig is not None:  # (the free arrays, then the static key of the free names)
        first = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
                 for n in ("__s2s_free", "__s2s_free_key")]
        traced_free.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*first, *sig.parameters.values()])
    statics = dict(static_argnums=self.static_argnums or None,
                   static_argnames=self.static_argnames or None)

    def guarded(token: int, bare: bool = True) -> Any:  # (a function of one static
        def traced_guarded(*args: Any, **kwargs: Any) -> Any:  # key: guarded_call)
            return trace(args, kwargs, bare, (), token)

        traced_guarded.__name__ = self.__name__
        if sig is not None:
            traced_guarded.__signature__ = sig  # type: ignore[attr-defined]
        return jax.jit(traced_guarded, **statics)

    self._jitted_guarded = guarded
    self._jitted_free = jax.jit(traced_free, static_argnums=(1, *(
        n + 2 if n >= 0 else n for n in self.static_argnums)),
        static_argnames=self.static_argnames or None)
    return jax.jit(traced, **statics), jax.jit(traced_bare, **statics)


def own_call(self: Jitted, fn: Callable) -> None:
    """``fn`` as the jit's ``__call__``: on a class of its own (a call finds it on the
    type, without ``Jitted.__call__``'s property and ``attrgetter``)."""
    base = next(c for c in type(self).__mro__ if "_own_call" not in c.__dict__)
    self._call = fn
    self.__class__ = type(base.__name__, (base,), {
        "__call__": staticmethod(fn), "__slots__": (), "_own_call": True,
        "__qualname__": base.__qualname__, "__module__": base.__module__})


def direct_calls(self: Jitted) -> None:
    """The bare path: a call runs the bare jitted function on the caller's
    arguments; a trace of it that meets a dict raises ``Unkeyed``, and the call goes
    the keyed way (:func:`keyed_call`), as every later one does."""
    bare = self._counted_bare = functools.lru_cache(maxsize=0)(self._jitted_bare)
    self._counted = functools.lru_cache(maxsize=0)(self._jitted)
    unkeyed = self._order.Unkeyed

    nested_str = self._order.nested_str
    need_free = NeedFree

    def _call_bare(*args: Any, **kwargs: Any) -> Any:
        try:
            return bare(*args, **kwargs)
        except unkeyed:
            pass
        except need_free as err:  # (free names to read: guarded, or the free path)
            self._calls -= 1
            _drop_entries(self._jitted_bare)
            take_free(self, err)
            call = guarded_call(self)
            own_call(self, call)
            return call(*args, **kwargs)
        except TypeError:  # (JAX's, at a string in a dict, tuple or list: keyed, static)
            if not any(map(nested_str, (*args, *kwargs.values()))):
                raise
        return _keyed_from_now_on(self)(*args, **kwargs)

    own_call(self, _call_bare)


def _keyed_from_now_on(self: Jitted) -> Callable:
    """The keyed path as the jit's call, after a bare call met a dict (that call was
    counted: it is counted again where it runs)."""
    self._calls -= 1
    _drop_entries(self._jitted_bare)
    call = keyed_call(self)
    own_call(self, call)
    return call


def keyed_call(self: Jitted, counted: Any = None, lanes: Lanes | None = None) -> Callable:
    """The keyed path: a call of arrays and numbers runs the jitted function (behind
    the C-level call counter); any other argument may hold a dict, whose order
    jax.jit would lose: its dicts go as ``jax_order.Keyed`` nodes. The results are as
    JAX gives them unless a trace of this jit has returned a dict (then its ``Keyed``
    nodes are made plain dicts). A dict of arrays and numbers (a parameter dict, its
    gradient) crosses in C calls made from this one frame, where ``keyed``/``plain``
    would add their own. ``lanes``: the guarded lanes (:class:`Lanes`) whose current
    one's counted function the frame runs, in place of ``counted``."""
    own = self._counted if counted is None else counted
    order, nums, names = self._order, self.static_argnums, self.static_argnames
    leaf, keyed, plain, Keyed = order.LEAF_TYPES, order.keyed, order.plain, order.Keyed
    flat, unkeyed = order.VALUE_LEAVES.issuperset, order.Unkeyed
    shallow = [not nums]  # (dicts made Keyed without a look at their values: below)
    nested_str = order.nested_str

    def keyed_kwargs_call(counted: Any, args: tuple, kwargs: dict) -> Any:
        given, given_kw = order.keyed_args(args, kwargs, nums, names)
        try:
            out = counted(*given, **given_kw)
        except NeedFree as err:  # (free names to read: guarded, or the free path)
            return _freed(self, err, counted, "keyed", lanes)(*args, **kwargs)
        return plain(out) if self._dict_out else out

    def _call_keyed(*args: Any, **kwargs: Any) -> Any:
        counted = own if lanes is None else lanes.current()
        if counted is None:  # (a guarded name holds another value now)
            return lanes.missed(*args, **kwargs)  # type: ignore[union-attr]
        if not kwargs:
            for a in args:
                if type(a) not in leaf:
                    break
            else:
                try:
                    out = counted(*args)
                except NeedFree as err:  # (free names to read: guarded, or the free path)
                    return _freed(self, err, counted, "keyed", lanes)(*args)
                if type(out) in leaf or not self._dict_out:
                    return out
                return plain(out)
            if not nums:
                given = []
                for a in args:
                    if type(a) in leaf:
                        given.append(a)
                    elif type(a) is dict and (shallow[0] or flat(map(type, a.values()))):
                        given.append(Keyed((tuple(a), tuple(a.values()))))
                    else:
                        given.append(keyed(a))
                try:
                    out = counted(*given)
                except NeedFree as err:  # (free names to read: guarded, or the free path)
                    return _freed(self, err, counted, "keyed", lanes)(*args)
                except (unkeyed, TypeError) as err:  # (a dict among a shallow Keyed's
                    if type(err) is not unkeyed and not (  # values; JAX's error at a
                            shallow[0] and any(map(nested_str, args))):  # string there)
                        raise
                    shallow[0] = False
                    self._calls -= 1  # (counted again where it runs now)
                    _drop_entries(counted.__wrapped__)
                    return _call_keyed(*args)
                if not self._dict_out:
                    return out
                if self._flat_keyed:  # (every trace's result one Keyed of leaves)
                    return dict(zip(*out))
                return plain(out)
        return keyed_kwargs_call(counted, args, kwargs)

    return _call_keyed


def vmapped_calls(self: Jitted) -> None:
    """JAX backend, a vmapped function whose outputs hold no built objects: bare, as
    :func:`direct_calls`, until a dict comes. A call of positional arguments runs the
    bare jitted function (behind its C-level call counter) from one frame, the jit's
    own ``__call__``; a new signature's first trace asks for an example (the rank
    probe runs on concrete arguments, outside the trace), which that frame adds before
    calling again. :meth:`Jitted._call_python` takes keywords and an IR that changed
    since (a free name rebound: its outputs may hold objects now)."""
    bare = self._counted_bare = functools.lru_cache(maxsize=0)(self._jitted_bare)
    self._counted = functools.lru_cache(maxsize=0)(self._jitted)
    own_call(self, vmapped_bare_call(self, bare))


def vmapped_bare_call(self: Jitted, bare: Any = None,
                      lanes: Lanes | None = None) -> Callable:
    """:func:`vmapped_calls`' frame around ``bare`` (a counted jitted function), or
    around the current guarded lane's of ``lanes`` (:class:`Lanes`)."""
    fun, need, slow = self.fun, self._need_example, self._call_python
    unkeyed, nested_str = self._order.Unkeyed, self._order.nested_str

    def _call_vmapped_bare(*args: Any, **kwargs: Any) -> Any:
        counted = bare if lanes is None else lanes.current()
        if counted is None:  # (a guarded name holds another value now)
            return lanes.missed(*args, **kwargs)  # type: ignore[union-attr]
        if not kwargs and (fun.ir is self._plain_ir or _plain_now(self)):
            try:
                while True:  # (a variant per path of an `if`: api/jit_jax_paths.py)
                    try:
                        return counted(*args)  # (its results may hold a dict: Unkeyed)
                    except need as err:
                        self._add_example(args, kwargs, err.paths)
                        _drop_entries(counted.__wrapped__)
                        self._calls -= 1  # (the counter counts the call again)
                    except TypeError:  # (JAX's, at a string in a dict or tuple: keyed)
                        if not any(map(nested_str, args)):
                            raise
                        raise unkeyed from None
            except NeedFree as err:  # (free names to read: guarded, or the free path)
                return _freed(self, err, counted, "vmapped", lanes)(*args)
            except unkeyed:
                self._calls -= 1  # (counted where it runs now)
                _drop_entries(counted.__wrapped__)
                call = vmapped_call(self) if lanes is None else guarded_call(
                    self, "vmapped_keyed")
                own_call(self, call)
                return call(*args)
        return slow(*args, **kwargs)

    return _call_vmapped_bare


def _plain_now(self: Jitted) -> bool:
    """Whether a vmapped function's IR, made again since the jit was (a free name
    rebound: a helper function), still returns no objects to rebuild around the jitted
    function (then its frames take it from now on; else :meth:`Jitted._call_python`)."""
    fun = self.fun
    if fun.built_template() is None and records.returned_arguments(fun.ir) is None:
        self._plain_ir = fun.ir
        return True
    return False


def _freed(self: Jitted, err: NeedFree, counted: Any, kind: str,
           lanes: Lanes | None) -> Callable:
    """What a path's frame calls next where a trace of ``counted`` met free names: a
    guarded lane's, what :meth:`Lanes.freed` says; a path's own takes the names on and
    goes :func:`guarded_call`'s way for this ``kind`` of path from now on."""
    if lanes is not None:
        return lanes.freed(err, counted.__wrapped__)
    self._calls -= 1  # (counted again where it runs now)
    _drop_entries(counted.__wrapped__)
    take_free(self, err)
    call = guarded_call(self, kind)
    own_call(self, call)
    return call


def guarded_call(self: Jitted, kind: str = "bare") -> Callable:
    """A jit whose code reads free names that are all guarded, none passed (a helper
    function ``logistic`` the loss calls, guarded by identity; a number): a call reads
    them in C (one getter, or one ``itemgetter`` of a module's names), compares them by
    identity with what they held when the static key was made (as
    ``FreeInputs._fast_lane`` does), and runs a jitted function of that one static key
    (``jitted_functions``' ``guarded``: no static number, no free tuple to flatten; one
    per static key met), a *lane* (:class:`Lanes`).  ``kind``: the path the lane's
    function takes, the bare one (``"bare"``: this frame calls the function itself),
    or the frame of :func:`keyed_call` (``"keyed"``: a dict met, or given from the
    start), of :func:`vmapped_bare_call` (``"vmapped"``) or of :func:`vmapped_call`
    (``"vmapped_keyed"``), which compares the names itself (:meth:`Lanes.current`:
    one frame of s2s on the stack when JAX's dispatch runs, as on the unguarded
    paths).  A dict a bare lane meets takes the keyed kind from now on.  Anything else
    (a name rebound: the static key made again; a free array to pass) goes the free
    path's way (:func:`free_call`), from now on where it is not a rebinding."""
    lanes = Lanes(self, kind)
    if kind != "bare":
        lanes.frame = _LANE_CALLS[kind](self, None, lanes)
        lanes.frame.__name__ = f"_call_guarded_{kind}"  # (its name says it is a lane's)
        return lanes.frame
    unkeyed, nested_str = self._order.Unkeyed, self._order.nested_str
    current = lanes.current

    def _call_guarded(*args: Any, **kwargs: Any) -> Any:
        fn = current()
        if fn is None:  # (a guarded name holds another value now)
            return lanes.missed(*args, **kwargs)
        self._calls += 1  # (the other kinds' frames count their calls in C)
        try:
            return fn(*args, **kwargs)
        except NeedFree as err:  # (another free name met: read it too from now on)
            return lanes.freed(err, fn)(*args, **kwargs)
        except (unkeyed, TypeError) as err:  # (a dict, a string in a container: the
            self._calls -= 1  # keyed lanes from now on)
            if type(err) is not unkeyed and not any(
                    map(nested_str, (*args, *kwargs.values()))):
                raise
            _drop_entries(fn)
            call = guarded_call(self, "keyed")
            own_call(self, call)
            return call(*args, **kwargs)
        except BaseException:
            self._calls -= 1
            raise

    lanes.frame = _call_guarded
    return _call_guarded


class Lanes:
    """The guarded lanes of one jit and one kind of path (:func:`guarded_call`): the
    current lane ``(read, what it gave, the function the frame calls, its jitted
    function, the guarded arrays' bytes)``, one tuple replaced whole, so a thread sees
    one lane's or none."""

    __slots__ = ("jit", "kind", "lane", "general", "frame")

    def __init__(self, jit: Jitted, kind: str) -> None:
        self.jit, self.kind = jit, kind
        self.lane: list = [None]
        self.general = free_call(jit)  # (free arrays passed, a name unbound: this way)
        self.frame: Callable = self.general  # (the frame that calls current())

    def current(self) -> Any:
        """The current lane's function while its names hold what they held (None:
        not so, or none yet)."""
        now = self.lane[0]
        try:
            if now is not None and (now[0]() is now[1] if type(now[0]) is not tuple
                                    else all(map(operator.is_, now[0][0](), now[1]))) \
                    and (not now[4] or same_bytes(now[4])):  # (a mask's bytes)
                return now[2]
        except Exception:  # (a name unbound now: the general way says what it means)
            pass
        return None

    def missed(self, *args: Any, **kwargs: Any) -> Any:
        """A call whose names hold other values than the lane's: the lane of their
        static key (made where new), or the general way from now on."""
        if self._take() is None:
            own_call(self.jit, self.general)
            return self.general(*args, **kwargs)
        return self.frame(*args, **kwargs)

    def freed(self, err: NeedFree, jitted: Any) -> Callable:
        """What to call after a lane's trace met another free name (that call
        counted: not counted again): the frame again, which takes a lane of the names
        read from now on, or the general way where none is new (a value to pass)."""
        jit, free = self.jit, self.jit._free
        jit._calls -= 1
        known = len(free.names)
        take_free(jit, err)
        _drop_entries(jitted)
        self.lane[0] = None
        if len(free.names) == known:
            own_call(jit, self.general)
            return self.general
        return self.frame

    def _take(self) -> tuple | None:
        """Read the names the general way; where none is passed and each is held by
        identity, the lane of their static key (None: not so)."""
        jit, kind = self.jit, self.kind
        free = jit._free
        values, token = free.inputs()
        fast = free.fast
        if values or fast is None:
            self.lane[0] = None
            return None
        bare = kind == "bare"
        key = token if bare else (kind, token)
        jitted = free.lanes.get(key)
        if jitted is None:
            jitted = jit._jitted_guarded(token, kind in ("bare", "vmapped"))
            if not bare:  # (the frame calls it behind a C-level counter)
                counted = functools.lru_cache(maxsize=0)(jitted)
                free.counters.append(counted)  # (Jitted.cache_info reads them)
                free.calls[key] = counted
            free.lanes[key] = jitted
        made = jitted if bare else free.calls[key]
        getters = [free.names[k] for k, _ in free.keys[token][1]]
        if len(getters) == 1:  # (one name: its getter, compared by `is`)
            now = (getters[0], fast[2][0], made, jitted, fast[4])
        else:
            now = ((fast[1],), fast[2], made, jitted, fast[4])
        self.lane[0] = now
        return now


def free_call(self: Jitted) -> Callable:
    """A jit whose code reads free arrays or numbers: a call of arrays and numbers reads
    the names (``FreeInputs.inputs``) and runs the free path's jitted function from one
    frame; a call with keywords, a dict or a static argument, a vmapped function's new
    signature (the example it needs) and a result holding dicts take
    :meth:`Jitted._call_python`, which reads them too."""
    free, jitted, slow = self._free, self._jitted_free, self._call_python
    leaf, need = self._order.LEAF_TYPES, self._need_example
    nums = self.static_argnums
    same = operator.is_

    def _call_free(*args: Any, **kwargs: Any) -> Any:
        if kwargs or nums or self._dict_out:
            return slow(*args, **kwargs)
        for a in args:
            if type(a) not in leaf:
                return slow(*args)
        fast = free.fast  # (the names read in C while they hold what they held:
        try:  # jit_jax_free.FreeInputs._fast_lane)
            if fast is not None and (fast[1] is None or all(map(same, fast[1](), fast[2]))) \
                    and (not fast[4] or same_bytes(fast[4])):
                values, token = tuple(fast[0]()), fast[3]
            else:
                values, token = free.inputs()
        except Exception:  # (a name unbound now: the general way says what it means)
            values, token = free.inputs()
        self._calls += 1
        try:
            return jitted(values, token, *args)
        except need:
            self._calls -= 1
            return slow(*args)
        except NeedFree as err:  # (another free name met: read it too from now on)
            self._calls -= 1
            take_free(self, err)
            _drop_entries(jitted)
            return _call_free(*args)
        except (TransformError, TypeError, ValueError, IndexError):
            if not free.demote():  # (free arrays the trace needs concrete: constants,
                raise  # guarded by their bytes, from now on: jit_jax_free)
            self._calls -= 1
            _drop_entries(jitted)
            return _call_free(*args)

    return _call_free


_LANE_CALLS: dict[str, Callable] = {}  # (a lane's kind -> its frame's maker: below)


def _drop_entries(jitted: Any) -> None:
    """A trace that raised leaves JAX's C++ dispatch of that signature falling back
    to Python at every later call: drop the function's entries (its traces and
    compiled code stay cached)."""
    getattr(jitted, "_clear_cache", jitted.clear_cache)()


def vmapped_call(self: Jitted, counted: Any = None, lanes: Lanes | None = None) -> Callable:
    """A vmapped function's keyed path, after a bare call met a dict: a call runs its
    jitted function (behind the C-level call counter) from one frame that reads
    nothing through ``self`` but the calls and whether a result held a dict, its
    dicts as ``jax_order.Keyed`` nodes (a dict of arrays and numbers, a per-example
    gradient's parameters, made one in C calls, as :func:`keyed_call` does);
    :meth:`Jitted._call_python` takes keywords, static arguments beside a dict and an
    IR that builds objects now (a new signature's first call adds the example it
    needs from this frame, as :func:`vmapped_bare_call`'s does).
    ``counted``, ``lanes``: as :func:`keyed_call`'s."""
    own = self._counted if counted is None else counted
    order, nums = self._order, self.static_argnums
    fun, need, slow = self.fun, self._need_example, self._call_python
    leaf, keyed, plain, Keyed = order.LEAF_TYPES, order.keyed, order.plain, order.Keyed
    flat, unkeyed = order.VALUE_LEAVES.issuperset, order.Unkeyed
    shallow = [True]  # (as keyed_call's)
    nested_str = order.nested_str

    def _call_vmapped(*args: Any, **kwargs: Any) -> Any:
        counted = own if lanes is None else lanes.current()
        if counted is None:  # (a guarded name holds another value now)
            return lanes.missed(*args, **kwargs)  # type: ignore[union-attr]
        if not kwargs and (fun.ir is self._plain_ir or _plain_now(self)):
            given: Any = args
            for a in args:
                if type(a) not in leaf:
                    if nums:  # (_call_python keys all but the static ones)
                        return slow(*args)
                    given = []
                    for b in args:
                        if type(b) in leaf:
                            given.append(b)
                        elif type(b) is dict and (shallow[0] or flat(map(type, b.values()))):
                            given.append(Keyed((tuple(b), tuple(b.values()))))
                        else:
                            given.append(keyed(b))
                    break
            try:
                out = counted(*given)
            except need as err:  # (its example added: the call made again, counted again)
                self._calls -= 1
                self._add_example(args, kwargs, err.paths)
                _drop_entries(counted.__wrapped__)
                return _call_vmapped(*args)
            except NeedFree as err:  # (free names to read: guarded, or the free path)
                return _freed(self, err, counted, "vmapped_keyed", lanes)(*args)
            except (unkeyed, TypeError) as err:  # (as keyed_call's)
                if type(err) is not unkeyed and not (
                        shallow[0] and any(map(nested_str, args))):
                    raise
                shallow[0] = False
                self._calls -= 1
                _drop_entries(counted.__wrapped__)
            else:
                if not self._dict_out:
                    return out
                if self._flat_keyed:  # (every trace's result one Keyed of leaves)
                    return dict(zip(*out))
                return plain(out)
        return slow(*args, **kwargs)

    return _call_vmapped


def python_call(self: Jitted, args: tuple, kwargs: dict) -> Any:
    """``Jitted._call_python`` on the JAX backend: the dicts keyed, the free names read
    (api/jit_jax_free.py), a vmapped function's example added where a trace asks for
    one, the results' dicts and objects rebuilt."""
    jitted = self._jitted
    if self.shard_batch:
        args = self._place(args)
    keyed, keyed_kw = self._order.keyed_args(args, kwargs, self.static_argnums,
                                             self.static_argnames)
    while True:
        try:
            if self._free is not None:  # (free names read now: jit_jax_free)
                free, token = self._free.inputs()
                out = self._jitted_free(free, token, *keyed, **keyed_kw)
            else:
                out = jitted(*keyed, **keyed_kw)
            break
        except NeedFree as err:  # (a trace met free arrays or numbers)
            take_free(self, err)
            getattr(jitted, "_clear_cache", jitted.clear_cache)()
        except (TransformError, TypeError, ValueError, IndexError) as err:
            if isinstance(err, self._need_example) or self._free is None or \
                    not self._free.demote():  # (free arrays as constants now)
                raise
            _drop_entries(self._jitted_free)
        except self._need_example as err:
            self._add_example(args, kwargs, err.paths)
            # a trace that raised leaves JAX's C++ dispatch of this signature
            # falling back to Python at every later call (10-30x the time):
            # drop its entries (traces and compiled code stay cached)
            getattr(jitted, "_clear_cache", jitted.clear_cache)()
    if self._dict_out:
        out = self._order.plain(out)
    # objects the function built (a NamedTuple), rebuilt outside JAX's trace
    if type(self.fun) is Vmapped and not kwargs:  # (a pytree argument returned)
        out = self.fun.argument_kinds(out, args)
    return self.fun._outputs(out) if isinstance(self.fun, Transformed) else out


def take_free(self: Jitted, err: NeedFree) -> None:
    """Read the free names a trace met at every call from now on."""
    if self._free is None:
        self._free = FreeInputs()
    self._free.add(err)


_LANE_CALLS.update(keyed=keyed_call, vmapped=vmapped_bare_call, vmapped_keyed=vmapped_call)
