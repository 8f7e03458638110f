"""A class's redraw draws a lesson page's body (and the sidebar's controls) once per state, not once per student.

When the teacher moves, every following student's session runs the whole page: 60 runs of the same body, one
after the other (issue 26). Here the first follower's run of a part of the page (its body; the sidebar's controls)
is recorded as it happens — every message it sends, every widget it registers, every media file it adds, every
session-state key it reads or writes — and a later follower whose session holds the same value under every key the
part read, whose page starts at the same place, gets those messages, widgets, files and writes without running it.
What is a student's own (the class vote's ballot, ``own``) is never recorded: it is run live, in place, in every
follower's run; so are the frame's poll and banner, outside the parts.

Only a following member's full run of a lesson page shares (``SHARED_PAGES``); who the member is may only reach a
part through their class's live state (``view``), which is part of the match. A recording is refused (kept by no
one) when the part sends anything but deltas, sends from another thread, defines a fragment, passes a widget a
callback argument that is not plain data, goes through the whole session state, or stops; under AppTest nothing is
shared. Holds nothing that matters: recordings live in a process cache (a cleared cache costs one more run), and a
follower that matches none runs the part as before.

Streamlit 1.67 has no API for this. While a run records (a context variable says which), ``install``'s patches of
``SafeSessionState`` (reads, writes, widget registration) and ``MediaFileManager.add``/``add_deferred`` note what
the body did, and the run's ``ctx.enqueue`` is wrapped; a replay goes through ``ctx.enqueue`` (a message the browser
has cached is still sent as a reference) and ``SessionState.register_widget``, the call Streamlit's own replay of
cached elements uses. tests/test_shared_body.py drives a real server.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit import config
from streamlit.delta_generator_singletons import context_dg_stack
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime import Runtime
from streamlit.runtime.forward_msg_cache import populate_hash_if_needed
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext, get_script_run_ctx
from streamlit.runtime.state.safe_session_state import SafeSessionState

# The lesson pages a live lesson teaches and votes on: their bodies are a function of the session's settings.
SHARED_PAGES = frozenset({"overview", "prereq", "split", "attend", "concat", "why", "myths", "cost", "cross"})
VARIANTS = 6    # recordings kept per page, part and class (a move's new live state makes the older ones stale)
PAGES_KEPT = 48  # (page, part, class) kept per process
PLAIN = (str, int, float, bool, type(None), bytes)


class _Mark:
    """A value that is no value: a key the session did not hold when the part looked, or a widget's key the part
    wrote first (its value follows from the write)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING = _Mark("MISSING")
WRITTEN = _Mark("WRITTEN")


@dataclass
class Recording:
    """One run of a part: what it read (key -> value as first read), where it began, and what it did, in order."""

    start: tuple
    live: Any = None      # the class's live state the body was drawn for
    reads: dict[str, Any] = field(default_factory=dict)
    ops: list[tuple] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    ids: tuple[frozenset[str], frozenset[str], frozenset[str]] = (frozenset(), frozenset(), frozenset())
    end_cursors: dict = field(default_factory=dict)
    refused: str = ""     # why no one may replay it ("" while it may)
    depth: int = 0        # inside ``own`` parts (not recorded)
    thread: int = 0
    own_ids: list[set[str]] = field(default_factory=lambda: [set(), set(), set(), set()])  # by own parts

    def refuse(self, why: str) -> None:
        """Keep the first reason: this run's body is not shared."""
        self.refused = self.refused or why

    def read(self, key: str, value: Any) -> None:
        """The body looked at ``key`` (the first look counts; a key it wrote first is its own doing)."""
        if self.depth or key in self.reads or key in self.written:
            return
        self.reads[key] = frozen(value, self)


_RECORDING: ContextVar[Recording | None] = ContextVar("mha_shared_body", default=None)
_IGNORED: ContextVar[frozenset[str]] = ContextVar("mha_shared_body_ignored", default=frozenset())


def frozen(value: Any, rec: Recording | None = None) -> Any:
    """``value`` as it is now (a copy of what may change in place); MISSING stays MISSING."""
    if isinstance(value, (*PLAIN, _Mark)):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - a value that cannot be copied cannot be compared later
        if rec is not None:
            rec.refuse(f"uncopyable {type(value).__name__}")
        return MISSING


def same(a: Any, b: Any) -> bool:
    """Equal values of the same type (an array, whose == is not a truth value, is never the same)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _plain(arg: Any) -> bool:
    """Data every session may share as a callback's argument (a tuple of plain values included)."""
    if isinstance(arg, tuple):
        return all(_plain(a) for a in arg)
    return isinstance(arg, PLAIN)


