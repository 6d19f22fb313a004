"""Every call in its own scope (issue 22): user A's memory is never shown to user B nor changed by
B, in one process (two scoped views) and through an owner process serving a client; ids outside
a caller's scope are "not found" exactly as missing ids are; roles decide who writes and
reviews; untrusted signals stay apart; bad scopes are clear errors.

Real parts: an embedded root, a real owner in another process (subprocess) for the client rows,
the hash embedding (this is about who sees what, not retrieval quality).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from skillbank import scope as scopes
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from skillbank.scope import Role, Scope, using
from workers.common import open_bank, subprocess_env

ALICE = Scope(principal="alice", namespace="alice", role="contributor", face="test")
BOB = Scope(principal="bob", namespace="bob", role="contributor", face="test")
ALICE_UNTRUSTED = Scope(principal="alice-agent", namespace="alice", role="contributor",
                        trusted=False, face="test")
ALICE_REVIEWER = Scope(principal="alice-lead", namespace="alice", role="reviewer", face="test")
BOB_REVIEWER = Scope(principal="bob-lead", namespace="bob", role="reviewer", face="test")
SECRET = "saffron-otter"  # a word only alice's memory holds
TASK = f"Migrate the users table of the {SECRET} service"


# ---------------------------------------------------------------------------------------------
# The two ways to reach one root: scoped views in one process, or a client of an owner process
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def owner_process(root: Path) -> Iterator[subprocess.Popen]:
    """A real owner: another process that opens the root first and serves it."""
    owner = subprocess.Popen([sys.executable, "-c", """
