"""The learning loop, measured prequentially: is a mistake the agent was told about prevented?

    python benchmarks/learning_loop.py                 # dev stream, budgets 400 / 800 / 1600
    python benchmarks/learning_loop.py --budgets 800 --arms skillbank --json out.json

Why prequential: what matters to a user is not how the memory scores at the end of a stream, but
what the agent would have seen *at the moment* it was about to repeat a mistake. So the critique
stream (``../shared/benchmarks/critique-guidelines/<data>/critiques.jsonl``, in time order) is
walked once per arm; before each critique is learnt, the memory block for its task is built
(``bank.context_for(task, budget_tokens=B)``, what a middleware injects) and compared with the
labels:

* **prevented**: of the *repeated mistakes* (a labelled rule of this critique that an earlier
  critique already taught), the share whose rule was in the block. A guideline stands for the
  rule most of its critiques carry (as in the set's ``score.py``); a verbatim critique for every
  rule it is labelled with.
* **off-domain**: of the rules shown (guidelines, or critiques for the playbook), the share
  whose domain is not the task's (a guideline's domain: its critiques' majority domain).
* **stale**: blocks that show a rule a newer one had already replaced when the block was built
  (the set's ``supersedes`` pairs, counted from the first critique of the newer rule).
* **first / second half**: prevented on each half of the stream (is it learning?).
* **held-out**: after the whole stream, the block for each of the set's future tasks
  (``tasks.jsonl``, never part of the stream): the share of their relevant rules in the block
  and the off-domain share, a second check that a change is not fitted to the stream.

Arms, in the same run and on the same model (all-MiniLM-L6-v2):

* ``none``: no memory (prevents nothing; the floor).
* ``playbook``: the append-only playbook: the most recent critiques verbatim, newest first, as
  many as fit the same budget (what "just keep the feedback in the prompt" gives).
* ``skillbank``: ``bank.guidelines.learn(critique, task=..., response=..., score=...)`` with the
  deterministic distiller (no chat model).
* ``agent``: the agent as curator: for each labelled critique the agent passes the rules it read
  as ``learn(critique, rules=[{"text", "when_to_use"}])`` (here: the set's labelled rule texts and
  their ``applies_when``, i.e. a perfect reader), with ``replaces=<id>`` when the rule overrules
  one the agent had stored (the set's ``supersedes`` label; the id from the earlier learn report).
  Noise critiques (praise, one-off fixes) make the agent write no rule.
* ``agent-topic``: as ``agent``, and the agent also names the topic: of each rule it writes
  (``rules=[{..., "topic"}]``) and of each task it asks the block for
  (``context_for(task, topic=...)``), here the set's domain name (a perfect reader that
  names one domain the same way every time). Without a stated topic the block guesses the
  task's domain from its nearest rules (each rule's family read off its own text and
  ``when_to_use``, ``skillbank.block_family.rule_family``), right on ~80% of the stream's tasks
  with MiniLM (session 8; see docs/benchmarks.md for session 9).
* ``chat``: as ``skillbank``, with a chat model as the distiller
  (``adapters.langchain.ChatModelDistiller``; the rule distiller is its fallback). It runs when
  a chat model is configured: ``SKILLBANK_BENCH_CHAT_MODEL`` (or ``--chat-model``) names a
  LangChain chat model as ``langchain.chat_models.init_chat_model`` reads it, e.g.
  ``openai:gpt-4o-mini`` (its provider package installed and its API key set); without one it
  is reported as skipped.

Nothing here reads the labels inside skillbank's arms except the agent arm's rule texts, which
is what that arm measures. The machine load is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, default_model_dir  # noqa: E402

DEFAULT_SET = SHARED / "benchmarks" / "critique-guidelines"
BUDGETS = (400, 800, 1600)
ARMS = ("none", "playbook", "skillbank", "agent", "agent-topic", "chat")
CHAT_MODEL_ENV = "SKILLBANK_BENCH_CHAT_MODEL"


def load_stream(set_dir: Path, data: str) -> tuple[dict[str, dict], list[dict]]:
    folder = Path(data) if Path(data).is_dir() else set_dir / data
    read = lambda name: [json.loads(x) for x in (folder / name).open(encoding="utf-8")  # noqa: E731
                         if x.strip()]
    rules = {r["rule_id"]: r for r in read("rules.jsonl")}
    crits = sorted(read("critiques.jsonl"), key=lambda c: c["t"])
    return rules, crits


def load_tasks(set_dir: Path, data: str) -> list[dict]:
    """The set's future tasks (held out of the stream), or [] when it has none."""
    folder = Path(data) if Path(data).is_dir() else set_dir / data
    path = folder / "tasks.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.open(encoding="utf-8") if x.strip()]


