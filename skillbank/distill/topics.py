"""Topics (``TOPIC_KEYWORDS``, :func:`guess_topic`), task kinds and ``when_to_use`` lines."""

from __future__ import annotations

import re

from skillbank.distill.morphology import _gerund
from skillbank.distill.sentences import _PH_RE, split_sentences
from skillbank.distill.text import _words
from skillbank.distill.vocabulary import (_DETERMINERS, _LIGHT_WORDS, _STOPWORDS, _VERBS,
                                          SETTING_LEADS)
from skillbank.records import MAX_SHORT


#: topic slug -> (description used in when_to_use, weight, keyword pattern). Small and generic:
#: a rough domain guess for filing guidelines, not a classifier. Ties go to the earlier row.
TOPIC_KEYWORDS: tuple[tuple[str, str, float, str], ...] = (
    (
        "python",
        "writing or reviewing Python code",
        1.0,
        r"python|pip|pytest|pep ?8|mypy|dataclass(?:es)?|docstrings?|type hints?|type annotations?"
        r"|def|django|flask|fastapi|pandas|asyncio|decorators?|f-strings?|venv|kwargs|__init__"
        r"|tracebacks?|context managers?|except",
    ),
    (
        "javascript",
        "writing or reviewing JavaScript or TypeScript code",
        1.0,
        r"javascript|typescript|js|ts|node(?:js)?(?! (?:groups?|pools?))|npm|react|vue|eslint|jsx|tsx|console\.log",
    ),
    (
        "sql",
        "writing or reviewing SQL queries",
        1.0,
        r"sql|select|joins?|quer(?:y|ies)|ctes?|subquer(?:y|ies)|where clause|group by|order by"
        r"|indexes|schemas?|postgres(?:ql)?|mysql|sqlite|bigquery|snowflake|nulls?|primary keys?"
        r"|foreign keys?|(?<!markdown )(?<!html )tables?|columns?",
    ),
    (
        "data",
        "analysing data and reporting results",
        1.0,
        r"analys(?:is|es|e|ing)|metrics?|sample sizes?|confidence intervals?|intervals?"
        r"|significan(?:t|ce)|p-values?|regression|correlat(?:ion|ed)|causa(?:l|tion)|cohorts?"
        r"|dashboards?|datasets?|statistic(?:s|al)?|averages?|medians?|percentiles?"
        r"|a/b tests?|experiments?|kpis?|trends?|segments?|denominators?|rates?",
    ),
    (
        "writing",
        "writing or editing documentation and prose",
        1.0,
        r"documentation|docs|readmes?|paragraphs?|sentences?|spelling|grammar|prose|articles?"
        r"|headings?|wording|style guides?|tutorials?|guides?|acronyms?|jargon|readers?|blog"
        r"|essays?|copywriting|punctuation|glossary|passive voice|pages?|intro(?:duction)?s?"
        r"|markdown|release notes|changelogs?",
    ),
    (
        "support",
        "replying to customers in support conversations",
        1.0,
        r"customers?|tickets?|repl(?:y|ies)|refunds?|apolog\w*|support|agents?|escalat\w*"
        # "billing" alone names a system as often as a customer matter ("Every deploy of the
        # billing service needs a rollback plan." was filed as support, hunt-lcteam #1, session
        # 36): only billing questions, issues and disputes are support.
        r"|sign-?offs?|inquir(?:y|ies)|complaints?|empathy|csat|discounts?|coupons?"
        r"|vouchers?|billing (?:questions?|issues?|disputes?|inquir(?:y|ies)|problems?|concerns?)",
    ),
    (
        "slides",
        "designing slides or presentation decks",
        1.0,
        r"slides?|decks?|presentations?|fonts?|\d+ ?pt|bullets?|charts?|speaker notes|audience"
        r"|titles?|legends?|axis|axes|colou?rs?|contrast|visuals?|graphs?|keynote|powerpoint",
    ),
    (
        # Terraform rules were filed as sql ("... in .tf files", the task named Postgres) or
        # javascript, and served for SQL and React tasks (learning-loop hunt #10).
        "infra",
        "changing infrastructure as code or deployments",
        1.0,
        r"terraform|tf|tfvars|hcl|ansible|playbooks?|kubernetes|k8s|kubectl|helm|dockerfiles?"
        r"|docker|cloudformation|pulumi|infrastructure|iac|provisioners?|load balancers?|vpcs?"
        r"|iam|ec2|rds|s3|gcs|nginx|eks|gke|aks|node (?:groups?|pools?)|pods?",
    ),
    (
        # "Keep the abstract under 200 words" was filed as slides (learning-loop hunt #10).
        "academic",
        "writing academic papers and abstracts",
        1.0,
        r"abstracts?|manuscripts?|papers?|journals?|peer reviews?|bibliograph(?:y|ies)|apa|mla"
        r"|literature reviews?|hypothes[ie]s",
    ),
    (
        "code",
        "writing or reviewing code",
        0.5,
        # "code", but not a discount, promo, coupon, gift, zip or postal code
        r"(?<!discount )(?<!promo )(?<!coupon )(?<!gift )(?<!zip )(?<!postal )(?<!voucher )code"
        r"|functions?|variables?|class(?:es)?|methods?|tests?|bugs?|exceptions?|errors?"
        r"|logging|loggers?|refactor\w*|commits?|apis?|endpoints?|modules?|librar(?:y|ies)"
        r"|dependenc(?:y|ies)|lint\w*|compil\w*|loops?|git|pull requests?|scripts?|snippets?",
    ),
)
#: Words that file a rule by the rule's own text only. The deployments the infra row's
#: description names: a deploy or rollback rule had no infra word and went to whatever the rest
#: of its words said ("Every deploy of the billing service needs a rollback plan." was filed as
#: support, hunt-lcteam #1, session 36). In a task or a critique the same words name what other
#: work is about ("Write a tutorial on deploying the service", "Document the `acme deploy`
#: command"): counted there, they filed writing rules as infra and the learning loop's no-model
#: arm prevented 7 fewer of 162 repeated mistakes (benchmarks/learning_loop.py, session 36).
RULE_ONLY_WORDS: tuple[tuple[str, str], ...] = (
    ("infra", r"(?:re)?deploy(?:s|ed|ing|ments?)?|rollbacks?|roll(?:s|ed|ing)? (?:it |them )?back"
              r"|rollouts?|(?<!\.)(?<!press )releases?(?! notes)(?!\()|downtime|outages?"
              r"|staging"),
)
_RULE_ONLY_RES = tuple(
    (slug, re.compile(rf"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])", re.I))
    for slug, pattern in RULE_ONLY_WORDS
)
def rule_only_topic(name: str) -> str | None:
    """The topic a named topic outside the vocabulary means when it is one of `RULE_ONLY_WORDS`
    ("deploy", "deployments", "rollback" -> infra), else None: a rule a person filed under
    "deploy" is a deploy rule, and the block kept it from "deploy the billing service" beside
    an infra rule of the same matter (session 36)."""
    words = " ".join((name or "").replace("-", " ").replace("_", " ").split())
    return next((slug for slug, rx in _RULE_ONLY_RES if rx.fullmatch(words)), None)


