"""The live lesson's browser-test helpers (tests/e2e/test_live_browser.py, test_pi_browser.py): a server of its own
per test module with a fresh database, clicks that wait for their run, waits on the follow state and on metrics, a
student's vote."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

PASSWORD = "e2e-live-teacher"
PORT = 8651            # the live browser test's server (this test's port range: 8650-8699)
FOLLOW_MS = 30_000     # generous: a following student is woken at once, or polls every 6 s (live.FOLLOW_POLL_S)


def serve(tmp_path_factory) -> Iterator[tuple[str, str]]:  # noqa: ANN001 - pytest's TempPathFactory
    """For a test module's ``live_server`` fixture: (base URL, database URL) of a server of its own with a fresh
    SQLite file and a teacher password, stopped after the module."""
    from harness.server import free_port, start_server, stop_server

    db_url = f"sqlite:///{tmp_path_factory.mktemp('livedb') / 'live.sqlite3'}"
    env = {"MHA_DATABASE_URL": db_url, "MHA_TEACHER_PASSWORD": PASSWORD}
    try:
        proc, base = start_server(port=PORT, env=env)
    except RuntimeError:  # the port is taken (another run): any free one
        proc, base = start_server(port=free_port(), env=env)
    yield base, db_url
    stop_server(proc)


def click(page, selector: str) -> None:
    """Click the button inside a keyed container and wait until the run it starts is over."""
    from harness.server import wait_ready

    page.locator(f"{selector} button").first.click()
    wait_ready(page)


def join_following(browser, base: str, code: str, name: str, width: int, locale: str):  # noqa: ANN001, ANN201
    """A student's browser (context, page) that joined the class by its link under ``name`` and follows the
    teacher onto the overview."""
    from classhelpers import student_joins

    ctx, page = student_joins(browser, base, code, name, width, locale, wait=False)
    wait_following(page, "overview")
    return ctx, page


def page_key(page) -> str:
    """The nav page key of the page's address ("overview" for the default page)."""
    return urlsplit(page.url).path.strip("/").rpartition("/")[2] or "overview"



def wait_following(page, key: str, **query: str) -> None:
    """Wait until the page is ``key`` with these query values, its run finished (the teacher's state drawn)."""
    checks = " && ".join(f"q.get({k!r}) === {v!r}" for k, v in query.items()) or "true"
    try:
        wait_for_state(page, key, checks)
    except Exception as err:  # noqa: BLE001 - say what the page showed (seen once in a full CI run, not reproduced)
        bar = page.locator(".st-key-live_bar, .st-key-live_banner").all_inner_texts()
        raise AssertionError(f"{page.url} never showed {key} {query}; bar/banner: {bar}") from err


def shows(page) -> str:  # noqa: ANN001 - a Playwright page
    """What a page shows, for a failed wait's message: its address, its run state and its main area's text."""
    state = page.locator('[data-testid="stApp"]').first.get_attribute("data-test-script-state", timeout=5_000)
    main = page.locator('[data-testid="stMain"]').first
    text = main.inner_text(timeout=5_000) if main.count() else "(no main area)"
    return f"{page.url} ({state}): {' '.join(text.split())[:1500]}"


def wait_for_state(page, key: str, checks: str) -> None:
    page.wait_for_function(
        f"""() => {{ const q = new URLSearchParams(location.search);
                   const path = location.pathname.replace(/\\/+$/, '').split('/').pop() || 'overview';
                   const app = document.querySelector('[data-testid="stApp"]');
                   return (path === {key!r} || (path === '' && {key!r} === 'overview')) && {checks}
                          && app && app.getAttribute('data-test-script-state') === 'notRunning'; }}""",
        timeout=FOLLOW_MS,
    )


def wait_metric(page, label: str, value: str) -> None:
    """Wait until the metric labelled ``label`` shows ``value`` (fragments refresh it: no reload)."""
    page.wait_for_function(
        """([label, value]) => [...document.querySelectorAll('[data-testid="stMetric"]')].some(m =>
             m.querySelector('[data-testid="stMetricLabel"]')?.innerText.trim() === label
             && m.querySelector('[data-testid="stMetricValue"]')?.innerText.trim() === value)""",
        arg=[label, value], timeout=FOLLOW_MS,
    )


VOTE_BOX = '[class*="st-key-live_vote_"]'


def vote(page, option: int) -> None:
    """A student picks an option in the open vote and sends it; the box then says the vote is in."""
    from harness.server import wait_ready

    box = page.locator(VOTE_BOX).first
    radio = box.locator('[data-testid="stRadio"] input[type="radio"]').nth(option)
    radio.wait_for(state="attached", timeout=FOLLOW_MS)
    page.wait_for_function(
        f"""() => {{ const r = document.querySelectorAll('{VOTE_BOX} [data-testid="stRadio"] input[type="radio"]');
                    return r.length > {option} && !r[{option}].disabled; }}""", timeout=FOLLOW_MS)
    box.locator('[data-testid="stRadio"] [role="radiogroup"] label').nth(option).click()
    wait_ready(page)
    page.locator(".st-key-live_vote_send button").click()
    wait_ready(page)
    try:
        box.locator('[data-testid="stAlertContentSuccess"]').wait_for(timeout=FOLLOW_MS)  # "your vote is in"
    except Exception as err:  # a rare failure under load (seen twice in full-suite runs): say what the box showed
        send = page.locator(".st-key-live_vote_send button")
        checked = box.locator('[data-testid="stRadio"] input[type="radio"]:checked').count()
        raise AssertionError(f"no 'vote in' after sending option {option}: the box says {box.inner_text()!r}; "
                             f"send button {'disabled' if send.count() and send.is_disabled() else 'enabled/absent'}; "
                             f"{checked} option checked; url {page.url}") from err