class Store:
    """The process's recordings: (page, part, class) -> the newest VARIANTS recordings, under a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pages: OrderedDict[Hashable, list[Recording]] = OrderedDict()

    def find(self, key: Hashable, match: Callable[[Recording], bool]) -> Recording | None:
        """The newest recording of ``key`` that ``match`` accepts."""
        with self.lock:
            found = list(self.pages.get(key, ()))
        return next((r for r in found if match(r)), None)

    def keep(self, key: Hashable, rec: Recording) -> None:
        """Add ``rec`` as the newest of ``key`` (dropping the oldest beyond the limits)."""
        with self.lock:
            kept = [rec, *self.pages.pop(key, [])][:VARIANTS]
            self.pages[key] = kept
            while len(self.pages) > PAGES_KEPT:
                self.pages.popitem(last=False)


@st.cache_resource(show_spinner=False)
def store() -> Store:
    """This process's recordings."""
    return Store()


def _cursors(ctx: ScriptRunContext) -> tuple:
    """Where the page's containers stand now (a body's deltas are placed by absolute paths)."""
    return tuple(sorted((root, c.parent_path, c.index) for root, c in ctx.cursors.items()))


def _ids(ctx: ScriptRunContext) -> tuple[frozenset[str], ...]:
    """The element ids, widget keys, form ids and fragment ids registered so far in this run."""
    s = ctx.shared
    return (s.widget_ids_this_run.snapshot(), s.widget_user_keys_this_run.snapshot(), s.form_ids_this_run.snapshot(),
            s.new_fragment_ids.snapshot())


def _peek(state: SafeSessionState, key: str) -> Any:
    """The session's value under ``key`` without noting a read (MISSING when it holds none)."""
    try:
        return _ORIGINAL["getitem"](state, key)
    except KeyError:
        return MISSING


def _widget_value(state: SafeSessionState, widget_id: str, user_key: str | None) -> Any:
    """A widget's value as its registration will find it (MISSING: its default)."""
    with state._lock:  # noqa: SLF001 - see the module
        try:
            return frozen(state._state._getitem(widget_id, user_key))  # noqa: SLF001
        except KeyError:
            return MISSING


def _matches(rec: Recording, ctx: ScriptRunContext) -> bool:
    """This session holds what ``rec``'s body read, its widgets' values, and its page starts where rec's did."""
    if rec.start != (_cursors(ctx), len(context_dg_stack.get())):
        return False
    state = ctx.session_state
    if not all(same(_peek(state, k), v) for k, v in rec.reads.items()):
        return False
    return all(op[3] is WRITTEN or same(_widget_value(state, op[1].id, op[2]), op[3])
               for op in rec.ops if op[0] == "widget")


@dataclass(frozen=True)
class View:
    """What a following member's page body may know of who they are: their class and its live state as this session
    read it (the same for the whole class), and the session keys that hold them (not compared: they name the
    member)."""

    class_id: int
    live: Any
    keys: frozenset[str]


def draw(run: Callable[[], None], page: str, view: View | None, part: str = "body") -> None:
    """Run ``part`` of ``page`` (``run``: the page's body, or the sidebar's controls), or replay a recording of it
    for a following member whose session matches one.

    ``view``: a following member's class and its live state (None: not a following member of a live lesson; the
    part runs as usual)."""
    ctx = get_script_run_ctx()
    if (view is None or page not in SHARED_PAGES or ctx is None or ctx.fragment_ids_this_run or not Runtime.exists()
            or config.get_option("global.appTest")):  # AppTest keeps each widget's format_func in its session
        run()
        return
    key, state, ignored = (page, part, view.class_id), view.live, view.keys
    found = store().find(key, lambda r: same(r.live, state) and _matches(r, ctx))
    if found is not None:
        _replay(found, ctx)
        return
    rec = Recording(start=(_cursors(ctx), len(context_dg_stack.get())), live=state, thread=threading.get_ident())
    with _recording(rec, ctx, ignored):
        run()
    if not rec.refused:
        store().keep(key, rec)


