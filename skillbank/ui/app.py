"""The memory browser's routes: server-rendered pages over the facade, writes only by POST.

`create_app(bank)` returns a Starlette app. Every bank call runs in a worker thread under one
lock (the page is for one person; a slow call must not stall the event loop, and the facade
is called one request at a time, as a CLI would). Every write checks the per-process CSRF token
here and the request's origin in `GuardMiddleware`, then redirects back (POST/redirect/GET),
except the context preview, which shows its result directly.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, quote, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from skillbank.errors import InvalidInputError, NotFoundError, SkillbankError
from skillbank.ui import views
from skillbank.ui.render import FILTERS, name_of, skill_path
from skillbank.ui.security import Guard, GuardMiddleware, security_headers
from skillbank.ui.stats import StatsCache

HERE = Path(__file__).resolve().parent
GUIDELINE_ACTIONS = ("approve", "reject", "retire", "helpful", "harmful")
#: Which tab of the top bar a template belongs to.
NAV = {"skills.html": "skills", "skill.html": "skills", "draft.html": "skills",
       "resource.html": "skills",
       "guidelines.html": "guidelines", "guideline.html": "guidelines",
       "experiences.html": "experiences", "experience.html": "experiences",
       "context.html": "context", "stats.html": "stats", "audit.html": "audit",
       "skill_review.html": "review"}


#: How much of a refused query or task an error page echoes back into its form.
KEPT_PREVIEWS = 20  # context previews kept to come back to after a rating
KEPT_PREVIEW_SECONDS = 600  # ... for at most this long
ECHO_CHARS = 200


def echoed(text: str) -> str:
    """`text` as a refused request's page shows it again: its first ECHO_CHARS characters and
    its length. Why: a 60 KB `/skills?q=` came back whole in the 400 page (twice: the search
    box and the heading), 121 KB to say it was too long."""
    if len(text) <= ECHO_CHARS:
        return text
    return f"{text[:ECHO_CHARS]}… ({len(text):,} characters)"


def status_of(exc: SkillbankError) -> int:
    """The HTTP status of a refused page: 404 not found, 400 bad input, 503 a dependency that
    does not answer (PostgreSQL, a Chroma server: as /readyz and a monitor expect; the pages
    answered 409 "conflict" during a PostgreSQL outage, hunt-pg #5, session 28), else 409."""
    from skillbank.index_outage import ChromaUnavailableError
    from skillbank.store.base import StoreUnavailableError

    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, InvalidInputError):
        return 400
    if isinstance(exc, (StoreUnavailableError, ChromaUnavailableError)):
        return 503
    return 409


