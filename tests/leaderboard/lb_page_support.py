"""Shared pieces of the page tests: what a page is made of, an agent whose every turn carries a
payload, and headless Chromium driven over the DevTools protocol (to measure and click)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import lb_support as S

from agentgym.agents.base import Agent, call
from agentgym.leaderboard.web import CSS, SCRIPT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: Where a page may link: the board, an entry, its records, an episode (a query on an entry's list).
OUR_LINK = re.compile(r"^/(leaderboard|submissions/\d+(/records|/episodes/\d+)?(\?[^#\s]*)?(#episodes)?)$")
#: Elements no page of the board makes: any of them would come from submitted text.
FOREIGN = {"iframe", "img", "object", "embed", "form", "link", "base", "input", "textarea", "foreignobject", "image",
           "use", "animate", "set", "video", "audio", "source"}


class Markup(HTMLParser):
    """Every element of a page with its attributes, and the text of its script and style elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._raw: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._raw = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._raw is not None:
            (self.scripts if tag == "script" else self.styles).append("".join(self._raw))
            self._raw = None

    def handle_data(self, data: str) -> None:
        if self._raw is not None:
            self._raw.append(data)

    def structure(self) -> list[tuple[str, tuple[str, ...]]]:
        """The page's shape: each element and the names of its attributes, in order."""
        return [(tag, tuple(sorted(attrs))) for tag, attrs in self.tags]


def parse(page: str) -> Markup:
    m = Markup()
    m.feed(page)
    m.close()
    return m


def assert_inert(page: str) -> Markup:
    """The page runs its own script and stylesheet only, makes no element a payload could, and
    links only within the board."""
    m = parse(page)
    assert m.scripts == [str(SCRIPT)], f"{len(m.scripts)} scripts, or not the page's own"
    assert m.styles == [str(CSS)], "a style element that is not the page's own"
    tags = [t for t, _ in m.tags]
    assert not FOREIGN & set(tags), FOREIGN & set(tags)
    assert tags.count("body") == 1 and tags.count("html") == 1 and tags.count("head") == 1
    assert tags.count("meta") <= 3 and tags.index("body") > max(i for i, t in enumerate(tags) if t == "meta")
    for tag, attrs in m.tags:
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
        for name in ("src", "srcdoc", "xlink:href", "action", "formaction", "style"):
            assert name not in attrs, (tag, attrs)
        if "href" in attrs:
            assert tag == "a" and OUR_LINK.match(attrs["href"] or ""), attrs["href"]
    return m


#: A script payload short enough to pass as a tool argument (the tools take at most 64 characters).
SHORT_SCRIPT = "<script>document.body.setAttribute('data-pwned','1')</script>"
_ARGUMENT_PAYLOADS = (SHORT_SCRIPT, *(p for p in S.PAYLOADS if len(p) <= 64))


class PayloadAgent(Agent):
    """Every turn carries an injection payload: in a message, or in a tool argument that the
    tool's error repeats back in the observation."""

    name = "payload"

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._turn = 0

    def act(self, obs: str, info: dict[str, Any]) -> str:
        kind, turn = self._turn % 3, self._turn // 3
        self._turn += 1
        if kind == 0:
            return f"Hello {S.PAYLOADS[turn % len(S.PAYLOADS)]}"
        payload = _ARGUMENT_PAYLOADS[turn % len(_ARGUMENT_PAYLOADS)]
        return call("get_details", item_id=payload) if kind == 1 else call("search", area=payload)


# ============================================================================ Chromium over the DevTools protocol
class Browser:
    """One headless Chromium, one page, driven over the DevTools protocol (a websocket)."""

    def __init__(self, profile: Path) -> None:
        from websockets.sync.client import connect

        assert CHROMIUM is not None
        self._stack = contextlib.ExitStack()
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "HOME": str(profile)})
        try:
            port = self._port(time.monotonic() + 60)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                pages = json.load(r)
            url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
            self.ws = self._stack.enter_context(connect(url, max_size=2**26, open_timeout=30))
        except BaseException:
            self.close()
            raise
        self._id = 0

    def _port(self, deadline: float) -> int:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                return int(found.group(1))
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port"
        raise AssertionError(f"Chromium exited (rc {self.proc.wait()}) before opening its DevTools port")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self._id:
                assert "error" not in msg, msg["error"]
                result: dict[str, Any] = msg.get("result", {})
                return result

    def open(self, url: str, width: int = 1400, height: int = 900) -> None:
        """Load `url` in a `width` x `height` viewport and wait for its load event."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("method") == "Page.loadEventFired":
                return

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (run by the browser, not the page's CSP)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def overflow(self) -> dict[str, Any]:
        """How wide the page is against its viewport, and the elements that pass its right edge."""
        value: dict[str, Any] = self.eval("""(() => {
            const root = document.documentElement, edge = root.clientWidth, out = [];
            for (const el of document.body.querySelectorAll('*')) {
                const r = el.getBoundingClientRect();
                if (r.right > edge + 0.5 && out.length < 10)
                    out.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
            }
            return {scroll: root.scrollWidth, client: edge, wide: out};
        })()""")
        return value

    def close(self) -> None:
        self._stack.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
