"""`skillbank server`: one team-mode worker — MCP over streamable HTTP, plus /healthz and /readyz.

Run N of them (any machines, behind any load balancer) with the same `--database-url`
(PostgreSQL: write lock, change feed, usage counters, audit) and `--chroma-url` (the derived
index, in this deployment's own Chroma database). A worker keeps no state another worker needs:
what one acknowledges, the others see within a second through LISTEN/NOTIFY.

- `/healthz`: the process is up and serving (200), for a liveness probe; it never touches a
  dependency, so a database outage does not get healthy workers restarted.
- `/readyz`: PostgreSQL and Chroma both answer (200), else 503 with a JSON body naming each
  failing dependency and what to check, for a load balancer to route around the worker.
- `/mcp`: the same MCP server `skillbank serve --transport http` runs (its guard: bearer token,
  Origin check, body limit). With `--tokens FILE` (the hashed tokens file of
  `skillbank tokens add`) each person's token maps to a principal and every request runs in
  that principal's scope; with only `--token`, every caller shares the server's own scope (the
  local user, admin of every namespace), so one person's memory is not kept from another's.
  With OIDC (`[oidc]`, skillbank/team/auth.py) each request's JWT gives its principal and scope.
- `/metrics`: Prometheus metrics (skillbank/team/metrics.py); every tool call is also one JSON
  log line on stderr (skillbank/team/logs.py). As a Prometheus exporter: open by default (counts
  and latencies per tool and dependency, never a principal or memory text); `--metrics-token`
  makes it ask for `Authorization: Bearer` (Prometheus's `authorization.credentials_file`),
  `--metrics-port` moves it to a listener of its own that the load balancer does not route to
  (then the main listener answers 404 there).

Still on the root's files in this first step (see docs/team.md): skills, guideline records and
the experience journal, so every worker must see the same root folder.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger("skillbank.team")


def readiness(bank: Any) -> tuple[bool, dict[str, str]]:
    """Whether each dependency answers; a failing one's message says what to fix."""
    checks: dict[str, str] = {}
    store = getattr(bank, "store", None)
    if store is not None:
        try:
            store.ping()
            checks["postgres"] = "ok"
        except Exception as exc:  # noqa: BLE001 - StoreUnavailableError names the fix
            checks["postgres"] = str(exc)
    try:
        bank.client.heartbeat()
        checks["chroma"] = "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        from skillbank.index_outage import without_credentials

        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = without_credentials(bank.settings.chroma_url) if bank.settings.chroma_url \
            else bank.settings.chroma_path  # /readyz is open: never a password
        checks["chroma"] = (f"Chroma at {where} "
                            f"is unreachable ({first}); check that it is running and that "
                            "chroma_url (SKILLBANK_CHROMA_URL) is right")
    from skillbank.team.skills_repo import served as served_skills

    # Only a cause in this worker's own checkout (`stuck`: local changes, an unmerged index)
    # makes it unready. A branch rewritten or deleted on the remote (`behind`, in the "skills"
    # body and /metrics) hits every worker at once, and each still serves its last commit: as
    # a failed check it took the whole team service out of the load balancer.
    stuck = (served_skills(bank) or {}).get("stuck")
    if stuck:  # serving an old commit for good: /readyz said ready while no merge was followed
        checks["skills"] = f"the skills checkout cannot follow its branch: {stuck}"
    return all(v == "ok" for v in checks.values()), checks


