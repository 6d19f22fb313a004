"""Vocabulary shared by every stage. Small, generic, documented. Nothing here is derived from
evaluation data.
"""

from __future__ import annotations


#: Base-form verbs that commonly open an instruction, across code review, writing, data work,
#: customer support and presentations. A clause starting with one of these is an imperative.
_VERBS = frozenset(
    """
    abbreviate acknowledge add address adjust adopt aggregate aim alias align annotate answer
    apologise apologize append apply archive ask assert assign attach attribute avoid batch begin
    benchmark bold break build bump cache calculate call cap capitalise capitalize caption cast
    catch center centre change check choose chunk cite clarify clean close coalesce collapse
    colour color combine comment commit compare compute condense confirm consider consolidate
    control convert copy correct count cover create credit cut darken declare decouple default
    define delete deprecate describe disable document double-check drop emphasise emphasize
    empathise empathize enable encode end enforce ensure enumerate escalate escape estimate
    exclude expand explain expose extract factor favour favor filter finish fix flag flatten
    follow format free give go greet group guard handle hide highlight hoist illustrate implement
    import improve include increase decrease indent index inline insert introduce isolate
    italicise italicize join justify keep label lead leave lighten limit link list localise
    localize lock log look lower make mark match measure mention merge migrate minimise minimize
    mock move name narrow normalise normalize note notify number offer omit open order organise
    organize paginate parameterise parameterize paraphrase parse pass patch personalise
    personalize phrase pick pin place plot point polish prefer prefix present preserve prioritise
    prioritize promote proofread propagate provide pull punctuate push put qualify quantify
    quote raise rank read reassure recap recognise recognize redo reduce refactor reference
    reflect reframe release remember remove rename reorder repeat rephrase replace reply report
    reproduce request resize respect respond restate restructure retry return reuse review
    rework rewrite round run sanitise sanitize say scale scope separate serialise serialize set
    shade shorten show shrink sign simplify size skip soften sort specify spell split start state
    stay stick stop store strike strip structure stub summarise summarize supply surface swap
    switch tag tell test thank tighten translate trim truncate try turn tweak type underline
    unify update upgrade use validate verify visualise visualize warn wrap write
    assume blame bypass cancel deliver deploy disclose email encrypt guarantee guess interrupt
    leak overwrite ping post print promise publish rebase refund reopen reveal rotate schedule
    send share ship squash upload waive await hash refer version
    adapt approve cherry-pick compress debounce dedupe deduplicate demonstrate derive detect
    determine disambiguate discuss distribute divide download elaborate eliminate embed
    encourage evaluate examine execute explore extend force-push generate grant hyphenate
    identify inform initialise initialize inject inspect install integrate interpret
    invalidate investigate invite iterate maintain maximise maximize memoise memoize modify
    negotiate obfuscate observe obtain optimise optimize perform persist populate predict
    prefetch prepare prepend produce protect prove provision prune purge rebuild recheck
    recommend reconcile recover redact refresh regenerate reimburse reject reload remind render
    repair require rerun resolve restart restore restrict retain retrieve revert revise revoke
    simulate solve squash-merge standardise standardize submit subscribe suggest suppress
    terminate throttle treat type-annotate uninstall unlock unpack unset unwrap wait
    roll
    """.split()
)

#: Words after which a leading verb-looking word is really a noun subject ("Test coverage is
#: ...", "Review should be faster", "Render feels slow"): the modal shapes rewrite those.
_NOT_IMPERATIVE_NEXT = frozenset(
    "is are was were has have had 's looks look seems seem does did isn't aren't wasn't weren't "
    "doesn't didn't hasn't haven't of should shall must would could can cannot can't will won't "
    "might may needs feels feel works worked failed fails passes passed renders rendered "
    "went goes broke breaks crashed crashes".split()
)
#: Words third in a sentence after which its first two words are a noun phrase ("Save button
#: doesn't work", "Display name should be optional").
_NOT_IMPERATIVE_THIRD = frozenset(
    "is are was were has have had isn't aren't wasn't weren't doesn't don't didn't hasn't "
    "haven't won't can't should shall must would could can will might may needs looks seems "
    "feels works worked failed fails went overlaps overlap renders look seem feel".split()
)

#: Subjects that name somebody other than the agent; modal advice about them is not a rule.
_PERSON_SUBJECT = frozenset(
    "i he she they them his her their its nobody noone someone somebody everybody everyone "
    "anyone anybody".split()
)
_DEICTIC = frozenset("it this that these those them here".split())
_PREPOSITIONS = frozenset(
    "for in on at with from by after before during as to of into onto about without unless until "
    "if when while because since although though".split()
)
_DETERMINERS = frozenset("the a an some any each every all no your our".split())
_NP_ADVERBS = frozenset("now already still also just then again even only really currently".split())

