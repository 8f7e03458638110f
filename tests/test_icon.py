"""The app's icon (browser tab and sidebar logo) is a data URL read once per process (mha_core.ui.frame.icon): given a
file path, Streamlit read the file, opened it with PIL and registered a media file twice in every run of every
session."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from streamlit.commands import logo, page_config
from streamlit.elements.lib.image_utils import image_to_url
from streamlit.elements.lib.layout_utils import LayoutConfig
from streamlit.testing.v1 import AppTest

from mha_core.ui import frame

ROOT = Path(__file__).resolve().parents[1]


def test_the_icon_is_the_shipped_png_as_a_data_url():
    head, payload = frame.icon().split(",", 1)
    assert head == "data:image/png;base64"
    assert base64.b64decode(payload) == (ROOT / "assets" / "icon.png").read_bytes()


def test_streamlit_passes_a_data_url_on_as_it_is():
    """The pinned Streamlit returns a data URL untouched: no file read, no PIL, no media file."""
    def url(image: str) -> str:
        return image_to_url(image, layout_config=LayoutConfig(width=32), clamp=False, channels="RGB",
                            output_format="auto", image_id="favicon")

    assert url(frame.icon()) == frame.icon()


def test_app_py_gives_the_tab_and_the_logo_the_data_url(monkeypatch: pytest.MonkeyPatch):
    seen: list[object] = []

    def spy(real):  # noqa: ANN001, ANN202 - wraps Streamlit's image_to_url
        def wrapped(image, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
            seen.append(image)
            return real(image, *args, **kwargs)
        return wrapped

    monkeypatch.setattr(page_config, "image_to_url", spy(page_config.image_to_url))
    monkeypatch.setattr(logo, "image_to_url", spy(logo.image_to_url))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["lang"] = "en"
    at.run()
    assert not at.exception
    assert seen == [frame.icon(), frame.icon()]  # the tab's icon, then the logo
