"""A benchmark's move of a page's control: everything Playwright must find, wait for or fill is done first, untimed,
and the move itself is one input event, a key press or a mouse click at a point measured beforehand, so that a move
is timed from its input as the bare page's key press is (benchmarks.bench_speed; tests/test_bench_speed_moves.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.sentences import back_and_forth, fresh_sentence

# "<kind>:<arg>": slider:<key>, click:<button text>, toggle:<key>, radio:<key>, select:<key>, text:<key> (a text
# area, sent with Ctrl+Enter), fresh:<key> (a one-line input, a new sentence each move, sent with Enter)
KINDS = ("slider", "click", "toggle", "radio", "select", "text", "fresh")


def tap(page, target) -> Callable[[], None]:  # noqa: ANN001 - a Playwright page and locator
    """A click as a user makes it: the target found, scrolled to, waited for (visible, still, enabled) and measured
    now, untimed, and the timed action only the mouse's press and release at its centre. Playwright's own click does
    all that after the clock starts, on the page's main thread (a role query walks the accessibility tree, and the
    target must hold still over two frames): 17-37 ms a move at 1x that the click cases were charged with (the
    median gap from the clock's start to the input event; 1 ms for a key press, the bare page's move)."""
    target.click(trial=True)
    box = target.bounding_box()
    if box is None:
        raise RuntimeError("the control to click is not on the page")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    return lambda: page.mouse.click(x, y)


def prepare(page, control: str, i: int, reset: Callable[[], None] | None = None) -> Callable[[], None]:  # noqa: ANN001
    """Prepare the i-th move of ``control`` (open a menu, fill a text) and return the one input event that makes it;
    ``reset`` is called first when the button to click is disabled (a generation's context is full)."""
    kind, _, arg = control.partition(":")
    if kind == "slider":
        thumb = page.locator(f".st-key-{arg} input[type=range], .st-key-{arg} [role=slider]").first
        thumb.focus()
        return lambda: page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
    if kind == "click":
        button = page.get_by_role("button", name=arg)
        if button.is_disabled() and reset is not None:
            reset()
        return tap(page, button)
    if kind == "toggle":
        return tap(page, page.locator(f".st-key-{arg} label").first)
    if kind == "radio":  # the option after the one chosen at first, then back
        options = page.locator(f".st-key-{arg} [data-testid=stRadioOption]")
        if not hasattr(page, "_speed_option"):  # read once per page: under throttling the previous move's
            # rerun may still be redrawing the radio, with no option checked yet (cross at 6x: no True in list)
            options.first.wait_for(state="visible")
            checked = [options.nth(j).locator("input").is_checked() for j in range(options.count())]
            page._speed_option = (checked.index(True), len(checked))  # noqa: SLF001 - the page's own choice
        first, count = page._speed_option  # noqa: SLF001
        return tap(page, options.nth((first + 1) % count if i % 2 == 0 else first))
    if kind == "select":
        box = page.locator(f".st-key-{arg} [role=combobox]").first
        box.scroll_into_view_if_needed()  # a menu opened by a click that also scrolls closes again at once
        page.wait_for_timeout(300)
        box.click()
        option = page.locator("[role=option]").nth(1 if i % 2 == 0 else 0)
        option.wait_for(state="visible")
        return tap(page, option)
    if kind == "text":
        page.locator(f".st-key-{arg} textarea").first.fill(back_and_forth(i))  # two fixed sentences, in turn
        return lambda: page.keyboard.press("Control+Enter")
    if kind == "fresh":
        page.locator(f".st-key-{arg} input").first.fill(fresh_sentence(f"{time.time_ns()}-{i}"))
        return lambda: page.keyboard.press("Enter")
    raise ValueError(f"unknown control {control}")
