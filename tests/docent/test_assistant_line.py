"""`make run` says which model answers, and what is wrong with its endpoint's settings."""

import sys

import pytest
from django.db import connection

from docent.assistant_line import assistant_line
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import ScriptedOpenAIServer
from testing_support.waits import wait_until


@pytest.fixture
def endpoint(settings):
    with ScriptedOpenAIServer() as server:
        server.models = ["qwen2.5:7b"]
        server.api_key = "sk-right"
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "sk-right"
        settings.AGENT_MODEL = "qwen2.5:7b"
        yield server


def test_without_an_endpoint_it_names_the_offline_model_and_the_settings(settings):
    settings.OPENAI_BASE_URL = settings.OPENAI_API_KEY = ""

    line, problem = assistant_line()

    assert line.startswith("Assistant: the built-in offline model (Quote mode)")
    assert "OPENAI_API_KEY" in line and not problem


def test_a_working_endpoint_names_the_model_and_where(endpoint):
    assert assistant_line() == (f"Assistant: qwen2.5:7b at {endpoint.base_url}", False)


def test_a_wrong_key_names_the_setting(endpoint, settings):
    settings.OPENAI_API_KEY = "sk-wrong"

    line, problem = assistant_line()

    assert problem
    assert f"{endpoint.base_url} refused the API key (HTTP 401): check OPENAI_API_KEY" in line


def test_a_wrong_model_name_names_the_setting_and_what_the_endpoint_has(endpoint, settings):
    settings.AGENT_MODEL = "qwen2.5-7b"

    line, problem = assistant_line()

    assert problem
    assert line == (
        f"Assistant: {endpoint.base_url} has no model named “qwen2.5-7b”: check AGENT_MODEL "
        "(it lists qwen2.5:7b)"
    )


def test_a_wrong_url_names_the_setting(endpoint, settings):
    settings.OPENAI_BASE_URL = "http://user:secret@127.0.0.1:9/v1"

    line, problem = assistant_line()

    assert problem
    assert line.startswith("Assistant: nothing answers at http://127.0.0.1:9/v1 (")
    assert "check OPENAI_BASE_URL" in line and "secret" not in line


@pytest.mark.django_db(transaction=True)
def test_make_run_says_the_key_was_refused_once_it_serves(endpoint, tmp_path):
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", "{port}"]
    url = database_url(connection.settings_dict["NAME"])
    extra = {"OPENAI_BASE_URL": endpoint.base_url, "OPENAI_API_KEY": "sk-wrong"}
    extra |= {"AGENT_MODEL": "qwen2.5:7b", "DATABASE_URL": url}
    with LiveServer("assistant-line", url, extra, tmp_path, command=command) as web:
        wait_until(lambda: "Assistant:" in web.output(), "the assistant's line")
        output = web.output()

    serving = output.index("Docent is serving")
    assert output.index("refused the API key (HTTP 401): check OPENAI_API_KEY") > serving
