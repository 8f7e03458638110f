"""How a canvas chart reaches the browser (issue 26): its JavaScript once a page, not with every chart on every run (a
lesson page's move sent 130-190 kB, 90-150 kB of it the module inline in each chart, to every student following a
class), and each chart as the message Streamlit's own mount sends, without the widgets that mount registers."""

import json

from streamlit.runtime.memory_media_file_storage import _calculate_file_id

from apphelpers import canvas_protos, open_page
from mha_core.ui import canvas


def test_a_chart_carries_a_loader_and_the_url_of_the_module_the_server_stores():
    at = open_page("pages/attend.py", lang="en", query={"fixed": "0"})
    charts = canvas_protos(at)
    assert len(charts) >= 3
    module = canvas.module_source()
    assert len(module) > 20_000  # the charts' code: what each chart carried before
    for proto in charts:
        assert proto.js_content == canvas.LOADER and len(proto.js_content) < 1_000
        assert proto.WhichOneof("data") == "bytes"  # JSON the app encoded once, not a dict Streamlit encodes twice
    # one URL, the media store's for exactly this module (AppTest's store serves /mock/media)
    file_id = _calculate_file_id(module, canvas.MODULE_MIME)
    assert {json.loads(p.bytes)["module"] for p in charts} == {f"/mock/media/{file_id}.js"}


def test_the_module_is_every_part_joined_in_order_with_the_entry_last():
    module = canvas.module_source().decode()
    starts = [module.index(p.read_text(encoding="utf-8")) for p in canvas.PARTS]
    assert starts == sorted(starts) and "export default function" in canvas.PARTS[-1].read_text(encoding="utf-8")


def test_behind_a_base_path_the_module_s_url_keeps_it():
    """A server at /mha/ (server.baseUrlPath) serves its media store at /mha/media/: the loader imports from there."""
    from streamlit import config

    before = config.get_option("server.baseUrlPath")
    config.set_option("server.baseUrlPath", "/mha/")
    try:
        at = open_page("pages/attend.py", lang="en", query={"fixed": "0"})
    finally:
        config.set_option("server.baseUrlPath", before)
    urls = {json.loads(p.bytes)["module"] for p in canvas_protos(at)}
    assert len(urls) == 1 and next(iter(urls)).startswith("/mha/mock/media/")


def _mount_script() -> None:
    """Mounts one chart under the key "k": by Streamlit's own component mount, or (session flag "ours") by the app's;
    keeps the message each sent, its metadata (where on the page it goes, not the element) cleared."""
    import streamlit as st
    from streamlit.runtime.scriptrunner_utils import script_run_context as src

    from mha_core.ui import canvas as cv

    sent = []
    enqueue = src.ScriptRunContext.enqueue
    src.ScriptRunContext.enqueue = lambda self, msg: (sent.append(msg.SerializeToString()), enqueue(self, msg))[1]
    try:
        if st.session_state.get("ours"):
            cv._mount(b'{"a":1}', "k")  # noqa: SLF001
        else:
            st.components.v2.component(cv.NAME, js=cv.LOADER, isolate_styles=False)(data=b'{"a":1}', key="k",
                                                                                    width="stretch")
    finally:
        src.ScriptRunContext.enqueue = enqueue
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg.FromString(sent[-1])
    msg.ClearField("metadata")
    st.session_state["ours_msg" if st.session_state.get("ours") else "streamlit_msg"] = msg


def test_a_chart_is_the_message_streamlits_own_mount_sends_without_its_widgets():
    """The same element (id, loader, data, layout; the same hash), but no state and event widgets for the chart: the
    canvas sends neither, and Streamlit's mount registered both on every run (issue 26)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_mount_script).run()
    at.session_state["ours"] = True
    at.run()
    theirs, ours = at.session_state["streamlit_msg"], at.session_state["ours_msg"]
    assert ours.delta.new_element.bidi_component.id.endswith("-k")
    assert ours == theirs and ours.hash == theirs.hash


def test_a_pages_charts_register_no_widgets():
    at = open_page("pages/attend.py", lang="en", query={"fixed": "0"})
    ids = {p.id for p in canvas_protos(at)}
    registered = at.session_state._state._state._new_widget_state.widget_metadata  # noqa: SLF001 - Streamlit's list
    assert len(ids) >= 3 and not any(i.startswith(tuple(ids)) for i in registered)
