"""The speed benchmark times a move from the input itself: whatever Playwright must find, wait for or fill is done
before the clock starts, so the timed action of every kind of control is one key press or one mouse click, as the
bare page's move (a key press) is. Playwright's own click queried the page after the clock started (a role query
walks the accessibility tree; the target must hold still over two frames): 17-37 ms a move at 1x charged to the
click cases."""

from __future__ import annotations

import pytest

from harness.moves import KINDS, prepare


class Recorder:
    """A Playwright page, locator, keyboard and mouse at once that writes down every call made on it."""

    def __init__(self, calls: list[str], name: str = "page") -> None:
        self._calls, self._name = calls, name

    def __getattr__(self, attr: str) -> Recorder:
        if attr.startswith("_"):  # the benchmark's own notes on the page (hasattr, then set)
            raise AttributeError(attr)
        return Recorder(self._calls, f"{self._name}.{attr}")

    def __call__(self, *args: object, **kwargs: object) -> object:
        self._calls.append(self._name)
        leaf = self._name.rsplit(".", 1)[-1]
        if leaf == "bounding_box":
            return {"x": 10.0, "y": 20.0, "width": 100.0, "height": 30.0}
        if leaf in ("is_disabled", "is_checked"):
            return True
        if leaf in ("count", "evaluate"):
            return 1
        return Recorder(self._calls, self._name)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_moves_timed_action_is_one_input_event(kind):
    calls: list[str] = []
    resets: list[int] = []
    act = prepare(Recorder(calls), f"{kind}:key", 0, reset=lambda: resets.append(1))
    done_before = len(calls)
    act()
    assert calls[done_before:] in (["page.keyboard.press"], ["page.mouse.click"])
    assert resets == ([1] if kind == "click" else [])  # a disabled button starts over first, untimed


def test_an_unknown_control_is_refused():
    with pytest.raises(ValueError, match="unknown control"):
        prepare(Recorder([]), "drag:h", 0)