def machine_load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load unknown"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


# ---------------------------------------------------------------------------------- the arms
class Shown:
    """What one block showed: units, each with the rules and the domain it stands for."""

    def __init__(self) -> None:
        self.units: list[tuple[frozenset[str], str | None]] = []

    def add(self, rules: set[str] | frozenset[str], domain: str | None) -> None:
        self.units.append((frozenset(rules), domain))

    @property
    def rules(self) -> set[str]:
        return {r for rules, _ in self.units for r in rules}


class NoMemory:
    name = "none"

    def block(self, crit: dict, budget: int) -> Shown:
        return Shown()

    def learn(self, crit: dict) -> None:
        return None

    def close(self) -> None:
        return None


class Playbook:
    """The append-only playbook: the latest critiques verbatim, newest first, within budget."""

    name = "playbook"

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def block(self, crit: dict, budget: int) -> Shown:
        from skillbank.tokens import count_tokens

        shown = Shown()
        lines = ["<feedback>", "Feedback on earlier work (most recent first):"]
        for old in reversed(self.seen):
            line = f"- On \u201c{old.get('task', '')}\u201d: {old['critique']}"
            if count_tokens("\n".join(lines + [line, "</feedback>"])) > budget:
                break
            lines.append(line)
            shown.add(set(old.get("rule_ids") or []), old["domain"])
        return shown

    def learn(self, crit: dict) -> None:
        self.seen.append(crit)

    def close(self) -> None:
        return None


class SkillbankArm:
    """A fresh bank; a guideline is labelled by the critiques that created or reinforced it."""

    def __init__(self, name: str, embedding: Any, rules: dict[str, dict], agent: bool,
                 chat_model: Any = None, topics: bool = False) -> None:
        from skillbank import Skillbank

        self.name = name
        self.rules = rules
        self.agent = agent
        self.topics = topics  # the agent names each rule's and each task's topic
        self._tmp = tempfile.TemporaryDirectory()
        extra: dict[str, Any] = {}
        if chat_model is not None:
            from skillbank.adapters.langchain import ChatModelDistiller

            self.distiller = ChatModelDistiller(chat_model)
            extra["distiller"] = self.distiller
        self.bank = Skillbank.open(self._tmp.name, embedding_function=embedding,
                                   include_bundled=False, sync=False, **extra)
        self.bank.guidelines.sync()
        self.labels: dict[str, Counter[str]] = {}  # guideline id -> true rules of its critiques
        self.domains: dict[str, Counter[str]] = {}
        self.gid_of_rule: dict[str, str] = {}  # agent arm: the id the agent got for each rule
        self.learn_seconds = 0.0
        self.block_seconds = 0.0
        self.replace_errors = 0
        self.model_fallbacks = 0

    def _label(self, gid: str) -> tuple[set[str], str | None]:
        labels = self.labels.get(gid)
        rule = {labels.most_common(1)[0][0]} if labels else set()
        domains = self.domains.get(gid)
        return rule, domains.most_common(1)[0][0] if domains else None

    def block(self, crit: dict, budget: int) -> Shown:
        started = time.perf_counter()
        extra = {"topic": crit["domain"]} if self.topics else {}
        context = self.bank.context_for(crit["task"], budget_tokens=budget, **extra)
        self.block_seconds += time.perf_counter() - started
        shown = Shown()
        for hit in context.guidelines:
            shown.add(*self._label(hit.id))
        return shown

    def learn(self, crit: dict) -> None:
        started = time.perf_counter()
        truth = list(crit.get("rule_ids") or [])
        memory = self.bank.guidelines
        if self.agent:
            if not truth:
                return  # praise or a one-off fix: the agent writes no rule
            for rule_id in truth:
                self._agent_learn(crit, rule_id)
        else:
            report = memory.learn(crit["critique"], task=crit.get("task"),
                                  response=crit.get("response_excerpt"), score=crit.get("score"))
            if getattr(getattr(self, "distiller", None), "last_error", None):
                self.model_fallbacks += 1  # the model failed; the rule distiller answered
            for gid in report.ids("added", "merged", "superseded", "pending"):
                self._tag(gid, truth, crit)
        self.learn_seconds += time.perf_counter() - started

    def _agent_learn(self, crit: dict, rule_id: str) -> None:
        rule = self.rules[rule_id]
        item: dict[str, Any] = {"text": rule["guideline"], "when_to_use": rule["applies_when"]}
        if self.topics:
            item["topic"] = rule["domain"]
        old = rule.get("supersedes")
        if old and old in self.gid_of_rule:
            previous = self.bank.guidelines.get(self.gid_of_rule[old])
            if previous.status == "active":
                item["replaces"] = previous.id
        try:
            report = self.bank.guidelines.learn(crit["critique"], task=crit.get("task"),
                                                rules=[item])
        except TypeError:  # a release without replaces: the rule alone
            item.pop("replaces", None)
            report = self.bank.guidelines.learn(crit["critique"], task=crit.get("task"),
                                                rules=[item])
        except Exception:  # noqa: BLE001 - counted, never hidden
            self.replace_errors += 1
            item.pop("replaces", None)
            report = self.bank.guidelines.learn(crit["critique"], task=crit.get("task"),
                                                rules=[item])
        for gid in report.ids("added", "merged", "superseded", "pending"):
            self._tag(gid, [rule_id], crit)
            self.gid_of_rule[rule_id] = gid

    def _tag(self, gid: str, truth: list[str], crit: dict) -> None:
        self.labels.setdefault(gid, Counter()).update(truth)
        self.domains.setdefault(gid, Counter())[crit["domain"]] += 1

    def close(self) -> None:
        self.bank.close()
        self._tmp.cleanup()


