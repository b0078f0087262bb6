"""The board's HTML pages: one Jinja2 environment with autoescape, one stylesheet, one script,
and the Content-Security-Policy that allows exactly those two.

Every value a template prints is HTML-escaped (``autoescape=True``; undefined names are errors,
not empty strings). The stylesheet (``static/board.css``) and the script that sorts the tables
(``static/board.js``) are the package's own files, inlined in each page and allowed by their
SHA-256 in the policy: a page stays one self-contained file (the static board opens from disk),
and no other script or style, inline or from anywhere, can run. Nothing built from submitted
text is marked safe.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

__all__ = ["CSP", "CSS", "SCRIPT", "render_page"]


def _asset(name: str) -> str:
    return (resources.files("agentgym.leaderboard") / "static" / name).read_text("utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Our own files, not data: Markup keeps autoescape from turning a `>` selector or a quote into an entity
# (the policy's hashes are of the exact text between the tags).
#: The pages' stylesheet.
CSS = Markup(_asset("board.css"))
#: The script that sorts the board's tables (the pages read the same without it).
SCRIPT = Markup(_asset("board.js"))
if "</" in CSS or "</" in SCRIPT:
    raise ValueError("an inlined asset may not contain '</' (it would end its element)")

#: The policy of every page: its own stylesheet and script (by hash), nothing else.
CSP = (f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(SCRIPT)}'; img-src 'none'; "
       "object-src 'none'; base-uri 'none'; form-action 'none'")

_ENV = Environment(loader=PackageLoader("agentgym.leaderboard", "templates"), autoescape=True,
                   undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render_page(template: str, *, title: str, csp_meta: bool, **context: Any) -> str:
    """Render one page of ``templates/``.

    Args:
        template: the template's file name (``board.html.j2``, ...).
        title: the page title.
        csp_meta: put the policy in a meta tag (a static file has no headers to carry it).
        **context: the template's own values (escaped when printed).
    """
    return _ENV.get_template(template).render(title=title, csp=CSP, csp_meta=csp_meta, css=CSS, script=SCRIPT,
                                               **context)