import sys, time
from workers.common import open_bank
bank = open_bank(sys.argv[1])
print('ready', flush=True)
sys.stdin.read()
bank.close()
""", str(root)], env=subprocess_env(PYTHONPATH=str(Path(__file__).parent)),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        yield owner
    finally:
        owner.stdin.close()
        try:
            owner.wait(30)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()


@pytest.fixture(params=["one-process", "owner-and-client"])
def bank(request, tmp_path) -> Iterator[Any]:
    """A bank to take scoped views of: in process, or a client of another process."""
    root = tmp_path / "root"
    if request.param == "one-process":
        bank = open_bank(root)
        yield bank
        bank.close()
        return
    with owner_process(root) as owner:
        client = open_bank(root)
        try:
            assert client.is_remote and client.owner_pid == owner.pid
            yield client
        finally:
            client.close()


@pytest.fixture
def world(bank) -> dict[str, Any]:
    """Alice's memory: an active experience and rule, a pending (untrusted) experience and
    rule, a skill she wrote; plus the same kinds of things for bob."""
    a = bank.scoped(ALICE)
    agent = bank.scoped(ALICE_UNTRUSTED)
    w: dict[str, Any] = {"bank": bank}
    w["exp"] = a.experiences.record(task=TASK, outcome="failure",
                                     feedback=f"Lock the {SECRET} table first.",
                                     lessons=[f"Take the {SECRET} lock before migrating"])
    w["lesson"] = next(e.id for e in a.experiences.list(kind="lesson") if e.source == w["exp"])
    w["gl"] = a.guidelines.add(f"Always lock the {SECRET} table before a migration.").guideline_id
    w["pending_exp"] = agent.experiences.record(task=f"{SECRET} pending run", outcome="success")
    w["pending_gl"] = agent.guidelines.add(
        f"Never migrate the {SECRET} table on a Friday.").guideline_id
    w["skill"] = a.skills.save("alice-migrations", "Migrations of alice's service.",
                               "# Steps\n\n1. Lock.\n").name
    b = bank.scoped(BOB)
    w["bob_exp"] = b.experiences.record(task="Migrate the orders table", outcome="success")
    return w


def alice_ids(w: dict[str, Any]) -> set[str]:
    return {w["exp"], w["gl"], w["pending_exp"], w["pending_gl"]}


def same_answer_as_missing(call, real_id: str, missing_id: str) -> None:
    """`call(real_id)` fails exactly as `call(missing_id)` does: no existence oracle."""
    with pytest.raises(NotFoundError) as out_of_scope:
        call(real_id)
    with pytest.raises(NotFoundError) as missing:
        call(missing_id)
    assert str(out_of_scope.value).replace(real_id, "<id>") == \
        str(missing.value).replace(missing_id, "<id>")


MISSING = {"exp": "exp-000000000000", "gl": "gl-000000000000"}


# ---------------------------------------------------------------------------------------------
# The matrix: {one process, owner + client} x {search, recall, context, list, list_pending,
# get, rate, forget, review}
# ---------------------------------------------------------------------------------------------

def test_search_and_recall_never_cross(world):
    a, b = world["bank"].scoped(ALICE), world["bank"].scoped(BOB)
    assert world["gl"] in {h.id for h in a.guidelines.search(f"migrate the {SECRET} table")}
    assert world["exp"] in {h.id for h in a.experiences.recall(TASK)}
    assert b.guidelines.search(f"migrate the {SECRET} table") == []
    assert b.guidelines.search(f"migrate the {SECRET} table", namespace="alice") == []
    assert all(h.record.namespace == "bob" for h in b.experiences.recall(TASK))
    assert b.experiences.recall(TASK, namespace="alice") == []


def test_context_never_crosses(world):
    a, b = world["bank"].scoped(ALICE), world["bank"].scoped(BOB)
    assert {world["exp"], world["gl"]} <= set(a.context_for(TASK).ids)
    ctx = b.context_for(TASK)
    assert not set(ctx.ids) & alice_ids(world)
    assert SECRET not in ctx.text


def test_lists_never_cross(world):
    b = world["bank"].scoped(BOB)
    for namespace in (None, "*", "alice"):
        assert {e.namespace for e in b.experiences.list(namespace, limit=500,
                                                        include_retired=True)} <= {"bob"}
        assert {g.namespace for g in b.guidelines.list(namespace=namespace)} <= {"bob"}
        assert b.guidelines.counts(namespace=namespace)["pending"] == 0
    assert b.experiences.count("*") == 1
    a = world["bank"].scoped(ALICE)
    assert {world["exp"], world["lesson"]} <= {e.id for e in a.experiences.list(limit=500)}


def test_list_pending_shows_only_what_the_caller_reviews(world):
    bank = world["bank"]
    for who in (BOB, BOB_REVIEWER, ALICE, ALICE_UNTRUSTED):  # contributors see none at all
        view = bank.scoped(who)
        assert view.experiences.pending("*") == []
        assert view.guidelines.list(status="pending", namespace="*") == []
    lead = bank.scoped(ALICE_REVIEWER)
    assert {e.id for e in lead.experiences.pending("*")} == {world["pending_exp"]}
    assert {g.id for g in lead.guidelines.list(status="pending", namespace="*")} == \
        {world["pending_gl"]}


def test_get_outside_the_scope_is_not_found_like_a_missing_id(world):
    b = world["bank"].scoped(BOB)
    for key in ("exp", "pending_exp"):
        same_answer_as_missing(b.experiences.get, world[key], MISSING["exp"])
    for key in ("gl", "pending_gl"):
        same_answer_as_missing(b.guidelines.get, world[key], MISSING["gl"])
    if not getattr(world["bank"], "is_remote", False):  # `in` is not served to clients
        assert not {world[k] for k in ("exp", "pending_exp")} & \
            {k for k in (world["exp"], world["pending_exp"]) if k in b.experiences}
        assert world["gl"] not in b.guidelines and world["pending_gl"] not in b.guidelines
    assert world["bank"].scoped(ALICE).experiences.get(world["exp"]).namespace == "alice"


def test_rate_outside_the_scope_changes_nothing(world):
    bank = world["bank"]
    b = bank.scoped(BOB)
    before = bank.guidelines.get(world["gl"])
    for _ in range(4):  # four votes retired a rule before
        same_answer_as_missing(lambda i: b.rate(i, helpful=False), world["gl"], MISSING["gl"])
        same_answer_as_missing(lambda i: b.rate(i, helpful=False), world["exp"], MISSING["exp"])
        same_answer_as_missing(lambda i: b.guidelines.vote(i, helpful=False), world["gl"],
                               MISSING["gl"])
        same_answer_as_missing(lambda i: b.experiences.mark(i, helped=False), world["exp"],
                               MISSING["exp"])
    after = bank.guidelines.get(world["gl"])
    assert (after.status, after.helpful, after.harmful, after.untrusted_harmful) == \
        (before.status, before.helpful, before.harmful, before.untrusted_harmful) == \
        ("active", 0, 0, 0)
    usage = bank.experiences.get(world["exp"]).usage
    assert (usage.successes, usage.failures) == (0, 0)


def test_forget_outside_the_scope_changes_nothing(world):
    bank = world["bank"]
    b = bank.scoped(BOB)
    for key in ("exp", "pending_exp"):
        same_answer_as_missing(b.forget, world[key], MISSING["exp"])
        same_answer_as_missing(b.experiences.forget, world[key], MISSING["exp"])
    for key in ("gl", "pending_gl"):
        same_answer_as_missing(b.forget, world[key], MISSING["gl"])
    for key in ("exp", "pending_exp"):
        assert bank.experiences.get(world[key]).id == world[key]
    for key in ("gl", "pending_gl"):
        assert bank.guidelines.get(world[key]).status in ("active", "pending")
    # Skills have no namespace, but an author: bob cannot forget, rename or overwrite alice's.
    with pytest.raises(PermissionDeniedError, match="reviewer role"):
        b.forget(f"skill:{world['skill']}")
    with pytest.raises(PermissionDeniedError, match="reviewer role"):
        b.skills.rename(world["skill"], "bobs-now")
    with pytest.raises(PermissionDeniedError, match="reviewer role"):
        b.skills.save(world["skill"], "Bob's version.", "# Bob\n")
    skill = bank.skills.load(world["skill"])
    assert skill.description == "Migrations of alice's service." and \
        skill.frontmatter["metadata"]["skillbank-author"] == "alice"


def test_review_outside_the_scope_changes_nothing(world):
    bank = world["bank"]
    other = bank.scoped(BOB_REVIEWER)
    for verb in ("approve", "reject"):
        same_answer_as_missing(getattr(other.experiences, verb), world["pending_exp"],
                               MISSING["exp"])
        same_answer_as_missing(getattr(other.guidelines, verb), world["pending_gl"],
                               MISSING["gl"])
    assert bank.experiences.get(world["pending_exp"]).status == "pending"
    assert bank.guidelines.get(world["pending_gl"]).status == "pending"
    # Alice's own contributors may not decide either, and are not told the pending item
    # exists: not found too (a permission error "needs the reviewer role" was, session 33).
    same_answer_as_missing(bank.scoped(ALICE).experiences.approve, world["pending_exp"],
                           MISSING["exp"])
    same_answer_as_missing(bank.scoped(ALICE_UNTRUSTED).guidelines.approve,
                           world["pending_gl"], MISSING["gl"])
    # Her reviewer may.
    lead = bank.scoped(ALICE_REVIEWER)
    assert lead.experiences.approve(world["pending_exp"])["status"] == "active"
    assert lead.guidelines.reject(world["pending_gl"]).status == "retired"


# ---------------------------------------------------------------------------------------------
# Roles, writes, defaults
# ---------------------------------------------------------------------------------------------

def test_writes_go_to_the_callers_namespace_and_readers_write_nothing(bank):
    a = bank.scoped(ALICE)
    ids = a.experiences.record_many([{"task": "first alice task"}, {"task": "second alice task"}])
    eid = a.experiences.record_messages([{"role": "user", "content": "alice asks a thing"}])
    for record_id in (*ids, eid):
        assert bank.experiences.get(record_id).namespace == "alice"
    assert bank.guidelines.get(a.guidelines.learn(
        "Always add a rollback script to a migration.").ids()[0]).namespace == "alice"
    with pytest.raises(PermissionDeniedError, match="writes only to namespace 'alice'"):
        a.experiences.record(task="into bob's memory", namespace="bob")
    with pytest.raises(PermissionDeniedError, match="writes only to namespace 'alice'"):
        a.experiences.record_many([{"task": "into bob's memory", "namespace": "bob"}])
    reader = bank.scoped(Scope(principal="viewer", namespace="alice", role=Role.READER))
    assert {e.id for e in reader.experiences.list(limit=10)} >= set(ids)
    for write in (lambda: reader.experiences.record(task="a reader writes"),
                  lambda: reader.guidelines.add("Always read only."),
                  lambda: reader.rate(ids[0], helpful=True),
                  lambda: reader.skills.save("reader-skill", "A reader's skill.", "# x\n")):
        with pytest.raises(PermissionDeniedError, match="reader"):
            write()
    assert not any(e.task == "a reader writes" for e in bank.experiences.list("*", limit=100))


def test_shared_namespaces_are_read_not_written(bank):
    lead = bank.scoped(Scope(principal="lead", namespace="team", role="contributor"))
    rule = lead.guidelines.add("Announce every migration in the team channel.").guideline_id
    alice = bank.scoped(Scope(principal="alice", namespace="alice", reads=("team",),
                              role="contributor"))
    assert rule in {h.id for h in alice.guidelines.search("announce a migration")}
    assert alice.guidelines.get(rule).namespace == "team"
    with pytest.raises(PermissionDeniedError):
        alice.guidelines.add("Never announce anything.", namespace="team")
    with pytest.raises(PermissionDeniedError, match="reviewer"):
        alice.forget(rule)  # read, but not hers to delete
    assert bank.guidelines.get(rule).status == "active"


def test_the_banks_own_default_is_the_local_user_as_before(bank):
    """No scope active: the bank's namespace for None, any namespace named explicitly."""
    eid = bank.experiences.record(task="default task", namespace="ops")
    assert bank.experiences.get(eid).namespace == "ops"
    assert bank.experiences.list() == [] and len(bank.experiences.list("*")) == 1
    assert bank.caller_scope().role is Role.ADMIN
    assert bank.forget(eid)["forgotten"]


