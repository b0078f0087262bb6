"""``agentgym submit`` and ``agentgym leaderboard ...`` (parsed by the same argparse code the CLI wires in)."""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
from pathlib import Path
from typing import Any, Iterator

import lb_support as S
import pytest

from agentgym.bench import suites
from agentgym.leaderboard.commands import SUBMISSION_SUFFIX, add_leaderboard_commands
from agentgym.leaderboard.store import Store


@pytest.fixture(autouse=True)
def test_suites_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # The commands use the built-in registry; the test suites join it for the duration of a test.
    for sid, suite in S.REGISTRY.items():
        monkeypatch.setitem(suites.SUITES, sid, suite)


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="agentgym")
    add_leaderboard_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def test_submit_to_a_local_board_and_show_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "board.sqlite"
    out = tmp_path / f"heuristic{SUBMISSION_SUFFIX}"
    assert run("submit", str(S.run_dir("heuristic")), "--db", str(db), "--out", str(out), "--model", "rules",
               "--revision", "v1", "--org", "tests", "--description", "the heuristic baseline") == 0
    text = capsys.readouterr().out
    assert "ranked on lbtest-v1" in text and out.exists()
    assert run("submit", str(S.run_dir("heuristic")), "--db", str(db), "--model", "rules", "--revision", "v1") == 0
    assert "duplicate" in capsys.readouterr().out
    assert Store(db).count() == 1
    assert run("leaderboard", "show", "--db", str(db)) == 0
    shown = capsys.readouterr().out
    assert "| 1 | heuristic | rules | v1 | tests |" in shown


def test_verify_and_render_from_submission_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "leaderboard"
    subs = folder / "submissions"
    for agent, kwargs in S.AGENTS[:3]:
        name = agent.replace(":", "_")
        assert run("submit", str(S.run_dir(agent, kwargs)), "--out", str(subs / f"{name}{SUBMISSION_SUFFIX}"),
                   "--model", f"baseline/{name}", "--revision", "v1") == 0
    files = sorted(str(p) for p in subs.iterdir())
    assert run("leaderboard", "verify", *files) == 0
    assert capsys.readouterr().out.count("ok ") == 3
    assert run("leaderboard", "render", "--out", str(folder)) == 0
    md = (folder / "LEADERBOARD.md").read_text("utf-8")
    page = (folder / "index.html").read_text("utf-8")
    assert "## lbtest-v1" in md and "Reference agents" in md and md.count("| baseline/") == 3
    assert page.count("<script") == 1 and page.count('class="entry"') == 3  # the page's own script only


