"""The board as an HTML page and as Markdown. Every string from a submission is data.

HTML: the ``templates/board.html.j2`` template (`agentgym.leaderboard.web`: Jinja2 with
autoescape), so every printed value is HTML-escaped. The page's one script sorts its tables by
a clicked column; links are made of entry ids (integers of the board's), never of submitted
text; a Content-Security-Policy allows only the page's own stylesheet and script, by hash, as a
header when served and as a meta tag in the static file. Each suite's section ends with a chart
of success against noise, a line per entry (`agentgym.leaderboard.chart`).

Both render the two tracks apart (`agentgym.leaderboard.board`): the sealed track first, the
ranking of record, then the open track, whose privilege is self-reported.

Markdown: each text cell is flattened to one line, HTML-escaped (``& < >``), stripped of its
Markdown meaning (``\\ ` * _ [ ] | ~`` are backslash-escaped) and, when it starts with ``=``,
``+``, ``-`` or ``@``, prefixed with ``'`` so that a spreadsheet fed the table reads text, not a
formula (CSV injection).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from agentgym.leaderboard.board import Row, Section
from agentgym.leaderboard.chart import Chart, Series, layout, noise_success
from agentgym.leaderboard.web import CSP, render_page

__all__ = ["render_html", "render_markdown", "CSP", "HOW_TO_SUBMIT", "TRACKS_TEXT", "md_cell", "entry_label",
           "code_spans", "headline_numbers", "sort_key", "Number"]

HOW_TO_SUBMIT = ("Sealed track: with the token the board's admin gave you in `AGENTGYM_TOKEN`, run "
                 "`agentgym bench SUITE --agent AGENT --sealed {base} --model MODEL --revision REVISION`; the board "
                 "steps every episode itself on seeds drawn for your run and publishes the records once it is "
                 "complete. Open track: run a suite with `agentgym bench SUITE --agent AGENT --out RUN_DIR`, then "
                 "`agentgym submit RUN_DIR --to {url} --model MODEL --revision REVISION`. The server replays every "
                 "episode with its recorded seed and actions, recomputes every number and rejects the whole "
                 "submission at the first mismatch.")
#: Each track's heading and what it means, in the order the board shows them.
TRACKS_TEXT = {
    "sealed": ("Sealed track: the ranking of record",
               "The board stepped every episode itself, on seeds drawn from its secret for each run: no agent saw "
               "an env or knew an episode in advance. Each entry links its records, published with their seeds "
               "once the run was complete (replay them with agentgym leaderboard verify FILE)."),
    "open": ("Open track: replay-verified uploads (self-reported privilege)",
             "Runs of the suites' public seeds, uploaded and replayed: every number is the recorded actions', but "
             "how the actions were chosen, and whether the agent read hidden state, is the submitter's own word."),
}


#: The sealed track's ranking rule, and what the tables beside its ranking show.
_FIRST_RUN = "an organisation and model rank by their first complete run"
_LATER_HEADING = f"Later complete runs (not ranked: {_FIRST_RUN}, so keeping the best of many runs lifts nothing)"
_RUNS_HEADING = ("Sealed runs, by organisation and model: opened, complete, abandoned (closed before their last "
                 "episode, except by a restart of the board) and in play")
_RUN_COLUMNS = ("Organisation", "Model", "Opened", "Complete", "Abandoned", "In play")


def _how(s: Section) -> str:
    if not s.current:
        return "Not ranked."
    rule = f"; {_FIRST_RUN}" if s.track == "sealed" else ""
    return f"Ranked by {s.primary} with its 95% bootstrap CI{rule}."


def _base_url(submit_url: str) -> str:
    return submit_url[: -len("/submissions")] if submit_url.endswith("/submissions") else submit_url
_TIE_TITLE = "within noise: the 95% CI overlaps the one of the row above"
_LEGEND = ("Tool correctness: valid calls that contradict nothing the user said and that no tool refused; "
           "efficiency: valid calls that advance the work (a repeat or a call no plan needs does not). Recovery: "
           "the share of injected faults the agent recovered from, and the Kaplan-Meier median of the agent turns "
           "it took (n/a: fewer than half were recovered). Goal consistency: the share of commitments that meet "
           "every stated constraint (n/a: nothing committed). docs/METRICS.md defines each.")
_COLUMNS = ("Rank", "Agent", "Model", "Revision", "Organisation", "Success [95% CI]", "Score", "Tool correctness",
            "Tool efficiency", "Recovery (share, median turns)", "Goal consistency", "pass^k", "Episodes", "Records")
#: The columns of numbers (right-aligned in Markdown): from "Success" to "Episodes", and the rank.
_NUMERIC = (0, *range(5, 13))
#: After the records digest: the agentgym release the run was made (and replayed) with.
_VERSION_COLUMN = "agentgym"


# ============================================================================ numbers
@dataclass(frozen=True)
class Number:
    """One number of a row: as shown, the key it sorts by and the CI shown under it."""

    text: str
    #: The value (a decimal), or "" when there was nothing to measure (sorts last).
    sort: str
    ci: str = ""


def _value(summary: Mapping[str, Any], name: str) -> float | None:
    agg = summary.get(name)
    return agg.get("value") if isinstance(agg, Mapping) else None


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def sort_key(x: Any) -> str:
    """What a cell sorts by (its ``data-sort``): a number as a decimal, anything else as nothing (sorts last)."""
    return repr(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else ""


def _primary(summary: Mapping[str, Any]) -> Number:
    agg = summary.get(summary.get("primary", "success")) or {}
    lo, hi = (agg.get("ci") or [None, None])[:2]
    ci = "" if lo is None or hi is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]"
    return Number(_pct(agg.get("value")), sort_key(agg.get("value")), ci)


def _share(summary: Mapping[str, Any], name: str) -> Number:
    """A share, or n/a when there was nothing to measure (never shown as 0 or 100%)."""
    value = _value(summary, name)
    return Number("n/a" if value is None else _pct(value), sort_key(value))


def headline_numbers(summary: Mapping[str, Any]) -> list[Number]:
    """The numbers of a board row, in column order from "Success" to "Episodes"."""
    score = _value(summary, "score")
    share, median = _value(summary, "recovery_share"), _value(summary, "recovery_median")
    if share is None:
        recovery = "no faults"
    else:
        # No median: fewer than half the faults were ever recovered (Kaplan-Meier).
        recovery = f"{_pct(share)}, {'n/a' if median is None else f'{median:g}'}"
    phk = summary.get("pass_hat_k")
    k_value = None if not phk else phk.get("value")
    pass_k = "–" if k_value is None else f"pass^{phk['k']} {_pct(k_value)}"
    episodes = int(summary.get("episodes", 0))
    return [_primary(summary), Number("–" if score is None else f"{score:.3f}", sort_key(score)),
            _share(summary, "tool_correctness"), _share(summary, "tool_efficiency"),
            Number(recovery, sort_key(share)), _share(summary, "goal_consistency"), Number(pass_k, sort_key(k_value)),
            Number(str(episodes), str(episodes))]


def _numbers(summary: Mapping[str, Any]) -> list[str]:
    return [n.text + (f" {n.ci}" if n.ci else "") for n in headline_numbers(summary)]


def _rank_text(row: Row) -> str:
    return "ref" if row.entry.reference else ("–" if row.rank is None else str(row.rank))


# ============================================================================ HTML
@dataclass(frozen=True)
class _Column:
    name: str
    #: ``number`` or ``text``: how the page's script sorts it.
    type: str
    #: The order of a first click: ranks and names ascending, measures best first.
    first: str


_HTML_COLUMNS = tuple(
    _Column(name, "number" if i in _NUMERIC else "text",
            "descending" if i in _NUMERIC and i != 0 else "ascending")
    for i, name in enumerate((*_COLUMNS, _VERSION_COLUMN)))


def code_spans(text: str) -> list[tuple[str, bool]]:
    """Our own prose with `...` spans, as (text, is code) pieces for a template to print escaped."""
    return [(piece, i % 2 == 1) for i, piece in enumerate(text.split("`")) if piece]


def entry_label(row: Row) -> str:
    """How a chart's legend names a row: its rank, agent, model and revision (clipped)."""
    e = row.entry
    rank = "reference" if e.reference else ("unranked" if row.rank is None else f"#{row.rank}")
    label = f"{rank} {e.agent} ({e.model}, {e.revision})"
    return label if len(label) <= 90 else label[:89] + "…"


