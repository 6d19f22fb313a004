"""During a Chroma outage the memory block keeps a clearly relevant rule of another topic family
that search still finds (hunt-lxteam #3, session 37).

Users met this: Chroma down, reads answering by keyword; "Always renew the gateway TLS
certificate with certbot staging first." (infra, model cosine 0.75 to the task) was found by
`guidelines.search` but left out of `context_for` (the memory block, the `memory_context` tool)
once a critique learnt during the outage filed a rule under `code`: a keyword-only hit has no
dense score, so the "cosine >= 0.5 keeps another family's rule" admission never applied. The
block now computes that cosine with the model in this process. Real `chroma run` server and
the real all-MiniLM-L6-v2 model.
"""

from __future__ import annotations

from skillbank import Skillbank
from test_chroma_outage import own_chroma  # noqa: F401 - a fixture

TASK = "Renew the TLS certificate of the public API gateway"
INFRA_RULE = "Always renew the gateway TLS certificate with certbot staging first."
OFF_RULE = "Always proofread the public announcement before you send it to the press."


def rules_shown(bank: Skillbank) -> list[str]:
    context = bank.context_for(TASK, namespace="alice")
    return sorted(bank.guidelines.get(i).text for i in context.ids if i.startswith("gl-"))


def test_the_block_keeps_another_familys_clear_match_while_chroma_is_down(
        tmp_path, own_chroma, minilm):  # noqa: F811 - the fixture
    with Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False,
                        chroma_url=own_chroma.url, chroma_timeout=5) as bank:
        bank.guidelines.add(INFRA_RULE, namespace="alice")
        bank.guidelines.add(OFF_RULE, namespace="alice")  # a shared word, another domain
        assert rules_shown(bank) == [INFRA_RULE]
        own_chroma.stop()
        learnt = bank.guidelines.learn("Never renew the gateway certificate on a Friday.",
                                       task=TASK, namespace="alice").ids()[0]
        found = bank.guidelines.search(TASK, namespace="alice")
        assert all(h.why == "keyword" for h in found)  # the outage: keyword only
        assert INFRA_RULE in [h.record.text for h in found]
        assert OFF_RULE in [h.record.text for h in bank.guidelines.search_candidates(
            TASK, k=40, namespace="alice")]  # a candidate of the block, by a shared word
        assert bank.guidelines.get(learnt).topic != bank.guidelines.search(
            "certbot staging", namespace="alice")[0].record.topic  # two families
        shown = rules_shown(bank)
        assert INFRA_RULE in shown and bank.guidelines.get(learnt).text in shown
        assert OFF_RULE not in shown  # no clear match: the family filter still holds
