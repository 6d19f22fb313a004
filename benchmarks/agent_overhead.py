"""What SkillbankMiddleware costs an agent per turn, and what its tools cost per model call.

    python benchmarks/agent_overhead.py                 # 40 turns per row, MiniLM
    python benchmarks/agent_overhead.py --turns 80 --hash-embedding

A real `create_agent` agent with a scripted chat model (one tool call, then an answer: two model
calls per turn) so that only LangChain and skillbank show in the timings. Rows, interleaved turn
by turn in the same run so machine load hits them alike:

* baseline — the agent without the middleware;
* middleware, context only — `record=False`: what putting memory in the prompt costs;
* middleware — `SkillbankMiddleware(bank)`: memory in the prompt, every run recorded on the
  bank's background writer (the default);
* middleware, feedback — the same with feedback on every run (learned as guidelines, also in
  the background);
* middleware, foreground — `background=False`: recording and learning inside the turn (what
  the middleware did before the background writer), with feedback.

Each turn is a new task (so the query embedding is never cached) against a bank seeded with
skills, guidelines and experiences. Per-turn wall time p50/p95, and the overhead over the
baseline. The deferred work is timed too: how long `bank.flush()` waited after the last turn.
Guard: every run must be on disk after the flush (recorded = turns, background failures = 0).
`--model-latency-ms` makes each scripted model call sleep that long, as a provider would: with 0
(the default) turns run back to back and the background writes of one turn compete with the
next turn for the 2 cores and the GIL — the worst case. Also printed: schema tokens of the tool sets (tiktoken cl100k over the OpenAI tool JSON, what a
provider is sent with every model call). Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import default_model_dir  # noqa: E402

TOPICS = ["orders table", "invoice export", "sales report", "user signup flow", "payment retry",
          "search index", "nightly backup", "CSV import", "email digest", "audit log",
          "cache warmup", "PDF renderer", "billing webhook", "feature flag cleanup",
          "release notes", "load balancer config", "password reset", "tax calculation",
          "image thumbnails", "GDPR export"]
VERBS = ["Migrate", "Fix", "Document", "Speed up", "Test", "Review"]


def tasks(n: int, offset: int = 0) -> list[str]:
    out = []
    for i in range(offset, offset + n):
        out.append(f"{VERBS[i % len(VERBS)]} the {TOPICS[(i // len(VERBS)) % len(TOPICS)]} "
                   f"(ticket {1000 + i})")
    return out


def seed(bank: Any) -> None:
    for i, topic in enumerate(TOPICS):
        name = topic.replace(" ", "-").lower()
        bank.skills.create(name, f"How to work on the {topic}: steps, checks and pitfalls. Use "
                           f"when asked to change or fix the {topic}.",
                           f"# {topic}\n\n1. Read the code.\n2. Change it.\n3. Test it.\n")
        bank.guidelines.add(f"Before changing the {topic}, write down how to roll it back.",
                            when_to_use=f"When changing the {topic}")
    bank.experiences.record_many([{"task": t, "outcome": "success",
                                   "lessons": [f"Lesson about {t.lower()}."]}
                                  for t in tasks(120, offset=5000)])
    bank.flush()


def make_model(latency_ms: float = 0.0) -> Any:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Scripted(BaseChatModel):
        """Calls `lookup` once, then answers: what a small tool-using turn looks like."""

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            if latency_ms:
                time.sleep(latency_ms / 1000)
            if messages[-1].type == "human":
                reply = AIMessage(content="", tool_calls=[{"name": "lookup",
                                                           "args": {"what": "status"},
                                                           "id": f"c{len(messages)}"}])
            else:
                reply = AIMessage(content=f"Done: {messages[-1].text}.")
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return Scripted()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def schema_tokens() -> list[tuple[str, int, int]]:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from skillbank.adapters._tools import COMPACT_TOOLS, MIDDLEWARE_TOOLS, TOOL_NAMES
    from skillbank.adapters.langchain import skillbank_tools
    from skillbank.tokens import count_tokens

    rows = []
    for label, names in (("SkillbankMiddleware(tools=True)", MIDDLEWARE_TOOLS),
                         ("skillbank_tools(bank) / SkillbankToolkit (default)", COMPACT_TOOLS),
                         ('include="all" / tools="all"', TOOL_NAMES)):
        tools = skillbank_tools(None, include=list(names))  # type: ignore[arg-type]
        tokens = sum(count_tokens(json.dumps(convert_to_openai_tool(t))) for t in tools)
        rows.append((label, len(tools), tokens))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40, help="turns per row")
    parser.add_argument("--model-latency-ms", type=float, default=0.0,
                        help="sleep this long in every model call (a provider's latency)")
    parser.add_argument("--hash-embedding", action="store_true",
                        help="the lexical test embedding instead of MiniLM")
    args = parser.parse_args(argv)

    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from skillbank import Skillbank
    from skillbank.adapters.langchain import SkillbankMiddleware
    from skillbank.embeddings import HashEmbedding, MiniLMEmbedding

    @tool
    def lookup(what: str) -> str:
        """Look something up."""
        return f"{what}: ok"

    embedding = (HashEmbedding() if args.hash_embedding
                 else MiniLMEmbedding(model_dir=default_model_dir()))
    root = Path(tempfile.mkdtemp(prefix="skillbank-overhead-"))
    bank = Skillbank.open(root, embedding_function=embedding)
    seed(bank)
    before = bank.experiences.count(kind="experience")
    model = make_model(args.model_latency_ms)
    rows = {
        "baseline (no middleware)": (create_agent(model, [lookup]), None),
        "middleware, context only (record=False)": (
            create_agent(model, [lookup], middleware=[SkillbankMiddleware(bank, record=False)]),
            None),
        "middleware (background recording)": (
            create_agent(model, [lookup], middleware=[SkillbankMiddleware(bank)]), None),
        "middleware + feedback (background)": (
            create_agent(model, [lookup], middleware=[SkillbankMiddleware(bank)]),
            "Always mention the ticket number in the answer."),
        "middleware + feedback, foreground": (
            create_agent(model, [lookup],
                         middleware=[SkillbankMiddleware(bank, background=False)]),
            "Always mention the ticket number in the answer."),
    }
    for agent, _ in rows.values():  # warm up every path (imports, graph compile, model session)
        agent.invoke({"messages": [{"role": "user", "content": "Warm up the cache warmup"}]})
    bank.flush()
    recorded_runs = bank.experiences.count(kind="experience") - before
    times: dict[str, list[float]] = {label: [] for label in rows}
    all_tasks = tasks(args.turns * len(rows))
    started = time.perf_counter()
    for turn in range(args.turns):
        for number, (label, (agent, feedback)) in enumerate(rows.items()):
            task = all_tasks[turn * len(rows) + number]
            state: dict[str, Any] = {"messages": [{"role": "user", "content": task}],
                                     "outcome": "success"}
            if feedback:
                state["feedback"] = feedback
            t0 = time.perf_counter()
            agent.invoke(state)
            times[label].append((time.perf_counter() - t0) * 1000)
    loop_seconds = time.perf_counter() - started
    t0 = time.perf_counter()
    bank.flush()
    flush_ms = (time.perf_counter() - t0) * 1000
    writer = bank.background
    runs_with_memory = args.turns * (len(rows) - 2)
    stored = bank.experiences.count(kind="experience") - before - recorded_runs
    folded = sum(e.duplicates for e in bank.experiences.list(kind="experience", limit=10_000)
                 if e.task in set(all_tasks))

    import os

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    model_name = "hash embedding" if args.hash_embedding else "MiniLM (offline)"
    print(f"\n## Per-turn wall time, {args.turns} turns per row, {model_name}, model latency "
          f"{args.model_latency_ms:.0f} ms per call, load {load:.1f} on {os.cpu_count()} cores")
    print(f"{'row':40} {'p50 ms':>8} {'p95 ms':>8} {'+p50 ms':>8} {'+p95 ms':>8}")
    base = times["baseline (no middleware)"]
    for label, values in times.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        extra = ("" if values is base else
                 f"{p50 - percentile(base, 0.5):>8.1f} {p95 - percentile(base, 0.95):>8.1f}")
        print(f"{label:40} {p50:>8.1f} {p95:>8.1f} {extra}")
    print(f"\nDeferred: bank.flush() after the last turn waited {flush_ms:.0f} ms "
          f"(loop {loop_seconds:.1f} s; background jobs done {writer.done}, failed {writer.failed})")
    print(f"Guard: {runs_with_memory} runs with the middleware, {stored} experiences stored + "
          f"{folded} folded as duplicates = {stored + folded} (lost: "
          f"{runs_with_memory - stored - folded}); background failures: {writer.failed}")
    print("\n## Tool schema tokens sent with every model call (tiktoken cl100k, OpenAI tool JSON)")
    print(f"{'set':52} {'tools':>6} {'tokens':>7}")
    for label, count, tokens in schema_tokens():
        print(f"{label:52} {count:>6} {tokens:>7}")
    print(f"\nmean per-run timings: {json.dumps({k: round(statistics.mean(v), 1) for k, v in times.items()})}")
    bank.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