def _html_row(row: Row, link: bool) -> dict[str, Any]:
    e = row.entry
    return {
        "entry": e, "rank": "" if row.rank is None else row.rank, "rank_text": _rank_text(row),
        "tie": row.within_noise, "numbers": headline_numbers(e.summary),
        # Links are made of the entry's id (an integer of the board's), never of submitted text.
        "href": f"/submissions/{int(e.id)}" if link else None,
        "records_href": f"/submissions/{int(e.id)}/records" if link and e.track == "sealed" else None,
    }


def _section_chart(section: Section) -> Chart | None:
    rows = [*section.rows, *section.reference]
    series = [Series(entry_label(r), noise_success(r.entry.summary.get("cells"))) for r in rows]
    return layout(section.noise, [s for s in series if s.points])


def _suite_view(s: Section, link: bool) -> dict[str, Any]:
    tables = []
    if s.rows:
        tables.append({"css": "board" if s.current else "archived", "heading": None,
                       "rows": [_html_row(r, link) for r in s.rows]})
    if s.later:
        tables.append({"css": "later", "rows": [_html_row(r, link) for r in s.later], "heading": _LATER_HEADING})
    if s.reference:
        tables.append({"css": "reference", "rows": [_html_row(r, link) for r in s.reference],
                       "heading": "Reference agents (privileged by their own account: they read the hidden task; "
                                  "not ranked)"})
    runs = {"heading": _RUNS_HEADING, "columns": _RUN_COLUMNS, "rows": s.runs} if s.runs else None
    return {"suite": s.suite, "track": s.track, "description": s.description,
            "state": "" if s.current else " (older suite version: shown, not ranked)",
            "how": _how(s), "tables": tables, "runs": runs, "chart": _section_chart(s)}


