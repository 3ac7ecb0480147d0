"""`make run WORKERS=N` shares one metrics directory between its processes, emptied per run."""

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest
from django.db import connection

from agent.models import Turn
from docent.cluster import cluster_plan, cluster_write
from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url
from testing_support.model_server import ScriptedOpenAIServer, text_response
from tests.ops.chat import ask
from tests.ops.prom import scrape, value


def test_the_cluster_shares_a_fresh_multiprocess_directory(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    shared = plan.data / "prometheus"
    assert plan.env["PROMETHEUS_MULTIPROC_DIR"] == str(shared)

    shared.mkdir(parents=True)
    (shared / "counter_12345.db").write_bytes(b"from the last run")
    cluster_write(plan)

    assert not list(shared.iterdir())  # emptied: the last run's processes are all gone


@pytest.mark.django_db(transaction=True)
def test_through_nginx_any_worker_answers_for_all(tmp_path):
    pieces = [f"w{n} " for n in range(20)]
    with ScriptedOpenAIServer(script_for=lambda _: text_response(pieces, delay=0.05)) as model:
        extra = {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "test",
            "AGENT_MODEL": "scripted",
            "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
        }
        url = database_url(connection.settings_dict["NAME"])
        with LocalCluster(url, tmp_path, extra=extra, workers=2) as cluster:
            # Two at a time: nginx's least_conn gives each worker one.
            for pair in (["Q1", "Q2"], ["Q3", "Q4"]):
                with ThreadPoolExecutor(2) as pool:
                    ends = [events[-1] for events in pool.map(partial(ask, cluster.url), pair)]
                assert [end["type"] for end in ends] == ["done", "done"]
            through_proxy = scrape(cluster.url)
            direct = [scrape(web.url) for web in cluster.webs]

    assert len({turn.worker for turn in Turn.objects.all()}) == 2  # both workers answered
    for samples in (through_proxy, *direct):
        assert value(samples, "docent_turns_total", status="done") == 4
        assert value(samples, "docent_turn_duration_seconds_count") == 4
