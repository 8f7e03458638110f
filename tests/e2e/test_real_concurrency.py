"""Eight students on the real-model page at once, against a running server (issue 28, item 1): each types its own
short sentence over Streamlit's websocket protocol (harness.websocket_client.Student) and must be told the same layer
check verdict and shown the same tokens as that sentence gets alone. Before the fix, sessions shared the hooks
on the one cached model and 19 of 20 were told the check failed."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from harness.server import start_server, stop_server
from harness.websocket_client import Student
from mha_core import layer_check, pretrained, threads
from mha_core.i18n import translate

pytestmark = pytest.mark.e2e

SENTENCES = (
    "The cat sat on the warm mat near the door.",
    "We walked to the station and caught the early train.",
    "She planted tomatoes and beans in the garden.",
    "Scientists measured the lake every morning.",
    "The old library opens at nine on Thursdays.",
    "My brother bought a new bicycle last week.",
    "Rain fell softly over the quiet harbour town.",
    "The children built a tall tower of wooden blocks.",
)


def _verdict(loaded: pretrained.Loaded, sentence: str) -> str:
    """What the page says under the layer check for this sentence, computed here, alone."""
    checks = layer_check.check_all(loaded, pretrained.run(loaded, sentence))
    worst = max(max(c.weights_diff, c.output_diff) for c in checks)
    assert all(c.ok for c in checks)
    return translate("en", "real.all_pass", L=loaded.n_layers, worst=f"{worst:.1e}", tol=f"{layer_check.TOLERANCE:.0e}")


async def _student(base: str, sentence: str) -> tuple[list[str], float]:
    """A session that opens the page, types its own sentence: the page's texts and the seconds it took."""
    s = Student(base, "none", {"lang": "en"})
    await s.connect()
    try:
        first = await s.run("real", timeout=120)
        assert not first.exceptions, first.exceptions
        mine = await s.run("real", {first.widget_id("real_sentence"): ("string_value", sentence)}, timeout=120)
        assert not mine.exceptions, mine.exceptions
        return mine.texts, first.seconds + mine.seconds
    finally:
        await s.close()


def test_eight_students_at_once_each_get_their_own_sentence_s_verdict():
    import torch

    loaded = pretrained.load()
    before = torch.get_num_threads()
    threads.one_thread_each()  # as the server computes: sums in another order differ in the verdict's last digit
    try:
        expected = {s: _verdict(loaded, s) for s in SENTENCES}
    finally:
        threads.set_threads(before)
    tokens = {s: translate("en", "real.tokens", n=pretrained.run(loaded, s).n) for s in SENTENCES}
    proc, base = start_server(timeout=120)
    try:
        async def everyone() -> list[tuple[list[str], float]]:
            return await asyncio.wait_for(asyncio.gather(*(_student(base, s) for s in SENTENCES)), timeout=150)

        # a thread of its own: Playwright's sync API (a session fixture) keeps an event loop running in this one
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            got = pool.submit(lambda: asyncio.run(everyone())).result()
        pages = [texts for texts, _ in got]
        print(f"sessions took {min(x for _, x in got):.1f}-{max(x for _, x in got):.1f} s")
    finally:
        stop_server(proc)
    wrong = [s for s, texts in zip(SENTENCES, pages, strict=True)
             if expected[s] not in texts or not any(x.startswith(tokens[s]) for x in texts)]
    told_fail = sum(any(x.startswith("Largest difference") for x in texts) for texts in pages)
    assert (wrong, told_fail) == ([], 0)
    # eight new sentences, two computed at a time: the others were told their place in the queue (issue 28.4)
    queue = translate("en", "real.queue", n=0).split("0")[0]
    assert sum(any(x.startswith(queue) for x in texts) for texts in pages) >= 1