_TOPIC_RES = tuple(
    (slug, desc, weight, re.compile(rf"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])", re.I))
    for slug, desc, weight, pattern in TOPIC_KEYWORDS
)
_TOPIC_DESC = {slug: desc for slug, desc, _, _ in TOPIC_KEYWORDS}
_TOPIC_DESC["general"] = "doing any task"

#: Topics that are kinds of a broader one: a Python rule and a "code" rule both belong to a
#: code task, an SQL rule and a data-analysis rule to an analysis task. The keyword guess
#: often files one rule of a domain under the narrow topic and its neighbour under the broad
#: one ("Add type hints ..." python, "Give public functions docstrings ..." code), so a block
#: that keeps to the task's topics compares families, not slugs.
TOPIC_FAMILY = {"python": "code", "javascript": "code", "sql": "data", "academic": "writing"}


def topic_family(topic: str | None) -> str:
    """The broader topic `topic` belongs to (itself when it has none)."""
    topic = topic or "general"
    return TOPIC_FAMILY.get(topic, topic)


_LEADING_SETTING = re.compile(rf"^(?:{'|'.join(SETTING_LEADS)})\s+([^,]{{2,80}}),", re.I)


def guess_topic(rule: str, task: str | None = None, context: str | None = None, *,
                own_words: str | None = None) -> str:
    """A short topic slug from keyword hits (rule counts most, then task, then context).

    The rule's own words decide only through their weight, not alone: ranking the rule's hits
    first (task and critique as tie-breakers) filed fewer rules where their critiques' tasks
    are looked for (critique stream, dev, ``benchmarks/guidelines.py`` Recall@5 0.536 ->
    0.488), so the sum stays. A leading setting of the rule ("In commit messages, always
    reference the ticket number.") counts three times: it says where the rule holds (the ticket
    filed that rule under support). "Use markdown tables ..." is filed under writing by its own
    words: a markdown or HTML table is not an SQL table (see ``TOPIC_KEYWORDS``).
    `RULE_ONLY_WORDS` count in `own_words` only (default: `rule`; the block's family guess reads
    a rule with its ``when_to_use``, whose task kind names what other work was about: "When
    writing a tutorial on deploying the service")."""
    best, best_score = "general", 0.0
    lead = _LEADING_SETTING.match(rule or "")
    setting = lead.group(1) if lead else ""  # "In commit messages, ...": where the rule holds
    own = rule if own_words is None else own_words
    rule_only = {slug: len(rx.findall(own or "")) for slug, rx in _RULE_ONLY_RES}
    for slug, _, weight, rx in _TOPIC_RES:
        score = weight * (
            3 * (len(rx.findall(rule or "")) + rule_only.get(slug, 0))
            + 6 * len(rx.findall(setting))
            + 2 * len(rx.findall(task or ""))
            + 1 * len(rx.findall(context or ""))
        )
        if score > best_score:
            best, best_score = slug, score
    return best