def test_background_jobs_run_as_the_caller_that_queued_them(tmp_path):
    bank = open_bank(tmp_path / "root")
    try:
        seen: list[str] = []
        gate = threading.Event()
        with using(ALICE):
            bank.background.submit(gate.wait, 10)
            bank.background.submit(lambda: seen.append(scopes.current().principal))
            bank.background.submit(bank.experiences.record, task="queued by alice")
        with using(BOB):
            bank.background.submit(lambda: seen.append(scopes.current().principal))
        gate.set()
        assert bank.flush(30)
        assert seen == ["alice", "bob"]
        assert [e.namespace for e in bank.experiences.list("*")] == ["alice"]
    finally:
        bank.close()


def bank_user(bank) -> str:
    """The principal the bank's own calls run as (its local user)."""
    return bank.caller_scope().principal


def test_untrusted_votes_never_move_trusted_state_until_accepted(tmp_path):
    bank = open_bank(tmp_path / "root")
    try:
        eid = bank.experiences.record(task="Rotate the signing keys", outcome="success")
        for _ in range(3):
            bank.experiences.recall("Rotate the signing keys")
        bank.rate(eid, helpful=True)
        bank.rate(eid, helpful=False, trusted=False)
        anonymous = bank.scoped(Scope(principal="anon", namespace="default", reads=("*",),
                                      role="contributor", trusted=False))
        for _ in range(5):
            anonymous.rate(eid, helpful=False)
            anonymous.experiences.recall("Rotate the signing keys")
        usage = bank.experiences.get(eid).usage
        assert (usage.successes, usage.failures, usage.uses) == (1, 0, 3)
        assert bank.experiences.prune(dry_run=True) == []  # never a prune candidate
        untrusted = bank.experiences.usage.untrusted(eid)
        assert (untrusted.failures, untrusted.uses) == (6, 1)  # anon's uses once (review1 #1)
        # Skills: thirty untrusted up-votes do not re-rank inside a trusted session.
        bank.skills.save("keys-rotation", "Rotate signing keys.", "# Steps\n")
        for _ in range(30):
            bank.rate("skill:keys-rotation", helpful=True, trusted=False)
        assert bank.skills.usage.prior("keys-rotation") == 0.0
        with pytest.raises(PermissionDeniedError):
            bank.scoped(ALICE).accept_votes("skill:keys-rotation")
        # Accepted, each principal's votes count once, as an outsider's (hunt-trust #2,
        # session 30: they counted 30 and 6).
        accepted = bank.accept_votes("skill:keys-rotation")
        assert accepted["usage"]["successes"] == 1 and bank.skills.usage.prior("keys-rotation") > 0
        assert bank.experiences.usage.untrusted(eid).outside == {"anon": -5, bank_user(bank): -1}
        accepted = bank.accept_votes(eid)
        assert accepted["usage"]["failures"] == 2  # anon's five and the local user's one
    finally:
        bank.close()
    reopened = open_bank(tmp_path / "root")  # the log replays the same way
    try:
        assert reopened.experiences.get(eid).usage.failures == 2
        assert reopened.skills.usage.untrusted("keys-rotation").successes == 0
    finally:
        reopened.close()


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad, message", [
    ({"principal": "x", "role": "owner"}, "invalid role 'owner'"),
    ({"principal": "x", "namespace": ""}, "invalid namespace"),
    ({"principal": "x", "namespace": "a\nb"}, "invalid namespace"),
    ({"principal": "x", "namespace": "*"}, "every namespace"),
    ({"principal": "x", "reads": "team"}, "reads must be a list"),
    ({"principal": "x", "reads": ["ok", " padded "]}, "invalid namespace"),
    ({"principal": "x", "trusted": "yes"}, "trusted must be"),
    ({"principal": "", "namespace": "a"}, "invalid principal"),
    ({"principal": "x", "admin": True}, "unknown scope fields: admin"),
    ("alice", "a scope must be an object"),
])
def test_malformed_scopes_are_clear_errors(bad, message):
    with pytest.raises(InvalidInputError, match=message):
        Scope.from_wire(bad)