_NEGATORS = frozenset("never not no don't dont do-not avoid without stop".split())
#: Verbs whose meaning is "do not have / do not do"; counted with the negators by parity.
_NEGATIVE_VERBS = frozenset(
    "avoid skip omit remove drop stop disable exclude forbid ban eliminate strip delete "
    "hide forget neglect hesitate".split()  # "Don't forget to X": two negations, X is wanted
)

#: Pairs of words that, used on the same matter, make two rules disagree.
_ANTONYMS: tuple[tuple[str, str], ...] = (
    ("british", "american"),
    ("uk", "us"),
    ("tab", "space"),
    ("single", "double"),
    ("short", "long"),
    ("shorter", "longer"),
    ("formal", "informal"),
    ("formal", "casual"),
    ("before", "after"),
    ("ascending", "descending"),
    ("upper", "lower"),
    ("uppercase", "lowercase"),
    ("more", "less"),
    ("more", "fewer"),
    ("first", "last"),
    ("top", "bottom"),
    ("start", "end"),
    ("light", "dark"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("absolute", "relative"),
    ("active", "passive"),
    ("metric", "imperial"),
    ("personal", "team"),
    ("individual", "team"),
    ("camelcase", "snake_case"),
    ("left", "right"),
    ("inline", "separate"),
    ("bare", "prefixed"),
    ("plural", "singular"),
    ("minimum", "maximum"),
    ("increase", "decrease"),
)

#: Light verbs and fillers that say nothing about what a rule is about.
_LIGHT_WORDS = frozenset(
    """
    a an the and or but to of in on at by for with from into onto as is are be been being was
    were it its this that these those there their them they you your we our us i me my he she
    his her always never not no don't dont do does did done use using used make making made keep
    add put give get have has had should must need needs please also just only so very more less
    any all each every some one ones than then when if instead rather switch now from longer
    avoid prefer ensure sure try stop start can could would will may might up out over
    """.split()
)

_STOPWORDS = _LIGHT_WORDS | frozenset(
    "what which who whom how why where while about after before because since until own same "
    "such too other others another both either neither nor yet still even much many few".split()
)

#: Words that open a phrase saying where or when advice holds ("In commit messages, ...", "For
#: SQL migrations, ...", "If the customer is angry, ..."): a split keeps it on every rule
#: (``clauses.with_setting``) and the topic guess weighs it as the rule's own domain.
SETTING_LEADS = ("in", "for", "on", "when", "while", "within", "inside", "throughout", "during",
                 "before", "after", "if", "unless")

#: Capitalised words that open a sentence before "the", "a", "your" ... without being an
#: instruction's verb: function words, adverbs, interjections, feelings and opinions ("Love
#: the charts!", "Shame the legend is gone"). Any other such word is read as an imperative verb
#: the list above lacks ("Mask the card number ...", "Backfill the missing days ...").
NOT_INSTRUCTION_OPENERS = frozenset(
    """
    i you we they he she it its this that these those the a an my your our their his her some
    any each every all no not none yes ok okay oh hmm um uh well hey hi hello dear sorry
    is are was were be been am do does did have has had can could will would shall should may
    might must need needs got get let's
    and but or nor yet so for because since as if unless until till once when where while whilst
    whether though although than then now here there also just only even still again maybe
    perhaps plus besides anyway instead either neither both half most many much more less few
    such quite rather almost same like unlike except despite given per re via about above across
    after against along among around at before behind below beneath beside between beyond by
    down during from in inside into near of off on onto out outside over past through throughout
    to toward towards under up upon with within without what why how which who whom whose
    love hate enjoy appreciate adore dig miss want wish hope think guess believe suppose reckon
    feel know mean see agree disagree bet wonder doubt
    nice great good glad shame pity sad happy sure cool weird odd strange interesting funny
    perfect excellent awesome brilliant fantastic amazing wow neat solid lovely beautiful fine
    overall honestly otherwise fyi btw imo imho tbh
    """.split()
)

#: Irregular past tenses (no "-ed" to tell them): a narration ("Wrote the tests first.", "Sent
#: my draft too early.") is no imperative of an unlisted verb. Forms that are also base forms
#: (read, put, set, cut, let, hit, split, spread, shut, quit) are not here.
IRREGULAR_PAST = frozenset(
    """
    wrote rewrote overwrote sent took mistook made ran reran did undid redid forgot broke built
    bought brought caught chose drew drove ate fell felt found gave got grew heard held hid
    kept knew laid led left lent lost meant met paid rode rang rose said saw sold shook shot
    slept slid spent spoke stood stole stuck struck swore swept swam taught tore told thought
    threw understood woke wore won withdrew misread began became forbade froze
    """.split()
)
