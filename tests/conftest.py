"""Fixtures shared by the test files: a fresh results store per test, on SQLite or on a server.

By default ``store`` is a new SQLite file in the test's ``tmp_path``.  As sqlite-utils re-runs its
suite on a second backend, ``pytest --store-url URL`` runs every test that uses ``store`` (or
``store_url`` or ``open_store``) on the database server at the SQLAlchemy ``URL`` instead, e.g.::

    pytest tests/test_store.py --store-url postgresql+psycopg://postgres@127.0.0.1:5432/regbench_test

There each test gets a new, empty PostgreSQL schema of its own (the connections' ``search_path``),
dropped after the test, so tests neither see each other's rows nor the database's ``public``
schema.  Tests that use ``store`` are marked ``store``, so ``-m store --store-url URL`` runs only
the tests the server changes (CI does, after the whole suite on SQLite).  ``sqlite_store`` is
always SQLite, for tests that compare the two backends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.store import Store


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-url", metavar="URL", default=None,
        help="run the tests that use the `store` fixture on this PostgreSQL server (a SQLAlchemy URL), "
             "each in a fresh schema dropped afterwards; default: a SQLite file per test")


def pytest_configure(config: pytest.Config) -> None:
    # The suite runs in two pytest-xdist workers (pyproject.toml's addopts), which tell the tests
    # they are workers through these variables.  The benchmark processes the tests start inherit
    # the environment, and a pytest-benchmark suite among them that sees PYTEST_XDIST_WORKER turns
    # its benchmarks off (it cannot time them alongside other workers) and writes no results.
    # A user's benchmarks never run inside an xdist worker, so neither do the tests'.
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        os.environ.pop(name, None)
    if worker is not None:
        # Each worker its own temporary folder, where the machine's measuring lock lives
        # (regbench.run.exclusive, `[noise] exclusive`): the runs of one worker's tests take turns
        # (tests/test_run_exclusive.py checks it), the two workers' do not wait for each other,
        # which would only make the suite slower (it asserts nothing on timings).
        import tempfile

        os.environ["TMPDIR"] = tempfile.mkdtemp(prefix=f"regbench-tests-{worker}-")
        tempfile.tempdir = None  # read TMPDIR again
    config.addinivalue_line("markers", "store: uses the `store` fixture (a server's with --store-url)")
    url = config.getoption("--store-url")
    if url is None:
        return
    try:
        backend = sa.make_url(url).get_backend_name()
    except sa.exc.ArgumentError as exc:
        raise pytest.UsageError(f"--store-url: {exc}") from None
    if backend != "postgresql":
        raise pytest.UsageError(f"--store-url: a PostgreSQL URL is needed (SQLite is the default), not {backend!r}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "store_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.store)


def pytest_report_header(config: pytest.Config) -> str:
    url = config.getoption("--store-url")
    where = sa.make_url(url).render_as_string(hide_password=True) if url else "SQLite files in tmp_path"
    return f"regbench stores: {where}"


@contextlib.contextmanager
def fresh_schema(server_url: str) -> Iterator[str]:
    """A URL whose connections use a new, empty schema on ``server_url``; the schema is dropped after."""
    schema = f"regbench_test_{uuid.uuid4().hex[:16]}"
    admin = sa.create_engine(server_url)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        url = sa.make_url(server_url).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A new, empty schema on the server ``REGBENCH_TEST_POSTGRES_URL`` names, dropped after the
    test, for tests that compare PostgreSQL with SQLite (skip them without a server): never the
    server's ``public`` schema, which two pytest-xdist workers would share."""
    server = os.environ.get("REGBENCH_TEST_POSTGRES_URL")
    assert server, "mark the test to be skipped without REGBENCH_TEST_POSTGRES_URL"
    with fresh_schema(server) as url:
        yield url