@contextmanager
def _recording(rec: Recording, ctx: ScriptRunContext, ignored: frozenset[str]) -> Iterator[None]:
    """While the body runs: note what it does; at its end, what it registered and where it left the page."""
    before = _ids(ctx)
    sent = ctx.enqueue

    def enqueue(msg: ForwardMsg) -> None:
        sent(msg)
        if rec.depth:
            return
        if threading.get_ident() != rec.thread or msg.WhichOneof("type") != "delta":
            rec.refuse(f"sent {msg.WhichOneof('type')}")
            return
        kept = ForwardMsg()
        kept.CopyFrom(msg)
        rec.ops.append(("msg", kept, ()))

    ctx.enqueue = enqueue  # type: ignore[method-assign]
    token, ignored_token = _RECORDING.set(rec), _IGNORED.set(ignored)
    try:
        yield
    except BaseException:
        rec.refuse("stopped")  # a rerun, st.stop or an error: nothing to share
        raise
    finally:
        _RECORDING.reset(token)
        _IGNORED.reset(ignored_token)
        del ctx.enqueue
    after = _ids(ctx)
    *ids, fragments = (a - b - o for a, b, o in zip(after, before, rec.own_ids, strict=True))
    rec.ids = tuple(ids)  # type: ignore[assignment]
    if fragments:
        rec.refuse("fragment")
    rec.end_cursors = copy.deepcopy(ctx.cursors)
    state = ctx.session_state
    deferred = [op[1] for op in rec.ops if op[0] == "deferred"]
    for i, op in enumerate(rec.ops):
        if op[0] == "set":  # as the body left it (a value may have been changed in place after the write)
            value = frozen(_peek(state, op[1]), rec)
            rec.ops[i] = ("del", op[1]) if value is MISSING else ("set", op[1], value)
        elif op[0] == "msg" and deferred:
            data = op[1].SerializeToString()
            rec.ops[i] = ("msg", op[1], tuple(d for d in deferred if d.encode() in data))


def own(part: Callable[..., None], *args: Any) -> None:
    """A student's own part of a shared page (the class vote's ballot): drawn live in every follower's run, in
    place; a recording keeps where it goes, not what it drew."""
    rec = _RECORDING.get()
    ctx = get_script_run_ctx()
    if rec is None or ctx is None or rec.depth:
        part(*args)
        return
    rec.ops.append(("own", part, args, copy.deepcopy(context_dg_stack.get()), copy.deepcopy(ctx.cursors)))
    before = _ids(ctx)
    rec.depth += 1
    try:
        part(*args)
    finally:
        rec.depth -= 1
        for mine, a, b in zip(rec.own_ids, _ids(ctx), before, strict=True):
            mine |= a - b


def _replay(rec: Recording, ctx: ScriptRunContext) -> None:
    """Do in this run what ``rec``'s body did: the same messages, widgets, files and writes, its own parts live."""
    state = ctx.session_state
    mfm = Runtime.instance().media_file_mgr
    renamed: dict[str, str] = {}
    for op in rec.ops:
        kind = op[0]
        if kind == "msg":
            msg = ForwardMsg()
            msg.CopyFrom(op[1])
            if op[2]:
                data = msg.SerializeToString()
                for old in op[2]:
                    data = data.replace(old.encode(), renamed.get(old, old).encode())
                msg = ForwardMsg.FromString(data)
                msg.hash = ""
                populate_hash_if_needed(msg)
            ctx.enqueue(msg)
        elif kind == "widget":
            state.register_widget(op[1], op[2])
        elif kind == "set":
            state[op[1]] = copy.deepcopy(op[2])
        elif kind == "del":
            if _peek(state, op[1]) is not MISSING:
                del state[op[1]]
        elif kind == "media":
            mfm.add(*op[1])
        elif kind == "deferred":
            renamed[op[1]] = mfm.add_deferred(*op[2], element_id=op[3])
        elif kind == "own":
            stack = context_dg_stack.get()
            context_dg_stack.set(copy.deepcopy(op[3]))
            ctx.cursors = copy.deepcopy(op[4])
            try:
                op[1](*op[2])
            finally:
                context_dg_stack.set(stack)
    ids, keys, forms = rec.ids
    for i in ids:
        ctx.shared.widget_ids_this_run.check_and_add(i)
    for k in keys:
        ctx.shared.widget_user_keys_this_run.check_and_add(k)
    for f in forms:
        ctx.shared.form_ids_this_run.check_and_add(f)
    ctx.cursors = copy.deepcopy(rec.end_cursors)


# --- what a recording run notes (install) -------------------------------------------------------------------------

_ORIGINAL: dict[str, Callable[..., Any]] = {}


def _noting() -> Recording | None:
    """The recording of this run's body, outside a student's own part (None: nothing to note)."""
    rec = _RECORDING.get()
    return None if rec is None or rec.depth else rec


def _getitem(self: SafeSessionState, key: str) -> Any:
    rec = _noting()
    try:
        value = _ORIGINAL["getitem"](self, key)
    except KeyError:
        if rec is not None and key not in _IGNORED.get():
            rec.read(key, MISSING)
        raise
    if rec is not None and key not in _IGNORED.get():
        rec.read(key, value)
    return value


def _contains(self: SafeSessionState, key: str) -> bool:
    rec = _noting()
    if rec is not None and key not in _IGNORED.get():
        rec.read(key, _peek(self, key))
    return _ORIGINAL["contains"](self, key)


