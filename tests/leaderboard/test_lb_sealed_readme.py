"""The README's "Submit to the leaderboard" commands work as shown, against a board on 127.0.0.1.

Each ``agentgym`` line of the section's code block is run in a shell, with the placeholders
filled in: the board's URL, a built-in agent for ``my_pkg.agent:MyAgent``, and smoke-v0 for
core-v0 (the same commands; a tenth of the episodes).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import lb_sealed_support as T

README = Path(__file__).resolve().parents[2] / "README.md"


def _section_commands() -> list[str]:
    text = README.read_text("utf-8")
    section = text[text.index("## Submit to the leaderboard"):]
    section = section[:section.index("\n## ", 5)]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_readme_submit_commands_run_against_a_local_board(tmp_path: Path) -> None:
    commands = _section_commands()
    assert any("--sealed" in c for c in commands) and any("agentgym submit" in c for c in commands)
    shown = (README.read_text("utf-8"))
    assert "agentgym leaderboard serve --db board.sqlite\n--sealed" in shown or \
        "agentgym leaderboard serve --db board.sqlite --sealed" in shown
    # The console script of the agentgym under test comes first on PATH.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    added = subprocess.run([str(Path(sys.executable).parent / "agentgym"), "leaderboard", "token", "add", "--org", "My lab", "--db", "board.sqlite"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    with T.board_process(tmp_path / "board.sqlite", cwd=tmp_path) as (url, _):
        for command in commands:
            if command.startswith("export AGENTGYM_TOKEN="):
                env["AGENTGYM_TOKEN"] = token
                continue
            line = (command.replace("https://LEADERBOARD_URL", url).replace("my_pkg.agent:MyAgent", "heuristic")
                    .replace("core-v0", "smoke-v0"))
            if line.startswith("agentgym bench") and "--sealed" not in line:
                line += " --no-report"  # the report's plots are not what is tested here
            done = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                                  env=env)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            if "--sealed" in line:
                assert "(sealed): entry" in done.stdout
            if "leaderboard verify" in line:
                assert done.stdout.startswith("ok ")
            if "agentgym submit" in line:
                assert ": ranked on smoke-v0" in done.stdout
        board = T.http(url, "GET", "/leaderboard.json")[1]
    assert [(s["track"], len(s["rows"])) for s in board["suites"]] == [("sealed", 1), ("open", 1)]
