import pytest
from django.core.cache import cache

from testing_support.model_server import ScriptedOpenAIServer


@pytest.fixture
def model_server():
    """A scripted OpenAI-compatible server on loopback; every queued answer must be used."""
    with ScriptedOpenAIServer() as server:
        yield server
        assert server.pending == 0, f"{server.pending} scripted responses were never requested"


@pytest.fixture
def scripted(model_server, settings):
    """The scripted server as this process's model endpoint (in-process chat tests)."""
    settings.OPENAI_BASE_URL = model_server.base_url
    settings.OPENAI_API_KEY = "test-key"
    settings.AGENT_MODEL = "scripted-model"
    return model_server


@pytest.fixture(autouse=True)
def _fresh_limits(settings, tmp_path):
    cache.clear()
    settings.AGENT_SPOOL_DIR = str(tmp_path / "spool")
    yield
    cache.clear()
