"""The main job: `mao-embed demo` exits 0 only when the page shows the submitted claim."""

from __future__ import annotations

import subprocess
import sys


def test_demo_command_submits_the_claim_and_exits_zero():
    completed = subprocess.run(
        [sys.executable, "-m", "mao_embed.cli", "demo"], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    # The log shows inspect -> fills -> submit -> observe, in that order.
    log = [line.split("]", 1)[1].split() for line in out.splitlines() if line.startswith("[")]
    tools = [words[0] for words in log]
    assert tools[0] == "page_inspect"
    submit = next(
        i for i, words in enumerate(log) if words[:3] == ["page_click", "Submit", "claim"]
    )
    assert "page_fill" in tools[1:submit]
    assert {"batch:select", "batch:check"} <= {words[0] for words in log[1:submit]}
    assert "page_observe" in tools[submit + 1 :]
    assert all("ok" in words for words in log)
    assert "| Client visit Shanghai | 1280.50 | 2026-11-27 | Travel | personal | yes |" in out
