"""The canvas charts' JavaScript goes to a browser once a page, not with every chart on every run (issue 26: a lesson
page's move sent 130-190 kB, 90-150 kB of it the module inline in each chart, to every student following a class)."""

import json

from streamlit.runtime.memory_media_file_storage import _calculate_file_id

from apphelpers import CANVAS, open_page
from mha_core.ui import canvas


def test_a_chart_carries_a_loader_and_the_url_of_the_module_the_server_stores():
    at = open_page("pages/attend.py", lang="en", query={"fixed": "0"})
    charts = [e.proto for e in at.get("bidi_component") if e.proto.component_name == CANVAS]
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
    urls = {json.loads(e.proto.bytes)["module"] for e in at.get("bidi_component") if e.proto.component_name == CANVAS}
    assert len(urls) == 1 and next(iter(urls)).startswith("/mha/mock/media/")
