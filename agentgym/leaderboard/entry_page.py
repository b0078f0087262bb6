"""An entry's own pages: its numbers, its chart and its episodes; one episode as a timeline.

``GET /submissions/ID`` (for a browser) is `render_entry_html`: what was submitted, the headline
numbers, success against noise (a line per env, and every env pooled), the numbers of each env
and noise cell, and the list of its episodes, `agentgym.leaderboard.episodes.EPISODES_PER_PAGE`
at a time (filtered by env and noise). ``GET /submissions/ID/episodes/N`` is
`render_episode_html`: the episode's `agentgym.eval.timeline.timeline`, the one `agentgym view`
prints, turn by turn: the agent's messages, its tool calls with each metric's verdict, the
injected faults and what became of them, the user's replies. Texts are the env's own, played
again from the record (`agentgym.eval.transcript`); every text is printed escaped
(`agentgym.leaderboard.web`) and long ones are clipped.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from agentgym.eval.timeline import Event, Mark
from agentgym.eval.view import clip
from agentgym.leaderboard.board import Row
from agentgym.leaderboard.chart import Series, layout, noise_success
from agentgym.leaderboard.episodes import EPISODES_PER_PAGE, Episode
from agentgym.leaderboard.page import TRACKS_TEXT, Number, entry_label, headline_numbers, sort_key
from agentgym.leaderboard.store import Entry
from agentgym.leaderboard.web import render_page

__all__ = ["render_entry_html", "render_episode_html", "Listing", "listing", "BODY_CHARS", "BODY_LINES"]

#: How much of a text (a message, a tool result) an episode page shows.
BODY_CHARS, BODY_LINES = 4000, 80
_HEADLINE_COLUMNS = ("Success [95% CI]", "Score", "Tool correctness", "Tool efficiency",
                     "Recovery (share, median turns)", "Goal consistency", "pass^k", "Episodes")
_CELL_COLUMNS = ("Env", "Noise", "Episodes", "Success [95% CI]", "Score", "Tool correctness", "Tool efficiency",
                 "Faults recovered", "Goal consistency")
_LABELS = {"task": "task", "note": "note", "user": "user", "assistant": "assistant", "turn_error": "refused turn",
           "tool_call": "tool call", "tool_result": "tool result", "fault": "injected fault",
           "constraints": "stated", "recovery": "recovered", "censored": "never recovered",
           "commitment": "committed", "end": "end", "agent_error": "agent error"}


# ============================================================================ the entry
def _share(cell: Mapping[str, Any], name: str) -> Number:
    """A share of a cell, or n/a when there was nothing to measure."""
    x = cell.get(name)
    return Number("n/a" if not isinstance(x, (int, float)) else f"{100 * x:.1f}%", sort_key(x))


def _cell_numbers(cell: Mapping[str, Any]) -> list[Number]:
    lo, hi = cell.get("success_lo"), cell.get("success_hi")
    ci = f"[{100 * lo:.1f}, {100 * hi:.1f}]" if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) else ""
    score, faults = cell.get("score"), cell.get("recovery_faults") or 0
    success, recovery = _share(cell, "success"), _share(cell, "recovery_share")
    return [Number(str(cell.get("n", 0)), sort_key(cell.get("n"))), Number(success.text, success.sort, ci),
            Number("–" if score is None else f"{score:.3f}", sort_key(score)), _share(cell, "tool_correctness"),
            _share(cell, "tool_efficiency"),
            Number(f"{recovery.text} of {faults}" if faults else "no faults", recovery.sort),
            _share(cell, "goal_consistency")]


def _entry_chart(entry: Entry, settings: Sequence[str]) -> Any:
    cells = entry.summary.get("cells") or []
    envs = list(dict.fromkeys(str(c.get("env")) for c in cells))
    series = [Series(env.replace("AgentRL/", ""), noise_success(cells, env)) for env in envs]
    if len(envs) > 1:
        series.append(Series("every env", noise_success(cells)))
    return layout(settings, [s for s in series if s.points])


def _href(entry_id: int, env: str | None = None, noise: str | None = None, page: int = 1) -> str:
    """The address of a page of an entry's episode list (its query is escaped when printed)."""
    query: dict[str, Any] = {k: v for k, v in (("env", env), ("noise", noise)) if v is not None}
    if page > 1:
        query["page"] = page
    return f"/submissions/{int(entry_id)}" + (f"?{urlencode(query)}" if query else "") + "#episodes"


class Listing:
    """One page of an entry's episode list: the episodes shown and where the other pages are.

    Attributes:
        episodes: the episodes of this page.
        total: episodes that pass the filter.
        page, pages: this page's number (from 1) and how many there are.
        env, noise: the filter (None: any).
        first: the 1-based position of the page's first episode in the filtered list.
    """

    def __init__(self, episodes: Sequence[Episode], total: int, page: int, pages: int, env: str | None,
                 noise: str | None) -> None:
        self.episodes, self.total, self.page, self.pages = list(episodes), total, page, pages
        self.env, self.noise = env, noise
        self.first = (page - 1) * EPISODES_PER_PAGE + 1


