"""The README's two set-up commands stay true: CI runs the second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def test_exactly_two_setup_commands():
    run_app, run_tests = _setup_commands()
    assert "requirements.txt" in run_app and "streamlit run app.py" in run_app
    assert "requirements-dev.txt" in run_tests and "pytest" in run_tests


def test_the_test_command_installs_the_package_before_pytest():
    """Tests import mha_core and benchmarks as an installed package (tests/test_layout.py), editable so the assets
    stay where mha_core finds them, --no-deps because the pins come from the requirements files."""
    run_tests = _setup_commands()[1]
    steps = [step.strip() for step in run_tests.split("&&")]
    assert "pip install -q --no-deps -e ." in steps
    assert steps.index("pip install -q --no-deps -e .") < steps.index("python -m pytest") == len(steps) - 1


def test_the_benchmark_instructions_name_every_benchmark_as_a_module():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Benchmarks", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"\b(bench_\w+)\b", section))
    shipped = {p.stem for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert named == shipped
    for module in re.findall(r"python -m (benchmarks\.\w+)", section):
        assert (ROOT / Path(*module.split("."))).with_suffix(".py").exists(), module
    assert "python benchmarks/" not in text  # run as modules of the installed package


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci.splitlines()


def test_requirements_pin_the_cpu_torch_and_a_recent_streamlit():
    req = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^torch==2\.13\.0$", req, flags=re.M)
    major, minor = map(int, re.search(r"^streamlit==(\d+)\.(\d+)", req, flags=re.M).groups())
    assert (major, minor) >= (1, 61)


def test_app_config_suits_a_classroom():
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["client"]["toolbarMode"] == "minimal"
    assert cfg["browser"]["gatherUsageStats"] is False


def test_app_config_keeps_reruns_cheap_under_a_class():
    """No full garbage collection after every script run: with torch loaded it dominated a class's reruns."""
    import tomllib

    from streamlit import config

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["runner"]["postScriptGC"] is False
    assert "runner.postScriptGC" in config._config_options_template  # still an option of the pinned Streamlit


def test_app_config_takes_no_messages_from_another_site(monkeypatch):
    """The host config Streamlit's server gives the browser allows no origin to drive the app by postMessage (the
    default allows Community Cloud's sites), and the browser then checks no message against a list: it did, for each
    of its own messages, 7 a move (4.8 ms of main thread a move, issue 26's profile)."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient
    from streamlit import config
    from streamlit.web.server.starlette.starlette_routes import create_host_config_routes

    monkeypatch.chdir(ROOT)
    config.get_config_options(force_reparse=True)
    try:
        served = TestClient(Starlette(routes=create_host_config_routes(None))).get("/_stcore/host-config").json()
    finally:
        config.get_config_options(force_reparse=True)
    assert served["allowedOrigins"] == []
