"""Neither server offers pages it cannot serve offline: FastAPI's /docs and /redoc load their
scripts from a CDN, so both are off, and nothing links them; the OpenAPI schema itself is served."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from agentgym.leaderboard.server import create_app as create_board
from agentgym.server.app import create_app as create_env_server


def test_the_env_server_has_no_docs_pages() -> None:
    with TestClient(create_env_server()) as client:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            assert client.get(path).status_code == 404, path
        assert client.get("/openapi.json").status_code == 200


def test_the_leaderboard_has_no_docs_pages_and_its_page_links_none(tmp_path: Path) -> None:
    with TestClient(create_board(tmp_path / "board.sqlite")) as client:
        for path in ("/docs", "/redoc"):
            assert client.get(path).status_code == 404, path
        page = client.get("/leaderboard")
        assert page.status_code == 200 and "/docs" not in page.text and "/redoc" not in page.text
