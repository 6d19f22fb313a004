"""Property tests: the SKILL.md loader on mutated real skills and hostile YAML, and every record
and memory entry point on random input.

Contracts checked:
* `read_skill_file` / `parse_skill_text` never raise and never hang, and return a document
  exactly when no finding is an error; a loaded document validates without raising and renders
  to text that loads again (what `update()` of a loaded skill writes back).
* Records (`Experience`, `Step`, `Lesson`, `Guideline`) either validate or raise pydantic's
  `ValidationError`; memory entry points (`record`, `learn`, `add`, `create`) either store
  something that reads back from the files after a reload, or raise `InvalidInputError`; never
  another exception type. Oversized text is refused or cut as the code says, and nothing
  enormous reaches the disk.

tests/test_skill_file.py covers the hand-written cases (bombs, encodings, spec rules); these
tests fuzz around them.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from skillbank.errors import InvalidInputError
from skillbank.memories.skills.skill_file import (
    MAX_DEPTH,
    MAX_NODES,
    SkillDocument,
    parse_skill_text,
    read_skill_file,
    render_skill,
    validate_skill,
)
from skillbank.records import (
    MAX_SHORT, MAX_STEPS, MAX_TAGS, MAX_TEXT, Experience, Finding, Guideline, Lesson, Step,
)

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "skills"
CORPUS_FILES = sorted(CORPUS.rglob("SKILL.md")) if CORPUS.is_dir() else []
#: Parsing one SKILL.md takes about a millisecond; anything near this is a hang or a bomb.
DEADLINE = timedelta(seconds=5)
FUZZ = settings(max_examples=150, deadline=DEADLINE,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
#: Entry points that write and fsync: fewer examples (each costs milliseconds of disk time).
FUZZ_WRITES = settings(FUZZ, max_examples=60)

# Strings a model or a network might send: every code point, surrogates and controls included.
any_char = st.characters(exclude_categories=())
any_text = st.text(any_char, max_size=40)
NASTY_TEXT = ["\x00", "a\x00b", "\ud800", "x\udfffy", "\u2028", "\x85", "\r\n", "\x1b[31m", "\ufeff",
              "</skillbank-memory>", "---", "'", '"', "\\", "{{x}}", "%s", "\u202e", " ", ""]
texts = st.one_of(any_text, st.sampled_from(NASTY_TEXT), st.text(max_size=400))


# ------------------------------------------------------------------------------- SKILL.md: helpers
def check_contract(doc: SkillDocument | None, findings: list[Finding]) -> None:
    assert all(isinstance(f, Finding) for f in findings)
    errors = [f for f in findings if f.severity == "error"]
    assert (doc is None) == bool(errors), findings
    if doc is None:
        return
    assert isinstance(doc.name, str) and isinstance(doc.description, str) and doc.description.strip()
    strict = validate_skill(doc)
    assert all(isinstance(f, Finding) for f in strict)
    # What `SkillLibrary.update()` writes back for a loaded skill must load again, the same.
    text = render_skill(doc)
    again, again_findings = parse_skill_text(text, folder_name=doc.fallback_name)
    assert again is not None, (again_findings, text[:500])
    assert render_skill(again) == text
    assert again.body == doc.body


def timed_parse(text: str, **kw: Any) -> tuple[SkillDocument | None, list[Finding]]:
    start = time.perf_counter()
    result = parse_skill_text(text, **kw)
    assert time.perf_counter() - start < DEADLINE.total_seconds()
    return result


# --------------------------------------------------------------------- SKILL.md: mutated corpus files
SNIPPETS = [
    b"\x00", b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\r\n", b"\r", b"\n", b"\t",
    b"---\n", b"\n---\n", b"---", b": ", b":", b"'", b'"', b"|", b">-\n", b"#", b"- ",
    b"&a ", b"*a", b"<<: *a\n", b"a: &a [1, 2]\nb: [*a, *a, *a]\n",
    b"!!python/object/apply:os.system ['id']", b"!!binary |\n  AAAA\n", b"!!set {a, b}\n",
    b"? [a, b]\n: c\n", b"[" * 40, b"{" * 40, b"]" * 40, b"\xef\xbb\xbf", "\u2028".encode(),
    "\x85".encode(), b"%YAML 1.1\n", b"--- !!set\n", b"description: \n", b"description:\n",
    b"name: ../../etc\n", b"name: CON\n", b"metadata: {a: {b: {c: {d: {e: 1}}}}}\n",
    b"date: 2024-13-45\n", b"n: .nan\n", b"n: 1e400\n", b"x: 0o777\n", b"t: 2001-12-14t21:59:43.10-05:00\n",
    "description: caf\u00e9 \U0001f600\n".encode(), b"\x1b[2J", b"\x7f", b"\xc2\x85",
]

mutation = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(SNIPPETS)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 200)),
    st.tuples(st.just("duplicate"), st.floats(0, 1), st.integers(1, 300)),
    st.tuples(st.just("truncate"), st.floats(0, 1), st.just(0)),
)


def mutate(data: bytes, steps: list[tuple[str, float, Any]]) -> bytes:
    """Apply byte-level mutations; positions prefer the frontmatter (the first 600 bytes)."""
    for kind, where, arg in steps:
        span = min(len(data), 600) if where < 0.8 else len(data)
        pos = int(where * span) if span else 0
        if kind == "flip" and data:
            pos = min(pos, len(data) - 1)
            data = data[:pos] + bytes([arg]) + data[pos + 1:]
        elif kind == "insert":
            data = data[:pos] + arg + data[pos:]
        elif kind == "delete":
            data = data[:pos] + data[pos + arg:]
        elif kind == "duplicate":
            data = data[:pos] + data[pos:pos + arg] * 2 + data[pos + arg:]
        elif kind == "truncate":
            data = data[:pos]
    return data


@pytest.mark.skipif(not CORPUS_FILES, reason=f"no skills corpus at {CORPUS}")
@FUZZ
@given(index=st.integers(0, max(len(CORPUS_FILES) - 1, 0)),
       steps=st.lists(mutation, min_size=1, max_size=6))
def test_mutated_corpus_files_never_crash_the_loader(tmp_path_factory, index, steps):
    source = CORPUS_FILES[index]
    original = source.read_bytes()
    data = mutate(original, steps)
    folder = tmp_path_factory.mktemp("mutant") / source.parent.name
    folder.mkdir()
    path = folder / "SKILL.md"
    path.write_bytes(data)
    start = time.perf_counter()
    doc, findings = read_skill_file(path)
    assert time.perf_counter() - start < DEADLINE.total_seconds()
    check_contract(doc, findings)
    if b"\x00" in data:
        assert doc is None and {f.code for f in findings} == {"binary"}
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        assert doc is None and {f.code for f in findings} <= {"binary", "encoding", "too-large"}
    else:  # the text entry point agrees with the file one
        if b"\x00" not in data:
            text_doc, _ = parse_skill_text(data.decode("utf-8"), folder_name=folder.name)
            assert (text_doc is None) == (doc is None)


@pytest.mark.skipif(not CORPUS_FILES, reason=f"no skills corpus at {CORPUS}")
def test_every_corpus_file_satisfies_the_loader_contract():
    """The unmutated corpus too: whatever loads also validates and survives a render round trip."""
    failures = []
    for path in CORPUS_FILES:
        doc, findings = read_skill_file(path)
        try:
            check_contract(doc, findings)
        except AssertionError as exc:
            failures.append(f"{path.relative_to(CORPUS)}: {str(exc)[:300]}")
    assert not failures, "\n".join(failures[:10]) + f"\n({len(failures)} files)"


# ----------------------------------------------------------------------- SKILL.md: random frontmatter
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                   texts, st.dates())
nested = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=30)


@FUZZ
@given(frontmatter=st.dictionaries(st.sampled_from(["name", "description", "license",
                                                    "compatibility", "metadata", "allowed-tools"])
                                   | st.text(max_size=10), nested, max_size=8),
       body=texts)
def test_random_frontmatter_loads_or_is_refused_with_a_finding(frontmatter, body):
    try:
        raw = yaml.safe_dump(frontmatter, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        assume(False)
    doc, findings = timed_parse(f"---\n{raw}---\n{body}", folder_name="fuzz-skill")
    check_contract(doc, findings)
    description = frontmatter.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        assert doc is None


def _nest(depth: int, kind: str) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


@settings(max_examples=60, deadline=DEADLINE)
@given(depth=st.integers(1, 300), kind=st.sampled_from(["list", "dict"]),
       flow=st.booleans())
def test_deeply_nested_metadata_is_bounded(depth, kind, flow):
    raw = yaml.safe_dump({"description": "deep", "metadata": _nest(depth, kind)},
                         default_flow_style=flow, width=10**6)
    doc, findings = timed_parse(f"---\n{raw}---\n")
    check_contract(doc, findings)
    if depth + 2 > MAX_DEPTH + 1:
        assert doc is None
        assert {f.code for f in findings} in ({"yaml-too-complex"}, {"frontmatter-too-large"})


@settings(max_examples=60, deadline=DEADLINE)
@given(levels=st.integers(1, 12), fanout=st.integers(1, 12), merge=st.booleans())
def test_alias_bombs_are_refused_and_small_aliasing_loads(levels, fanout, merge):
    lines = ["description: aliases", 'l0: &l0 ["x", "y"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*l{i - 1}"] * fanout)
        lines.append(f"l{i}: &l{i} [{refs}]")
    if merge:
        lines += ["base: &base {a: 1, b: 2}", "derived:", "  <<: *base", "  c: 3"]
    doc, findings = timed_parse("---\n" + "\n".join(lines) + "\n---\n")
    check_contract(doc, findings)
    expanded = sum(fanout ** i for i in range(levels + 1)) * 3
    if expanded > 4 * MAX_NODES:
        assert doc is None and {f.code for f in findings} == {"yaml-too-complex"}
    if doc is not None:  # what was built is small: the guard ran before construction
        def size(value: Any) -> int:
            if isinstance(value, dict):
                return 1 + sum(size(k) + size(v) for k, v in value.items())
            if isinstance(value, list):
                return 1 + sum(size(v) for v in value)
            return 1
        assert size(doc.frontmatter) <= 2 * MAX_NODES


@FUZZ
@given(prefix=st.binary(max_size=30), junk=st.binary(min_size=1, max_size=40),
       where=st.sampled_from(["name", "description", "body", "key"]))
def test_invalid_utf8_and_control_bytes_never_crash(tmp_path_factory, prefix, junk, where):
    parts = {"name": b"fuzz-skill", "description": b"A fuzzed skill", "body": b"# Body\n", "key": b"x"}
    parts[where] = parts[where] + junk
    data = (prefix if where == "key" else b"") + b"---\nname: " + parts["name"] + \
        b"\ndescription: " + parts["description"] + b"\n" + parts["key"] + b": 1\n---\n" + parts["body"]
    folder = tmp_path_factory.mktemp("bytes") / "fuzz-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(data)
    doc, findings = read_skill_file(folder / "SKILL.md")
    check_contract(doc, findings)
    if doc is not None and where == "description" and any(
            0 <= b < 9 or 10 < b < 32 or b == 127 for b in junk):
        text = doc.description
        if any(ord(c) < 32 and c not in "\t\n" or 0x7f <= ord(c) <= 0x9f for c in text):
            assert "description-control" in {f.code for f in validate_skill(doc)}


# ------------------------------------------------------------------------------------- records
anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts, st.binary(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=8)
FIELDS = {
    Experience: ["id", "task", "steps", "outcome", "score", "feedback", "lessons", "when_to_use",
                 "tags", "namespace", "source", "kind", "created", "status", "duplicates"],
    Guideline: ["id", "topic", "text", "when_to_use", "status", "helpful", "harmful",
                "reinforcements", "sources", "supersedes", "superseded_by", "namespace"],
    Step: ["thought", "action", "action_input", "observation"],
    Lesson: ["kind", "text", "when_to_use"],
}


@FUZZ
@given(model=st.sampled_from(list(FIELDS)), data=st.data())
def test_records_validate_or_raise_validation_error(model, data):
    keys = st.sampled_from(FIELDS[model]) | texts
    raw = data.draw(st.dictionaries(keys, anything | texts | st.text(min_size=0, max_size=30),
                                    max_size=8))
    try:
        record = model.model_validate(raw)
    except ValidationError:
        return
    dumped = record.model_dump()
    for name in ("task", "feedback", "text", "observation", "thought", "action"):
        value = dumped.get(name)
        assert value is None or len(value) <= MAX_TEXT
    for name in ("when_to_use",):
        assert len(dumped.get(name) or "") <= MAX_SHORT
    if model is Experience:
        assert len(record.steps) <= MAX_STEPS and len(record.tags) <= MAX_TAGS


@settings(max_examples=40, deadline=None)
@given(size=st.integers(0, 3 * MAX_TEXT), field=st.sampled_from(["thought", "action", "observation"]))
def test_step_texts_are_cut_to_the_limit_not_refused(size, field):
    step = Step(**{field: "x" * size})
    assert len(getattr(step, field)) == min(size, MAX_TEXT)


# --------------------------------------------------------------------------- memory entry points
@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path_factory.mktemp("props") / "root",
                          embedding_function=HashEmbedding(), include_bundled=False)
    yield bank
    bank.close()


def reread_experience(bank, eid: str) -> Experience:
    """The record as a fresh memory reads it from the journal (no cache)."""
    from skillbank.memories.experiences import ExperienceMemory
    from skillbank.usage import UsageLog

    fresh = ExperienceMemory(bank.root / "experiences", bank.index("experiences"),
                             UsageLog(bank.root / "usage" / "experiences.jsonl"),
                             settings=bank.settings)
    return fresh.get(eid)


def assert_small_files(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and "chroma" not in path.relative_to(root).parts:
            limit = 64 << 20 if path.suffix == ".jsonl" else (1 << 20) + 4096
            assert path.stat().st_size <= limit, path


steps_strategy = st.one_of(
    st.none(), anything,
    st.lists(st.one_of(st.dictionaries(st.sampled_from(["thought", "action", "action_input",
                                                        "observation", "tool", "input", "output"]),
                                       anything | texts, max_size=4),
                       anything), max_size=4))
messages_strategy = st.lists(st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", "system", "x"]),
                           "content": texts | st.text(max_size=200)},
                          optional={"tool_calls": anything, "tool_call_id": texts, "name": texts}),
    st.dictionaries(st.sampled_from(["role", "content", "type", "tool_calls", "tool_call_id",
                                     "name"]), anything | texts, max_size=4),
    anything), max_size=5)
#: Mostly plausible calls with one or two hostile fields, so that many are stored (and checked).
plausible_task = st.text(min_size=1, max_size=200).filter(str.strip)


@st.composite
def record_kwargs(draw: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"task": draw(st.one_of(plausible_task, plausible_task, texts, anything))}
    optional = {
        "outcome": st.sampled_from(["success", "failure", "partial", "unknown", " Success ", "won"])
        | anything,
        "score": st.one_of(st.none(), st.floats(), st.integers(), st.booleans(), texts),
        "feedback": st.one_of(st.none(), st.text(max_size=300), texts, anything),
        "lessons": st.one_of(st.none(), texts, st.lists(texts | st.text(min_size=1), max_size=3),
                             anything),
        "when_to_use": st.one_of(st.text(max_size=100), texts, anything),
        "tags": st.one_of(st.none(), texts, st.lists(texts, max_size=4), anything),
        "namespace": st.one_of(st.none(), st.text(min_size=1, max_size=20), texts, anything),
    }
    for name, strategy in optional.items():
        if draw(st.integers(0, 3)) == 0:
            kwargs[name] = draw(strategy)
    how = draw(st.sampled_from(["none", "steps", "messages", "both"]))
    if how in ("steps", "both"):
        kwargs["steps"] = draw(steps_strategy)
    if how in ("messages", "both"):
        kwargs["messages"] = draw(messages_strategy | anything)
        if draw(st.booleans()):
            kwargs.pop("task")  # the first user message becomes the task
    return kwargs


@FUZZ_WRITES
@given(kwargs=record_kwargs())
def test_record_stores_what_reads_back_or_raises_invalid_input(bank, kwargs):
    try:
        eid = bank.experiences.record(**kwargs)
    except InvalidInputError:
        return
    stored = reread_experience(bank, eid)
    assert stored.id == eid
    if isinstance(kwargs.get("task"), str) and eid.startswith("exp-") and stored.task:
        assert len(stored.task) <= MAX_TEXT
    assert len(stored.model_dump_json().encode()) <= (1 << 20) + 1024
    assert_small_files(bank.root)


learn_kwargs = st.fixed_dictionaries({"critique": texts | anything}, optional={
    "task": st.one_of(st.none(), texts, anything),
    "response": st.one_of(st.none(), texts, anything),
    "score": st.one_of(st.none(), st.floats(), st.integers(), texts),
    "source": st.one_of(texts, anything),
    "trusted": st.booleans(),
    "namespace": st.one_of(st.none(), texts, anything),
})
ADVICE = ["You should always {} before merging.", "Never {} in production.",
          "Please add tests for {}.", "Use parameterised queries for {}."]


@FUZZ_WRITES
@given(kwargs=learn_kwargs, advice=st.sampled_from(ADVICE), words=texts)
def test_learn_stores_what_reads_back_or_raises_invalid_input(bank, kwargs, advice, words):
    if isinstance(kwargs["critique"], str) and len(kwargs["critique"]) < 40:
        kwargs = {**kwargs, "critique": advice.format(kwargs["critique"] + " " + words)}
    try:
        report = bank.guidelines.learn(**kwargs)
    except InvalidInputError:
        return
    check_guidelines_reload(bank, {e.guideline_id: e.text for e in report.entries
                                   if e.guideline_id and e.action != "ignored"})


add_kwargs = st.fixed_dictionaries({"text": texts | anything}, optional={
    "topic": st.one_of(st.none(), st.sampled_from(["testing", "sql", "con", "a" * 65]), texts,
                       anything),
    "when_to_use": texts | anything,
    "source": st.one_of(texts, anything),
    "trusted": st.booleans(),
    "namespace": st.one_of(st.none(), texts, anything),
})


@FUZZ_WRITES
@given(kwargs=add_kwargs, filler=st.text(min_size=1, max_size=30))
def test_add_stores_what_reads_back_or_raises_invalid_input(bank, kwargs, filler):
    if isinstance(kwargs["text"], str):
        kwargs = {**kwargs, "text": f"Always {filler} {kwargs['text']}"}
    try:
        entry = bank.guidelines.add(**kwargs)
    except InvalidInputError:
        return
    check_guidelines_reload(bank, {entry.guideline_id: entry.text})


def check_guidelines_reload(bank, written: dict[str, str]) -> None:
    """A fresh sync re-reads every file: what a call reported written must still be there."""
    report = bank.guidelines.sync()
    for gid in written:
        broken = [f for f in report.findings if f.path and gid in f.path]
        assert not broken, f"{gid} was written, then refused on reload: {broken}"
        assert gid in bank.guidelines, f"{gid} was written, then lost on reload"
    assert_small_files(bank.root)


def check_skill_reload(bank, skill) -> None:
    report = bank.skills.sync()
    broken = [f for f in report.findings if f.path == skill.path and f.severity == "error"]
    assert not broken, f"{skill.name} was written, then refused on reload: {broken}"
    loaded = bank.skills.load(skill.name)
    assert (loaded.description, loaded.body) == (skill.description, skill.body)
    assert_small_files(bank.root)


# Skills are created through MCP and the CLI, which hand over strings: fuzz the strings (and the
# extra frontmatter), not the Python types.
skill_kwargs = st.fixed_dictionaries({
    "name": st.one_of(st.from_regex(r"\Af[a-z0-9]{1,10}\Z"), texts),
    "description": st.one_of(texts, st.text(min_size=1, max_size=200)),
    "body": st.one_of(texts, st.text(max_size=300)),
}, optional={"frontmatter": st.one_of(st.none(), st.dictionaries(st.text(max_size=8), nested,
                                                                  max_size=3))})


@FUZZ_WRITES
@given(kwargs=skill_kwargs)
def test_create_skill_stores_what_loads_back_or_raises_invalid_input(bank, kwargs):
    from skillbank.errors import AlreadyExistsError

    name = kwargs["name"]
    try:
        skill = bank.skills.create(**kwargs)
    except AlreadyExistsError:
        assert (bank.root / "skills" / name / "SKILL.md").exists()
        return
    except InvalidInputError:
        if isinstance(name, str) and not any(c in name for c in "/\\\x00") and name not in (".", ".."):
            folder = bank.root / "skills" / name
            assert not (folder / "SKILL.md").exists() or name in bank.skills, \
                "a refused skill left a SKILL.md behind"
        return
    check_skill_reload(bank, skill)


# ------------------------------------------------------------------------------- size limits
X = lambda n: ("word " * (n // 5 + 1))[:n]  # noqa: E731

LIMITS = {
    # name: (call(bank), "refused" | max length of the stored text)
    "task": (lambda b: b.experiences.record(task=X(MAX_TEXT + 1)), "refused"),
    "task-at-limit": (lambda b: b.experiences.record(task=X(MAX_TEXT)), MAX_TEXT),
    "feedback": (lambda b: b.experiences.record(task="t", feedback=X(MAX_TEXT + 1)), "refused"),
    "when_to_use": (lambda b: b.experiences.record(task="t", when_to_use=X(MAX_SHORT + 1)), "refused"),
    "lesson": (lambda b: b.experiences.record(task="t", lessons=[X(MAX_SHORT + 1)]), "refused"),
    "tag": (lambda b: b.experiences.record(task="t", tags=[X(101)]), "refused"),
    "tags-count": (lambda b: b.experiences.record(task="t", tags=[f"t{i}" for i in range(MAX_TAGS + 1)]),
                   "refused"),
    "steps-count": (lambda b: b.experiences.record(task="t", steps=[{"action": "a"}] * (MAX_STEPS + 1)),
                    "refused"),
    "namespace": (lambda b: b.experiences.record(task="t", namespace=X(129)), "refused"),
    # A first message that long (a pasted log) gives its head as the task (hunt-li #2).
    "messages-task": (lambda b: b.experiences.record_messages([{"role": "user", "content": X(MAX_TEXT + 1)}]),
                      MAX_TEXT),
    "observation": (lambda b: b.experiences.record(task="obs", steps=[{"observation": X(3 * MAX_TEXT)}]),
                    MAX_TEXT),
    "action": (lambda b: b.experiences.record(task="act", steps=[{"action": X(3 * MAX_TEXT)}]), MAX_TEXT),
    "record-bytes": (lambda b: b.experiences.record(task="big", steps=[{"observation": X(50_000),
                                                                         "thought": X(50_000)}] * 100),
                     MAX_TEXT),
    "action-input": (lambda b: b.experiences.record(task="t", steps=[{"action": "a",
                                                                      "action_input": X(3_000_000)}]),
                     "refused"),
    "critique": (lambda b: b.guidelines.learn(X(MAX_TEXT + 1)), "refused"),
    "critique-task": (lambda b: b.guidelines.learn("Always add tests.", task=X(MAX_TEXT + 1)), "refused"),
    "critique-response": (lambda b: b.guidelines.learn("Always add tests for the parser.",
                                                       response=X(200_000)), MAX_SHORT),
    "rule": (lambda b: b.guidelines.add(X(MAX_SHORT + 1)), "refused"),
    "rule-when": (lambda b: b.guidelines.add("Always add tests", when_to_use=X(MAX_SHORT + 1)), "refused"),
    "rule-source": (lambda b: b.guidelines.add("Always add tests", source=X(201)), "refused"),
    "skill-description": (lambda b: b.skills.create("big-desc", X(1025), "b"), "refused"),
    "skill-body": (lambda b: b.skills.create("big-body", "d", X(2 << 20)), "refused"),
    "skill-resource": (lambda b: b.skills.create("big-res", "d", "b", resources={"r.txt": X(2 << 20)}),
                       "refused"),
}


@pytest.mark.parametrize("case", list(LIMITS))
def test_size_limits(bank, case):
    call, expected = LIMITS[case]
    before = sum(p.stat().st_size for p in bank.root.rglob("*.jsonl"))
    if expected == "refused":
        with pytest.raises(InvalidInputError):
            call(bank)
        after = sum(p.stat().st_size for p in bank.root.rglob("*.jsonl"))
        assert after == before, "a refused record still reached the journal"
    else:
        result = call(bank)
        if isinstance(result, str):  # an experience id
            stored = reread_experience(bank, result)
            lengths = [len(stored.task), len(stored.feedback or "")]
            lengths += [len(getattr(s, f) or "") for s in stored.steps
                        for f in ("thought", "action", "observation")]
            assert max(lengths) <= expected + 1  # + the "…" that marks a cut
            assert len(stored.model_dump_json().encode()) <= 1 << 20
        else:  # a learn report
            for gid in result.ids():
                g = bank.guidelines.get(gid)
                assert len(g.text) <= expected and Path(g.path).stat().st_size < 64 * 1024
    assert_small_files(bank.root)


# ------------------------------------------------------------------ hostile characters, one by one
HOSTILE = {
    "nul": "\x00",
    "lone-surrogate": "\ud800",
    "escape": "\x1b[2J",
    "bell": "\x07",
    "line-separator": "\u2028",
    "nel": "\x85",
    "bidi-override": "\u202e",
    "bom": "\ufeff",
}
ENTRY_POINTS = {  # (bank, hostile text, a unique word so that nothing merges or folds)
    "record-task": lambda b, s, t: ("exp", b.experiences.record(task=f"Deploy the {s} service {t}",
                                                                outcome="success")),
    "record-feedback": lambda b, s, t: ("exp", b.experiences.record(
        task=f"Deploy the service {t}", outcome="failure", feedback=f"It broke {s} again")),
    "record-observation": lambda b, s, t: ("exp", b.experiences.record(
        task=f"Run the {t} job", steps=[{"action": "run", "observation": f"output {s} end"}])),
    "record-action-input": lambda b, s, t: ("exp", b.experiences.record(
        task=f"Call the {t} tool", steps=[{"action": "call", "action_input": {"arg": f"v{s}"}}])),
    "record-messages": lambda b, s, t: ("exp", b.experiences.record_messages(
        [{"role": "user", "content": f"Deploy {t} {s} now"},
         {"role": "assistant", "content": f"Deployed {s}."}], outcome="success")),
    "learn-critique": lambda b, s, t: ("gl", b.guidelines.learn(
        f"You should always check the {s} marker {t} before deploying.")),
    "add-rule": lambda b, s, t: ("gl", b.guidelines.add(f"Always check the {s} marker {t} twice")),
    "add-when": lambda b, s, t: ("gl", b.guidelines.add(f"Always check the release marker {t}",
                                                        when_to_use=f"When {s} releasing")),
    "skill-description": lambda b, s, t: ("skill", b.skills.create(
        f"hostile-desc-{t}", f"Handles the {s} marker", "# Steps\n")),
    "skill-body": lambda b, s, t: ("skill", b.skills.create(
        f"hostile-body-{t}", "Handles the marker", f"# Steps\n\n{s}\n")),
}


@pytest.mark.parametrize("char", list(HOSTILE))
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_hostile_characters_are_refused_or_survive_a_reload(bank, entry, char):
    """Each text entry point with each hostile character: InvalidInputError, or the write is
    still there, intact, after the memory re-reads its files. Never another exception, and never
    a write that the next sync silently drops (a file it calls binary or unparseable)."""
    try:
        kind, result = ENTRY_POINTS[entry](bank, HOSTILE[char], char)
    except InvalidInputError:
        return
    if kind == "exp":
        stored = reread_experience(bank, result)
        assert stored.model_dump() == bank.experiences.get(result).model_dump()
    elif kind == "gl":
        gids = result.ids() if hasattr(result, "ids") else [result.guideline_id]
        check_guidelines_reload(bank, {gid: "" for gid in gids})
    else:
        check_skill_reload(bank, result)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


UNLOADABLE_FRONTMATTER = {
    "nested-too-deep": {"metadata": {"a": "b"}, "x-deep": _deep(MAX_DEPTH + 5)},
    "too-many-nodes": {"x-list": list(range(MAX_NODES + 10))},
    "frontmatter-too-large": {"x-notes": "n" * (70 * 1024)},
    "nested-surrogate": {"x-extra": {"note": "bad \ud800 text"}},
    "nested-nul-key": {"x-extra": {"k\x00": "v"}},
}


@pytest.mark.parametrize("case", list(UNLOADABLE_FRONTMATTER))
def test_a_skill_the_loader_would_refuse_is_never_written(bank, case):
    """create/save must not write a SKILL.md that the next load refuses (the skill would be
    written, then skipped by every sync, and create itself fails with NotFoundError): refuse it
    with InvalidInputError before writing, or write what loads back the same."""
    name = f"unloadable-{case}"
    extra = UNLOADABLE_FRONTMATTER[case]
    try:
        skill = bank.skills.create(name, "A skill with odd frontmatter", "# Steps\n",
                                   frontmatter=extra)
    except InvalidInputError:
        assert not (bank.root / "skills" / name / "SKILL.md").exists()
        assert name not in bank.skills
    else:
        assert {k: skill.frontmatter[k] for k in extra} == extra
        check_skill_reload(bank, skill)
