import pytest
from django.core.cache import cache

from agent.shared import state_reset
from testing_support.model_server import ScriptedOpenAIServer


@pytest.fixture
def scripted(settings):
    """A scripted OpenAI-compatible server, configured as the site's model endpoint."""
    with ScriptedOpenAIServer() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "test-key"
        settings.AGENT_MODEL = "scripted-model"
        yield server


@pytest.fixture(autouse=True)
def _fresh_limits(settings, tmp_path):
    """Rate-limit counters live in the cache; every test starts with a clean slate."""
    cache.clear()
    state_reset()
    settings.AGENT_SPOOL_DIR = str(tmp_path / "spool")
    yield
    cache.clear()
    state_reset()
