"""`skillbank guidelines …` and `skillbank experiences …`: the two learning memories."""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import timezone
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import (invalid, key_values, outsiders, score, short, state, table, text,
                                  untrusted_votes, usage_text, when)
from skillbank.cli.hints import cli_terms
from skillbank.cli.skills import print_findings
from skillbank.errors import PermissionDeniedError
from skillbank.tool_text import search_note

guidelines_app = typer.Typer(help="Guidelines: rules learned from critiques.", no_args_is_help=True)
experiences_app = typer.Typer(help="Experiences: what was tried, how it went, lessons.",
                              no_args_is_help=True)


class Status(str, Enum):
    active = "active"
    pending = "pending"
    retired = "retired"
    superseded = "superseded"


class Outcome(str, Enum):
    success = "success"
    failure = "failure"
    partial = "partial"
    unknown = "unknown"


class Kind(str, Enum):
    experience = "experience"
    lesson = "lesson"


def _value(option: Enum | None) -> str | None:
    return option.value if option is not None else None


def _stdin_or(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


# ------------------------------------------------------------------------------------ guidelines

ACTION_STYLES = {"added": "green", "merged": "cyan", "superseded": "magenta", "ignored": "dim",
                 "pending": "yellow"}
STATUS_STYLES = {"active": "green", "pending": "yellow", "retired": "dim", "superseded": "magenta"}


def guideline_rows(items: list[Any], review: dict[str, Any] | None = None) -> list[list[Any]]:
    """A row per rule; a pending one (its `review_queue.pending_guideline` item in `review`)
    shows its whole text and the rules approving it stops serving."""
    review = review or {}
    return [[g.id, g.topic, text(g.status, STATUS_STYLES.get(g.status)), f"+{g.helpful}/-{g.harmful}",
             _rule_cell(g, review.get(g.id))] for g in items]


def _rule_cell(g: Any, item: Any) -> str:
    """The rule; for a pending one, whole (it is what approval serves) and what approving it
    stops serving, as `review_queue.superseded_on_approval` says, which MCP's `list_pending`
    says too: the raw `supersedes` named a rule already superseded, which approval does not
    touch (hunt-untrusted #4, session 27)."""
    if item is None:
        return short(g.text, 100)
    stops = [entry.partition(":")[0] for entry in item.supersedes]
    return g.text + (f" (approving it stops serving {', '.join(stops)})" if stops else "")


def pending_review(bank: Any, items: list[Any]) -> dict[str, Any]:
    """The review item (`review_queue.pending_guideline`) of each pending rule in `items`."""
    from skillbank.review_queue import pending_guideline

    return {g.id: pending_guideline(bank, g) for g in items if g.status == "pending"}


GUIDELINE_COLUMNS = ["id", "topic", "status", "votes", ("rule", {"ratio": 1})]


def render_learn_report(out: Any, report: Any) -> None:
    entries = list(getattr(report, "entries", []) or [])
    if not entries:
        out.print("Nothing to learn from this critique.")
        return
    rows = []
    for e in entries:
        detail = cli_terms(getattr(e, "detail", "") or "")
        if getattr(e, "superseded_id", None) and f"supersedes {e.superseded_id}" not in detail:
            # only where the detail does not say it: it did, and the row read "supersedes gl-X;
            # supersedes gl-X …" with the reason cut off (hunt-learnfaces #4, session 38)
            detail = f"supersedes {e.superseded_id}" + (f"; {detail}" if detail else "")
        rows.append([text(e.action, ACTION_STYLES.get(e.action)), e.guideline_id or "",
                     short(e.text, 90), short(detail, 70)])
    out.print(table(None, ["action", "id", ("rule", {"ratio": 2}), ("detail", {"ratio": 1})], rows))


def render_guideline(out: Any, g: Any, rules: dict[str, Any] | None = None) -> None:
    """One rule; with `rules` (id -> the rules the caller reads), its related rules both ways
    and a replacement that no longer exists said as such (`skillbank.guideline_links`)."""
    from skillbank.guideline_links import (GONE_NOTE, override_links, related_rules,
                                           replaced_by_gone)

    superseded_by = g.superseded_by
    if rules is not None and replaced_by_gone(g, rules):
        superseded_by = f"{g.superseded_by}, which {GONE_NOTE}"
    related = related_rules(g, rules) if rules is not None else []
    overrides, overridden_by = override_links(g, rules) if rules is not None else ([], [])
    out.print(key_values([
        ("id", g.id), ("topic", g.topic), ("status", text(g.status, STATUS_STYLES.get(g.status))),
        ("rule", g.text), ("when to use", g.when_to_use),
        ("votes", f"{g.helpful} helpful, {g.harmful} harmful, {g.reinforcements} reinforcements"
                  + outsiders(g.outside_votes)
                  + untrusted_votes(g.untrusted_helpful, g.untrusted_harmful)),
        ("supersedes", ", ".join(g.supersedes)), ("superseded by", superseded_by),
        ("related", ", ".join(f"{r.id} ({r.status})" for r in related)),
        ("overrides", ", ".join(f"{r.id} (namespace {r.namespace})" for r in overrides)),
        ("not served to", ", ".join(f"namespace {r.namespace} (overridden by {r.id})"
                                    for r in overridden_by)),
        ("namespace", g.namespace), ("created", when(g.created)), ("updated", when(g.updated)),
        ("file", g.path),
    ]))
    if g.sources:
        out.print(table("sources", ["when (UTC)", "source", "score", ("critique", {"ratio": 1})],
                        [[when(s.at, zone=False), s.source, "" if s.score is None else s.score,
                          short(s.critique, 160)] for s in g.sources]))


@guidelines_app.command("list")
def guidelines_list(
    ctx: typer.Context,
    status: Annotated[Optional[Status], typer.Option(help="Only this status.")] = None,
    topic: Annotated[Optional[str], typer.Option(help="Only this topic.")] = None,
) -> None:
    """List guidelines (all statuses unless --status)."""
    st = state(ctx)
    # No --namespace: every namespace (an inventory); with it, only that one.
    bank = st.bank(sync=["guidelines"])
    memory = bank.guidelines
    items = memory.list(status=_value(status), topic=topic, namespace=st.namespace or "*")

    def human() -> None:
        if not items:
            st.out.print("No guidelines. Teach some with `skillbank guidelines learn \"…\"`.")
        else:
            review = pending_review(bank, items)
            st.out.print(table(f"{len(items)} guidelines", GUIDELINE_COLUMNS,
                               guideline_rows(items, review)))
            for item in review.values():  # what approval serves besides the rule's text
                st.out.print(text(f"{item.id}: {item.detail}"))
        note_file_problems(st, memory)

    st.out.emit(items, human)


def note_file_problems(st: Any, memory: Any, path: str | None = None) -> None:
    """Say on stderr which guideline files (or only `path`) a hand edit did not get through:
    a file that does not parse is in no list; a `topic:` edited in the frontmatter, a copy
    named `gl-… (copy).md`, keys the format does not have are ignored, and only a log line
    said so (hunt-curator #4, session 25)."""
    with contextlib.suppress(PermissionDeniedError):
        for finding in memory.problems():
            if path is not None and finding.path != path:
                continue
            if finding.severity == "error":
                st.out.note(f"could not read {finding.path}: {finding.message} (left out until "
                            "the file is fixed)")
            else:
                st.out.note(f"{finding.path}: {finding.message}")


@guidelines_app.command("show")
def guidelines_show(
    ctx: typer.Context,
    guideline_id: Annotated[Optional[str], typer.Argument(
        metavar="[ID]", help="Guideline id (gl-…).")] = None,
    topic: Annotated[Optional[str], typer.Option(
        help="Render this topic's playbook instead.")] = None,
) -> None:
    """Show one guideline with its sources, or a topic's playbook (--topic)."""
    st = state(ctx)
    if (guideline_id is None) == (topic is None):
        raise invalid("give a guideline ID or --topic TOPIC (one of them)")
    memory = st.bank(sync=["guidelines"]).guidelines
    if topic is not None:
        playbook = memory.playbook(topic)
        st.out.emit({"topic": topic, "playbook": playbook}, lambda: st.out.plain(playbook))
        return
    g = memory.get(guideline_id)

    def human() -> None:
        render_guideline(st.out, g, {r.id: r for r in memory.list(namespace="*")})
        note_file_problems(st, memory, g.path)

    st.out.emit(g, human)


@guidelines_app.command("learn")
def guidelines_learn(
    ctx: typer.Context,
    critique: Annotated[str, typer.Argument(help="The critique or correction ('-' reads stdin).")],
    task: Annotated[Optional[str], typer.Option(help="The task the critique was about.")] = None,
    response: Annotated[Optional[str], typer.Option(
        help="The response that was criticised.")] = None,
    score_: Annotated[Optional[float], typer.Option(
        "--score", help="A rating that came with it.")] = None,
    untrusted: Annotated[bool, typer.Option(
        "--untrusted",
        help="The critique's source is not trusted: new rules wait as pending.")] = False,
) -> None:
    """Turn a critique into guidelines: added, merged, superseded or ignored."""
    st = state(ctx)
    report = st.bank(sync=["guidelines"]).guidelines.learn(
        _stdin_or(critique), task=task, response=response, score=score_, trusted=not untrusted)
    st.out.emit(report, lambda: render_learn_report(st.out, report))


def _why_empty(st: Any, hits: Any, what: str) -> None:
    """With --json the answer stays the bare list: why nothing was looked for (`hits.reason`)
    goes to stderr, as `skills search` says it. It printed [] and nothing else (review 2 #6,
    session 34); the human output said it."""
    if st.out.json and not hits and getattr(hits, "reason", ""):
        st.out.err.print(search_note(hits, what), highlight=False, soft_wrap=True)


@guidelines_app.command("search")
def guidelines_search(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task at hand.")],
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=100, help="How many at most.")] = 5,
    topic: Annotated[Optional[str], typer.Option(help="Only this topic.")] = None,
) -> None:
    """Active guidelines that apply to a task, best first."""
    st = state(ctx)
    hits = st.bank(sync=["guidelines"]).guidelines.search(task, k=k, topic=topic)

    def human() -> None:
        if not hits:
            st.out.print(search_note(hits, "guideline") if getattr(hits, "reason", "")
                         else "No guideline applies to this task.")
            return
        st.out.print(table(None, ["id", "score", "topic", ("rule", {"ratio": 1})],
                           [[h.id, score(h.score), h.record.topic, short(h.record.text, 110)]
                            for h in hits]))

    _why_empty(st, hits, "guideline")
    st.out.emit(hits, human)


