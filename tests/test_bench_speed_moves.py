"""The speed benchmark times a move from the input itself: whatever Playwright must find, wait for or measure is done
before the clock starts, so the timed action of every case is one key press or one mouse click, as the bare page's
move (a key press) is. Playwright's own click queried the page after the clock started (a role query walks the
accessibility tree; the target must hold still over two frames): 17-37 ms a move at 1x charged to the click cases."""

from __future__ import annotations

from benchmarks.bench_speed import BARE, _do_move, cases


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
            return leaf == "is_checked"
        if leaf in ("count", "evaluate"):
            return 1
        return Recorder(self._calls, self._name)


def test_every_cases_timed_action_is_one_input_event():
    for case in [BARE, *cases()]:
        calls: list[str] = []
        act = _do_move(Recorder(calls), case, 0)
        done_before = len(calls)
        act()
        timed = calls[done_before:]
        assert timed in (["page.keyboard.press"], ["page.mouse.click"]), (case.name, timed)
