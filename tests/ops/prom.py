"""Reading /metrics the way Prometheus does: the text format, parsed by prometheus-client."""

import httpx
from prometheus_client.parser import text_string_to_metric_families


def scrape(url: str, **headers: str) -> dict[tuple[str, frozenset], float]:
    """GET {url}/metrics over a real socket; samples keyed by (name, labels)."""
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


def parse(text: str) -> dict[tuple[str, frozenset], float]:
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    """One sample's value; 0 when it was never written (prometheus-client omits it)."""
    return samples.get((name, frozenset(labels.items())), 0.0)
