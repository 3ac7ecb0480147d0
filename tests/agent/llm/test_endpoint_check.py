"""The start's look at the model endpoint (agent/llm/endpoint_check.py), against a real HTTP
server that lists models and checks the key as OpenAI's does."""

import pytest

from agent.llm.endpoint_check import endpoint_check
from testing_support.model_server import ScriptedOpenAIServer


@pytest.fixture
def endpoint():
    with ScriptedOpenAIServer() as server:
        server.models = ["llama3.1:8b", "qwen2.5:7b"]
        server.api_key = "sk-right"
        yield server


def check(url: str, *, key: str = "sk-right", model: str = "qwen2.5:7b"):
    return endpoint_check(base_url=url, api_key=key, model=model, timeout=5)


def test_a_listed_model_with_the_right_key_is_no_problem(endpoint):
    result = check(endpoint.base_url)

    assert result.problem == ""
    assert result.models == ("llama3.1:8b", "qwen2.5:7b")


def test_a_wrong_key_is_the_key(endpoint):
    assert check(endpoint.base_url, key="sk-wrong").problem == "key"


def test_a_model_the_endpoint_does_not_list_is_the_model_and_the_list_is_said(endpoint):
    result = check(endpoint.base_url, model="gpt-4o-mini")

    assert result.problem == "model"
    assert result.detail == "llama3.1:8b, qwen2.5:7b"


def test_nothing_listening_is_unreachable():
    with ScriptedOpenAIServer() as gone:
        url = gone.base_url

    result = check(url)

    assert result.problem == "unreachable"


def test_an_endpoint_that_keeps_no_list_is_unlisted_not_a_problem(endpoint):
    # A base URL without /v1 reaches the server, which has no such route (404).
    assert check(endpoint.base_url.removesuffix("/v1") + "/nowhere").problem == "unlisted"
