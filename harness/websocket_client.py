"""The one client of Streamlit's websocket protocol (what the browser sends) for the tests and the benchmarks.

A ``Connection`` is one browser session's websocket (through the balancer with a route cookie): it sends rerun
requests (``rerun_request``) and reads ForwardMsgs. A ``Student`` runs one script at a time over it and says what
the run drew (``Run``): tests/e2e (deploy, classroom, real-model concurrency) and the class benchmarks use it.
A client that models more of the browser builds on a ``Connection`` (benchmarks/bench_live.py: fragment timers).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.util import calc_hash

from harness.cluster import ROUTE_COOKIE

STREAM = "/_stcore/stream"
DEFAULT_PAGE = "overview"    # the app's default page: a rerun names it by the empty hash


def page_hash(page: str) -> str:
    """The ``page_script_hash`` a rerun names a page by (empty for the default page, as the browser sends it)."""
    return "" if page == DEFAULT_PAGE else calc_hash(page)


def widget_key(widget_id: str) -> str:
    """The user key inside a Streamlit element id (``$$ID-<hash>-<key>``); the id itself when it has none."""
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "$$ID" and parts[2] != "None" else widget_id


def widget_state(widget_id: str, kind: str, value: object) -> WidgetState:
    """A widget's value in the WidgetState field ``kind`` its serde reads (an ``*_array_value``: a list)."""
    w = WidgetState(id=widget_id)
    if kind.endswith("_array_value"):
        getattr(w, kind).data.extend(value)
    else:
        setattr(w, kind, value)
    return w


def rerun_request(query: str, page_script_hash: str = "", widgets: Iterable[WidgetState] = (), *,
                  page_name: str = "", fragment_id: str = "", locale: str = "en-US", auto: bool = True) -> BackMsg:
    """The BackMsg a browser sends for a script run: the page, the address's query, the widget values it holds;
    with ``fragment_id``, a fragment's run: its timer's (``auto``, ``is_auto_rerun``) or a widget's inside it."""
    msg = BackMsg()
    rs = msg.rerun_script
    rs.query_string = query
    rs.page_script_hash = page_script_hash
    rs.page_name = page_name
    rs.context_info.locale = locale
    rs.widget_states.widgets.extend(widgets)
    if fragment_id:
        rs.fragment_id = fragment_id
        rs.is_auto_rerun = auto
    return msg


@dataclass(eq=False)
class Connection:
    """One browser session's websocket to the app at ``base`` (http://host:port), with its route cookie."""

    base: str
    route: str
    ws: websockets.ClientConnection | None = field(default=None, init=False)
    received: int = field(default=0, init=False)   # bytes of every message received so far (what a network carries)
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)

    async def connect(self) -> None:
        self.ws = await websockets.connect(self.base.replace("http", "ws", 1) + STREAM, subprotocols=["streamlit"],
                                           max_size=None, open_timeout=30,
                                           additional_headers={"Cookie": f"{ROUTE_COOKIE}={self.route}"})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def send(self, msg: BackMsg) -> float:
        """Send one message (whole, also when timers send at the same time); the epoch seconds it left."""
        async with self._send_lock:
            at = time.time()
            await self.ws.send(msg.SerializeToString())
        return at

    async def receive(self, timeout: float | None = None) -> ForwardMsg:
        """The next ForwardMsg; TimeoutError after ``timeout`` s, websockets.ConnectionClosed once it is closed."""
        fm, raw = ForwardMsg(), await asyncio.wait_for(self.ws.recv(), timeout=timeout)
        self.received += len(raw)
        fm.ParseFromString(raw)
        return fm


@dataclass
class Run:
    """What one script run sent back: widgets by key, texts of the page, the exceptions, and its deltas: how many,
    and the fragments they came from ("" for none)."""

    widgets: dict[str, tuple[str, str, object]] = field(default_factory=dict)  # key -> (id, kind, proto)
    texts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    observed: list[object] = field(default_factory=list)   # what the Student's ``observe`` picked, in order
    seconds: float = 0.0
    deltas: int = 0
    fragments: set[str] = field(default_factory=set)
    messages: list[bytes] = field(default_factory=list)  # every message, serialised (a Student that keeps them)

    def widget_id(self, key: str) -> str:
        return self.widgets[key][0]

    def collect(self, el: Element) -> None:
        """Note one new element: a widget (by its user key), an exception, its text."""
        kind = el.WhichOneof("type")
        if kind is None:
            return
        sub = getattr(el, kind)
        wid = getattr(sub, "id", "")
        if isinstance(wid, str) and wid.startswith("$$ID"):
            self.widgets[widget_key(wid)] = (wid, kind, sub)
        if kind == "exception":
            self.exceptions.append(f"{sub.type}: {sub.message}")
        for attr in ("body", "text", "label"):
            value = getattr(sub, attr, None)
            if isinstance(value, str) and value:
                self.texts.append(value)


@dataclass(eq=False)
class Student(Connection):
    """One browser's worth of Streamlit session that runs one script at a time and waits for its end.

    ``query`` is the address's query (the app's rewrites of it are kept, as the browser keeps them); ``observe``
    sees every new element of a run, and what it returns (None: nothing) is kept in ``Run.observed``; with ``keep``,
    every message a run received is kept too, serialised (``Run.messages``: harness.replay records them).
    """

    query: Mapping[str, str] = field(default_factory=dict)
    locale: str = "en-US"
    observe: Callable[[Element], object | None] | None = None
    keep: bool = False

    def __post_init__(self) -> None:
        self.query = dict(self.query)

    async def run(self, page: str, widgets: Mapping[str, tuple[str, object]] = (), timeout: float = 120, *,
                  fragment_id: str = "") -> Run:
        """One script run of ``page`` with these widget values ({id: (proto field, value)}), a run of the fragment
        ``fragment_id`` if given (as a widget inside it asks for); waits for the end."""
        states = [widget_state(wid, kind, value) for wid, (kind, value) in dict(widgets).items()]
        msg = rerun_request(urlencode(self.query), page_hash(page), states,
                            page_name="" if page == DEFAULT_PAGE else page, locale=self.locale,
                            fragment_id=fragment_id, auto=False)
        run = Run()
        t0 = time.perf_counter()
        await self.send(msg)
        while True:
            fm = await self.receive(timeout)
            if self.keep:
                run.messages.append(fm.SerializeToString())
            kind = fm.WhichOneof("type")
            if kind == "delta":
                run.deltas += 1
                run.fragments.add(fm.delta.fragment_id)
            if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                run.collect(el)
                if self.observe is not None and (seen := self.observe(el)) is not None:
                    run.observed.append(seen)
            elif kind == "page_info_changed":
                self.query = dict(parse_qsl(fm.page_info_changed.query_string))
            elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                run.seconds = time.perf_counter() - t0
                return run
