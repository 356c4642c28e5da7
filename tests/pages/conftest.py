"""Page fixtures: a seeded store and the app with the pages mounted, driven in-process."""

from __future__ import annotations

import warnings

import pytest

from tests.pages.seed import seed


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("WHILEAI_API_KEY", "WHILEAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def _seeded_template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages-template")
    seed(folder / "pages.duckdb")
    return folder


@pytest.fixture
def seeded(tmp_path, _seeded_template):
    """A fresh copy of the seeded store per test (seeding costs about 3.5 s; a copy, milliseconds)."""
    import shutil

    import whileai.platform as wp
    from tests.pages.seed import AGENT_SPEC

    folder = tmp_path / "seeded"
    shutil.copytree(_seeded_template, folder)
    store = folder / "pages.duckdb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracked = wp.track(AGENT_SPEC, store=str(store))
    return store, tracked


def client_for(store, *, token="tok"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from whileai.platform.pages import Pages
    from whileai.platform.server import create_app

    pages = Pages(login_token=token)
    app = create_app(store, routes=pages.routes(), html_routes=pages.html_routes())
    return TestClient(app, base_url="http://127.0.0.1"), pages
