"""The alerting rules: one file for Prometheus (ops/alerts.yml), shown as is in the docs."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "ops" / "alerts.yml"


def test_the_readme_shows_the_rules_file_as_it_is():
    """Two copies of the rules drift apart unless something compares them."""
    readme = (ROOT / "docs" / "operations.md").read_text()
    section = readme[readme.index("#### Alerts worth having") :]
    block = section[section.index("```yaml\n") + len("```yaml\n") :]
    block = block[: block.index("```\n")]
    rules = "".join(
        line for line in RULES.read_text().splitlines(keepends=True) if not line.startswith("# ")
    )

    assert block == rules


def test_every_metric_a_rule_reads_is_in_the_readmes_table():
    """A misspelt metric in a rule never fires, and nothing says so."""
    readme = (ROOT / "docs" / "operations.md").read_text()
    documented = set(re.findall(r"^\| `(docent_[a-z_]+)`", readme, re.MULTILINE))
    named = re.findall(r"docent_[a-z_]+", RULES.read_text())  # expressions and comments
    read = {re.sub(r"_bucket$", "", name) for name in named}

    assert read and read <= documented, read - documented


@pytest.mark.skipif(shutil.which("promtool") is None, reason="Prometheus's promtool not installed")
def test_promtool_accepts_the_rules():
    checked = subprocess.run(  # noqa: S603
        ["promtool", "check", "rules", str(RULES)],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
