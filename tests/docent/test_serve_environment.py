"""`manage.py serve` listens where HOST and PORT say, as `make run` does."""

from docent.management.commands.serve import Command


def _defaults() -> dict:
    options = Command().create_parser("manage.py", "serve").parse_args([])
    return {"host": options.host, "port": options.port}


def test_serve_listens_on_host_and_port_from_the_environment(monkeypatch):
    monkeypatch.setenv("HOST", "127.0.0.2")
    monkeypatch.setenv("PORT", "18123")

    assert _defaults() == {"host": "127.0.0.2", "port": 18123}


def test_serve_defaults_to_the_loopback_port_8000(monkeypatch):
    monkeypatch.delenv("HOST", raising=False)
    monkeypatch.delenv("PORT", raising=False)

    assert _defaults() == {"host": "127.0.0.1", "port": 8000}