class HealthRoutes:
    """ASGI: answer /healthz, /readyz and /metrics here, pass everything else (and lifespan)
    through. /metrics is not behind the /mcp guard (a scraper has no principal): `metrics` is
    its own app (`metrics_app`: open, or asking for the metrics token); None when it is served
    on a listener of its own, and then this one answers 404 naming that port.

    `skillbank serve --transport http` answers /healthz and /readyz with these routes too
    (`ready`: its bank opens in the background, `BankHandle.readiness`): with `--tokens` a
    broken edit of the file showed only in its log there."""

    def __init__(self, app: Any, bank: Any, metrics: Any = None,
                 elsewhere: str | None = None, tokens: Any = None,
                 ready: Any = None) -> None:
        self.app = app
        self.bank = bank
        self.metrics_app = metrics
        self.elsewhere = elsewhere
        self.tokens = tokens  # mcp_server.identity.TokensFile, or None
        #: () -> (ready, checks); default: `readiness(bank)`, a worker's bank, open at start
        self.ready = ready or (lambda: readiness(self.bank))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path") if scope.get("type") == "http" else None
        if path == "/healthz":
            await _json(send, 200, {"status": "ok", "pid": os.getpid()})
        elif path == "/readyz":
            import anyio

            ready, checks = await anyio.to_thread.run_sync(self.ready)
            body: dict[str, Any] = {"status": "ready" if ready else "not ready", "checks": checks}
            # Skills in git: the branch and commit this worker serves (skills_repo.py); a failed
            # fetch or a branch rewritten or deleted on the remote ("behind") is shown there and
            # leaves the worker ready (it serves a commit); a checkout that cannot follow for a
            # local cause makes it unready (above).
            from skillbank.team.skills_repo import served as served_skills

            served = await anyio.to_thread.run_sync(served_skills, self.bank)
            if served is not None:
                body["skills"] = served
            if self.tokens is not None:
                # A tokens file whose last edit is broken (`problem`: the file and line): shown
                # here and in skillbank_tokens_file_stale, and the worker stays ready with the
                # last good tokens. Every worker reads the same file, so failing the check would
                # take the whole service out of the load balancer for one typo (as a rewritten
                # skills branch once did); a deleted file already revokes every token.
                body["tokens"] = await anyio.to_thread.run_sync(self.tokens.status)
            await _json(send, 200 if ready else 503, body)
            if not ready:
                log.warning("not ready: %s", "; ".join(v for v in checks.values() if v != "ok"),
                            extra={"event": "not_ready", "checks": checks})
        elif path == "/metrics" and self.metrics_app is not None:
            await self.metrics_app(scope, receive, send)
        elif path == "/metrics" and self.elsewhere:
            await _json(send, 404, {"error": f"metrics are served at {self.elsewhere}"})
        else:
            await self.app(scope, receive, send)


