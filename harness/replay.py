"""The replay floor of issue 26: a page's own messages, recorded from the app, sent again by a bare Streamlit server.

A page's move costs the browser what Streamlit's frontend spends drawing what the server sends. Replayed by a
server that runs no code of the app's (``REPLAY_APP``: it only sends the recorded messages of the page's two
states in turn, one state a run), the same move costs the browser exactly that, and the server next to nothing:
no Streamlit page that sends what this page sends can be faster. ``benchmarks.bench_replay`` records and times
it; here, not in benchmarks/, so a test can check what the replay sends.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import textwrap
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.server import ROOT
from harness.websocket_client import DEFAULT_PAGE, Student

# What a run's messages hold that the page draws; the rest (a new session, the session's status, the run's end)
# the replay server sends of its own as it runs.
REPLAYED = frozenset({"delta", "page_config_changed", "navigation", "logo", "page_info_changed"})
MEDIA = re.compile(rb"/media/[0-9a-f]+\.[a-z0-9]+")  # a file in Streamlit's media store (the charts' module)
REPLAY_ENV = "MHA_REPLAY_DIR"  # the folder of the recordings a replay server sends (``<name>.json``)
# The app's server for a recording: no message sent by reference to a cached one (every message whole)
NO_CACHE = {"STREAMLIT_GLOBAL_MIN_CACHED_MESSAGE_SIZE": str(10**12)}
QUERY = "replay"               # ``?replay=<name>``: the recording a session is sent
FRAME_QUERY = "frame"          # ``&frame=1``: only the frame (the sidebar, the navigation, the page's settings)


@dataclass
class Recording:
    """A page's two states as the server sent them (each a run's messages, serialised) and the media files they
    name (URL -> (MIME type, content)). When the move reran a part of the page (``ui.parts``), the two runs are
    that fragment's (``fragment`` its id) and ``page`` is the whole page's run they go into."""

    runs: list[list[bytes]] = field(default_factory=list)
    media: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    fragment: str = ""
    page: list[bytes] = field(default_factory=list)

    def save(self, path: Path) -> None:
        b64 = lambda b: base64.b64encode(b).decode("ascii")  # noqa: E731
        path.write_text(json.dumps({"runs": [[b64(m) for m in run] for run in self.runs],
                                    "media": {u: [mime, b64(c)] for u, (mime, c) in self.media.items()},
                                    "fragment": self.fragment, "page": [b64(m) for m in self.page]}),
                        encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Recording:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls([[base64.b64decode(m) for m in run] for run in data["runs"]],
                   {u: (mime, base64.b64decode(c)) for u, (mime, c) in data["media"].items()},
                   data["fragment"], [base64.b64decode(m) for m in data["page"]])


async def session_runs(base: str, page: str, queries: Sequence[Mapping[str, str]]) -> list[list[bytes]]:
    """One session's full runs of ``page`` ("": the server's only one) on the server at ``base``, one per query (the
    address asked for): the messages of each, serialised (a run the app cut short for a rerun: the rerun's)."""
    student = Student(base, "replay", keep=True)
    await student.connect()
    runs = []
    try:
        for query in queries:
            student.query = dict(query)
            runs.append(last_run((await student.run(page or DEFAULT_PAGE)).messages))
    finally:
        await student.close()
    return runs


def fetch_media(base: str, runs: Sequence[Sequence[bytes]]) -> dict[str, tuple[str, bytes]]:
    """The media files the runs name, as the server at ``base`` serves them: URL -> (MIME type, content)."""
    media = {}
    for url in sorted(media_urls(runs)):
        with urllib.request.urlopen(base + url, timeout=30) as resp:  # noqa: S310 - our own server on 127.0.0.1
            media[url] = (resp.headers.get_content_type(), resp.read())
    return media


def replay_folder(folder: Path) -> Path:
    """Make ``folder`` a replay server's: its script and the app's own settings (theme, client, server); the
    script's path. Its recordings go beside it as ``<name>.json`` (the server's ``REPLAY_ENV``)."""
    script = folder / "replay.py"
    script.write_text(REPLAY_APP, encoding="utf-8")
    shutil.copytree(ROOT / ".streamlit", folder / ".streamlit", dirs_exist_ok=True)
    return script


def last_run(frames: list[bytes]) -> list[bytes]:
    """The messages of the last script run among ``frames`` (a run starts with a new-session message; a fragment's
    run sends none)."""
    starts = [i for i, raw in enumerate(frames) if ForwardMsg.FromString(raw).WhichOneof("type") == "new_session"]
    return frames[starts[-1]:] if starts else frames


def fragment_of(run: list[bytes]) -> str:
    """The fragment a run's deltas all came from ("": a full run)."""
    ids = {msg.delta.fragment_id for msg in map(ForwardMsg.FromString, run) if msg.WhichOneof("type") == "delta"}
    return ids.pop() if len(ids) == 1 else ""


def replayed(raw: bytes) -> bool:
    """Whether a message the page's run sent is one the replay sends again."""
    msg = ForwardMsg()
    msg.ParseFromString(raw)
    if msg.metadata.cacheable or msg.WhichOneof("type") == "ref_hash":
        raise ValueError("a cached message's reference: record from a server whose message cache is off")
    return msg.WhichOneof("type") in REPLAYED


def media_urls(runs: Sequence[Sequence[bytes]]) -> set[str]:
    """The media files the runs' messages name, which the replay server must serve too."""
    return {m.decode("ascii") for run in runs for raw in run for m in MEDIA.findall(raw)}


def in_frame(msg: ForwardMsg) -> bool:
    """Whether a message is the frame around a page's body: all but the deltas of the main area."""
    return msg.WhichOneof("type") != "delta" or msg.metadata.delta_path[:1] != [0]


# The replay server's script: each run of a session sends the next of the recording's runs (the first run the
# first; with ``frame=1`` only their frame), or, for a part's runs, the page and then the part's runs as fragment
# runs; its media files go into this server's store under a URL of the same length (so a serialised message keeps
# its shape), and the current page of the recorded navigation becomes this script's page.
REPLAY_APP = textwrap.dedent("""\
    import os
    from pathlib import Path

    import streamlit as st
    from streamlit import runtime
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.fragment import _FragmentLifetime
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from harness.replay import FRAME_QUERY, QUERY, REPLAY_ENV, Recording, in_frame


    @st.cache_resource(show_spinner=False)
    def recording(name: str) -> Recording:
        return Recording.load(Path(os.environ[REPLAY_ENV]) / f"{name}.json")


    ss = st.session_state
    if "replay_name" not in ss:  # the recorded page rewrites the address: the name is read once
        ss.replay_name, ss.replay_runs = st.query_params[QUERY], 0
        ss.replay_frame = st.query_params.get(FRAME_QUERY) == "1"
    rec = recording(ss.replay_name)
    store = runtime.get_instance().media_file_mgr
    swaps = []
    for url, (mime, content) in rec.media.items():
        new = store.add(content, mime, "replay")
        assert len(new) == len(url), (url, new)
        swaps.append((url.encode(), new.encode()))


    def send(run):
        ctx = get_script_run_ctx()  # this run's (a part's run comes after the page's)
        for raw in run:
            for old, new in swaps:
                raw = raw.replace(old, new)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            if ss.replay_frame and not in_frame(msg):
                continue
            msg.hash = ""  # worked out again here, as the app's server does (and cached as it would be)
            if msg.WhichOneof("type") == "navigation":
                nav = msg.navigation
                for page in nav.app_pages:
                    if page.page_script_hash == nav.page_script_hash:
                        page.page_script_hash = ctx.page_script_hash
                nav.page_script_hash = ctx.page_script_hash
            ctx.enqueue(msg)


    def part():  # a move inside the part: its fragment's next recorded run
        ss.replay_runs += 1
        send(rec.runs[ss.replay_runs % len(rec.runs)])


    if rec.fragment:  # the whole page, and the part's runs when the browser asks for them
        send(rec.page)
        ctx = get_script_run_ctx()
        ctx.fragment_storage.register(rec.fragment, part, lifetime=_FragmentLifetime.FULL_APP_SCOPED)
        ctx.shared.new_fragment_ids.check_and_add(rec.fragment)
    else:
        send(rec.runs[ss.replay_runs % len(rec.runs)])
        ss.replay_runs += 1
""")