# ---------------------------------------------------------------------------------- the walk
def walk(arm: Any, rules: dict[str, dict], crits: list[dict], budgets: tuple[int, ...]
         ) -> dict[int, dict[str, Any]]:
    """Prequential walk: block before each critique, then learn it."""
    newer_of = {r["supersedes"]: rid for rid, r in rules.items() if r.get("supersedes")}
    taught: set[str] = set()
    half = len(crits) // 2
    out = {b: {"repeated": [0, 0], "prevented": [0, 0], "shown": 0, "off_domain": 0,
               "blocks": 0, "stale_blocks": 0, "stale_examples": []} for b in budgets}
    for position, crit in enumerate(crits):
        truth = set(crit.get("rule_ids") or [])
        repeated = truth & taught
        replaced = {old for old, new in newer_of.items() if new in taught}
        for budget in budgets:
            shown = arm.block(crit, budget)
            row = out[budget]
            part = 0 if position < half else 1
            row["blocks"] += 1
            row["repeated"][part] += len(repeated)
            row["prevented"][part] += len(repeated & shown.rules)
            for unit_rules, domain in shown.units:
                row["shown"] += 1
                row["off_domain"] += int(domain is not None and domain != crit["domain"])
            stale = shown.rules & replaced
            if stale:
                row["stale_blocks"] += 1
                if len(row["stale_examples"]) < 3:
                    row["stale_examples"].append(f"{crit['cid']}: {sorted(stale)}")
        arm.learn(crit)
        taught |= truth
    for row in out.values():
        rep, prev = row["repeated"], row["prevented"]
        row["prevented_rate"] = sum(prev) / max(1, sum(rep))
        row["first_half"] = prev[0] / max(1, rep[0])
        row["second_half"] = prev[1] / max(1, rep[1])
        row["off_domain_share"] = row["off_domain"] / max(1, row["shown"])
    return out


def held_out(arm: Any, tasks: list[dict], budgets: tuple[int, ...]) -> dict[int, dict[str, Any]]:
    """After the stream: the block for each future task; recall of its relevant rules (only
    the newer rule of a replaced pair is relevant) and the off-domain share of what it shows."""
    out: dict[int, dict[str, Any]] = {}
    for budget in budgets:
        relevant = found = shown = off = 0
        for task in tasks:
            block = arm.block({"task": task["task"], "domain": task["domain"]}, budget)
            wanted = set(task.get("relevant_rule_ids") or [])
            relevant += len(wanted)
            found += len(wanted & block.rules)
            for _, domain in block.units:
                shown += 1
                off += int(domain is not None and domain != task["domain"])
        out[budget] = {"recall": found / max(1, relevant), "off_domain_share": off / max(1, shown),
                       "shown_per_block": shown / max(1, len(tasks)), "tasks": len(tasks)}
    return out


def make_arms(names: list[str], embedding: Any, rules: dict[str, dict],
              chat_model: Any = None) -> dict[str, Callable[[], Any]]:
    """The arms to run; ``chat`` only with a `chat_model` (see :func:`chat_model_from`)."""
    factories: dict[str, Callable[[], Any]] = {
        "none": NoMemory,
        "playbook": Playbook,
        "skillbank": lambda: SkillbankArm("skillbank", embedding, rules, agent=False),
        "agent": lambda: SkillbankArm("agent", embedding, rules, agent=True),
        "agent-topic": lambda: SkillbankArm("agent-topic", embedding, rules, agent=True,
                                            topics=True),
        "chat": lambda: SkillbankArm("chat", embedding, rules, agent=False,
                                     chat_model=chat_model),
    }
    return {n: factories[n] for n in names if n != "chat" or chat_model is not None}


