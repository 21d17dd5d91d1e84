"""`labels serve`: find this rater's items, open their file, and serve the judging app with uvicorn.

Binds 127.0.0.1 unless told otherwise: the documents are the team's private collection. The socket is bound
here (port 0: any free port) so the printed URL is the real one before the first request; the URL carries
the token every request needs. The token is the rater's for this task, kept next to their file
(`labels/<task>/<rater>.token`, mode 0600), so a server restarted after a crash answers the tab the rater still
has open, at the same URL.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.readers._io import display_path

from ...statistics.analysis_errors import AnalysisError
from ..raters.rater_agreement import agreement
from ..raters.ratings import ADJUDICATION, check_rater_name, read_all
from ..raters.review_store import read_reviews, reviews_path
from .items import Item, items_from_keys, rater_order
from .plan import read_plan, rater_share
from .question_items import added_path, is_unverified, question_order, read_added, unverified_questions
from .question_session import QuestionSession
from .session import JudgingSession


@dataclass
class Started:
    session: JudgingSession
    resumed: int  # items this rater had judged before
    of_plan: bool


def rater_path(folder: Path, rater: str) -> Path:
    """The rater's file; a name that differs from an existing file's only in case is refused (on a
    case-insensitive disk it would be the same file, and on any disk it is surely the same person)."""
    path = Path(folder) / f"{rater}.jsonl"
    for other in Path(folder).glob("*.jsonl") if Path(folder).is_dir() else []:
        if other.stem != rater and other.stem.lower() == rater.lower():
            raise AnalysisError(f"--rater {rater}: {display_path(other)} belongs to '{other.stem}': resume with "
                                f"--rater {other.stem}, or choose another name")
    return path


def open_session(cfg: TaskConfig, collection: Collection, items: list[Item], rater: str, folder: Path,
                 seed: int = 0, adjudicate: bool = False) -> Started:
    """This rater's share (their part of the plan, or the disagreements when adjudicating) in their order."""
    check_rater_name(rater)
    plan = None
    if adjudicate:
        report = agreement(cfg, read_all(cfg, folder), n_resamples=0)
        wanted = {(d["split"], d["query_id"], d["doc_id"]) for d in report.disagreements}
        if not wanted:
            raise AnalysisError(f"{display_path(Path(folder))}: no disagreement to adjudicate")
        items = items_from_keys(sorted(wanted), collection)
        path, of_plan = Path(folder) / f"{ADJUDICATION}.jsonl", False
    else:
        plan = read_plan(folder, cfg)
        share = rater_share(plan, rater, folder)
        if share is not None:
            inside = [it for it in items if it.key in share]
            if not inside:
                raise AnalysisError(f"{display_path(Path(folder) / 'plan.json')} was made from another pool: none "
                                    f"of {rater}'s planned items is in this one; make the plan again")
            items = inside
        path, of_plan = rater_path(folder, rater), share is not None
    ordered = rater_order(items, rater, seed)
    if not adjudicate and plan is not None and plan.get("order") in ("decisive", "sample"):
        # `labels plan --order decisive`: the plan's order (runners/labels/pool/decisive_order.py), most decisive
        # first. Its weights depend on the rankings and on what is judged, not on the grades, so the order of the
        # pairs still open after each grade is the re-planned order: no reload is needed. `--order sample`: the
        # sampled questions in their drawn order, every pooled pair of one question before the next's.
        pos = {k: i for i, k in enumerate(plan["raters"][rater])}
        ordered = sorted(items, key=lambda it: pos[it.key])
    session = JudgingSession.open(cfg, rater, ordered, path)
    return Started(session, session.progress()["done"], of_plan)


def open_question_session(cfg: TaskConfig, collection: Collection, rater: str, folder: Path,
                          seed: int = 0) -> tuple[QuestionSession, str]:
    """The question mode (`labels serve --questions`): the task's unverified generated questions in this rater's
    order, their reviews appended to `<added>.reviews.jsonl`; and the rater's token for this task (the one their
    grades server uses, kept in the labels folder, not beside the shared reviews file)."""
    check_rater_name(rater)
    added = added_path(cfg)
    items, warnings = unverified_questions(added, collection)
    if not items:
        raise AnalysisError(f"{display_path(added)}: no generated question awaits verification (none has "
                            "tags.verified: false)")
    reviews = reviews_path(added)
    reviewed = read_reviews(reviews, cfg.grades).latest
    if all(item.query_id in reviewed for item in items):  # every one reviewed already: nothing to start for
        raise AnalysisError(f"{display_path(added)}: no generated question awaits verification (all {len(items)} "
                            f"reviewed, in {display_path(reviews)}; a review's last line counts)")
    session = QuestionSession.open(cfg, rater, question_order(items, rater, seed), reviews)
    session.warnings[:0] = warnings
    Path(folder).mkdir(parents=True, exist_ok=True)
    return session, rater_token(rater_path(folder, rater))


def unverified_left(cfg: TaskConfig) -> int:
    """How many generated questions of the task wait for a review (0 when it has no added questions; a broken added
    file is the loader's to report, not this hint's)."""
    if not (isinstance(cfg.source, dict) and cfg.source.get("added_questions")):
        return 0
    try:
        added = added_path(cfg)
        rows = [r for r in read_added(added) if is_unverified(r)]
    except AnalysisError:
        return 0
    reviewed = read_reviews(reviews_path(added), cfg.grades).latest
    return len({str(r["query_id"]) for r in rows} - reviewed.keys())


_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")


def rater_token(rater_file: Path) -> str:
    """The token of this rater's server for this task: read from `<rater>.token` beside their file, else made and
    written there (0600, atomically). A token file that others could read, that is not a plain file of this user
    (a symlink), or that holds anything but a token is not trusted: a new token replaces it."""
    path = Path(rater_file).with_suffix(".token")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        fd = -1
    except OSError:  # a symlink (ELOOP) or unreadable: replaced below
        fd = -1
    if fd >= 0:
        try:
            st = os.fstat(fd)
            text = os.read(fd, 256).decode("ascii", errors="replace").strip()
        finally:
            os.close(fd)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077 and _TOKEN.fullmatch(text):
            return text
    token = secrets.token_urlsafe(24)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, (token + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: a free one); a port in use is one line, exit 2."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise AnalysisError(f"cannot listen on {host}:{port} ({e.strerror}): choose another --port (0: any free "
                            "one)") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(session: JudgingSession | QuestionSession, host: str, port: int, announce: Callable[[str], None],
          token: str | None = None) -> None:
    """Serve until Ctrl-C; `announce` gets the URL (with the token) once the socket listens. The token is the
    rater's for this task (rater_token) unless given; a question session is served by the question mode's app."""
    import uvicorn

    from .app import make_app, make_question_app

    if isinstance(session, QuestionSession):
        app, token = make_question_app(session, token)
    else:
        app, token = make_app(session, token or rater_token(session.path))
    sock = bind(host, port)
    shown = f"[{host}]" if ":" in host else host
    announce(f"http://{shown}:{sock.getsockname()[1]}/?token={token}")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        session.close()
        sock.close()