@pytest.fixture
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a fresh store for this test is: a SQLite file, or a new schema under ``--store-url``."""
    server = request.config.getoption("--store-url")
    if server is None:
        yield f"sqlite:///{tmp_path / 'results.db'}"
        return
    with fresh_schema(server) as url:
        yield url


@pytest.fixture(scope="session")
def empty_sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite store at the current schema, made once per pytest-xdist worker by
    :class:`Store` as any is; ``store`` and ``sqlite_store`` copy it rather than create their own
    (creating one runs every migration from the first: half a second, for hundreds of tests).
    Closed, it is the one file (no ``-wal`` or ``-shm`` beside it)."""
    path = tmp_path_factory.mktemp("empty-store") / "results.db"
    Store(path).close()
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    return path


def _fresh_sqlite_file(url: str, request: pytest.FixtureRequest) -> None:
    """A copy of ``empty_sqlite_store`` where the SQLite ``url`` is (a new file: a fresh store)."""
    path = Path(sa.make_url(url).database)
    assert not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(request.getfixturevalue("empty_sqlite_store"), path)


@pytest.fixture
def store(store_url: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    """A fresh, empty results store (SQLite unless ``--store-url`` names a server), closed after the test."""
    if store_url.startswith("sqlite:"):
        _fresh_sqlite_file(store_url, request)
    with Store(store_url) as s:
        yield s


@pytest.fixture
def open_store(store_url: str) -> Iterator[Callable[..., Store]]:
    """``open_store(**options)`` opens a :class:`Store` at this test's ``store_url``, closed after
    the test (for tests that hold a store without a ``with`` block: a PostgreSQL connection
    left open warns when it is collected, in whatever test runs then)."""
    opened: list[Store] = []

    def open_(**options) -> Store:
        opened.append(Store(store_url, **options))
        return opened[-1]

    yield open_
    for s in opened:
        s.close()


@pytest.fixture
def sqlite_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    """A fresh, empty SQLite store whatever ``--store-url`` says (to compare a server with SQLite)."""
    url = f"sqlite:///{tmp_path / 'sqlite' / 'results.db'}"
    _fresh_sqlite_file(url, request)
    with Store(url) as s:
        yield s


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright, once per test module (skipped without either).

    Not once per session: while Playwright's sync API is started it runs an asyncio event loop in
    this thread, and every later test of the worker that calls ``asyncio.run`` would fail with
    "cannot be called from a running event loop" (tests/test_serve_detect.py does)."""
    playwright = pytest.importorskip("playwright.sync_api")
    from webtools import chromium_path

    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path())
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context's page, with its console errors collected (``page.console_log``)."""
    from webtools import ConsoleLog

    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.console_log = ConsoleLog(pg)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def go_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Go build cache (``GOCACHE``) for the tests that run ``go test``, kept out of the user's
    own cache and shared by every test of this pytest run (both pytest-xdist workers: the go
    command locks its cache for concurrent use).  A fresh cache costs a build of the standard
    library's packages (``testing`` and what it imports) on the first ``go test``; each test
    that had a cache of its own paid it again."""
    base = tmp_path_factory.getbasetemp()
    # Under pytest-xdist each worker's base is a popen-gwN folder of the run's one.
    shared = base.parent if base.name.startswith("popen-gw") else base
    path = shared / "gocache"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def dask_connect_timeout_1s(monkeypatch: pytest.MonkeyPatch) -> None:
    """`run`, `screen` and `detect --executor dask` retry connecting to the scheduler for 10 s
    (``timeout`` of :class:`~regbench.run.dask_executor.DaskExecutor` and ``DaskBatchPool``)
    before the one-line error; for the tests that name a closed loopback port, which refuses at
    once, 1 s of retrying ends in the same refusal and the same error."""
    from regbench.run import dask_executor

    for init in (dask_executor.DaskExecutor.__init__, dask_executor.DaskBatchPool.__init__):
        monkeypatch.setitem(init.__kwdefaults__, "timeout", 1.0)