def _setitem(self: SafeSessionState, key: str, value: Any) -> None:
    _ORIGINAL["setitem"](self, key, value)
    rec = _noting()
    if rec is not None:
        if key in _IGNORED.get():
            rec.refuse(f"wrote {key}")
        rec.written.add(key)
        rec.ops.append(("set", key, None))


def _delitem(self: SafeSessionState, key: str) -> None:
    _ORIGINAL["delitem"](self, key)
    rec = _noting()
    if rec is not None:
        rec.written.add(key)
        rec.ops.append(("del", key))


class _Noted(dict):
    """The whole state as Streamlit's widgets ask for it (to look up their own key): each look is a read."""

    rec: Recording

    def __contains__(self, key: object) -> bool:
        self.rec.read(str(key), dict.get(self, key, MISSING))
        return dict.__contains__(self, key)

    def __getitem__(self, key: str) -> Any:
        self.rec.read(key, dict.get(self, key, MISSING))
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        self.rec.read(key, dict.get(self, key, MISSING))
        return dict.get(self, key, default)

    def __iter__(self) -> Iterator[str]:
        self.rec.refuse("read the whole state")
        return dict.__iter__(self)

    def keys(self):  # type: ignore[override]  # noqa: ANN201
        self.rec.refuse("read the whole state")
        return dict.keys(self)

    def items(self):  # type: ignore[override]  # noqa: ANN201
        self.rec.refuse("read the whole state")
        return dict.items(self)

    def values(self):  # type: ignore[override]  # noqa: ANN201
        self.rec.refuse("read the whole state")
        return dict.values(self)

    def __len__(self) -> int:
        self.rec.refuse("read the whole state")
        return dict.__len__(self)


def _filtered_state(self: SafeSessionState) -> dict[str, Any]:
    state = _ORIGINAL["filtered_state"](self)
    rec = _noting()
    if rec is None:
        return state
    noted = _Noted(state)
    noted.rec = rec
    return noted


def _register_widget(self: SafeSessionState, metadata: Any, user_key: str | None) -> Any:
    rec = _noting()
    if rec is None:
        return _ORIGINAL["register_widget"](self, metadata, user_key)
    before = WRITTEN if user_key in rec.written else _widget_value(self, metadata.id, user_key)
    result = _ORIGINAL["register_widget"](self, metadata, user_key)
    args = (*(metadata.callback_args or ()), *(metadata.callback_kwargs or {}).values())
    if not all(_plain(a) for a in args):
        rec.refuse(f"callback argument of {metadata.id}")
    rec.ops.append(("widget", metadata, user_key, before))
    return result


def _add(self: MediaFileManager, path_or_data: bytes | str, mimetype: str, coordinates: str,
         file_name: str | None = None, is_for_static_download: bool = False) -> str:
    url = _ORIGINAL["add"](self, path_or_data, mimetype, coordinates, file_name, is_for_static_download)
    rec = _noting()
    if rec is not None:
        rec.ops.append(("media", (path_or_data, mimetype, coordinates, file_name, is_for_static_download)))
    return url


def _add_deferred(self: MediaFileManager, data_callable: Callable[[], Any], mimetype: str | None,
                  coordinates: str, file_name: str | None = None, *, element_id: str = "") -> str:
    file_id = _ORIGINAL["add_deferred"](self, data_callable, mimetype, coordinates, file_name, element_id=element_id)
    rec = _noting()
    if rec is not None:
        rec.ops.append(("deferred", file_id, (data_callable, mimetype, coordinates, file_name), element_id))
    return file_id


_PATCHES: dict[str, tuple[type, str, Callable[..., Any]]] = {
    "getitem": (SafeSessionState, "__getitem__", _getitem),
    "contains": (SafeSessionState, "__contains__", _contains),
    "setitem": (SafeSessionState, "__setitem__", _setitem),
    "delitem": (SafeSessionState, "__delitem__", _delitem),
    "filtered_state": (SafeSessionState, "filtered_state", _filtered_state),
    "register_widget": (SafeSessionState, "register_widget", _register_widget),
    "add": (MediaFileManager, "add", _add),
    "add_deferred": (MediaFileManager, "add_deferred", _add_deferred),
}


def install() -> None:
    """Put the noting versions in Streamlit's place (idempotent; each passes through unless a run records)."""
    for name, (cls, attr, patched) in _PATCHES.items():
        current = cls.__dict__[attr]
        function = current.fget if isinstance(current, property) else current
        original = getattr(function, "__wrapped__", function)
        _ORIGINAL[name] = original
        patched.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(cls, attr, property(patched) if isinstance(current, property) else patched)
