"""The LlamaIndex retriever: skills, guidelines or experiences as `NodeWithScore`s.

Its own module because it shares nothing with the memory block or the tool spec but the
namespace resolution (`_li_namespace`); `skillbank.adapters.llamaindex` re-exports it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, List

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from skillbank.adapters._li_namespace import (
    _RESOLVED,
    _SESSION,
    _namespace_failed,
    resolve_namespace,
    step_session,
)
from skillbank.adapters._runs import template_fields
from skillbank.errors import InvalidInputError
from skillbank.retrieved_documents import normalise_kind, retrieve
from skillbank.scope import narrowed, using

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

FACE = "llamaindex"


_OPERATORS = {"==": None, "!=": "$ne", "in": "$in", "nin": "$nin"}


def _filters(filters: Any) -> dict[str, Any] | None:
    """LlamaIndex `MetadataFilters` (AND of ==, !=, in, nin) or a plain dict, as a dict."""
    if filters is None or isinstance(filters, dict):
        return filters
    condition = str(getattr(getattr(filters, "condition", None), "value", "and") or "and")
    if condition != "and":
        raise InvalidInputError("only AND metadata filters are supported")
    out: dict[str, Any] = {}
    for item in getattr(filters, "filters", []):
        if not hasattr(item, "key"):
            raise InvalidInputError("nested metadata filters are not supported")
        operator = str(getattr(item.operator, "value", item.operator))
        if operator not in _OPERATORS:
            raise InvalidInputError(f"unsupported filter operator {operator!r}; use "
                                    f"{list(_OPERATORS)}")
        op = _OPERATORS[operator]
        out[item.key] = item.value if op is None else {op: item.value}
    return out


def _top_k(value: Any) -> int:
    """How many nodes a retriever returns: 5 for None, else a positive whole number. A 0 was
    read as "not given" and returned 5 (hunt-rag #7, session 24), where the LangChain
    retriever refuses it: a computed top-k of 0 ("no memory for this step") got memory."""
    if value is None:
        return 5
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"similarity_top_k (or k) must be a positive whole number, not "
                                f"{value!r}; leave it out (None) for the default, 5")
    return value


class SkillbankRetriever(BaseRetriever):
    """Skills, guidelines or experiences for a query, as `NodeWithScore`s.

    ``SkillbankRetriever(bank, kind=..., similarity_top_k=5, filters=...)`` (``k`` is the same
    as ``similarity_top_k``). Node ids are the memory ids (``skill:<name>``, ``gl-…``, ``exp-…``
    / ``lsn-…``); the text is what the LLM reads (a skill's instructions too with
    ``include_body=True``); metadata (kind, score, why, outcome, topic, tags…) can be filtered
    on with `MetadataFilters` or a dict and is kept out of the LLM's view except ``kind``.

    ``NodeWithScore.score`` is in [0, 1], higher is closer (a skill's fit probability, a
    guideline's or experience's `Hit.relevance`: its own text ~1); the order is the memory's
    ranking (metadata ``rank_score``). Experiences say each fact once and a retrieval counts
    no use (docs/api.md, "Adapters"; hunt-rag #3-#5, session 24).
    """

    def __init__(self, bank: "Skillbank", kind: str = "skills", k: int | None = None,
                 namespace: str | None = None, *, similarity_top_k: int | None = None,
                 filters: Any = None, include_body: bool = False, **kwargs: Any) -> None:
        # Not a pydantic model: attributes go in before the base initialiser runs.
        if k is not None and similarity_top_k is not None and k != similarity_top_k:
            raise InvalidInputError("give k or similarity_top_k, not both")
        template_fields(namespace)  # a malformed template fails here, not mid-run
        self.bank = bank
        self.kind = normalise_kind(kind)
        self.similarity_top_k = _top_k(k if similarity_top_k is None else similarity_top_k)
        self.namespace = namespace
        self.filters = _filters(filters)
        self.include_body = include_body
        super().__init__(**kwargs)

    @property
    def k(self) -> int:
        return self.similarity_top_k

    def __repr__(self) -> str:
        return (f"SkillbankRetriever(bank={self.bank!r}, kind={self.kind!r}, "
                f"similarity_top_k={self.similarity_top_k}, namespace={self.namespace!r}, "
                f"filters={self.filters!r}, include_body={self.include_body})")

    def __deepcopy__(self, memo: dict[int, Any]) -> "SkillbankRetriever":
        import copy

        return SkillbankRetriever(self.bank, self.kind, namespace=self.namespace,
                                  similarity_top_k=self.similarity_top_k,
                                  filters=copy.deepcopy(self.filters, memo),
                                  include_body=self.include_body)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        namespace = self.namespace
        if template_fields(namespace):  # "{user_id}": filled by `_aretrieve` in a workflow step
            namespace = _RESOLVED.get()
            if namespace is None:
                _namespace_failed(InvalidInputError(
                    f"namespace template {self.namespace!r} has no value: retrieve with "
                    "aretrieve inside a workflow step whose Context store holds it"))
                return []
        with using(narrowed(namespace, face=FACE)):  # "{user_id}": that principal's alone
            found = retrieve(self.bank, self.kind, query_bundle.query_str, self.similarity_top_k,
                             namespace=namespace, filters=self.filters,
                             include_body=self.include_body, exclude_thread=_SESSION.get())
        nodes = []
        for node_id, text, metadata, score in found:
            hidden = [key for key in metadata if key != "kind"]
            node = TextNode(id_=node_id, text=text, metadata=metadata,
                            excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=hidden)
            nodes.append(NodeWithScore(node=node, score=score))
        return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        # The session of the agent run calling it (a `RetrieverTool` of a `FunctionAgent`): its
        # open record is no past experience, as the tool spec leaves it out; a retriever tool
        # served an agent its own unfinished record (hunt-threads #4, session 38).
        session = _SESSION.set(await step_session())
        try:
            return await self._aretrieve_in_session(query_bundle)
        finally:
            _SESSION.reset(session)

    async def _aretrieve_in_session(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        if template_fields(self.namespace):
            try:
                namespace = await resolve_namespace(self.namespace)
            except InvalidInputError as exc:
                _namespace_failed(exc)
                return []  # no memory rather than a shared namespace's
            token = _RESOLVED.set(namespace)
            try:
                return await asyncio.to_thread(self._retrieve, query_bundle)
            finally:
                _RESOLVED.reset(token)
        return await asyncio.to_thread(self._retrieve, query_bundle)
