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
