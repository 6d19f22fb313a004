"""The MCP face of a skillbank: the server class, its resources, and `build_server`.

A thin face: tools (tools_skills.py, tools_memory.py, review.py) validate their arguments, await
the part of the bank they read, call one facade method on a worker thread and return a small
pydantic model. Memory logic, trust included, lives in the bank; this module passes `trusted`
through and turns what goes wrong into errors a caller can act on:

- tool arguments the schema refuses come back as a tool error naming each bad argument and the
  valid form (no pydantic dump);
- `resources/read` of a path that leaves its skill folder, an unknown prompt or a bad prompt
  argument is -32602 with the cause; a malformed `resources/list` cursor too;
- malformed JSON-RPC never reaches here: `wire.py` answers it on both transports.

No `from __future__ import annotations` here: the SDK reads tool annotations at registration.
"""

import base64
import contextlib
import functools
import json
import logging
import os
import threading
import time
import warnings
from typing import Any, AsyncIterator, Callable, Iterator

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Extension, MCPServer, MethodBinding
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import ValidationError

from skillbank.mcp_server import messages
from skillbank.mcp_server import resources as res
from skillbank.mcp_server.annotations import registrar
from skillbank.mcp_server.early import EXTENSIONS, INSTRUCTIONS, SERVER_NAME
from skillbank.mcp_server.loader import BankHandle, BankUnavailable
from skillbank.mcp_server.notify import ChangeMonitor, EndableListenHandler, ScopedBus

log = logging.getLogger("skillbank.mcp")

# One wording for the early `initialize` reply (early.py) and the SDK's.

TIMING_ENV = "SKILLBANK_MCP_TIMING"
TIMING_META = "skillbank/server_ms"
PAGE_ENV = "SKILLBANK_MCP_PAGE_SIZE"
#: Resources per `resources/list` page: a library of ~1,800 skills listed ~1 MB in one page.
PAGE_SIZE = 200
#: Only the resource list changes while the server runs; the tools and prompts are fixed.
NOTIFICATIONS = NotificationOptions(resources_changed=True)


def _validation_message(exc: ValidationError) -> str:
    return "invalid input: " + "; ".join(messages.describe_errors(exc.errors()))


#: Seconds the list computed for a resources/list page one serves that listing's later pages.
LISTING_SECONDS = 60.0


def _cursor(offset: int, last_uri: str | None = None) -> str:
    text = f"o:{offset}" + (f"\n{last_uri}" if last_uri else "")
    return base64.urlsafe_b64encode(text.encode()).decode()


def _last_uri(cursor: str | None) -> str | None:
    """The last item the page before listed (a cursor from `_cursor`), or None."""
    try:
        _, newline, uri = base64.urlsafe_b64decode((cursor or "").encode()).decode().partition("\n")
    except (ValueError, UnicodeDecodeError):
        return None
    return uri if newline and uri else None


def _offset(cursor: str | None, method: str = "resources/list") -> int:
    if not cursor:
        return 0
    try:
        head = base64.urlsafe_b64decode(cursor.encode()).decode().partition("\n")[0]
        kind, _, value = head.partition(":")
        if kind == "o" and value.isdigit():
            return int(value)
    except (ValueError, UnicodeDecodeError):
        pass
    raise MCPError(code=types.INVALID_PARAMS,
                   message=f"{method}: the cursor is not one this server gave out; pass the "
                           "nextCursor of the previous page unchanged, or omit it for page one")


def _declare_extensions(result: dict[str, Any], *, stateless: bool = False) -> dict[str, Any]:
    """The `initialize` result with `capabilities.extensions` as the Skills extension spec has it.

    The SDK builds the declaration but sieves the handshake-era (2025) result through that
    revision's schema, which has no `extensions`, so it never reached a client; the early reply
    (early.py) carries the same map. A `stateless` server (team workers behind a load
    balancer) keeps no session, so it has no channel to push resource changes on: it does not
    offer subscriptions or list-change notifications it could never send."""
    capabilities = dict(result.get("capabilities") or {})
    if stateless and isinstance(capabilities.get("resources"), dict):
        capabilities["resources"] = {**capabilities["resources"], "subscribe": False,
                                     "listChanged": False}
    declared = dict(capabilities.get("extensions") or {})
    for identifier, settings in EXTENSIONS.items():
        declared.setdefault(identifier, dict(settings))
    capabilities["extensions"] = declared
    return {**result, "capabilities": dict(sorted(capabilities.items()))}