def test_a_malformed_scope_on_the_wire_is_refused_by_the_owner(tmp_path):
    from skillbank.sharing import owner

    bank = open_bank(tmp_path / "root")
    try:
        call = {"target": "experiences", "op": "call", "name": "list", "args": [], "kwargs": {}}
        with pytest.raises(InvalidInputError, match="invalid role"):
            owner.dispatch(bank, {**call, "scope": {"principal": "x", "role": "root"}})
        with pytest.raises(InvalidInputError, match="scope"):
            owner.dispatch(bank, call)  # no scope at all: never the owner's own
        assert owner.dispatch(bank, {**call, "scope": BOB.to_wire()}) == []
    finally:
        bank.close()


def test_invalid_namespaces_and_views(bank):
    with pytest.raises(InvalidInputError, match="invalid namespace"):
        bank.scoped(ALICE).experiences.recall("x", namespace="\x00")
    with pytest.raises(InvalidInputError, match="expected a skillbank Scope"):
        bank.scoped({"principal": "alice"})
    assert Scope.from_wire(ALICE.to_wire()) == ALICE


# ---------------------------------------------------------------------------------------------
# Property: two users' calls interleaved through an owner and a client never read across scopes
# ---------------------------------------------------------------------------------------------

WORDS = ["invoice", "migration", "backup", "release", "rollback", "cache", "deploy", "audit"]