def _slug(value: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", (value or "").lower()).strip("-")
    return s[:40].strip("-")


# Task kinds and when_to_use ----------------------------------------------------------------


def _task_kind(task: str | None, *, max_words: int = 14) -> str:
    """'Write a FAQ entry on X.' -> 'writing a FAQ entry on X' (a gerund phrase, one line)."""
    if not task or not task.strip():
        return ""
    first = split_sentences(task.strip())
    text = (first[0] if first else task).strip()
    text = re.sub(r"\s+", " ", text).rstrip(" .!?:;")
    text = re.sub(r"^(?:please|task:|your task is to|you are asked to|help me|can you|could you)\s+", "", text, flags=re.I)
    words = text.split()
    if not words:
        return ""
    if len(words) > max_words:
        words = words[:max_words]
        while words and words[-1].lower() in _STOPWORDS:
            words.pop()
        words[-1] = words[-1].rstrip(",;:")
    head = words[0].lower().strip(",")
    second = words[1].lower() if len(words) > 1 else ""
    # An unknown first word followed by a determiner is almost always a verb: "Deploy the app".
    looks_like_verb = head.isalpha() and second in _DETERMINERS | {"my", "this", "that", "these", "those", "their", "his", "her", "its"}
    if looks_like_verb or head in _VERBS or head in ("draft", "create", "build", "design", "debug", "investigate",
                                  "analyse", "analyze", "compute", "find", "prepare", "generate",
                                  "make", "produce", "implement", "draw", "respond", "reply"):
        words = [_gerund(head)] + words[1:]
        return " ".join(words)
    return "working on: " + " ".join(words)


#: An "about" word longer than this is clipped: a 1,400-character Chinese rule is one run of
#: word characters, and its `when_to_use` was the whole run (hunt-i18n #10).
MAX_KEYWORD = 40


def _keywords(text: str, limit: int = 4) -> list[str]:
    from skillbank.distill.language import _FOREIGN, _INSTRUCTION, not_english

    # German or French function words and instruction markers say nothing of a rule ("about
    # bitte, gib, zitate, immer", "about mets, jamais, mots, passe").
    foreign = _FOREIGN | _INSTRUCTION if not_english(text) else frozenset()
    out: list[str] = []
    skip_first = True
    for w in _words(_PH_RE.sub(" ", text)):
        lw = w.lower().strip("'’-")[:MAX_KEYWORD]
        if lw in foreign:
            continue
        if skip_first:
            skip_first = False
            if lw in _VERBS or lw in ("always", "never", "do"):
                continue
        if len(lw) < 3 or lw in _STOPWORDS or lw in _VERBS and lw in _LIGHT_WORDS or lw.isdigit():
            continue
        if lw in ("not",):
            continue
        if lw not in out:
            out.append(lw)
        if len(out) >= limit:
            break
    return out


def _when_to_use(rule: str, topic: str, task: str | None) -> str:
    from skillbank.distill.standalone import task_kind

    desc = _TOPIC_DESC.get(topic, _TOPIC_DESC["general"])
    kind = _task_kind(task)
    # The kind of task, not the one task ("summarising a news article", not "... about the new
    # climate bill"): a rule's "when" must fit the next task of its kind.
    if kind.startswith("working on: "):
        kind = "working on: " + task_kind(kind[len("working on: "):])
        kind = "" if kind == "working on: " else kind
    else:
        kind = task_kind(kind)
    if topic == "general" or topic not in _TOPIC_DESC:
        # No topic read from the rule: the task kind alone says when ("(doing any task)"
        # beside it told the model nothing).
        head = f"When {kind}" if kind else "When " + desc
    else:
        head = f"When {kind} ({desc})" if kind else f"When {desc}"
    keys = _keywords(rule)
    line = head + (f"; about {', '.join(keys)}" if keys else "")
    return line[:MAX_SHORT]


def named_topic_when(rule: str, topic: str) -> str:
    """A ``when_to_use`` for a rule added under a topic its caller named, where the guess from
    its words filed it elsewhere: ``add("Run database migrations before rolling out the billing
    API", topic="deploy")`` was told "When replying to customers in support conversations"
    (hunt-mcphttp #4, session 36), and blocks show that label to the model."""
    meant = topic if topic in _TOPIC_DESC else rule_only_topic(topic)  # "deploy": infra's, as
    if meant:  # the block files it; "general" too: "When doing any task; about ..." (review 2)
        return _when_to_use(rule, meant, None)
    keys = _keywords(rule)
    line = "When working on " + topic.replace("-", " ")
    return (line + (f"; about {', '.join(keys)}" if keys else ""))[:MAX_SHORT]


_ABOUT_TAIL = re.compile(r"; about [^;()]{1,120}$")


def brief_when(when_to_use: str) -> str:
    """`when_to_use` as a memory block shows it: the kind of task, without what the distiller
    adds for search only — the topic's description in brackets and the "; about <key words>"
    tail. Both are embedded and searched (shortening the stored text cost Recall@5 0.535 ->
    0.48-0.49 on benchmarks/guidelines.py), but in a block they take half of each rule's line
    (24 of 47.5 tokens on the critique stream), so fewer rules fit a small budget. Text an agent
    or a person wrote is left as it is unless it ends in exactly these forms."""
    text = " ".join(str(when_to_use).split())
    text = _ABOUT_TAIL.sub("", text)
    for desc in _TOPIC_DESC.values():
        suffix = f" ({desc})"
        if text.endswith(suffix) and len(text) > len(suffix) + len("When "):
            return text[: -len(suffix)]
    return text
