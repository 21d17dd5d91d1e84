"""The judging app's HTTP side: a Starlette ASGI app (served by uvicorn, server.py) over one JudgingSession.

Every request needs the session's token (the page's URL holds it; the page sends it back in a header), so
another local user, or a web page in the rater's browser, can neither read the documents nor post grades. The
token is compared in constant time. Responses forbid caching and framing, and the page runs under a Content
Security Policy that allows only its own inline script (by nonce): even a document that smuggled markup past
the page's text-only rendering could not run anything or load anything.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ...statistics.analysis_errors import AnalysisError
from .page import page_html
from .question_page import question_page_html
from .question_session import QuestionSession
from .session import JudgingSession

HEADER = "x-judging-token"


class TokenGate(BaseHTTPMiddleware):
    """403 for any request without the token (query `?token=` for the page, the header for the API)."""

    def __init__(self, app: Any, token: str) -> None:
        super().__init__(app)
        self.token = token.encode()

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        given = request.headers.get(HEADER) or request.query_params.get("token") or ""
        if not hmac.compare_digest(given.encode(), self.token):
            return PlainTextResponse("403: this judging server needs the token in its URL\n", status_code=403)
        response = await call_next(request)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def content_policy(nonce: str) -> str:
    """Only the page's own inline script and style (by nonce), requests to this server only, nothing else."""
    return (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
            "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def make_app(session: JudgingSession, token: str | None = None, title: str = "") -> tuple[Starlette, str]:
    """The app and its token (a fresh random one unless given)."""
    token = token or secrets.token_urlsafe(24)
    lock = asyncio.Lock()  # one append at a time, in arrival order

    async def index(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        body = page_html(nonce, title or session.cfg.name, session.rater, session.cfg.grades)
        return HTMLResponse(body, headers={"Content-Security-Policy": content_policy(nonce)})

    def verdicts() -> list[dict[str, Any]] | None:  # the status panel (live_plan.py), with -c CONFIG only
        return session.live.status() if session.live is not None else None

    async def state(request: Request) -> Response:
        return JSONResponse({"task": session.cfg.name, "rater": session.rater, "start": session.first_open(),
                             "grades": {str(k): v for k, v in session.cfg.grades.items()},
                             "progress": session.progress(), "verdicts": verdicts()})

    async def item(request: Request) -> Response:
        try:
            return JSONResponse({**session.item(int(request.path_params["i"])), "progress": session.progress()})
        except AnalysisError as e:
            return JSONResponse({"error": str(e)}, status_code=404)

    async def judge(request: Request) -> Response:
        try:
            body = await request.json()
            i, status = int(body["index"]), str(body.get("status", "graded"))
            grade, key = body.get("grade"), body.get("key")
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "send {index, grade, status}"}, status_code=400)
        try:
            async with lock:  # the fsync happens before the answer: an acknowledged grade is on disk
                if key is not None and 0 <= i < len(session.items) and list(session.items[i].key) != list(key):
                    # the order was re-planned since this page asked for item i: never grade another pair
                    return JSONResponse({"error": "the order changed: this item moved, reload the page"},
                                        status_code=409)
                rec = await asyncio.to_thread(session.judge, i, grade, status)
                if session.live is not None:  # re-plan the items after i from the grades so far
                    await asyncio.to_thread(session.live.graded, session, i, grade if status == "graded" else None)
        except AnalysisError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        nxt = next((j for j in range(i + 1, len(session.items)) if session.items[j].key not in session.judged),
                   session.first_open())
        return JSONResponse({"saved": rec["time"], "next": nxt, "progress": session.progress(),
                             "verdicts": verdicts()})

    routes = [Route("/", index), Route("/api/state", state), Route("/api/item/{i:int}", item),
              Route("/api/judge", judge, methods=["POST"])]
    return Starlette(routes=routes, middleware=[Middleware(TokenGate, token=token)]), token


def make_question_app(session: QuestionSession, token: str | None = None,
                      title: str = "") -> tuple[Starlette, str]:
    """The question mode's app (`labels serve --questions`): the same token gate and policy, a review endpoint."""
    token = token or secrets.token_urlsafe(24)
    lock = asyncio.Lock()

    async def index(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        body = question_page_html(nonce, title or session.cfg.name, session.rater, session.cfg.grades)
        return HTMLResponse(body, headers={"Content-Security-Policy": content_policy(nonce)})

    async def state(request: Request) -> Response:
        await asyncio.to_thread(session.refresh)
        return JSONResponse({"task": session.cfg.name, "rater": session.rater, "mode": "questions",
                             "start": session.first_open(), "progress": session.progress(),
                             "grades": {str(k): v for k, v in session.cfg.grades.items()}})

    async def item(request: Request) -> Response:
        try:
            await asyncio.to_thread(session.refresh)
            return JSONResponse({**session.item(int(request.path_params["i"])), "progress": session.progress()})
        except AnalysisError as e:
            return JSONResponse({"error": str(e)}, status_code=404)

    async def review(request: Request) -> Response:
        try:
            body = await request.json()
            i, action, text, grade = int(body["index"]), body["action"], body.get("text"), body.get("grade")
        except (ValueError, KeyError, TypeError, AttributeError):
            return JSONResponse({"error": "send {index, action, text, grade}"}, status_code=400)
        try:
            async with lock:  # the fsync happens before the answer: an acknowledged review is on disk
                rec = await asyncio.to_thread(session.review, i, action, text, grade)
        except AnalysisError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        return JSONResponse({"saved": rec["time"], "action": rec["action"], "redacted": rec.get("redacted", {}),
                             "next": session.first_open(i),
                             "progress": session.progress()})

    routes = [Route("/", index), Route("/api/state", state), Route("/api/item/{i:int}", item),
              Route("/api/review", review, methods=["POST"])]
    return Starlette(routes=routes, middleware=[Middleware(TokenGate, token=token)]), token