def render_html(sections: Sequence[Section], *, submit_url: str = "URL", title: str = "agentgym leaderboard",
                csp_meta: bool = True, records_links: bool | None = None) -> str:
    """The board as one self-contained HTML page (its own stylesheet and script, nothing external).

    Args:
        sections: from `agentgym.leaderboard.board.build_board`.
        submit_url: the submission URL shown in the how-to sentence.
        title: the page title.
        csp_meta: put the Content-Security-Policy in a meta tag (for the static file).
        records_links: link each entry to its page and each sealed entry to its published records
            (``/submissions/ID`` and ``/submissions/ID/records`` on the board that serves the page);
            default: when served (not `csp_meta`).
    """
    link = (not csp_meta) if records_links is None else records_links
    tracks = [{"track": track, "heading": heading, "meaning": meaning,
               "suites": [_suite_view(s, link) for s in sections if s.track == track]}
              for track, (heading, meaning) in TRACKS_TEXT.items()]
    how_to = HOW_TO_SUBMIT.format(url=submit_url, base=_base_url(submit_url))
    return render_page("board.html.j2", title=title, csp_meta=csp_meta, how_to=code_spans(how_to), tracks=tracks,
                       columns=_HTML_COLUMNS, tie_title=_TIE_TITLE, legend=_LEGEND)


# ============================================================================ Markdown
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_cell(value: Any) -> str:
    """One Markdown table cell holding `value` as plain text."""
    text = " ".join(str(value).split())
    if text[:1] in ("=", "+", "-", "@"):
        text = "'" + text
    text = html.escape(text, quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_table(rows: Sequence[Row]) -> list[str]:
    columns = (*_COLUMNS, _VERSION_COLUMN)
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---:" if i in _NUMERIC else "---"
                                                         for i in range(len(columns))) + "|"]
    for row in rows:
        e = row.entry
        rank = _rank_text(row) + (" ≈" if row.within_noise else "")
        cells = [rank, md_cell(e.agent), md_cell(e.model), md_cell(e.revision), md_cell(e.organisation),
                 *_numbers(e.summary), f"`{e.records_sha256[:12]}`", md_cell(e.package_version)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render_markdown(sections: Sequence[Section], *, submit_url: str = "URL",
                    title: str = "agentgym leaderboard") -> str:
    """The board as Markdown (``leaderboard/LEADERBOARD.md``)."""
    n = sum(len(s.rows) + len(s.reference) for s in sections)
    how_to = HOW_TO_SUBMIT.format(url=submit_url, base=_base_url(submit_url))
    lines = [f"# {title}", "",
             "<!-- Generated by `agentgym leaderboard render`; do not edit by hand. -->", "",
             f"{n} verified submission{'s' if n != 1 else ''}. " + how_to, ""]
    for track, (heading, meaning) in TRACKS_TEXT.items():
        in_track = [s for s in sections if s.track == track]
        lines += [f"## {heading}", "", meaning, ""]
        if not in_track:
            lines += [f"No {track} entries yet.", ""]
        for s in in_track:
            state = "" if s.current else " (older suite version: shown, not ranked)"
            lines += [f"### {md_cell(s.suite)}{state}", "", f"{md_cell(s.description)} {md_cell(_how(s))}", ""]
            if s.rows:
                lines += _md_table(s.rows) + [""]
            if s.later:
                lines += [f"{_LATER_HEADING}:", ""] + _md_table(s.later) + [""]
            if s.runs:
                lines += [f"{_RUNS_HEADING}:", "", "| " + " | ".join(_RUN_COLUMNS) + " |",
                          "|---|---|---:|---:|---:|---:|"]
                lines += [f"| {md_cell(t.organisation)} | {md_cell(t.model)} | {t.opened} | {t.complete} | "
                          f"{t.abandoned} | {t.in_play} |" for t in s.runs] + [""]
            if s.reference:
                lines += ["Reference agents (privileged by their own account: they read the hidden task; not ranked):",
                          ""]
                lines += _md_table(s.reference) + [""]
    lines += [f"≈ {_TIE_TITLE}: the order of the two rows is not established by the data. {_LEGEND}", ""]
    return "\n".join(lines)
