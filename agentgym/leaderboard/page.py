"""The board as an HTML page and as Markdown. Every string from a submission is data.

HTML: every interpolated value goes through `html.escape(..., quote=True)`; the page carries
no script at all, no link or image built from submitted text (the one link of a row, to a sealed
entry's published records, is made of the entry's id), and a Content-Security-Policy that allows
only its own stylesheet (by hash), as a header when served and as a meta tag in the static file.

Both render the two tracks apart (`agentgym.leaderboard.board`): the sealed track first, the
ranking of record, then the open track, whose privilege is self-reported.

Markdown: each text cell is flattened to one line, HTML-escaped (``& < >``), stripped of its
Markdown meaning (``\\ ` * _ [ ] | ~`` are backslash-escaped) and, when it starts with ``=``,
``+``, ``-`` or ``@``, prefixed with ``'`` so that a spreadsheet fed the table reads text, not a
formula (CSV injection).
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from typing import Any, Mapping, Sequence

from agentgym.leaderboard.board import Row, Section

__all__ = ["render_html", "render_markdown", "CSP", "HOW_TO_SUBMIT", "TRACKS_TEXT", "md_cell"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 90rem; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0 2rem; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { min-width: 8rem; max-width: 16rem; overflow-wrap: anywhere; }
.desc { color: #666; font-size: .85em; max-height: 6em; overflow: auto; white-space: pre-wrap; }
.tie { color: #b35c00; cursor: help; }
.how, .legend { background: #f8f8f8; border-left: 3px solid #999; padding: .5rem 1rem; }
code { background: #eee; padding: 0 .2rem; }
"""
_CSS_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
#: The policy of the page: nothing but its own inline stylesheet.
CSP = (f"default-src 'none'; style-src '{_CSS_HASH}'; img-src 'none'; script-src 'none'; object-src 'none'; "
       "base-uri 'none'; form-action 'none'")

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
def _value(summary: Mapping[str, Any], name: str) -> float | None:
    agg = summary.get(name)
    return agg.get("value") if isinstance(agg, Mapping) else None


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _primary(summary: Mapping[str, Any]) -> str:
    agg = summary.get(summary.get("primary", "success")) or {}
    lo, hi = (agg.get("ci") or [None, None])[:2]
    ci = "" if lo is None or hi is None else f" [{100 * lo:.1f}, {100 * hi:.1f}]"
    return _pct(agg.get("value")) + ci


def _share(summary: Mapping[str, Any], name: str) -> str:
    """A share, or n/a when there was nothing to measure (never shown as 0 or 100%)."""
    value = _value(summary, name)
    return "n/a" if value is None else _pct(value)


def _numbers(summary: Mapping[str, Any]) -> list[str]:
    score = _value(summary, "score")
    share, median = _value(summary, "recovery_share"), _value(summary, "recovery_median")
    if share is None:
        recovery = "no faults"
    else:
        # No median: fewer than half the faults were ever recovered (Kaplan-Meier).
        recovery = f"{_pct(share)}, {'n/a' if median is None else f'{median:g}'}"
    phk = summary.get("pass_hat_k")
    pass_k = "–" if not phk or phk.get("value") is None else f"pass^{phk['k']} {_pct(phk['value'])}"
    return [_primary(summary), "–" if score is None else f"{score:.3f}", _share(summary, "tool_correctness"),
            _share(summary, "tool_efficiency"), recovery, _share(summary, "goal_consistency"), pass_k,
            str(summary.get("episodes", 0))]


def _rank_text(row: Row) -> str:
    return "ref" if row.entry.reference else ("–" if row.rank is None else str(row.rank))


# ============================================================================ HTML
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _records_cell(e: Any, link: bool) -> str:
    digest = f"<code>{_e(e.records_sha256[:12])}</code>"
    if e.track != "sealed" or not link:
        return f"<td>{digest}</td>"
    # Built from the entry's id (an integer of the board's), never from submitted text.
    return f'<td><a class="records" href="/submissions/{int(e.id)}/records">{digest}</a></td>'


