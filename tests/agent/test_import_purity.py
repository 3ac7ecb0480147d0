"""`agent.loop` is framework-free: importing it pulls in neither Django nor the OpenAI SDK."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import agent.loop
import agent.llm.offline
leaked = sorted(name for name in ("django", "openai", "channels") if name in sys.modules)
print(",".join(leaked))
"""


def test_importing_the_loop_imports_no_framework():
    # A fresh interpreter: the test process itself has Django loaded already.
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == ""