@pytest.fixture(scope="module")
def owner_and_client(tmp_path_factory):
    """An owner bank and a client of it (over the root's socket), shared by the examples."""
    root = tmp_path_factory.mktemp("prop") / "root"
    owner = open_bank(root)
    client = open_bank(root)
    assert client.is_remote
    known: dict[str, list[str]] = {"alice": [], "bob": []}
    yield owner, client, known
    client.close()
    owner.close()


OPS = st.tuples(st.sampled_from(["alice", "bob"]), st.sampled_from(["owner", "client"]),
                st.sampled_from(["record", "add", "recall", "search", "context", "list",
                                 "pending", "get", "rate"]),
                st.lists(st.sampled_from(WORDS), min_size=2, max_size=4), st.integers(0, 50))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, min_size=1, max_size=10))
def test_interleaved_users_never_read_across_scopes(owner_and_client, ops):
    owner, client, known = owner_and_client
    scopes_of = {"alice": ALICE, "bob": BOB}
    for user, via, op, words, pick in ops:
        other = "bob" if user == "alice" else "alice"
        view = (owner if via == "owner" else client).scoped(scopes_of[user])
        text = " ".join(words)
        if op == "record":
            known[user].append(view.experiences.record(task=f"{user} {text}", outcome="success"))
        elif op == "add":
            known[user].append(view.guidelines.add(f"Always check the {text} twice.").guideline_id)
        elif op == "recall":
            assert {h.record.namespace for h in view.experiences.recall(text, k=20)} <= {user}
        elif op == "search":
            assert {h.record.namespace for h in view.guidelines.search(text, k=20)} <= {user}
        elif op == "context":
            ids = set(view.context_for(text).ids)
            assert not ids & set(known[other])
        elif op == "list":
            assert {e.namespace for e in view.experiences.list("*", limit=500)} <= {user}
            assert {g.namespace for g in view.guidelines.list(namespace="*")} <= {user}
        elif op == "pending":
            assert view.experiences.pending("*") == []
        elif op in ("get", "rate") and known[other]:
            target = known[other][pick % len(known[other])]
            with pytest.raises(NotFoundError):
                if op == "get":
                    (view.guidelines.get if target.startswith("gl-")
                     else view.experiences.get)(target)
                else:
                    view.rate(target, helpful=False)
    for user in ("alice", "bob"):  # and nothing of either was changed by the other
        for item in known[user]:
            if item.startswith("gl-"):
                assert owner.guidelines.get(item).harmful == 0
            else:
                assert owner.experiences.get(item).usage.failures == 0