def chat_model_from(spec: str | None) -> tuple[Any, str]:
    """(a LangChain chat model, "") for a configured `spec`, else (None, why it is skipped)."""
    spec = (spec or "").strip()
    if not spec:
        return None, (f"skipped: no chat model configured (set {CHAT_MODEL_ENV}, e.g. "
                      "openai:gpt-4o-mini, or pass --chat-model)")
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(spec), ""
    except Exception as exc:  # noqa: BLE001 - reported, the other arms still run
        return None, f"skipped: chat model {spec!r} could not be made ({type(exc).__name__}: {exc})"


def table(results: dict[str, dict[int, dict]], budgets: tuple[int, ...]) -> str:
    lines = ["| arm | budget | prevented | 1st half | 2nd half | off-domain | stale blocks |"
             " rules shown/block |", "|---|---|---|---|---|---|---|---|"]
    for name, per_budget in results.items():
        for budget in budgets:
            r = per_budget[budget]
            lines.append(
                f"| {name} | {budget} | {r['prevented_rate']:.3f} ({sum(r['prevented'])}/"
                f"{sum(r['repeated'])}) | {r['first_half']:.3f} | {r['second_half']:.3f} | "
                f"{r['off_domain_share']:.3f} | {r['stale_blocks']}/{r['blocks']} | "
                f"{r['shown'] / max(1, r['blocks']):.1f} |")
    return "\n".join(lines)


def held_table(held: dict[str, dict[int, dict]], budgets: tuple[int, ...]) -> str:
    lines = ["| arm | budget | relevant rules in the block | off-domain | rules shown/block |",
             "|---|---|---|---|---|"]
    for name, per_budget in held.items():
        for budget in budgets:
            r = per_budget[budget]
            lines.append(f"| {name} | {budget} | {r['recall']:.3f} | {r['off_domain_share']:.3f} | "
                         f"{r['shown_per_block']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--data", default="dev")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--limit", type=int, default=0, help="first N critiques only (a smoke run)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--chat-model", default=os.environ.get(CHAT_MODEL_ENV),
                        help=f"a LangChain chat model for the chat arm (default: ${CHAT_MODEL_ENV})")
    args = parser.parse_args(argv)

    from skillbank.embeddings import MiniLMEmbedding

    rules, crits = load_stream(args.set, args.data)
    tasks = load_tasks(args.set, args.data)
    if args.limit:
        crits = crits[:args.limit]
    embedding = MiniLMEmbedding(model_dir=args.model_dir or default_model_dir())
    budgets = tuple(args.budgets)
    print(f"learning loop, critique-guidelines/{args.data}: {len(crits)} critiques, "
          f"{len(rules)} rules; model all-MiniLM-L6-v2; budgets {budgets}; {machine_load()}")
    results: dict[str, dict[int, dict]] = {}
    held: dict[str, dict[int, dict]] = {}
    timing: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    chat_model = None
    if "chat" in args.arms:
        chat_model, why = chat_model_from(args.chat_model)
        if chat_model is None:
            skipped["chat"] = why
    for name, factory in make_arms(args.arms, embedding, rules, chat_model).items():
        started = time.perf_counter()
        arm = factory()
        try:
            results[name] = walk(arm, rules, crits, budgets)
            if tasks:
                held[name] = held_out(arm, tasks, budgets)
        finally:
            arm.close()
        timing[name] = {"seconds": time.perf_counter() - started,
                        "learn_seconds": getattr(arm, "learn_seconds", 0.0),
                        "block_ms": 1000 * getattr(arm, "block_seconds", 0.0)
                        / max(1, len(crits) * len(budgets)),
                        "replace_errors": getattr(arm, "replace_errors", 0),
                        "model_fallbacks": getattr(arm, "model_fallbacks", 0)}
    print(table(results, budgets))
    if held:
        print(f"held out: the {len(tasks)} future tasks after the stream")
        print(held_table(held, budgets))
    for name, why in skipped.items():
        print(f"{name}: {why}")
    for name, t in timing.items():
        print(f"{name}: {t['seconds']:.1f} s (learn {t['learn_seconds']:.1f} s, "
              f"block {t['block_ms']:.1f} ms)"
              + (f"; replace refused {t['replace_errors']}x" if t["replace_errors"] else "")
              + (f"; model failed, rule distiller used {t['model_fallbacks']}x"
                 if t["model_fallbacks"] else ""))
        for budget in budgets:
            for example in results[name][budget]["stale_examples"]:
                print(f"  stale at {budget}: {example}")
    print(f"after the run: {machine_load()}")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "held_out": held, "timing": timing,
                                         "skipped": skipped, "load": machine_load()},
                                        indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