def create_app(bank: Any, guard: Guard | None = None, scope: Any = None) -> Starlette:
    """A browser over `bank` (an in-process or client bank: only its public API is used).

    `scope` (a `skillbank.scope.Scope`): every bank call of the page runs in it — the browser
    started for one namespace (`skillbank --namespace NS ui`) shows and changes NS alone."""
    from skillbank import scope as scopes

    guard = guard or Guard()
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters.update(FILTERS)
    templates.env.globals.update(csrf=guard.csrf, outcomes=views.OUTCOMES)
    lock = threading.Lock()
    stats_cache = StatsCache(lock)
    # What the last writes did, shown once on the page they return to. Kept here, not in the
    # address: a link cannot make the page say something it did not do.
    flashes: OrderedDict[str, str] = OrderedDict()
    previews: OrderedDict[str, dict[str, Any]] = OrderedDict()  # the last context previews
    rated: dict[str, dict[str, str]] = {}  # preview -> id -> how it was rated

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        def locked() -> Any:
            with lock, scopes.using(scope):
                return fn(*args, **kwargs)

        return await run_in_threadpool(locked)

    async def page(request: Request, name: str, context: dict[str, Any],
                   status: int = 200) -> Response:
        """The template rendered in a worker thread (not under the bank's lock): rendering a
        long body as markdown on the event loop stalled every request, assets too, for 22 s
        (hunt-browser #3, session 31)."""
        context = {"nav": NAV.get(name, ""), "msg": flashes.pop(request.query_params.get("done", ""), ""),
                   "error": context.pop("error", ""), **context}
        return await run_in_threadpool(templates.TemplateResponse, request, name, context,
                                       status_code=status)

    async def failed(request: Request, exc: SkillbankError, name: str = "error.html",
               context: dict[str, Any] | None = None) -> Response:
        return await page(request, name, {**(context or {}), "error": str(exc)},
                    status=status_of(exc))

    async def form_of(request: Request) -> Any:
        form = await request.form()
        if not guard.csrf_ok(form.get("csrf")):
            raise PermissionError
        return form

    def back(form: Any, fallback: str, msg: str) -> Response:
        target = str(form.get("next") or fallback)
        if not target.startswith("/") or target.startswith(("//", "/\\")):
            target = fallback  # only back to this site: never an open redirect
        key = secrets.token_urlsafe(8)
        flashes[key] = msg
        while len(flashes) > 100:
            flashes.popitem(last=False)
        path, _, query = target.partition("?")
        params = [(k, v) for k, v in parse_qsl(query) if k != "done"] + [("done", key)]
        return RedirectResponse(f"{path}?{urlencode(params)}", status_code=303)

    def write(handler: Callable[[Request, Any], Any]) -> Callable[[Request], Any]:
        """A POST route: CSRF-checked form, errors shown on the error page."""
        async def endpoint(request: Request) -> Response:
            try:
                form = await form_of(request)
            except PermissionError:
                return await page(request, "error.html", {"error": "This form has expired (the "
                            "browser's server was restarted): reload the page and try again."},
                            status=403)
            try:
                return await handler(request, form)
            except SkillbankError as exc:
                return await failed(request, exc)
            finally:
                stats_cache.clear()
        return endpoint

    def listed_version(request: Request) -> str:
        """The `?version=` a skill's page was opened for (/review's link): compared with the
        version it renders, never trusted as one (a bound: it is echoed in the page)."""
        return request.query_params.get("version", "").strip()[:80]

    # Pages ------------------------------------------------------------------------------------
    async def home(request: Request) -> Response:
        return RedirectResponse("/skills", status_code=307)

    async def skills(request: Request) -> Response:
        q = request.query_params.get("q", "")
        try:
            pg = int(request.query_params.get("page", "1") or 1)
        except ValueError:
            pg = 1
        try:
            data = await call(views.skills_page, bank, q, pg,
                              request.query_params.get("invalid") == "1")
        except SkillbankError as exc:
            return await failed(request, exc, "skills.html", {"query": echoed(q), "hits": [],
                                                        "skills": [], "drafts": None, "page": 1,
                                                        "pages": 1, "spec": {}, "invalid": False})
        return await page(request, "skills.html", data)

    async def skill(request: Request) -> Response:
        """A skill's page, or one of its files: told apart on the path as sent, where a `/` of
        the name is `%2F` (`render.skill_path`; hunt-browser #2, session 31)."""
        raw = request.scope.get("raw_path")
        sent = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path, safe="/!")
        name, relative = skill_path(sent.partition("/skills/")[2])  # (after a mount's prefix)
        if relative is not None:
            return await resource(request, name, relative)
        try:
            data = await call(views.skill_detail, bank, name, listed_version(request))
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "skill.html", data)

    async def resource(request: Request, name: str, relative: str) -> Response:
        try:
            # a person may read a held skill's files: the scan's findings point at them
            data = await call(views.resource_detail, bank, name, relative,
                              listed_version(request))
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "resource.html", data)

    async def draft(request: Request) -> Response:
        try:
            data = await call(views.draft_detail, bank, request.path_params["name"])
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "draft.html", data)

    async def draft_action(request: Request, form: Any) -> Response:
        name, action = request.path_params["name"], request.path_params["action"]
        if action not in ("adopt", "discard"):
            raise InvalidInputError(f"unknown draft action {action!r}")
        fn = getattr(bank.skills, action, None)
        if not callable(fn):
            raise SkillbankError(f"this skillbank cannot {action} drafts")
        if action == "adopt":  # only the text the page showed (hunt-ui #3, session 27)
            done = await call(fn, name, shown_hash=str(form.get("shown", "")))
        else:
            done = await call(fn, name)
        skill = getattr(done, "name", name) if action == "adopt" else name
        as_skill = f" as skill {skill}" if skill != name else ""  # a draft named apart from it
        return back(form, "/skills", f"{'Adopted' if action == 'adopt' else 'Discarded'} "
                                     f"draft {name}{as_skill}.")

    async def skill_review(request: Request) -> Response:
        from skillbank.ui.skill_review import review_page

        try:
            data = await call(review_page, bank,
                              views.page_number(request.query_params.get("page", "")),
                              request.query_params.get("skill", ""))
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "skill_review.html", data)

    async def skill_review_action(request: Request, form: Any) -> Response:
        # The name as sent (`render.name_of`): the decoded path cannot tell `!..` (the skill
        # named `..`, hunt-ui #4, session 37) from `%21..` (the one named `!..`).
        raw = request.scope.get("raw_path")
        sent = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path, safe="/!")
        segment = sent.partition("/review/")[2].rpartition("/")[0]
        name = name_of(segment) if segment else request.path_params["name"]
        action = request.path_params["action"]
        if action not in ("accept", "reject"):
            raise InvalidInputError(f"unknown review action {action!r}")
        if action == "accept":  # only the version its page showed (review 3 #1, session 31)
            version = str(form.get("version", "")).strip()
            if not version:
                raise InvalidInputError(f"this form names no version of skill {name!r} to "
                                        "accept: open the skill's page, read it again and "
                                        "accept it there")
            await call(bank.skills.review_skill, name, action, version=version)
        else:
            await call(bank.skills.review_skill, name, action)
        return back(form, "/review", f"{'Accepted' if action == 'accept' else 'Rejected'} "
                                     f"skill {name}.")

    async def guidelines(request: Request) -> Response:
        params = request.query_params
        try:
            data = await call(views.guidelines_page, bank, params.get("topic", ""),
                              params.get("status", ""), params.get("namespace", ""),
                              views.page_number(params.get("page", "")))
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "guidelines.html", data)

    async def guideline(request: Request) -> Response:
        try:
            data = await call(views.guideline_detail, bank, request.path_params["gid"])
        except SkillbankError as exc:
            return await failed(request, exc)
        forget_ok = callable(getattr(bank, "forget", None))
        return await page(request, "guideline.html", {**data, "can_forget": forget_ok})

    async def guideline_action(request: Request, form: Any) -> Response:
        gid, action = request.path_params["gid"], request.path_params["action"]
        if action not in GUIDELINE_ACTIONS:
            raise InvalidInputError(f"unknown guideline action {action!r}")
        g = bank.guidelines
        if action in ("helpful", "harmful"):
            result = await call(g.vote, gid, helpful=action == "helpful")
        elif action == "approve" and (await call(g.get, gid)).status == "active":
            # "Approved …; it is now active." was said of a rule that was never pending
            result = await call(g.approve, gid)  # (hunt-browser #5, session 31)
            if result.id == gid and result.status == "active":
                return back(form, "/guidelines", f"{gid} is already active; nothing changed.")
        else:
            result = await call(getattr(g, action), gid)
        done = {"approve": "Approved", "reject": "Rejected", "retire": "Retired",
                "helpful": "Voted helpful on", "harmful": "Voted harmful on"}[action]
        if result.id != gid:  # approve folded a restatement into the active rule it repeats
            from skillbank.tool_text import folded_note

            # "it is now active" was said of a proposal the fold retired (hunt-ui #1, s. 27)
            return back(form, "/guidelines", f"{done} {gid}: {folded_note(result.id)}; "
                                             f"{gid} is retired.")
        return back(form, "/guidelines", f"{done} {gid}; it is now {result.status}.")

    async def experiences(request: Request) -> Response:
        f = views.TimelineFilter.parse(request.query_params)
        base = {"f": f, "rows": [], "total": None, "more": False}
        if f.problems:  # a bad filter is a 400, never the records it did not filter
            return await page(request, "experiences.html", {
                **base, "f": dataclasses.replace(f, query=echoed(f.query)), "can_forget": False,
                "pending": None, "serves": {}, "error": "; ".join(f.problems)}, status=400)
        try:
            data = await call(views.experiences_page, bank, f)
            forget_ok = await call(views.can_forget, bank)
            queue = await call(views.pending_experiences, bank, views.page_number(
                request.query_params.get("pending_page", "")))
        except SkillbankError as exc:  # a refused query is shown shortened (as /skills does)
            base["f"] = dataclasses.replace(f, query=echoed(f.query))
            return await failed(request, exc, "experiences.html", {**base, "can_forget": False,
                                                             "pending": None, "serves": {}})
        return await page(request, "experiences.html", {**base, **data, "can_forget": forget_ok,
                                                        **queue})

    async def experience(request: Request) -> Response:
        try:
            data = await call(views.experience_detail, bank, request.path_params["eid"])
            forget_ok = await call(views.can_forget, bank)
        except SkillbankError as exc:
            return await failed(request, exc)
        return await page(request, "experience.html", {**data, "can_forget": forget_ok})

    async def forget(request: Request, form: Any) -> Response:
        item_id = request.path_params.get("eid") or request.path_params["gid"]
        result = await call(views.forget, bank, item_id)
        # Forget means gone: a kept context preview showed a forgotten record again.
        previews.clear()
        rated.clear()
        fallback = "/experiences" if "eid" in request.path_params else "/guidelines"
        handed = result.get("detail", "") if isinstance(result, dict) and \
            item_id.startswith("gl-") else ""  # what became of the rules it had replaced
        return back(form, fallback, f"Forgot {item_id}." + (f" {handed}." if handed else ""))

    async def experience_review(request: Request, form: Any) -> Response:
        eid, action = request.path_params["eid"], request.path_params["action"]
        if action not in ("approve", "reject"):
            raise InvalidInputError(f"unknown experience action {action!r}")
        fn = getattr(bank.experiences, action, None)
        if not callable(fn):
            raise SkillbankError(f"this skillbank cannot {action} experiences")
        done = await call(fn, eid)
        if action == "approve" and isinstance(done, dict) and eid not in done.get("approved", [eid]):
            return back(form, "/experiences", f"{eid} is already active; nothing changed.")
        lessons = sorted(i for i in (done.get("approved", []) if isinstance(done, dict) else [])
                         if i != eid)  # approved with it, and listed apart in the queue (hunt-ui #4)
        also = f" with its pending lessons {', '.join(lessons)}" if lessons else ""
        return back(form, "/experiences", f"{'Approved' if action == 'approve' else 'Rejected'} "
                                          f"{eid}{also}.")

    async def context_form(request: Request) -> Response:
        # `/context?task=…` (a link from elsewhere) fills the form in; the preview itself stays a
        # POST, because building it counts a recall (a write a link must not trigger) (#27).
        q = request.query_params
        kept = previews.get(q.get("preview", ""))
        if kept is not None and time.monotonic() - kept["kept_at"] > KEPT_PREVIEW_SECONDS:
            kept = None  # memory may have changed since
        if kept is not None and await call(views.newest_forget, bank) != kept["forgets"]:
            previews.pop(kept["preview"], None)  # forget means gone, whoever forgot it
            rated.pop(kept["preview"], None)
            kept = None
        if kept is not None:  # back from rating one of its ids: the same preview, not rebuilt
            return await page(request, "context.html", {**kept, "rated": rated.get(
                q.get("preview", ""), {})})
        task = q.get("task", "")
        return await page(request, "context.html", {"task": task, "budget": q.get("budget", 1500),
                                              "namespace": q.get("namespace", ""),
                                              "prefilled": bool(task)})

    async def context_preview(request: Request, form: Any) -> Response:
        task, budget = str(form.get("task", "")), str(form.get("budget", ""))
        namespace = str(form.get("namespace", "")).strip()
        shown = {"task": task, "budget": budget, "namespace": namespace}
        forgets = await call(views.newest_forget, bank)  # a forget from now on drops it
        try:
            data = await call(views.context_preview, bank, task, budget, namespace)
        except SkillbankError as exc:
            return await failed(request, exc, "context.html", {**shown, "task": echoed(task)})
        # Kept, so rating its ids one by one comes back to it: each rating used to land on an
        # empty form, and building the preview again for the next id counted another recall of
        # every experience in it (one preview's three ratings took a record's uses 1 -> 4).
        key = secrets.token_urlsafe(8)
        previews[key] = {**shown, **data, "preview": key, "kept_at": time.monotonic(),
                         "forgets": forgets}
        while len(previews) > KEPT_PREVIEWS:
            rated.pop(previews.popitem(last=False)[0], None)
        return await page(request, "context.html", previews[key])

    async def rate(request: Request, form: Any) -> Response:
        item_id = str(form.get("id", ""))
        helpful = form.get("helpful") == "1"
        await call(bank.rate, item_id, helpful)
        preview = str(form.get("preview", ""))
        if preview in previews:
            rated.setdefault(preview, {})[item_id] = "helped" if helpful else "did not help"
            form = {"next": f"/context?{urlencode({'preview': preview})}"}
        return back(form, "/context", f"Rated {item_id} as {'helpful' if helpful else 'not helpful'}.")

    async def stats(request: Request) -> Response:
        try:
            data = await call(stats_cache.get, bank)
        except SkillbankError as exc:
            return await failed(request, exc)
        if data is None:  # a large memory's first drawing runs in the background
            return await page(request, "stats.html", {"drawing": True})
        return await page(request, "stats.html", data)

    async def audit(request: Request) -> Response:
        from skillbank.ui.audit_view import AuditFilter, audit_page

        try:
            data = await call(audit_page, bank, AuditFilter.parse(request.query_params))
        except SkillbankError as exc:  # below reviewer (`audit.visible_to`); PostgreSQL down
            return await failed(request, exc)
        return await page(request, "audit.html", data, status=400 if data["f"].problems else 200)

    routes = [
        Route("/", home),
        Route("/skills", skills),
        # `/skills/{url_name}` and `/skills/{url_name}/files/{path}`: a name's `/` is `%2F`
        # (a read-only root may serve `team/deploy`); `skill` reads the path as sent.
        Route("/skills/{rest:path}", skill),
        Route("/drafts/{name}", draft),
        Route("/drafts/{name}/{action}", write(draft_action), methods=["POST"]),
        Route("/review", skill_review),
        Route("/review/{name:path}/{action}", write(skill_review_action), methods=["POST"]),
        Route("/guidelines", guidelines),
        Route("/guidelines/{gid}", guideline),
        Route("/guidelines/{gid}/forget", write(forget), methods=["POST"]),
        Route("/guidelines/{gid}/{action}", write(guideline_action), methods=["POST"]),
        Route("/experiences", experiences),
        Route("/experiences/{eid}", experience),
        Route("/experiences/{eid}/forget", write(forget), methods=["POST"]),
        Route("/experiences/{eid}/{action}", write(experience_review), methods=["POST"]),
        Route("/context", context_form),
        Route("/context", write(context_preview), methods=["POST"]),
        Route("/rate", write(rate), methods=["POST"]),
        Route("/stats", stats),
        Route("/audit", audit),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    async def unexpected(request: Request, exc: Exception) -> Response:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        response = await page(request, "error.html", {"error": f"Unexpected error: {detail} "
                                                f"({type(exc).__name__}); the server's log has "
                                                "the traceback."}, status=500)
        # Starlette answers this outside GuardMiddleware: its headers are set here.
        response.headers.update(security_headers())
        return response

    async def refused(request: Request, exc: Exception) -> Response:
        """A skillbank error no route caught: its own status and message, no traceback."""
        return await failed(request, exc)  # type: ignore[arg-type]

    app = Starlette(routes=routes, exception_handlers={SkillbankError: refused,
                                                       Exception: unexpected})
    app.add_middleware(GuardMiddleware, guard=guard)
    app.state.guard = guard
    app.state.stats_cache = stats_cache
    return app