def listing(episodes: Sequence[Episode], page: int = 1, env: str | None = None, noise: str | None = None) -> Listing:
    """The `page`-th page (from 1) of the episodes that match `env` and `noise`; past the last
    page it holds no episodes."""
    chosen = [e for e in episodes if (env is None or e.env == env) and (noise is None or e.noise == noise)]
    pages = max(1, -(-len(chosen) // EPISODES_PER_PAGE))
    start = (page - 1) * EPISODES_PER_PAGE
    return Listing(chosen[start:start + EPISODES_PER_PAGE], len(chosen), page, pages, env, noise)


def _episode_row(entry_id: int, e: Episode) -> dict[str, Any]:
    s = e.summary
    faults = f"{s['recovered']}/{s['faults']}" if s["faults"] else "–"
    return {"index": e.index, "href": f"/submissions/{int(entry_id)}/episodes/{int(e.index)}", "env": e.env,
            "noise": e.noise, "seed": e.seed, "trial": e.trial, "success": bool(s["success"]),
            "score": f"{s['score']:.2f}", "turns": s["turns"],
            "calls": s["tool_calls"], "faults": faults, "kinds": ", ".join(s["fault_kinds"]),
            "agent_error": s.get("agent_error") or ""}


def render_entry_html(entry: Entry, status: str, settings: Sequence[str], page: Listing | None, *,
                      title: str = "agentgym leaderboard") -> str:
    """An entry's page.

    Args:
        entry: the stored entry.
        status: ``ranked``, ``reference`` or ``archived`` (`agentgym.leaderboard.service.entry_status`).
        settings: its suite's noise settings, in order (empty for a suite this agentgym does not know).
        page: the page of its episode list to show (`listing`), or None when its records are not kept.
        title: the board's title.
    """
    cells = entry.summary.get("cells") or []
    env_ids = list(dict.fromkeys(str(c.get("env")) for c in cells))
    noises = list(dict.fromkeys([*settings, *(str(c.get("noise")) for c in cells)]))
    # Per env, the noise settings in the suite's order (the summary keeps them sorted as text).
    cells = sorted(cells, key=lambda c: (env_ids.index(str(c.get("env"))), noises.index(str(c.get("noise")))))
    cell_rows = [{"env": str(c.get("env")), "noise": str(c.get("noise")), "numbers": _cell_numbers(c),
                  "href": _href(entry.id, env=c.get("env"), noise=c.get("noise"))} for c in cells]
    listed = None
    if page is not None:
        def at(n: int) -> str:
            return _href(entry.id, env=page.env, noise=page.noise, page=n)
        listed = {"rows": [_episode_row(entry.id, e) for e in page.episodes], "total": page.total, "page": page.page,
                  "pages": page.pages, "first": page.first, "last": page.first + len(page.episodes) - 1,
                  "env": page.env, "noise": page.noise,
                  "prev": at(page.page - 1) if 1 < page.page <= page.pages + 1 else None,
                  "next": at(page.page + 1) if page.page < page.pages else None,
                  "all": _href(entry.id) if page.env or page.noise else None}
    heading = TRACKS_TEXT.get(entry.track, (entry.track, ""))[0]
    return render_page(
        "entry.html.j2", title=f"{entry_label(Row(entry, None))} - {title}", csp_meta=False, board_title=title,
        entry=entry, status=status, track_heading=heading, agent_config=json.dumps(entry.agent_config, sort_keys=True),
        records_href=f"/submissions/{int(entry.id)}/records" if entry.track == "sealed" else None,
        headline_columns=_HEADLINE_COLUMNS, headline=headline_numbers(entry.summary), cell_columns=_CELL_COLUMNS,
        cells=cell_rows, chart=_entry_chart(entry, noises), listed=listed, envs=env_ids, noises=noises)


# ============================================================================ one episode
def _symbol(ok: bool | None) -> str:
    return "·" if ok is None else ("✓" if ok else "✗")


def _mark_view(m: Mark) -> dict[str, str]:
    return {"symbol": _symbol(m.ok), "metric": m.metric.replace("_", " "), "text": m.text,
            "tone": "muted" if m.ok is None else ("good" if m.ok else "bad")}


def _turns(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The timeline cut at its ``section`` events: one part per turn (and the start, the end)."""
    parts: list[dict[str, Any]] = []
    for ev in events:
        if ev.kind == "section" or not parts:
            ms = ev.data.get("elapsed_ms") if ev.kind == "section" else None
            parts.append({"title": ev.text if ev.kind == "section" else "", "turn": ev.turn,
                          "ms": f"{ms:.0f} simulated ms" if isinstance(ms, (int, float)) else "", "events": []})
            if ev.kind == "section":
                continue
        body = None
        if ev.body:
            body = clip(ev.body, BODY_CHARS, BODY_LINES)
        parts[-1]["events"].append({"kind": ev.kind, "label": _LABELS.get(ev.kind, ev.kind), "text": ev.text,
                                    "tone": ev.tone, "body": body, "marks": [_mark_view(m) for m in ev.marks]})
    return parts


def render_episode_html(entry: Entry, episode: Episode, record: Mapping[str, Any], events: Sequence[Event],
                        count: int, *, title: str = "agentgym leaderboard") -> str:
    """One episode of an entry as a timeline.

    Args:
        entry: the stored entry.
        episode: the episode's row of the entry's list.
        record: its record.
        events: its `agentgym.eval.timeline.timeline` (with the texts a replay gave back).
        count: the entry's episodes (for the next and previous links).
        title: the board's title.
    """
    n = episode.index
    base = f"/submissions/{int(entry.id)}"
    task = (record.get("task") or {}).get("id") or ((record.get("metrics") or {}).get("task") or {}).get("id")
    return render_page(
        "episode.html.j2", title=f"{record.get('key', n)} - {title}", csp_meta=False, board_title=title, entry=entry,
        episode=episode, key=str(record.get("key", "")), task=str(task or "?"), parts=_turns(events),
        entry_href=base, list_href=_href(entry.id, page=n // EPISODES_PER_PAGE + 1),
        prev=f"{base}/episodes/{n - 1}" if n > 0 else None, next=f"{base}/episodes/{n + 1}" if n + 1 < count else None,
        agent_error=(record.get("agent_error") or {}).get("type"), body_chars=BODY_CHARS)
