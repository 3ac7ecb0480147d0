"""`make run WORKERS=N` shares one metrics directory between its processes, emptied per run."""

from docent.cluster import cluster_plan, cluster_write


def test_the_cluster_shares_a_fresh_multiprocess_directory(settings, tmp_path):
    settings.BASE_DIR = tmp_path
    plan = cluster_plan(workers=2, host="127.0.0.1", port=8000, database_url="postgresql:///x")
    shared = plan.data / "prometheus"
    assert plan.env["PROMETHEUS_MULTIPROC_DIR"] == str(shared)

    shared.mkdir(parents=True)
    (shared / "counter_12345.db").write_bytes(b"from the last run")
    cluster_write(plan)

    assert not shared.exists()  # each process creates it again as it starts