def _html_row(row: Row, link: bool = False) -> str:
    e = row.entry
    tie = f' <span class="tie" title="{_e(_TIE_TITLE)}">≈</span>' if row.within_noise else ""
    desc = f'<div class="desc">{_e(e.description)}</div>' if e.description else ""
    nums = "".join(f'<td class="num">{_e(v)}</td>' for v in _numbers(e.summary))
    return (f'<tr class="entry" data-rank="{_e(row.rank if row.rank is not None else "")}" data-entry="{_e(e.id)}">'
            f'<td class="num rank">{_e(_rank_text(row))}{tie}</td>'
            f'<td class="text agent">{_e(e.agent)}{desc}</td><td class="text">{_e(e.model)}</td>'
            f'<td class="text">{_e(e.revision)}</td><td class="text">{_e(e.organisation)}</td>{nums}'
            f'{_records_cell(e, link)}<td class="text">{_e(e.package_version)}</td></tr>')


def _html_table(rows: Sequence[Row], css_class: str, suite: str, link: bool = False) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in (*_COLUMNS, _VERSION_COLUMN))
    body = "\n".join(_html_row(r, link) for r in rows)
    return (f'<table class="{_e(css_class)}" data-suite="{_e(suite)}"><thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table>")


def render_html(sections: Sequence[Section], *, submit_url: str = "URL", title: str = "agentgym leaderboard",
                csp_meta: bool = True, records_links: bool | None = None) -> str:
    """The board as one self-contained HTML page (no script, no external resource).

    Args:
        sections: from `agentgym.leaderboard.board.build_board`.
        submit_url: the submission URL shown in the how-to sentence.
        title: the page title.
        csp_meta: put the Content-Security-Policy in a meta tag (for the static file).
        records_links: link each sealed entry to its published records (``/submissions/ID/records``
            on the board that serves the page); default: when served (not `csp_meta`).
    """
    link = (not csp_meta) if records_links is None else records_links
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">']
    if csp_meta:
        parts.append(f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">')
    how_to = HOW_TO_SUBMIT.format(url=submit_url, base=_base_url(submit_url))
    parts += [f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head><body>", f"<h1>{_e(title)}</h1>",
              f'<p class="how">{_code_spans(_e(how_to))}</p>']
    for track, (heading, meaning) in TRACKS_TEXT.items():
        in_track = [s for s in sections if s.track == track]
        parts.append(f'<h2 class="track" data-track="{_e(track)}">{_e(heading)}</h2><p>{_e(meaning)}</p>')
        if not in_track:
            parts.append(f"<p>No {_e(track)} entries yet.</p>")
        for s in in_track:
            state = "" if s.current else " (older suite version: shown, not ranked)"
            how = f"Ranked by {s.primary} with its 95% bootstrap CI." if s.current else "Not ranked."
            parts.append(f'<section class="suite" data-track="{_e(track)}" data-suite="{_e(s.suite)}">'
                         f"<h3>{_e(s.suite)}{_e(state)}</h3><p>{_e(s.description)} {_e(how)}</p>")
            if s.rows:
                parts.append(_html_table(s.rows, "board" if s.current else "archived", s.suite, link))
            if s.reference:
                parts.append("<h4>Reference agents (privileged by their own account: they read the hidden task; "
                             "not ranked)</h4>")
                parts.append(_html_table(s.reference, "reference", s.suite, link))
            parts.append("</section>")
    parts.append(f'<p class="legend"><span class="tie">≈</span> {_e(_TIE_TITLE)}: the order of the two rows is '
                 "not established by the data. " + _LEGEND + " Every number is recomputed from replayed episodes.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _code_spans(escaped: str) -> str:
    # The how-to text is ours; after escaping, its `...` spans become <code> (the content stays escaped).
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", escaped)


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
            how = f"Ranked by {md_cell(s.primary)} with its 95% bootstrap CI." if s.current else "Not ranked."
            lines += [f"### {md_cell(s.suite)}{state}", "", f"{md_cell(s.description)} {how}", ""]
            if s.rows:
                lines += _md_table(s.rows) + [""]
            if s.reference:
                lines += ["Reference agents (privileged by their own account: they read the hidden task; not ranked):",
                          ""]
                lines += _md_table(s.reference) + [""]
    lines += [f"≈ {_TIE_TITLE}: the order of the two rows is not established by the data. {_LEGEND}", ""]
    return "\n".join(lines)