def metrics_app(metrics: Any, token: str | None) -> Any:
    """The Prometheus endpoint: open, or (with `token`) only for `Authorization: Bearer
    <token>` (compared in constant time), else 401 — what Prometheus sends with
    `authorization: {credentials_file: ...}` in its scrape config."""
    served = metrics.asgi_app()
    if not token:
        return served
    import hmac

    expected = token.encode()

    def admitted(header: bytes) -> bool:
        # The scheme is case-insensitive (RFC 7235 section 2.1, RFC 6750): "bearer <token>"
        # is the same credential; spaces after the scheme are not part of the token.
        scheme, _, value = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), expected)

    async def gated(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not admitted(given):
                body = b"metrics need the metrics token: Authorization: Bearer <token>\n"
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                        (b"content-length", str(len(body)).encode()),
                                        (b"www-authenticate", b'Bearer realm="metrics"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await served(scope, receive, send)

    return gated


class MetricsOnly:
    """ASGI for the separate metrics listener: /metrics, and 404 for everything else."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("path") == "/metrics":
            await self.app(scope, receive, send)
        elif scope.get("type") == "http":
            await _json(send, 404, {"error": "this listener serves /metrics only"})


async def _json(send: Any, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


def build_worker_app(bank: Any, *, host: str, token: str | None, trusted: bool,
                     max_body_bytes: int | None = None, tokens: Any = None,
                     identity: Any = None, resource_url: str | None = None,
                     metrics_token: str | None = None,
                     metrics_elsewhere: str | None = None) -> Any:
    """The worker's ASGI app (its metrics app is `.metrics_endpoint`: served at /metrics here,
    or, with `metrics_elsewhere` naming the other listener, there only). `identity` (`skillbank.team.auth.TeamIdentity`, with OIDC) is
    handed to the MCP SDK as its `TokenVerifier` with `AuthSettings` for `resource_url` (this
    worker's public /mcp URL), so the SDK guards /mcp and publishes the protected-resource
    metadata; the guard asks it first, to answer a refused token with its reason."""
    from skillbank.mcp_server.http import build_app
    from skillbank.mcp_server.options import ServeOptions
    from skillbank.mcp_server.server import build_server
    from skillbank.team.logs import CallObserver
    from skillbank.team.metrics import Metrics

    auth = identity.auth_settings(resource_url) if identity is not None else None
    # Per-principal trust: with a tokens file or OIDC each request runs in its principal's
    # scope, whose `trusted` (the token's entry, the JWT's groups) decides whether its writes
    # are pending; the tools must not narrow it further, so the server is built trusting and
    # the scope does the narrowing (`scope.caller` never widens: an untrusted principal stays
    # untrusted whatever `--trust` says). A request with no principal (the static `--token`)
    # runs in the server's own scope, trusted only with `--trust` (PrincipallessTrust).
    per_principal = tokens is not None or identity is not None
    from skillbank.mcp_server.loader import BankHandle
    from skillbank.mcp_server.state_key import shared_security

    # One requestState key for every worker: a sampling retry may reach any of them
    # (hunt-sampling #2, session 36).
    server = build_server(bank, trusted=trusted or per_principal, auth=auth,
                          token_verifier=identity if auth is not None else None,
                          request_state=shared_security(BankHandle.ready(bank), bank.settings))
    metrics = Metrics()
    metrics.instrument_bank(bank)
    if tokens is not None:
        metrics.watch_tokens(tokens)
    # One JSON log line and metrics per call; a made-up tool name is counted as `unknown` (the
    # worker passed no `known`, so each name became a label series without bound).
    server.middleware.append(CallObserver(metrics, known=server.has_tool))
    limit = max_body_bytes or ServeOptions.max_body_bytes
    metadata_url = identity.metadata_url(resource_url) if identity is not None else None
    # Stateless: any worker behind the load balancer answers any request (see build_app).
    app = build_app(server, host=host, token=token, max_body_bytes=limit, tokens=tokens,
                    identity=identity, metadata_url=metadata_url, stateless=True)
    if per_principal and not trusted:
        from skillbank.mcp_server.http import PrincipallessTrust

        app = PrincipallessTrust(app, bank.settings.namespace)
    endpoint = metrics_app(metrics, metrics_token)
    routes = HealthRoutes(app, bank, None if metrics_elsewhere else endpoint,
                          elsewhere=metrics_elsewhere, tokens=tokens)
    routes.metrics_endpoint = endpoint  # type: ignore[attr-defined]
    return routes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="skillbank server", description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=env("SKILLBANK_ROOT"),
                        help="the memory root every worker shares (SKILLBANK_ROOT)")
    parser.add_argument("--database-url", default=env("SKILLBANK_DATABASE_URL"),
                        help="PostgreSQL, e.g. postgresql://user:pw@host:5432/skillbank")
    parser.add_argument("--chroma-url", default=env("SKILLBANK_CHROMA_URL"),
                        help="the Chroma server, e.g. http://chroma:8000")
    parser.add_argument("--deployment", default=env("SKILLBANK_DEPLOYMENT"),
                        help="this deployment's name (default: the root's id); recorded in "
                             "the root's skillbank.toml so the CLI on the root opens it too")
    parser.add_argument("--no-watch", dest="watch", action="store_false",
                        help="do not watch the skill folders (default: a skill added or edited "
                             "by hand is indexed within seconds, as under `skillbank serve`)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--token", default=env("SKILLBANK_TOKEN"),
                        help="bearer token every /mcp request must carry (SKILLBANK_TOKEN)")
    parser.add_argument("--tokens", default=env("SKILLBANK_TOKENS"), metavar="FILE",
                        help="tokens file mapping each bearer token to a principal and its scope "
                             "(`skillbank tokens add`; SKILLBANK_TOKENS)")
    parser.add_argument("--auth-config", default=env("SKILLBANK_AUTH_CONFIG"), metavar="FILE",
                        help="TOML file whose [oidc] table configures OIDC/JWT identity (default: "
                             "the root's skillbank.toml; docs/team.md)")
    parser.add_argument("--oidc-issuer", default=env("SKILLBANK_OIDC_ISSUER"),
                        help="the issuer (iss) every JWT must carry")
    parser.add_argument("--oidc-audience", default=env("SKILLBANK_OIDC_AUDIENCE"),
                        help="the audience (aud) JWTs carry for this service")
    parser.add_argument("--oidc-jwks-url", default=env("SKILLBANK_OIDC_JWKS_URL"),
                        help="where the issuer publishes its signing keys (JWKS)")
    parser.add_argument("--public-url", default=env("SKILLBANK_PUBLIC_URL"),
                        help="the URL clients reach this service at, e.g. "
                             "https://skillbank.example.com (names /mcp in the protected-resource "
                             "metadata; default http://HOST:PORT)")
    parser.add_argument("--trust", action="store_true",
                        help="trust callers without a principal of their own (the static "
                             "--token): their writes are not pending. A principal from --tokens "
                             "or OIDC is as trusted as its token says, with or without it")
    parser.add_argument("--metrics-token", default=env("SKILLBANK_METRICS_TOKEN"),
                        help="bearer token /metrics asks for (SKILLBANK_METRICS_TOKEN; default: "
                             "none, /metrics is open as a Prometheus exporter's is)")
    parser.add_argument("--metrics-port", type=int, default=_int(env("SKILLBANK_METRICS_PORT")),
                        help="serve /metrics on this port only, a listener of its own "
                             "(SKILLBANK_METRICS_PORT; default: on --port)")
    parser.add_argument("--metrics-host", default=env("SKILLBANK_METRICS_HOST"),
                        help="the address of the --metrics-port listener (default: --host)")
    parser.add_argument("--log-level", default="warning",
                        help="level of the worker's own messages; tool-call lines are always "
                             "logged (one per call)")
    parser.add_argument("--skills-repo", default=None, metavar="URL",
                        help="the skills git repository (URL or path) whose branch this worker "
                             "serves; writes become proposal branches (default: "
                             "SKILLBANK_SKILLS_REPO or skills_repo in the root's skillbank.toml)")
    parser.add_argument("--skills-branch", default=None, metavar="BRANCH",
                        help="the branch of --skills-repo to serve and follow (default: "
                             "SKILLBANK_SKILLS_BRANCH, skills_branch, else main)")
    parser.add_argument("--log-format", choices=("json", "text"), default="json",
                        help="json: one JSON object per line (default), for a log collector")
    return parser.parse_args(argv)


def metrics_token_of(given: str | None) -> str | None:
    """The metrics token as given, without the whitespace around it (a token read from a
    secret keeps its newline; Prometheus trims its credentials_file, so it never sends one).
    Given but empty (SKILLBANK_METRICS_TOKEN set from an unset secret) is refused: serving
    /metrics open is a choice made by not setting it, never by an empty value."""
    from skillbank.errors import InvalidInputError

    if given is None:
        return None
    if not given.strip():
        raise InvalidInputError("the metrics token (--metrics-token / SKILLBANK_METRICS_TOKEN) "
                                "is empty: give the token, or unset it to serve /metrics open")
    return given.strip()


def _int(raw: str | None) -> int | None:
    try:
        return int(raw) if raw else None
    except ValueError:
        raise SystemExit(f"skillbank server: SKILLBANK_METRICS_PORT={raw!r} is not a port number")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one worker until Ctrl-C (SIGINT) or SIGTERM; returns the exit code. Either is a
    clean stop (exit 0; an open bank closed) however the worker was started, also while it
    opens its bank (before uvicorn handles signals): one started with `&` by a script inherits
    SIGINT ignored and ran on (skillbank/signals.py); at a terminal it died with a traceback.
    Stopped while its bank opens, it ends the process there (`skillbank.ending`): the opener
    may be inside native code, under which the interpreter's teardown could crash."""
    from skillbank.signals import Terminated, ctrl_c_stops, sigterm_stops

    # SIGTERM (an orchestrator stopping the worker) closes the bank as Ctrl-C does: uvicorn
    # raised it again after its shutdown, and Python's default ended the process (143) with
    # the bank never closed.
    restore, restore_term = ctrl_c_stops(), sigterm_stops()
    try:
        return _main(argv)
    except KeyboardInterrupt as exc:
        how = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        print(f"skillbank team worker {os.getpid()} stopped ({how})", file=sys.stderr,
              flush=True)
        from skillbank.signals import end_if_abandoned

        end_if_abandoned()  # stopped while its bank opened: the opener may be in native code
        return 0
    finally:
        restore_term()
        restore()


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    from skillbank.team.logs import configure

    configure(args.log_level, args.log_format)
    missing = [flag for flag, value in (("--database-url", args.database_url),
                                        ("--chroma-url", args.chroma_url)) if not value]
    if missing:
        print(f"skillbank server: {' and '.join(missing)} needed: a team worker keeps its shared "
              "state in PostgreSQL and its index on a Chroma server (docs/team.md)",
              file=sys.stderr)
        return 2
    from skillbank.mcp_server.options import is_loopback

    from skillbank.errors import InvalidInputError

    try:
        args.metrics_token = metrics_token_of(args.metrics_token)
        oidc = _oidc(args)
    except InvalidInputError as exc:
        print(f"skillbank server: {exc}", file=sys.stderr)
        return 2
    if not is_loopback(args.host) and not args.token and not args.tokens and oidc is None:
        print(f"skillbank server: refusing to serve on {args.host} without OIDC ([oidc] or "
              "--oidc-issuer), --tokens or --token (SKILLBANK_TOKEN): anyone who can reach it "
              "could read and write this memory", file=sys.stderr)
        return 2
    tokens = None
    if args.tokens:
        from skillbank.mcp_server.identity import TokensFile

        try:
            tokens = TokensFile(args.tokens)  # refused now, naming the problem, if unsafe
        except InvalidInputError as exc:
            print(f"skillbank server: {exc}", file=sys.stderr)
            return 2
    shown = f"[{args.host}]" if ":" in args.host else args.host
    resource_url = (args.public_url or f"http://{shown}:{args.port}").rstrip("/") + "/mcp"
    import uvicorn

    from skillbank import Skillbank
    from skillbank.cli.common import embedding_from_env
    from skillbank.errors import SkillbankError
    from skillbank.signals import interruptible

    from skillbank import remember

    root = remember.resolve_root(Path(args.root) if args.root else None)
    if args.deployment:  # one root, one deployment: the CLI on this root opens the same one
        recorded = remember.deployment(root)
        if recorded is not None and recorded != args.deployment:
            print(f"skillbank server: {root / remember.CONFIG} says deployment = {recorded!r}, "
                  f"and this worker was given {args.deployment!r}; one root is one deployment "
                  "(the CLI and every worker on it must open the same one): start it with "
                  f"--deployment {recorded}, or change that line by hand", file=sys.stderr)
            return 2
    from skillbank.opening import deployment_recorded_later

    try:  # interruptible: Ctrl-C while PostgreSQL or the Chroma server hangs (signals.py)
        with deployment_recorded_later():  # by _remember_serving, once it can serve
            bank = interruptible(lambda: Skillbank.open(
                args.root, chroma_url=args.chroma_url, database_url=args.database_url,
                deployment=args.deployment, embedding_function=embedding_from_env(),
                include_bundled=True, start_without_chroma=True, **skills_overrides(args),
                # --no-watch: skill files changed are not synced, neither by reads
                # (freshness.py)
                skills_recheck_seconds=None if args.watch else 0))
    except SkillbankError as exc:
        print(f"skillbank server: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        reason = chroma_unreachable(exc)
        if reason is None:
            raise
        from skillbank.index_outage import without_credentials

        shown = without_credentials(args.chroma_url or "")
        print(f"skillbank server: the Chroma server at {shown} does not answer "
              f"({reason}); start it (chroma run --path DIR --port PORT) or fix --chroma-url "
              "(SKILLBANK_CHROMA_URL)", file=sys.stderr)
        return 1
    identity = None
    if oidc is not None:  # after the bank opens: its namespace is never a JWT's own
        from skillbank.team.auth import TeamIdentity

        identity = TeamIdentity(oidc=oidc, tokens=tokens, static_token=args.token,
                                bank_namespace=bank.settings.namespace)
    if args.watch:
        bank.watch()  # hand edits on the shared root reach this worker's index (and, through
        # the change feed, the other workers')
    metrics_host = args.metrics_host or args.host
    elsewhere = None
    if args.metrics_port:
        shown_m = f"[{metrics_host}]" if ":" in metrics_host else metrics_host
        elsewhere = f"http://{shown_m}:{args.metrics_port}/metrics"
    try:
        try:
            app = build_worker_app(bank, host=args.host, token=args.token, trusted=args.trust,
                                   tokens=tokens, identity=identity, resource_url=resource_url,
                                   metrics_token=args.metrics_token, metrics_elsewhere=elsewhere)
        except InvalidInputError as exc:  # a setting to fix (SKILLBANK_MCP_PAGE_SIZE=0 ...)
            print(f"skillbank server: {exc}", file=sys.stderr)
            return 2
        _remember_serving(root, args)  # once the worker can serve: a failed start leaves none
        if elsewhere:
            _serve_metrics(app.metrics_endpoint, metrics_host, args.metrics_port,
                           args.log_level.lower())
        where = elsewhere or "/metrics"
        print(f"skillbank team worker {os.getpid()} on http://{args.host}:{args.port} "
              f"(/mcp, /healthz, /readyz; metrics at {where}"
              f"{', token required' if args.metrics_token else ''})", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower(),
                    access_log=False, lifespan="on", log_config=None)
    finally:
        bank.close()
    return 0


def _serve_metrics(endpoint: Any, host: str, port: int, level: str) -> None:
    """The metrics listener, on a daemon thread (uvicorn leaves signals to the main thread's
    server, so stopping the worker stops both); a port it cannot bind stops the worker."""
    import threading

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(MetricsOnly(endpoint), host=host, port=port,
                                           log_level=level, access_log=False, lifespan="off",
                                           log_config=None))
    thread = threading.Thread(target=server.run, daemon=True, name="skillbank-metrics")
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(0.05)
    if not server.started:
        raise SystemExit(f"skillbank server: cannot serve metrics on {host}:{port} (see above)")


def chroma_unreachable(exc: BaseException) -> str | None:
    """Why opening the bank could not reach the Chroma server (its transport error, or
    chromadb's "Could not connect" raised from it), or None for any other failure."""
    from skillbank.index_outage import is_outage

    seen: BaseException | None = exc
    while seen is not None:
        if is_outage(seen):
            return (str(seen).strip().splitlines() or [type(seen).__name__])[0]
        seen = seen.__cause__ or seen.__context__
    return None


def _remember_serving(root: Path, args: argparse.Namespace) -> None:
    """Record in the root's skillbank.toml what the CLI on this root must share with the
    worker: the deployment, and the skills repository (without it the CLI wrote skills straight
    into the served checkout, unreviewed, and every worker stopped following the branch)."""
    from skillbank import remember
    from skillbank.errors import InvalidInputError
    from skillbank.index_outage import without_credentials

    env = {"deployment": "SKILLBANK_DEPLOYMENT", "skills_repo": "SKILLBANK_SKILLS_REPO",
           "skills_branch": "SKILLBANK_SKILLS_BRANCH"}
    try:
        remember.mark_team(root)  # the CLI and the API then refuse to open it embedded
    except (OSError, InvalidInputError) as exc:
        log.warning("could not record team = true in %s: %s", root / remember.CONFIG, exc)
    for key, value in (("deployment", args.deployment), *skills_overrides(args).items()):
        if not value:
            continue
        try:
            remember.keep_setting(root, key, value)
        except (OSError, InvalidInputError) as exc:
            shown = without_credentials(value)  # a deploy token in the URL stays out of logs
            log.warning("could not record %s %r in %s: %s; give the CLI on this root %s=%s",
                        key, shown, root / remember.CONFIG, exc, env[key], shown)


def skills_overrides(args: argparse.Namespace) -> dict[str, str]:
    """--skills-repo / --skills-branch as settings overrides; a flag not given overrides nothing
    (the environment and the root's skillbank.toml still apply)."""
    return {key: value for key, value in (("skills_repo", args.skills_repo),
                                          ("skills_branch", args.skills_branch)) if value}


def _oidc(args: argparse.Namespace) -> Any:
    """The OIDC configuration: `--auth-config` (else the skillbank.toml of the root this worker
    serves) `[oidc]`, with the command line's --oidc-* on top; None when nothing configures it.

    The root is resolved as the bank resolves it (--root, SKILLBANK_ROOT, ~/.skillbank): read
    only with --root, the `[oidc]` of a worker started without it was ignored and the same root
    served unauthenticated (hunt-oidc #11, session 26)."""
    from skillbank import remember
    from skillbank.team.auth import load_oidc

    root = remember.resolve_root(Path(args.root) if args.root else None)
    path = args.auth_config or root / remember.CONFIG
    return load_oidc(path, {"issuer": args.oidc_issuer, "audience": args.oidc_audience,
                            "jwks_url": args.oidc_jwks_url,
                            "explicit_file": bool(args.auth_config)})


if __name__ == "__main__":
    raise SystemExit(main())