_SDK_LOGGING = threading.Lock()


@contextlib.contextmanager
def _sdk_logging_left_alone() -> Iterator[None]:
    """Skip the SDK's `configure_logging` while its `MCPServer.__init__` runs, when the root
    logger already has a handler (the server's own, `runner._configure_logging`, or the
    embedding application's).

    It builds a rich `Console` and `RichHandler` for `logging.basicConfig`, which does nothing
    once the root logger has a handler: ~20 ms of importing rich on the way to the first answer
    (#27 item 6), for no effect. Without a handler the SDK configures logging as it always did.
    """
    from mcp.server.mcpserver import server as sdk_server

    if not logging.getLogger().handlers:
        yield
        return
    with _SDK_LOGGING:  # servers built on two threads at once restore the same function
        configure = sdk_server.configure_logging
        sdk_server.configure_logging = lambda *args, **kwargs: None  # type: ignore[assignment]
        try:
            yield
        finally:
            sdk_server.configure_logging = configure


#: Tool calls one MCP server runs at once (SKILLBANK_MCP_CONCURRENCY overrides it).
MCP_CONCURRENCY = 8


def positive_setting(name: str, default: int) -> int:
    """A whole number of at least 1 from the environment, or `default` when it is unset.

    Anything else is refused when the server starts: a page size of 0 answered every
    `resources/list` with an empty page and the cursor it was sent, so a client following
    `nextCursor` never reached the end."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"{name}={raw!r}: give a whole number of at least 1 (default "
                                f"{default}), or unset it")
    return value


class SkillbankServer(MCPServer):
    """MCPServer whose resource list is computed from the bank on every request."""

    def __init__(self, handle: BankHandle, *, report_timing: bool = False, **kwargs: Any) -> None:
        self.handle = handle
        self.manifests = res.ManifestCache()
        self.report_timing = report_timing
        self.page_size = positive_setting(PAGE_ENV, PAGE_SIZE)
        #: The list each caller's resources/list page one computed (see that handler).
        self._listings: dict[Any, tuple[float, list[types.Resource]]] = {}
        self.concurrency = positive_setting("SKILLBANK_MCP_CONCURRENCY", MCP_CONCURRENCY)
        from skillbank.mcp_server.tools_memory import sampling_timeout

        sampling_timeout()  # a bad SKILLBANK_MCP_SAMPLING_TIMEOUT stops the start, named
        #: CPU seconds this process had used when its first tool call succeeded: on an idle
        #: machine that is about the wall time from start to first answer, whatever the load.
        self.first_call: dict[str, Any] | None = None
        self._limiter: anyio.CapacityLimiter | None = None
        self.bus = ScopedBus()  # each listen stream hears its own scope's changes (notify.py)
        self.monitor = ChangeMonitor(self)
        #: Served without sessions (`build_app(stateless=True)`): see `_declare_extensions`.
        self.stateless = False
        #: Served over HTTP (`build_app`): the lifespan is the app's, not a client's (_lifespan).
        self.over_http = False
        #: Whether its clients are trusted (`build_server`): if not, every bank call runs as the
        #: caller made untrusted (`as_caller`).
        self.trusted = True
        with _sdk_logging_left_alone():
            super().__init__(subscriptions=self.bus, middleware=[self._middleware],
                             lifespan=self._lifespan, **kwargs)
        low = self._lowlevel_server
        low.add_request_handler("resources/subscribe", types.SubscribeRequestParams,
                                self._subscribe)
        low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams,
                                self._unsubscribe)
        low.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams,
                                EndableListenHandler(self.bus))  # a revoked caller's ends
        default_options = low.create_initialization_options
        low.create_initialization_options = (  # type: ignore[method-assign]
            lambda notification_options=None, *a, **kw:
            default_options(notification_options or NOTIFICATIONS, *a, **kw))

    @contextlib.asynccontextmanager
    async def _lifespan(self, _server: Any) -> AsyncIterator[dict[str, Any]]:
        """Entered once per connection (stdio, in process): a client for the change monitor,
        whose thread stops when the last one ends. Over HTTP it is the app's life and counts
        no client (the monitor polled for good after the first request, soak #6): there the
        monitor counts sessions and listen streams itself (notify.py)."""
        counted = not self.over_http
        if counted:
            self.monitor.connection_opened()
        try:
            yield {}
        finally:
            if counted:
                self.monitor.connection_closed()

    def initialization_options(self) -> Any:
        return self._lowlevel_server.create_initialization_options()

    async def _middleware(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """Every request: register the session for change notifications; params the SDK
        refuses become a -32602 that names the fields."""
        await self.monitor.baseline(getattr(ctx, "session", None),
                                    getattr(ctx, "protocol_version", None),
                                    getattr(ctx, "method", None))
        self.monitor.attach(getattr(ctx, "session", None), getattr(ctx, "protocol_version", None),
                            getattr(ctx, "method", None))
        try:
            result = await call_next(ctx)
        except ValidationError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=(
                f"{ctx.method}: invalid params: " + "; ".join(messages.describe_errors(exc.errors()))
                + ". See the MCP specification of this method for its params.")) from None
        except MCPError as exc:  # a resource read or prompt refused: the paths it names as shown
            shown = self._shown_paths(exc.message)
            if shown == exc.message:
                raise
            raise MCPError(code=exc.code, message=shown, data=exc.data) from None
        if isinstance(result, dict) and result.get("isError"):  # a tool's error, the same way
            result = {**result, "content": [
                {**part, "text": self._shown_paths(part["text"])}
                if isinstance(part, dict) and isinstance(part.get("text"), str) else part
                for part in result.get("content") or []]}
        if ctx.method == "initialize" and isinstance(result, dict):
            result = _declare_extensions(result, stateless=self.stateless)
        if ctx.method == "tools/call":
            await self._tell_notes(ctx)
        return result

    def _shown_paths(self, text: str) -> str:
        """An error's text with the host's folders (the memory root, the skill roots) written
        for the caller as `identity.shown_paths_in` writes them: every error reaches a client
        through `_middleware`, which passes it here."""
        from skillbank.mcp_server.identity import remote_caller, shown_paths_in

        bank = self.handle.bank
        if bank is None or not remote_caller():  # a local client sees paths whole
            return text
        try:
            folders = [str(p) for p in getattr(bank, "skill_roots", None) or []]
            settings = getattr(bank, "settings", None)  # folders it was given outside the root
            folders += [str(p) for p in (getattr(settings, "chroma_path", None),
                                         getattr(settings, "model_dir", None)) if p]
        except Exception:  # noqa: BLE001 - a client bank whose owner is gone: the root only
            folders = []
        return shown_paths_in(text, getattr(bank, "root", None), folders)

    async def _tell_notes(self, ctx: Any) -> None:
        """What the bank has to tell (another process's root taken over, skill folders not
        served as asked: `BankClient.take_notes`) goes to the client as a warning log message,
        once, with the call that first sees it.

        MCP's logging is deprecated since 2026-07-28 (SEP-2577; newer clients get a message
        only for a request that opts in), so this is a courtesy for clients that still take
        it, and the note that matters also travels in the results (``note`` on
        ``find_skills`` / ``memory_context``). The SDK's deprecation warning for it is not
        printed on the server's stderr for every note."""
        take = getattr(self.handle.bank, "take_notes", None)
        notes = take() if callable(take) else []
        session = getattr(ctx, "session", None)
        for note in notes if session is not None else ():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await session.send_log_message(level="warning", data=note,
                                                   logger="skillbank")
            except Exception:  # noqa: BLE001 - a client that takes no log messages
                log.debug("could not send a log message", exc_info=True)

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.monitor.subscribe(ctx.session, str(params.uri))
        return types.EmptyResult()

    async def _unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self.monitor.unsubscribe(ctx.session, str(params.uri))
        return types.EmptyResult()

    # Tools ------------------------------------------------------------------------------------
    def has_tool(self, name: str) -> bool:
        """Whether this server has a tool called `name` (a worker's metrics label a call by it
        only then: a made-up name is the caller's input)."""
        return self._tool_manager.get_tool(name) is not None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        started = time.perf_counter()
        tool = self._tool_manager.get_tool(name)
        if tool is not None and isinstance(arguments, dict):
            # The SDK drops arguments its schema does not name; a caller that misspelt one
            # (`kk` for `k`) would get an answer computed without it and never know.
            known = set((tool.parameters or {}).get("properties", {}))
            extra = [key for key in arguments if key not in known]
            if extra:
                raise ToolError(messages.tool_arguments(
                    name, [{"type": "extra_forbidden", "loc": (key,), "input": arguments[key]}
                           for key in extra], tool.parameters))
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                tool = self._tool_manager.get_tool(name)
                raise ToolError(messages.tool_arguments(
                    name, exc.__cause__.errors(), tool.parameters if tool else None)) from None
            if str(exc).startswith("Unknown tool"):
                names = ", ".join(sorted(t.name for t in self._tool_manager.list_tools()))
                raise ToolError(f"There is no tool {name!r}; the tools are: {names}.") from None
            raise
        if not isinstance(result, types.CallToolResult) or result.is_error:
            return result
        if self.first_call is None:
            self.first_call = {"tool": name, "process_cpu_seconds": round(time.process_time(), 3)}
            self.handle.note("first_call")
        if self.report_timing:  # lets a benchmark split a round trip into server and protocol
            meta = dict(result.meta or {})
            meta[TIMING_META] = round((time.perf_counter() - started) * 1000, 3)
            result = result.model_copy(update={"meta": meta})
        return result

    # Calling the bank -------------------------------------------------------------------------
    async def bank(self, stage: str = "experiences") -> Any:
        """The bank once `stage` is ready; "skill_search": whatever answers a skill search now
        (the library over the root's snapshot while the bank opens, see loader.py)."""
        try:
            if stage == "skill_search":
                return await self.handle.aget_search()
            return await self.handle.aget(stage)
        except BankUnavailable as exc:
            raise ToolError(str(exc)) from None

    async def run_bank(self, stage: str, fn: Callable[..., Any], *args: Any,
                       hint: str = "", **kwargs: Any) -> Any:
        """Run `fn(bank, *args, **kwargs)` on a worker thread, several calls at once (the bank
        is shared by threads already: the owner serves other processes from its thread pool;
        a write waiting for a lock no longer holds up every read), and turn the errors a caller
        can fix into ToolError messages."""
        from skillbank.errors import NotFoundError, SkillbankError
        from skillbank.index_repair import damaged_message
        from skillbank.storage_errors import tool_message

        bank = await self.bank(stage)
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        call = functools.partial(self.as_caller, bank, fn, bank, *args, **kwargs)
        try:
            return await anyio.to_thread.run_sync(call, limiter=self._limiter)
        except NotFoundError as exc:
            raise ToolError(messages.mcp_terms(f"{exc}{'. ' + hint if hint else ''}")) from None
        except SkillbankError as exc:
            raise ToolError(messages.mcp_terms(str(exc))) from None
        except ValidationError as exc:
            raise ToolError(_validation_message(exc)) from None
        except ValueError as exc:
            raise ToolError(messages.mcp_terms(str(exc))) from None
        except Exception as exc:
            refused = tool_message(exc, getattr(bank, "root", None))  # ENOSPC, EROFS, EFBIG, EACCES
            if refused is not None:  # "Error executing tool save_skill" alone (hunt-disk #3)
                log.error("skillbank: %s", refused)
                raise ToolError(refused) from None
            damaged = damaged_message(exc, served=True)
            if damaged is None:
                raise
            # The SDK said "Error executing tool X" and no more (hunt-mcpmany #1c, session 24).
            log.error("skillbank: %s", damaged)
            raise ToolError(damaged) from None

    def as_caller(self, bank: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` as this server's caller: on a server whose clients are
        untrusted, the caller's scope made untrusted. Only the writes passed `trusted=False`,
        so an in-process `build_server(bank, trusted=False)` under the default local scope
        (a reviewer of everything) listed every pending rule and experience to its clients
        (fix-hits #3, session 32); `skillbank serve` over HTTP without --trust set an
        untrusted scope around each request already (`http.PrincipallessTrust`)."""
        if self.trusted:
            return fn(*args, **kwargs)
        from skillbank import scope as scopes

        namespace = getattr(getattr(bank, "settings", None), "namespace", None) or "default"
        with scopes.using(scopes.caller(namespace, trusted=False)):
            return fn(*args, **kwargs)

    # Prompts ----------------------------------------------------------------------------------
    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> Any:
        """Prompt errors keep their cause and come back as -32602 (the SDK says only "Error
        rendering prompt")."""
        if self._prompt_manager.get_prompt(name) is None:
            names = ", ".join(sorted(p.name for p in self._prompt_manager.list_prompts()))
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"There is no prompt {name!r}; the prompts are: {names}.")
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except ValueError as exc:
            cause: BaseException = exc
            while cause.__cause__ is not None:
                cause = cause.__cause__
            if isinstance(cause, ValidationError):
                detail = "; ".join(messages.describe_errors(cause.errors()))
            else:
                detail = str(cause)
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"prompt {name}: {detail}. prompts/list shows its arguments."
                           ) from None

    # Resources --------------------------------------------------------------------------------
    async def _handle_list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        """One page. Page one computes the list and keeps it (`LISTING_SECONDS`): the later
        pages of that listing come from it — computing the whole library again for each page
        took ~1 s a page at 1,750 skills, and a skill added between pages shifted the offsets
        (one item listed twice; scale hunt, session 18). A cursor also names the last item it
        listed, so a listing whose copy has expired resumes after that item."""
        from skillbank import scope as scopes

        cursor = getattr(params, "cursor", None) if params is not None else None
        start, last = _offset(cursor), _last_uri(cursor)
        caller = scopes.active()  # each caller's own list: topics follow its namespaces
        listing = self._listings.get(caller)
        if cursor and listing is not None and time.monotonic() - listing[0] < LISTING_SECONDS:
            everything = listing[1]
        else:
            everything = await self.list_resources()
            if len(self._listings) >= 64:
                self._listings.clear()
            self._listings[caller] = (time.monotonic(), everything)
        if last is not None:  # (another client of the same scope may have listed meanwhile)
            start = next((i + 1 for i, r in enumerate(everything) if str(r.uri) == last), start)
        page = everything[start:start + self.page_size]
        end = start + len(page)
        more = end < len(everything)
        return types.ListResourcesResult(
            resources=page, next_cursor=_cursor(end, str(page[-1].uri)) if more else None)

    async def list_resources(self) -> list[types.Resource]:
        static = await super().list_resources()
        try:
            bank = await self.handle.aget("guidelines")
        except BankUnavailable as exc:
            log.warning("resources/list without the bank: %s", exc)
            return static

        def collect() -> tuple[list[dict[str, Any]], list[str]]:
            manifests = self.manifests.all(bank)
            try:
                topics = list(bank.guidelines.topics())
            except Exception:  # noqa: BLE001 - a broken guideline store must not hide skills
                log.warning("listing guideline topics failed", exc_info=True)
                topics = []
            return res.list_entries(manifests), topics

        entries, topics = await anyio.to_thread.run_sync(self.as_caller, bank, collect)
        out = list(static)
        out.extend(types.Resource(**{k: v for k, v in e.items() if k != "meta"}, _meta=e["meta"])
                   for e in entries)
        for topic in topics:
            out.append(types.Resource(
                uri=f"{res.GUIDELINES_PREFIX}{topic}", name=f"guidelines/{topic}",
                description=f"Playbook of the active guidelines on {topic}",
                mime_type="text/markdown"))
        return out

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        templates = await super().list_resource_templates()
        return templates + [
            types.ResourceTemplate(uri_template="skill://{name}/SKILL.md", name="skill",
                                   description="A skill's SKILL.md", mime_type="text/markdown"),
            types.ResourceTemplate(uri_template="skill://{name}/{+path}", name="skill-file",
                                   description="A supporting file of a skill"),
            types.ResourceTemplate(uri_template=res.GUIDELINES_PREFIX + "{topic}",
                                   name="guideline-playbook",
                                   description="The active guidelines on one topic, as markdown",
                                   mime_type="text/markdown"),
        ]

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        text = str(uri)
        parsed = res.parse_skill_uri(text)
        if parsed is None and not text.startswith(res.GUIDELINES_PREFIX):
            return await super().read_resource(uri, context)
        from skillbank.errors import InvalidInputError, NotFoundError, SkillbankError

        stage = "skills" if parsed else "guidelines"
        try:
            bank = await self.handle.aget(stage)
        except BankUnavailable as exc:
            raise ResourceError(str(exc)) from None

        def read() -> tuple[str | bytes, str]:
            if parsed:
                return res.read_skill_file(bank, *parsed)
            topic = text[len(res.GUIDELINES_PREFIX):]
            if topic not in set(bank.guidelines.topics()):  # the handler below says where to
                # look: saying it here too read "…; resources/list shows the topics; resources/
                # list shows what is served" (hunt-curator #8, session 25)
                raise NotFoundError(f"no active guidelines on topic {topic!r}")
            return bank.guidelines.playbook(topic), "text/markdown"

        try:
            content, mime = await anyio.to_thread.run_sync(self.as_caller, bank, read)
        except NotFoundError as exc:
            raise ResourceNotFoundError(f"{exc}; resources/list shows what is served") from None
        except InvalidInputError as exc:  # a path that leaves its folder, a file too large …
            raise MCPError(code=types.INVALID_PARAMS, message=f"{text}: {exc}",
                           data={"uri": text}) from None
        except SkillbankError as exc:
            raise ResourceError(str(exc)) from None
        return [ReadResourceContents(content=content, mime_type=mime)]


class SkillsExtension(Extension):
    """`skills/list` and `skills/get` of the MCP Skills extension (SEP-2640)."""

    identifier = res.EXTENSION_ID

    def __init__(self) -> None:
        self.server: SkillbankServer | None = None

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", types.PaginatedRequestParams, self._list),
            MethodBinding("skills/get", GetSkillParams, self._get),
        ]

    async def _bank(self) -> Any:
        assert self.server is not None
        try:
            return await self.server.handle.aget("skills")
        except BankUnavailable as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None

    async def _list(self, ctx: Any, params: Any) -> dict[str, Any]:
        bank = await self._bank()
        assert self.server is not None
        # Paged as resources/list is: the corpus's ~1,750 manifests were one 1.1 MB reply.
        start = _offset(getattr(params, "cursor", None) if params is not None else None,
                        "skills/list")
        manifests = await anyio.to_thread.run_sync(self.server.as_caller, bank,
                                                   self.server.manifests.all, bank)
        page = manifests[start:start + self.server.page_size]
        end = start + len(page)
        result: dict[str, Any] = {"skills": [mf.entry() for mf in page], "ttlMs": 0,
                                  "cacheScope": "private"}
        if end < len(manifests):
            result["nextCursor"] = _cursor(end)
        return result

    async def _get(self, ctx: Any, params: "GetSkillParams") -> dict[str, Any]:
        from skillbank.errors import SkillbankError

        bank = await self._bank()
        assert self.server is not None
        parsed = res.parse_skill_uri(params.uri)
        if parsed is None or parsed[1] != "SKILL.md":
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"{params.uri} is not a skill URI; use skill://<name>/SKILL.md")
        try:
            manifest = await anyio.to_thread.run_sync(self.server.as_caller, bank,
                                                      self.server.manifests.manifest, bank,
                                                      parsed[0])
        except SkillbankError:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"No skill is served at {params.uri}; skills/list shows the "
                                   "skills") from None
        return {"skill": manifest.entry(), "ttlMs": 0, "cacheScope": "private"}


class GetSkillParams(types.RequestParams):
    uri: str


def build_server(bank: Any, *, trusted: bool, sampling: bool = True, name: str = SERVER_NAME,
                 log_level: str = "WARNING", report_timing: bool | None = None,
                 auth: Any = None, token_verifier: Any = None,
                 request_state: Any = None) -> SkillbankServer:
    """An MCP server over `bank` (a `Skillbank`, or a `BankHandle` that is still opening it).

    `trusted`: whether this server's clients are trusted (stdio: the local user; HTTP: only with
    --trust). The bank enforces what that means for every write (see docs/mcp.md, "Trust").
    `sampling`: let `learn_from_critique` ask the client's LLM (MCP sampling) to extract rules
    when the client offers it. `report_timing` (default: `SKILLBANK_MCP_TIMING=1`): add the
    server-side milliseconds of each tool call to its result's `_meta["skillbank/server_ms"]`.
    `auth` / `token_verifier`: the SDK's `AuthSettings` and `TokenVerifier` (`skillbank server`
    with OIDC, skillbank/team/auth.py): bearer auth on /mcp and the protected-resource metadata.
    `request_state`: the SDK's `RequestStateSecurity` (`state_key.shared_security`: one key for
    every process of the memory); None: a key of this process only (stdio, tests).
    """
    from skillbank.mcp_server import review, tools_drafts, tools_memory, tools_skills

    if report_timing is None:
        report_timing = os.environ.get(TIMING_ENV, "") not in ("", "0", "false")
    handle = bank if isinstance(bank, BankHandle) else BankHandle.ready(bank)
    extension = SkillsExtension()
    from skillbank import __version__

    server = SkillbankServer(handle, report_timing=report_timing, name=name, version=__version__,
                             instructions=INSTRUCTIONS, extensions=[extension],
                             log_level=log_level, auth=auth,
                             token_verifier=token_verifier,  # type: ignore[arg-type]
                             request_state_security=request_state)
    extension.server = server
    server.trusted = trusted
    tool = registrar(server, trusted=trusted)
    tools_skills.register(tool, server, trusted=trusted)
    tools_memory.register(tool, server, trusted=trusted, sampling=sampling)
    review.register(tool, server, trusted=trusted)
    tools_drafts.register(tool, server, trusted=trusted, sampling=sampling)
    res.register_audit(server, trusted=trusted)

    @server.resource(res.STATS_URI, name="stats", mime_type="application/json",
                     description="Counts of skills, guidelines and experiences, and where they live")
    async def stats() -> str:
        def collect(b: Any) -> dict[str, Any]:
            from skillbank import scope as scopes
            from skillbank.mcp_server.identity import stats_for_caller

            # The caller's own trust: the server-wide flag told an untrusted token's session
            # its clients were trusted (a tokens-file server is built trusting and each
            # principal's scope decides; hunt-untrusted #5, session 27).
            return {**stats_for_caller(b.stats()),
                    "caller_trusted": trusted and scopes.current().trusted}

        try:
            data = await server.run_bank("experiences", collect)
        except ToolError as exc:
            raise ResourceError(str(exc)) from None
        data["server"] = {"caller_trusted": data.pop("caller_trusted"),
                          "startup_seconds": dict(handle.timings),
                          "first_call": server.first_call}
        return json.dumps(data, indent=2, default=str)

    return server