def test_a_suite_of_the_hard_tier_verifies_and_renders_in_its_own_section(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "leaderboard"
    subs = folder / "submissions"
    for suite in (S.SUITE, S.HARD_SUITE):
        assert run("submit", str(S.run_dir("heuristic", suite_id=suite.id)), "--out",
                   str(subs / f"{suite.id}-heuristic{SUBMISSION_SUFFIX}"), "--model", "rules", "--revision", "v1") == 0
    assert run("leaderboard", "verify", *sorted(str(p) for p in subs.iterdir())) == 0
    assert capsys.readouterr().out.count("ok ") == 2
    hard = S.records("heuristic", suite_id=S.HARD_SUITE.id)
    assert {(r["env"]["kwargs"]["difficulty"], r["task"]["difficulty"]) for r in hard} == {("hard", "hard")}
    assert run("leaderboard", "render", "--out", str(folder)) == 0
    md = (folder / "LEADERBOARD.md").read_text("utf-8")
    page = (folder / "index.html").read_text("utf-8")
    for suite in (S.SUITE, S.HARD_SUITE):
        assert md.count(f"### {suite.id}\n\n{suite.description}") == 1
        assert page.count(f'<section class="suite" data-track="open" data-suite="{suite.id}">') == 1
    assert md.count("| rules |") == 2  # a row in each section
    # Its records name the tier they played (replay makes the env with it): records that drop it are refused.
    for r in hard:
        r["env"]["kwargs"].pop("difficulty")
    bad = tmp_path / f"drawn{SUBMISSION_SUFFIX}"
    bad.write_bytes(S.body_for(hard, suite=S.HARD_SUITE.id))
    assert run("leaderboard", "verify", str(bad)) == 1
    assert "REJECTED" in capsys.readouterr().out


def test_tampered_file_fails_verification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = S.records("heuristic")
    recs[2]["actions"][0] = "I will book the first thing I find."
    bad = tmp_path / f"bad{SUBMISSION_SUFFIX}"
    bad.write_bytes(S.body_for(recs))
    assert run("leaderboard", "verify", str(bad)) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and recs[2]["key"] in out and "step 1" in out
    folder = tmp_path / "lb"
    (folder / "submissions").mkdir(parents=True)
    (folder / "submissions" / bad.name).write_bytes(bad.read_bytes())
    assert run("leaderboard", "render", "--out", str(folder)) == 1  # a published board never holds it
    assert not (folder / "LEADERBOARD.md").exists()


def test_submit_needs_a_destination() -> None:
    with pytest.raises(ValueError, match="--to URL"):
        run("submit", str(S.run_dir("heuristic")), "--model", "m", "--revision", "r")
    with pytest.raises(ValueError, match="control character"):
        run("submit", str(S.run_dir("heuristic")), "--model", "m\x07", "--revision", "r", "--out", "/tmp/x.gz")
    with pytest.raises(ValueError, match="not a bench run folder"):
        run("submit", "/nonexistent", "--model", "m", "--revision", "r", "--out", "/tmp/x.gz")


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[str]:
    from agentgym.leaderboard.server import create_app

    with S.serving(create_app(tmp_path / "srv.sqlite", suites=S.REGISTRY, workers=1)) as url:
        yield url


def test_submit_over_http(live_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("submit", str(S.run_dir("heuristic")), "--to", live_server, "--model", "m", "--revision", "r") == 0
    assert "submission 1: ranked" in capsys.readouterr().out
    assert run("submit", str(S.run_dir("heuristic")), "--to", live_server + "/submissions", "--model", "m",
               "--revision", "r") == 0
    assert "submission 1: duplicate" in capsys.readouterr().out
    # A run whose records were edited after the fact: the server names the episode.
    folder = S.run_dir("heuristic").parent / "edited"
    if not folder.exists():
        import shutil

        shutil.copytree(S.run_dir("heuristic"), folder)
        lines = (folder / "records.jsonl").read_text().splitlines()
        rec = json.loads(lines[0])
        rec["steps"][-1]["reward"] = 0.5
        lines[0] = json.dumps(rec, sort_keys=True)
        (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    assert run("submit", str(folder), "--to", live_server, "--model", "m2", "--revision", "r") == 1
    err = capsys.readouterr().err
    assert "replay_mismatch" in err and "step" in err


# ============================================================================ an unreachable board
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nothing listens there


@contextlib.contextmanager
def _hostile_listener(mode: str) -> Iterator[int]:
    """A loopback socket that accepts and then hangs up at once, or never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        held = []
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            if mode == "hang up":
                conn.close()
            else:
                held.append(conn)
        for conn in held:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(srv.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=5)
        srv.close()


@pytest.mark.parametrize("where", ["nothing listens", "hangs up", "never answers"])
def test_submit_to_an_unreachable_board_says_so_in_one_line(where: str, agentgym_here: Any) -> None:
    with contextlib.ExitStack() as stack:
        if where == "nothing listens":
            port = _closed_port()
        else:
            port = stack.enter_context(_hostile_listener("hang up" if where == "hangs up" else "silent"))
        url = f"http://127.0.0.1:{port}"
        proc = agentgym_here("submit", str(S.run_dir("heuristic")), "--to", url, "--model", "m", "--revision", "r",
                             "--timeout", "2")
    err = proc.stderr.strip()
    assert proc.returncode != 0, where
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"agentgym: error: cannot reach the leaderboard at {url}: "), err
