"""The shipped deployment files agree with the app: behind nginx the limiter must see each student's address."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import yaml

from mha_core.ui.class_services import PROXIES_ENV

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict:
    with (ROOT / "deploy" / "compose.yaml").open(encoding="utf-8") as f:
        return yaml.safe_load(f)


def test_compose_apps_trust_exactly_the_nginx_address_on_their_network():
    compose = _compose()
    services = compose["services"]
    nginx = services["nginx"]["networks"]
    (net, conf), = nginx.items()
    proxy = ipaddress.ip_address(conf["ipv4_address"])
    subnet = ipaddress.ip_network(compose["networks"][net]["ipam"]["config"][0]["subnet"])
    assert proxy in subnet
    apps = [s for name, s in services.items() if name.startswith("app")]
    assert len(apps) >= 2
    for app in apps:
        assert app["environment"][PROXIES_ENV] == str(proxy)  # else every student shares nginx's limiter count
        assert net in app["networks"]


def test_nginx_passes_the_client_address_the_app_reads():
    conf = (ROOT / "deploy" / "nginx" / "mha-lab.conf").read_text(encoding="utf-8")
    assert "proxy_set_header X-Real-IP $remote_addr;" in conf


def test_systemd_settings_name_the_trusted_proxy():
    unit = (ROOT / "deploy" / "systemd" / "mha-lab@.service").read_text(encoding="utf-8")
    assert f"{PROXIES_ENV}=127.0.0.1" in unit
