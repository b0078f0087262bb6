"""The ``agentgym submit`` and ``agentgym leaderboard ...`` subcommands.

Wired into `agentgym.cli.build_parser` by one call, ``add_leaderboard_commands(sub)``; options
live here, logic in the library (a submission made and sent: `agentgym.leaderboard.submitting`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentgym.cli_parser import at_least, positive_float, tcp_port
from agentgym.errors import UserError
from agentgym.leaderboard.submission import SUBMISSION_SUFFIX
from agentgym.leaderboard.submitting import build_submission, post_submission
from agentgym.server.serve import ENV_SERVER_PORT, LEADERBOARD_PORT

__all__ = ["add_leaderboard_commands", "DEFAULT_DB", "SUBMISSION_SUFFIX"]

#: The local board `submit --db` and `leaderboard serve` use unless told otherwise.
DEFAULT_DB = "runs/leaderboard.sqlite"


def _print_receipt(answer: dict[str, Any]) -> None:
    s = answer.get("summary") or {}
    success = (s.get("success") or {}).get("value")
    shown = f", success {success:.1%}" if isinstance(success, (int, float)) else ""
    print(f"submission {answer.get('id')}: {answer.get('status')} on {answer.get('suite')}"
          f"{shown} ({s.get('episodes', '?')} episodes replayed and verified)")


def cmd_submit(args: argparse.Namespace) -> int:
    """Build a submission from a run folder; write it, store it locally, or send it."""
    from agentgym.leaderboard.submission import SubmissionError

    if not (args.to or args.db or args.out):
        raise ValueError("say where the submission goes: --to URL, --db PATH or --out FILE")
    body = build_submission(args.run_dir, model=args.model, revision=args.revision, agent=args.agent_name,
                            organisation=args.org, description=args.description)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(body)
        print(f"wrote {out} ({len(body)} bytes)")
    if args.db:
        from agentgym.leaderboard.service import receive
        from agentgym.leaderboard.store import Store

        try:
            receipt = receive(body, Store(args.db))
        except SubmissionError as exc:
            print(f"agentgym: submission rejected: {exc}", file=sys.stderr)
            return 1
        _print_receipt(receipt.to_dict())
    if args.to:
        status, answer = post_submission(args.to, body, args.timeout)
        if status >= 400:
            where = ", ".join(f"{k} {answer[k]}" for k in ("episode", "step", "field") if answer.get(k) is not None)
            print(f"agentgym: submission rejected ({status} {answer.get('error')}): {answer.get('message')}"
                  + (f" ({where})" if where else ""), file=sys.stderr)
            return 1
        _print_receipt(answer)
    return 0


def _verified_store(folder: Path, db_dir: str) -> Any:
    from agentgym.leaderboard.service import receive
    from agentgym.leaderboard.store import Store

    files = sorted(folder.glob(f"*{SUBMISSION_SUFFIX}"))
    store = Store(Path(db_dir) / "board.sqlite")
    for f in files:
        receipt = receive(f.read_bytes(), store)
        e = receipt.entry
        print(f"verified {f.name}: {receipt.status}, {e.episodes} episodes in {e.verify_s:.1f} s", file=sys.stderr)
    return store


def cmd_render(args: argparse.Namespace) -> int:
    """Write LEADERBOARD.md and index.html from a database or a folder of submission files."""
    from agentgym.leaderboard.board import build_board
    from agentgym.leaderboard.page import render_html, render_markdown
    from agentgym.leaderboard.store import Store
    from agentgym.leaderboard.submission import SubmissionError

    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        if args.db:
            if not Path(args.db).exists():
                raise ValueError(f"no leaderboard database at {args.db}")
            store = Store(args.db)
            source = f"the board {args.db}"
        else:
            folder = Path(args.source) if args.source else out / "submissions"
            if not folder.is_dir():
                raise UserError(f"no submissions folder at {folder}: render a board with --db PATH (a SQLite "
                                f"board), or --from FOLDER (a folder of *{SUBMISSION_SUFFIX} files)")
            source = f"{folder}"
            try:
                store = _verified_store(folder, tmp)
            except SubmissionError as exc:
                print(f"agentgym: a submission in {folder} does not verify: {exc}", file=sys.stderr)
                return 1
        sections = build_board(store.entries(), runs=store.sealed_run_counts())
    out.mkdir(parents=True, exist_ok=True)
    (out / "LEADERBOARD.md").write_text(render_markdown(sections, submit_url=args.submit_url), "utf-8")
    (out / "index.html").write_text(render_html(sections, submit_url=args.submit_url), "utf-8")
    entries = sum(len(s.rows) + len(s.reference) for s in sections)
    print(f"wrote {out / 'LEADERBOARD.md'} and {out / 'index.html'} "
          + (f"({entries} entries)" if entries else f"(the board is empty: no submissions in {source})"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Print the board of a database as Markdown."""
    from agentgym.leaderboard.board import build_board
    from agentgym.leaderboard.page import render_markdown
    from agentgym.leaderboard.store import Store

    if not Path(args.db).exists():
        raise ValueError(f"no leaderboard database at {args.db}; submit with `agentgym submit RUN_DIR --db {args.db}`")
    store = Store(args.db)
    print(render_markdown(build_board(store.entries(), runs=store.sealed_run_counts()), submit_url=args.submit_url))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify submission files without storing them."""
    from agentgym.leaderboard.submission import SubmissionError, decode_submission
    from agentgym.leaderboard.verify import verify_submission

    failed = 0
    for path in args.files:
        try:
            v = verify_submission(decode_submission(Path(path).read_bytes()), workers=args.workers)
        except SubmissionError as exc:
            failed += 1
            print(f"REJECTED {path}: {exc}")
            continue
        s = v.summary
        print(f"ok       {path}: {v.manifest.agent} ({v.manifest.model}@{v.manifest.revision}) on {v.suite.id}, "
              f"{s['episodes']} episodes replayed in {v.verify_s:.2f} s, success {s['success']['value']:.1%}")
    return 1 if failed else 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the leaderboard over HTTP (and, with --sealed, host the sealed track)."""
    from agentgym.leaderboard.sealed.config import SealedConfig
    from agentgym.leaderboard.secret import SecretError
    from agentgym.leaderboard.server import serve

    sealed = None
    if args.sealed:
        sealed = SealedConfig(grace_s=args.grace, sessions_per_run=args.sessions_per_run,
                              sessions_per_token=args.sessions_per_token, max_sessions=args.max_sessions,
                              env_calls=args.env_calls)
    try:
        serve(args.db, host=args.host, port=args.port, public_url=args.public_url, workers=args.workers,
              sealed=sealed)
    except SecretError as exc:
        print(f"agentgym: the board will not start: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """Issue, list or revoke submitters' tokens of a board."""
    from agentgym.leaderboard.store import Store
    from agentgym.leaderboard.tokens import TokenBook

    book = TokenBook(Store(args.db))
    if args.token_command == "add":
        token, secret = book.add(args.org, args.quota)
        print(f"token {token.id} for {token.organisation!r}, {token.quota_per_day} sealed runs a day. It is shown "
              "once; the board keeps only its hash:", file=sys.stderr)
        print(secret)
        return 0
    if args.token_command == "list":
        for t in book.list():
            state = f"revoked {t.revoked_at}" if t.revoked_at else "live"
            print(f"{t.id:4d}  {t.organisation}  quota {t.quota_per_day}/day  issued {t.created_at}  {state}")
        return 0
    if not book.revoke(args.id):
        print(f"agentgym: no live token {args.id} on {args.db}", file=sys.stderr)
        return 1
    print(f"token {args.id} revoked: it is refused from now on, and its open runs close as incomplete")
    return 0


def add_leaderboard_commands(sub: Any) -> None:
    """Add ``submit`` and ``leaderboard {serve,token,render,show,verify}`` to the `agentgym` subparsers."""
    p = sub.add_parser("submit", help="submit a bench run to a leaderboard (replayed and verified there)",
                       description="Build a submission (agentgym-submission/1: the manifest line, then the run's "
                                   "records.jsonl, gzip-compressed) from an `agentgym bench` run folder and send "
                                   "it to a server (--to), verify and store it in a local board (--db), and/or "
                                   "write it to a file (--out).")
    p.add_argument("run_dir", help="a run folder written by `agentgym bench` (records.jsonl and run.json)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--to", metavar="URL", help="the leaderboard server (its base URL or .../submissions)")
    where.add_argument("--db", metavar="PATH", help="a local SQLite board: verify and store without HTTP")
    p.add_argument("--out", metavar="FILE", help=f"also write the submission to FILE (*{SUBMISSION_SUFFIX})")
    p.add_argument("--model", required=True, help="the model behind the agent (a model id, a checkpoint)")
    p.add_argument("--revision", required=True, help="the model's revision (a commit, a date, a step)")
    p.add_argument("--agent-name", default=None, help="the agent's display name (default: the run's agent)")
    p.add_argument("--org", default="", help="your organisation")
    p.add_argument("--description", default="", help="a short description (up to 2,000 characters)")
    p.add_argument("--timeout", type=positive_float, default=600.0,
                   help="seconds to wait for the server (default: 600)")
    p.set_defaults(func=cmd_submit)

    lb = sub.add_parser("leaderboard", help="serve, render, show or verify a leaderboard",
                        description="The leaderboard: a server that replays every submitted episode, and the "
                                    "static board (LEADERBOARD.md and index.html).")
    lsub = lb.add_subparsers(dest="leaderboard_command", required=True, metavar="ACTION")

    s = lsub.add_parser("serve", help="serve the board and accept submissions over HTTP (FastAPI, uvicorn)",
                        description="Serve the board of a SQLite database over HTTP: GET /leaderboard (the page), "
                                    "/leaderboard.json, /submissions/ID and /metrics (Prometheus); POST /submissions "
                                    "replays and verifies every episode of a submission before it is ranked.")
    s.add_argument("--db", default=DEFAULT_DB, help=f"the SQLite board (default: {DEFAULT_DB}; created if missing)")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    s.add_argument("--port", type=tcp_port, default=LEADERBOARD_PORT,
                   help=f"TCP port (default: {LEADERBOARD_PORT}; the env server's is {ENV_SERVER_PORT})")
    s.add_argument("--public-url", default=None, help="the base URL shown on the page (default: http://HOST:PORT)")
    s.add_argument("--workers", type=at_least(1), default=None,
                   help="replay processes per verification (default: by size)")
    from agentgym.leaderboard.sealed.config import SealedConfig

    d = SealedConfig()
    s.add_argument("--sealed", action="store_true",
                   help="host the sealed track: the board steps every episode itself on secret seeds (its secret "
                        "is DB.secret, made on first start with mode 0600)")
    s.add_argument("--grace", type=positive_float, default=d.grace_s,
                   help=f"seconds a sealed run may go without a request before it closes incomplete (default: "
                        f"{d.grace_s:g})")
    s.add_argument("--sessions-per-run", type=at_least(1), default=d.sessions_per_run,
                   help=f"sessions one sealed run may hold at once (default: {d.sessions_per_run})")
    s.add_argument("--sessions-per-token", type=at_least(1), default=d.sessions_per_token,
                   help=f"sessions the runs of one token may hold at once; a token plays one run at a time "
                        f"(default: {d.sessions_per_token})")
    s.add_argument("--max-sessions", type=at_least(1), default=d.max_sessions,
                   help=f"sealed sessions at most, over every run (default: {d.max_sessions})")
    s.add_argument("--env-calls", choices=("thread", "inline"), default=d.env_calls,
                   help=f"where the sealed sessions' env calls run (default: {d.env_calls}; see agentgym serve)")
    s.set_defaults(func=cmd_serve)

    t = lsub.add_parser("token", help="issue, list or revoke submitters' tokens (for the sealed track)")
    tsub = t.add_subparsers(dest="token_command", required=True, metavar="ACTION")
    ta = tsub.add_parser("add", help="issue a token and print it once")
    ta.add_argument("--org", required=True, help="the organisation the token's entries are shown under")
    from agentgym.leaderboard.tokens import DEFAULT_QUOTA

    ta.add_argument("--quota", type=int, default=DEFAULT_QUOTA,
                    help=f"sealed runs the token may open in any 24 hours (default: {DEFAULT_QUOTA})")
    tl = tsub.add_parser("list", help="every token issued (never the tokens themselves)")
    tr = tsub.add_parser("revoke", help="refuse a token from now on")
    tr.add_argument("id", type=int, help="the token's id (see token list)")
    for q in (ta, tl, tr):
        q.add_argument("--db", default=DEFAULT_DB, help=f"the SQLite board (default: {DEFAULT_DB})")
        q.set_defaults(func=cmd_token)

    r = lsub.add_parser("render", help="write the static board: LEADERBOARD.md and index.html",
                        description="Render the board from a SQLite board (--db) or by verifying every "
                                    f"*{SUBMISSION_SUFFIX} file of a folder (--from, default OUT/submissions); "
                                    "an empty source renders an empty board and says so.")
    r.add_argument("--out", required=True, help="the folder to write, e.g. leaderboard/")
    src = r.add_mutually_exclusive_group()
    src.add_argument("--db", default=None, help="render the entries of this SQLite board")
    src.add_argument("--from", dest="source", default=None, help="verify and render the submission files here")
    r.add_argument("--submit-url", default="URL", help="the submission URL shown in the how-to sentence")
    r.set_defaults(func=cmd_render)

    w = lsub.add_parser("show", help="print the board of a SQLite board as Markdown",
                        description="Print the ranked board of a SQLite board (written by `agentgym submit --db` "
                                    "or `agentgym leaderboard serve`) as Markdown tables, one per suite.")
    w.add_argument("--db", default=DEFAULT_DB, help=f"the SQLite board (default: {DEFAULT_DB})")
    w.add_argument("--submit-url", default="URL", help="the submission URL shown in the how-to sentence")
    w.set_defaults(func=cmd_show)

    v = lsub.add_parser("verify", help="replay and check submission files without storing them",
                        description="Replay every episode of each submission file as the server would and print "
                                    "ok or REJECTED (with the first offending episode and step) per file; exits 1 "
                                    "when one is rejected. Nothing is stored.")
    v.add_argument("files", nargs="+", help=f"submission files (*{SUBMISSION_SUFFIX})")
    v.add_argument("--workers", type=at_least(1), default=None, help="replay processes (default: by size)")
    v.set_defaults(func=cmd_verify)
