"""The only part of mha_core that imports Streamlit: the page frame and shared renderers."""

from streamlit import delta_generator

from mha_core import threads
from mha_core.ui import config_reads, run_handoff, runner_events, send_wakeup, shared_body, theme_message
from mha_core.ui.i18n import bound_t, lang, t

# Streamlit asks once per process, at the first element drawn, whether it runs in a Python REPL (to print a hint
# about `streamlit run`) by walking ``inspect.stack()``, which reads the source of every frame and indexes every
# loaded module: 80 ms of a fresh server's first page (py-spy, issue 26's cold start). This app only runs under
# `streamlit run`, so the question is answered here; tests/test_imports.py fails if the pinned Streamlit renames it.
delta_generator._use_warning_has_been_displayed = True  # noqa: SLF001 - see above

config_reads.install()  # a config option read without Streamlit's process-wide lock (see the module)
run_handoff.install()  # two races of a full run handing over to a fragment run (see the module)
runner_events.install()  # a run's events reach the event loop in batches, not one wake-up each (see the module)
send_wakeup.install()  # a message queued on the event loop sets its flush event directly (see the module)
threads.quick_handoffs()  # the event loop gets the GIL back within 1 ms of wanting it (see mha_core.threads)
threads.quiet_collector()  # fewer, larger young collections (see mha_core.threads)
theme_message.install()  # every run's new-session message built without re-reading the theme config (see the module)
shared_body.install()  # a class redraw runs a lesson page body once per state, not per student (see the module)

__all__ = ["bound_t", "lang", "t"]