@guidelines_app.command("vote")
def guidelines_vote(
    ctx: typer.Context,
    guideline_id: Annotated[str, typer.Argument(metavar="ID")],
    helpful: Annotated[bool, typer.Option("--helpful/--harmful",
                                          help="Whether following the rule helped.")],
) -> None:
    """Vote a guideline helpful or harmful (harmful ones retire themselves)."""
    st = state(ctx)
    g = st.bank(sync=["guidelines"]).guidelines.vote(guideline_id, helpful=helpful)
    st.out.emit(g, lambda: st.out.print(text(
        f"{g.id}: {g.helpful} helpful, {g.harmful} harmful — status {g.status}")))


def _status_command(action: str, doc: str) -> None:
    def command(ctx: typer.Context,
                guideline_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
        from skillbank.review_queue import superseded_on_approval
        from skillbank.tool_text import folded_note

        st = state(ctx)
        bank = st.bank(sync=["guidelines"])
        memory = bank.guidelines
        replaced = superseded_on_approval(bank, memory.get(guideline_id)) \
            if action == "approve" else []
        result = getattr(memory, action)(guideline_id)
        g = result if hasattr(result, "status") else memory.get(guideline_id)

        def human() -> None:
            if g.id != guideline_id:  # approved a restatement of an active rule: folded in
                st.out.print(f"{guideline_id}: {folded_note(g.id)}")
            st.out.print(text(f"{g.id}: {g.status}", STATUS_STYLES.get(g.status)))
            for old in replaced:
                st.out.print(f"{old.id} superseded (no longer served): {short(old.text, 100)}")

        st.out.emit(g, human)

    command.__doc__ = doc
    guidelines_app.command(action)(command)


_status_command("approve", "Approve a pending guideline (it becomes active).")
_status_command("reject", "Reject a pending guideline.")
_status_command("retire", "Retire a guideline: kept for the record, never recalled.")


# ----------------------------------------------------------------------------------- experiences

OUTCOME_STYLES = {"success": "green", "failure": "red", "partial": "yellow", "unknown": "dim"}


def experience_summary(e: Any) -> str:
    if e.kind == "lesson" and e.lessons:
        return e.lessons[0].text
    return e.task


def experience_rows(items: list[Any]) -> list[list[Any]]:
    return [[e.id, e.kind, text(e.outcome, OUTCOME_STYLES.get(e.outcome)),
             e.created.astimezone(timezone.utc).date(), e.usage.uses,
             short(experience_summary(e), 90)] for e in items]


EXPERIENCE_COLUMNS = ["id", "kind", "outcome", "created (UTC)", "uses",
                      ("task / lesson", {"ratio": 1})]


def render_experience(out: Any, e: Any) -> None:
    out.print(key_values([
        ("id", e.id), ("kind", e.kind), ("task", e.task),
        ("outcome", text(e.outcome, OUTCOME_STYLES.get(e.outcome))),
        ("score", None if e.score is None else str(e.score)), ("feedback", e.feedback),
        ("when to use", e.when_to_use), ("tags", ", ".join(e.tags)), ("namespace", e.namespace),
        ("source", e.source), ("status", e.status), ("created", when(e.created)),
        ("uses", usage_text(e.usage)),
        ("runs", _runs(e)),
    ]))
    if e.lessons:
        out.print(table("lessons", ["kind", ("lesson", {"ratio": 2}), ("when", {"ratio": 1})],
                        [[l.kind, l.text, l.when_to_use] for l in e.lessons]))
    if e.steps:
        out.print(table("steps", ["#", ("action", {"ratio": 1}), ("input", {"ratio": 1}),
                                  ("observation", {"ratio": 1})],
                        [[i, short(s.action or s.thought, 80), short(_input(s.action_input), 80),
                          short(s.observation, 80)] for i, s in enumerate(e.steps, 1)]))


def _runs(e: Any) -> str | None:
    """How many runs the record stands for: itself and the repeats folded into it."""
    if e.kind == "lesson":
        return None
    folded = getattr(e, "duplicates", 0) or 0
    return f"{1 + folded} ({folded} folded in as repeats)" if folded else "1"


def _input(value: Any) -> str | None:
    """A step's tool input on one line (what the agent ran: `kubectl apply -f prod.yaml`)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _read_steps(path: Path | None) -> list[Any]:
    if path is None:
        return []
    try:
        raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        data = json.loads(raw)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"--steps-file: cannot read steps from {path}: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("steps"), list):
        data = data["steps"]
    if not isinstance(data, list) or not all(isinstance(s, (dict, str)) for s in data):
        raise invalid("--steps-file: expected a JSON list of steps (objects with thought, "
                      "action, action_input, observation)")
    return [{"action": s} if isinstance(s, str) else s for s in data]


@experiences_app.command("list")
def experiences_list(
    ctx: typer.Context,
    kind: Annotated[Optional[Kind], typer.Option(help="Only experiences or only lessons.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 50,
) -> None:
    """List recent experiences and lessons (every namespace unless --namespace, as
    `guidelines list`)."""
    st = state(ctx)
    items = st.bank(sync=["experiences"]).experiences.list(
        namespace=st.namespace or "*", kind=_value(kind), limit=limit)

    def human() -> None:
        if not items:
            st.out.print("No experiences yet. Record one with `skillbank experiences record`.")
            return
        shown = f"{len(items)} experiences" + (  # cut at --limit: say so (scale hunt, s18)
            f" (the newest {limit}; --limit N for more)" if len(items) >= limit else "")
        st.out.print(table(shown, EXPERIENCE_COLUMNS, experience_rows(items)))

    st.out.emit(items, human)


@experiences_app.command("pending")
def experiences_pending(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 50,
) -> None:
    """Experiences and lessons from untrusted clients waiting for review (every namespace
    unless --namespace); approve or reject each by id."""
    st = state(ctx)
    items = st.bank(sync=["experiences"]).experiences.pending(namespace=st.namespace or "*",
                                                              limit=limit)

    def human() -> None:
        if not items:
            st.out.print("Nothing is waiting for review.")
            return
        st.out.print(table(f"{len(items)} waiting for review", EXPERIENCE_COLUMNS,
                           experience_rows(items)))
        from skillbank.review_queue import experience_detail

        for record in items:  # what approval would serve besides the task line
            detail = experience_detail(record)
            if detail:  # literal: as markup, "[link=URL]" hid the URL and "[/]" failed the list
                st.out.print(text(f"{record.id}: {detail}"))
        st.out.note("Approve with `skillbank experiences approve ID`, or drop with "
                    "`skillbank experiences reject ID`.")

    st.out.emit(items, human)


def _review(ctx: typer.Context, experience_id: str, verb: str) -> None:
    st = state(ctx)
    memory = st.bank(sync=["experiences"]).experiences
    result = getattr(memory, verb)(experience_id)
    done = {"approve": "approved (recall serves it now)", "reject": "rejected (deleted)"}[verb]
    st.out.emit(result, lambda: st.out.print(f"{experience_id} {done}"))


@experiences_app.command("approve")
def experiences_approve(ctx: typer.Context,
                        experience_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Make a pending experience (with its pending lessons) or lesson active."""
    _review(ctx, experience_id, "approve")


@experiences_app.command("reject")
def experiences_reject(ctx: typer.Context,
                       experience_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Drop a pending experience or lesson (an active one is refused: forget it instead)."""
    _review(ctx, experience_id, "reject")


@experiences_app.command("show")
def experiences_show(ctx: typer.Context,
                     experience_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Show one experience or lesson in full."""
    st = state(ctx)
    e = st.bank(sync=["experiences"]).experiences.get(experience_id)
    st.out.emit(e, lambda: render_experience(st.out, e))


@experiences_app.command("record")
def experiences_record(
    ctx: typer.Context,
    task: Annotated[str, typer.Option(help="What the agent was asked to do.")],
    outcome: Annotated[Outcome, typer.Option(help="How it went.")],
    feedback: Annotated[Optional[str], typer.Option(help="What the user or a check said.")] = None,
    score_: Annotated[Optional[float], typer.Option("--score", help="A rating, if any.")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="A tag (repeatable).")] = None,
    lesson: Annotated[Optional[list[str]], typer.Option(
        "--lesson", help="A lesson (repeatable).")] = None,
    when_to_use: Annotated[str, typer.Option(help="When this experience is worth recalling.")] = "",
    steps_file: Annotated[Optional[Path], typer.Option(
        help="JSON list of steps ({thought, action, action_input, observation}); '-' is stdin.",
        allow_dash=True)] = None,
    distill: Annotated[bool, typer.Option(help="Also distill lessons from it now.")] = False,
) -> None:
    """Record what an agent tried on a task and how it went."""
    st = state(ctx)
    steps = _read_steps(steps_file)
    memory = st.bank(sync=["experiences"]).experiences
    eid = memory.record(task=task, outcome=outcome.value, steps=steps, score=score_,
                        feedback=feedback, lessons=list(lesson or []), when_to_use=when_to_use,
                        tags=list(tag or []), distill=distill)
    # A run that repeats a stored one is counted on it, not stored: say so (the API's note), as
    # the MCP and agent tools do; "recorded <id>" for it hid the fold (hunt-loop-shared #4).
    folded, note = bool(getattr(eid, "folded", False)), str(getattr(eid, "note", "") or "")
    st.out.emit({"id": eid, "folded": folded, "note": note},
                lambda: st.out.print(text(note, "yellow") if folded and note
                                     else text(f"recorded {eid}", "green")))


@experiences_app.command("search")
def experiences_search(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task at hand.")],
    outcome: Annotated[Optional[Outcome], typer.Option(help="Only this outcome.")] = None,
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=100, help="How many at most.")] = 5,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Only with this tag.")] = None,
    kind: Annotated[Optional[Kind], typer.Option(help="Only experiences or only lessons.")] = None,
) -> None:
    """Recall past experiences and lessons for a task (counts as a use of each hit)."""
    st = state(ctx)
    hits = st.bank(sync=["experiences"]).experiences.recall(
        task, k=k, outcome=_value(outcome), tags=list(tag) if tag else None, kind=_value(kind))

    def human() -> None:
        if not hits:
            st.out.print(search_note(hits, "experience") if getattr(hits, "reason", "")
                         else "Nothing relevant remembered.")
            return
        st.out.print(table(None, ["id", "score", "kind", "outcome", ("task / lesson", {"ratio": 1})],
                           [[h.id, score(h.score), h.record.kind,
                             text(h.record.outcome, OUTCOME_STYLES.get(h.record.outcome)),
                             short(experience_summary(h.record), 100)] for h in hits]))

    _why_empty(st, hits, "experience")
    st.out.emit(hits, human)