def test_scope_rules_in_isolation():
    team = Scope(principal="alice", namespace="alice", reads=("team",), role="contributor")
    assert team.read_namespaces(None) == ("alice", "team")
    assert team.read_namespaces("*") == ("alice", "team")
    assert team.read_namespaces("bob") == ()
    assert team.write_namespace(None) == "alice"
    assert team.reviewable == () and not team.can_review("alice")
    admin = scopes.default_scope("default")
    assert admin.read_namespaces(None) == ("default",) and admin.read_namespaces("*") == ("*",)
    assert admin.write_namespace("ops") == "ops" and admin.can_review("anything")
    # trusted=False narrows a call, never widens one; an untrusted scope reviews nothing.
    with using(team.untrusted()):
        assert scopes.caller("default", True).trusted is False
    assert scopes.caller("default", False).trusted is False
    assert not scopes.default_scope("x").untrusted().can_review("x")
    # A face's namespace narrows only the bank's own default, never an active caller's scope.
    assert scopes.narrowed("bob").principal == "bob" and scopes.narrowed(None) is None
    with using(ALICE):
        assert scopes.narrowed("bob") is None
    assert scopes.covers(("*",), "x") and not scopes.covers(("a",), "x")
    assert scopes.where(("*",)) is None and scopes.where(("a",)) == {"namespace": "a"}


def test_clients_opened_with_a_namespace_keep_it_on_every_call(tmp_path):
    """Issue 22's first finding: a client's namespace was dropped by calls without a namespace
    parameter (record_many, record_messages, import_), so bob's context showed alice's run."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    with owner_process(root):
        alice = Skillbank.open(root, embedding_function=HashEmbedding(), namespace="alice")
        bob = Skillbank.open(root, embedding_function=HashEmbedding(), namespace="bob")
        try:
            assert alice.is_remote and bob.is_remote
            ids = alice.experiences.record_many([{"task": TASK, "outcome": "failure",
                                                  "feedback": f"{SECRET} lock forgotten"}])
            ids.append(alice.experiences.record_messages(
                [{"role": "user", "content": f"{SECRET} second run"}]))
            lines = tmp_path / "runs.jsonl"  # lines that name no namespace
            lines.write_text('{"task": "imported run", "outcome": "success"}\n')
            assert {e.namespace for e in alice.experiences.list("*")} == {"alice"}
            assert bob.experiences.list() == [] and bob.experiences.recall(TASK) == []
            assert SECRET not in bob.context_for(TASK).text
            report = bob.experiences.import_(lines)  # import_ follows bob's namespace
            assert report.added and [e.namespace for e in bob.experiences.list()] == ["bob"]
            assert SECRET in alice.context_for(TASK).text
        finally:
            alice.close()
            bob.close()


def test_skill_drafts_wait_for_a_reviewer(tmp_path):
    bank = open_bank(tmp_path / "root")
    try:
        reader = bank.scoped(Scope(principal="viewer", namespace="alice", role="reader"))
        with pytest.raises(PermissionDeniedError, match="contributor role"):
            reader.skills.propose()
        for verb, call in (("adopting", lambda v: v.skills.adopt("any-draft")),
                           ("discarding", lambda v: v.skills.discard("any-draft")),
                           ("restoring", lambda v: v.skills.restore("any-skill", "v1"))):
            with pytest.raises(PermissionDeniedError, match=f"{verb}.*reviewer role"):
                call(bank.scoped(ALICE))
            with pytest.raises(PermissionDeniedError, match="reviewer role"):
                call(bank.scoped(ALICE_REVIEWER.untrusted()))
    finally:
        bank.close()