@experiences_app.command("distill")
def experiences_distill(ctx: typer.Context,
                        experience_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
    """Distill lessons from one experience (stored as lesson records)."""
    st = state(ctx)
    memory = st.bank(sync=["experiences"]).experiences
    distilled = memory.distill(experience_id)
    lesson_ids = list(distilled)
    error = getattr(distilled, "distill_error", None)

    def human() -> None:
        if error:
            st.out.print(f"The model's lessons were not used ({error}); the model-free "
                         "distiller wrote these.")
        if not lesson_ids:
            st.out.print("No lesson could be distilled from this experience.")
            return
        rows = []
        for lid in lesson_ids:
            record = memory.get(lid)
            rows.append([lid, short(experience_summary(record), 110)])
        st.out.print(table(f"{len(lesson_ids)} lessons", ["id", ("lesson", {"ratio": 1})], rows))

    st.out.emit({"source": experience_id, "lessons": lesson_ids,
                 "distilled_by": getattr(distilled, "distilled_by", None),
                 "distill_error": error}, human)


@experiences_app.command("prune")
def experiences_prune(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run/--apply", help="Only show what would be retired (default), or retire it.")] = True,
) -> None:
    """Retire experiences recalled often that rarely helped."""
    st = state(ctx)
    retired = list(st.bank(sync=["experiences"]).experiences.prune(dry_run=dry_run))

    def human() -> None:
        verb = "would retire" if dry_run else "retired"
        if not retired:
            st.out.print("Nothing to prune: no experience is recalled often and rarely helpful.")
            return
        st.out.print(table(f"{verb} {len(retired)}", EXPERIENCE_COLUMNS, experience_rows(retired)))
        if dry_run:
            st.out.print(text("run again with --apply to retire them", "dim"))

    st.out.emit({"dry_run": dry_run, "retired": retired}, human)


@experiences_app.command("export")
def experiences_export(ctx: typer.Context,
                       file: Annotated[Path, typer.Argument(
                           help="JSONL file to write; '-' writes to stdout.")]) -> None:
    """Export every experience and lesson as JSONL (a backup, or to move memory)."""
    st = state(ctx)
    memory = st.bank(sync=["experiences"]).experiences
    if str(file) == "-":  # a file named "-" was written (docs hunt, session 18)
        _export_to_stdout(st, memory)
        return
    result = memory.export(file)
    data = {"file": str(file), "result": result}
    st.out.emit(data, lambda: st.out.print(text(
        f"exported {result if isinstance(result, int) else 'experiences'} to {file}", "green")))


def _export_to_stdout(st: Any, memory: Any) -> None:
    """Export through a file of our own, then copy it to stdout: the export may be written by
    another process that owns the root (a client bank), whose stdout is not ours. Only the
    JSONL goes to stdout; the count is a note on stderr."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skillbank-export-") as folder:
        path = Path(folder) / "experiences.jsonl"
        count = memory.export(path)
        with path.open("rb") as source:
            shutil.copyfileobj(source, sys.stdout.buffer)
        sys.stdout.flush()
    st.out.err.print(f"exported {count} experiences and lessons", highlight=False)


@experiences_app.command("import")
def experiences_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="JSONL file written by export.",
                                         exists=True, dir_okay=False)],
) -> None:
    """Import experiences from a JSONL export (exit 2 when any line could not be read)."""
    st = state(ctx)
    result = st.bank(sync=["experiences"]).experiences.import_(file)
    added, skipped = len(result.added), len(result.skipped)
    errors = [f for f in result.findings if f.severity == "error"]
    elsewhere = [f for f in errors if f.code == "other-namespace"]
    unread = [f for f in errors if f.code != "other-namespace"]
    forgotten = sum(1 for f in result.findings if f.code == "forgotten")

    def human() -> None:
        known = result.unchanged + len(result.changed)
        style = "green" if not skipped else ("yellow" if added or known else "red")
        gone = f", {forgotten} forgotten here and left out" if forgotten else ""
        other = f", {len(elsewhere)} for a namespace this root does not write" \
            if elsewhere else ""
        st.out.print(text(f"imported {added} new from {file} ({known} already known{gone}, "
                          f"{skipped - len(elsewhere)} lines could not be read{other})", style))
        if result.findings:  # warnings too: a conversation whose stored version was kept
            left = print_findings(st.out, result.findings, limit=10)
            if left:
                st.out.print(text(f"  … and {left} more", "dim"))

    st.out.emit({"file": str(file), "result": result}, human)
    if skipped:
        nothing = " nothing was imported;" if not (added or result.unchanged or result.changed) \
            else ""
        if unread:
            raise invalid(f"{len(unread)} lines of {file} are not experiences written by "
                          f"`skillbank experiences export`;{nothing} first problem: "
                          f"{unread[0].path}: {unread[0].message}")
        if elsewhere:  # an export's own lines, for a namespace this root does not write
            raise invalid(
                f"{len(elsewhere)} lines of {file} were skipped for their namespace;{nothing} "
                f"first: {elsewhere[0].path}: {elsewhere[0].message}. A root writes its own "
                "namespace only; to bring a personal root's memory into a team deployment, "
                "run `skillbank migrate --from PERSONAL-ROOT --namespace NS`, which puts "
                "every experience in NS")
        raise invalid(f"{skipped} lines of {file} could not be imported")
