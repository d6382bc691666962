"""Answerability: do the best sections contain what the question asks for? A small fitted model, not one cosine."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Container, Sequence

from logic import asked_type
from logic.lexical import Lexicon, matches, terms
from logic.masking import EMAIL, KEY_LIKE
from logic.passages import SENTENCE_END
from logic.types import Chunk

# The gate reads the few best sections, as a reader would before answering.
DEPTH = 3
# Names the fitted model: a manifest threshold calibrated for another gate score is not reused.
GATE_VERSION = "answerability-3"
FEATURES = ("cosine", "coverage", "names_missing", "unknown", "off_topic")
# p(answerable) = sigmoid(INTERCEPT + Σ WEIGHTS[f] × feature f). Fitted by `benchmarks/answerability.py`
# (logistic regression, Newton's method, L2 0.1) on part of the shared textbook sets (every in-scope and
# far-off question of textbook-questions, odd-numbered near misses and SQuAD out-of-scope questions), with
# the bundled embedder; the even-numbered halves are held out. See docs/benchmarks.md ("Answerability").
INTERCEPT = -4.71
WEIGHTS = {"cosine": 6.66, "coverage": 3.96, "names_missing": -4.64, "unknown": -1.94, "off_topic": -7.0}
# A follow-up is asked about what the conversation is about. When a question continues the conversation but its best
# section is far from it (this question and the previous user turns), the retriever fell back on a page that shares
# a word ("What about if I'm sick?" after questions on appeal fees finds the flu page): the docs likely lack what is
# asked. off_topic = max(0, CONTEXT_HINGE - that cosine); 0 on a first turn and on a question that starts a new
# topic (its own cosine with the earlier turns below CONTINUES_AT), so single questions score as before and a user
# may change the subject. Fitted by `benchmarks/conversation_gate.py` (a grid over hinge, weight and CONTINUES_AT,
# the other weights and the threshold fixed) on MTRAG-UN's replayed conversations, the only labelled multi-turn
# set; see docs/benchmarks.md ("Conversation check"). Cosines of the bundled embedder.
CONTEXT_HINGE = 0.55
CONTINUES_AT = 0.15
# The previous user turns that stand for the conversation (chit-chat excluded).
CONTEXT_TURNS = 2
# With the reading model (tools/reader.py, the offline defaults), its verdict on the best passage it read can veto:
# `read` is the log-odds that the passage answers the question, and a verdict below READ_CENTRE lowers the gate's
# log-odds by READ_WEIGHT × the shortfall; a verdict above it changes nothing. On the four sites, with each site's
# verdicts from a model trained without it, its "no" refused near misses, while its "yes" answered near misses
# that share the question's words and never a question the gate had wrongly refused (docs/benchmarks.md, "The
# reading model"). So a question is read only when the gate would answer it and the worst verdict would not.
READ_WEIGHT, READ_CENTRE = 0.7, -2.0
# Log-odds beyond ±6 (p < 0.0025) say nothing more; none of the four sites' questions read beyond them.
READ_CLIP = 6.0
# The balanced-accuracy threshold on the training part (flat from 0.2 to 0.3), for the bundled embedder.
THRESHOLD = 0.25
# A question asking for an amount, a time, a price or a version whose sections state none (logic/asked_type.py)
# keeps this share of its fitted probability: a rule, not a fitted weight, since such questions are too rare in the
# public sets to fit one (1% of SQuAD).
TYPE_MISSING_FACTOR = 0.1
# A name: a word with a capital after its first letter (LiDAR, CoppeliaSim), a digit (PX4, 2.0), an underscore
# (ros1_bridge), or a capital anywhere but the start of a sentence (Zenoh, Java).
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_#+*.\-]*[A-Za-z0-9#+*]|[A-Za-z0-9]")


def section_text(chunk: Chunk) -> str:
    """Return what a reader sees of a section: its page title, headings and text."""
    return " ".join([chunk["title"], *chunk["heading_hierarchy"], chunk["text"]])


# A suffix that makes a name an adjective ("a Velodyne-style lidar", "Unix-like", "S3-compatible"): the name is
# the part before it, and the suffix is no word the docs must write.
_DESCRIPTOR = re.compile(r"(?<=\w)-(?:style|like|based|compatible|type|ish|powered|enabled|aware|specific|only)$",
                         re.IGNORECASE)


def names(question: str) -> list[str]:
    """Return the names a question mentions: products, versions, tools, acronyms, identifiers."""
    found = []
    for match in _TOKEN.finditer(question):
        token = _DESCRIPTOR.sub("", match.group(0))
        opening = not question[:match.start()].strip() or question[:match.start()].rstrip().endswith((".", "?", "!"))
        if token != "I" and terms(token) and (
                any(c.isdigit() for c in token) or "_" in token or any(c.isupper() for c in token[1:])
                or (token[0].isupper() and not opening)):
            found.append(token)
    return found


def everyday(name: str, ordinary: Container[str], lexicon: Lexicon) -> bool:
    """Tell whether a name is an everyday word the site itself uses: "POST" or "Authorization" in an HTTP client's docs.

    Capitalised as a method, a header or a type ("Literal"), such a word names nothing the best sections must
    repeat: the methods option lists GET and PUT, the headers option takes any header. A word the site never
    uses ("Java" in a ROS course) or one outside ordinary English ("Zenoh") is still a name it may lack.
    """
    return name.isalpha() and name.lower() in ordinary and all(lexicon.df.get(t, 0) for t in terms(name))


def writes(name: str, lowered: str, spelled: Container[str] = frozenset()) -> bool:
    """Tell whether lowercase text writes a name: an identifier or a language whole, any other name word by word.

    `max_errors` is not written by a text that has "max" and "errors" apart, nor `ROS#` by one that has "ROS";
    "Raspberry Pi 5" is written by "the Pi 5 on a Raspberry board". `spelled` are terms the text writes as an acronym.
    """
    if "_" in name or name.endswith(("#", "+")):
        stem = name.lower().removesuffix("s")  # `field_validators` is written as `field_validator` too
        return re.search(rf"(?<!\w){re.escape(stem)}s?(?![\w#+])", lowered) is not None
    return all(t in spelled or matches(t, lowered) for t in terms(name))


# A follow-up searched with the earlier question in brackets after it (logic/heuristics.rewrite_followup): what is
# asked is the follow-up; the bracket is context, like the story a user tells before asking.
_EARLIER = re.compile(r"(?<=[?.!])\s+\([^()]+\)\s*$")


def asked_part(question: str, words: int = 0) -> str:
    """Return what a question asks, without the sentences before it that set out the user's situation.

    "Our audit Event model has an `actor: User` field … How do I serialize the subclass's fields?": the user's own
    names (Event, AdminUser) are context, not something the docs must mention. The ask runs from the first sentence
    ending in '?' (else it is the last sentence); a question of one sentence is all ask. With `words`, an ask with
    fewer content words takes in the sentences before it until it has them ("…nothing seems to happen. Why?").
    """
    question = _EARLIER.sub("", question)
    parts = [p for p in SENTENCE_END.split(question.strip()) if p.strip()]
    if len(parts) < 2:
        return question
    first = next((i for i, p in enumerate(parts) if p.rstrip().endswith("?")), len(parts) - 1)
    while first > 0 and len(set(terms(" ".join(parts[first:])))) < words:
        first -= 1
    return " ".join(parts[first:])


# "…a single RTX 4090. How many parallel environments should we run on it?", "…only NTLM or Kerberos. How do I
# configure ProxyAgent for that?": a pronoun after a preposition, ending its phrase, points back into the story.
_BACK_REFERENCE = re.compile(r"\b(?:on|for|with|to|in|about|from|of|into|at)\s+(?:it|them|that|this)\b"
                             r"(?!\s+[a-z]+\s)", re.IGNORECASE)


def asked_about(question: str) -> str:
    """Return what the question asks about: its ask (`asked_part`), and the sentence before when the ask points back.

    What "run on it" runs on is named in the sentence before: its names and words are asked about too.
    """
    ask = asked_part(question)
    if ask == question or not _BACK_REFERENCE.search(ask):
        return ask
    parts = [p for p in SENTENCE_END.split(question.strip()) if p.strip()]
    told = len(parts) - len([p for p in SENTENCE_END.split(ask.strip()) if p.strip()])
    return " ".join(parts[max(told - 1, 0):])


def spelled_out(query: str, text: str) -> dict[str, list[str]]:
    """Return the acronyms `text` uses for phrases the question spells out, with their words' terms.

    "adaptive Monte Carlo localization" is what the docs call AMCL: neither the name nor its words are missing.
    """
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", query)
    found: dict[str, list[str]] = {}
    for size in range(3, 6):  # two-letter acronyms match by chance
        for start in range(len(words) - size + 1):
            run = words[start:start + size]
            acronym = "".join(w[0] for w in run).upper()
            # Written in capitals, as docs write acronyms: "the" is no acronym of "take home exam".
            if acronym.lower() not in found and re.search(rf"(?<![A-Za-z0-9]){acronym}s?(?![A-Za-z0-9])", text):
                found[acronym.lower()] = [t for w in run for t in terms(w)]
    return found


def continues(query_vector: Sequence[float], turn_vectors: Sequence[Sequence[float]]) -> bool:
    """Tell whether a question is about what the earlier turns were about, rather than a new subject."""
    return bool(turn_vectors) and _dot(_unit(query_vector), _centre(turn_vectors)) >= CONTINUES_AT


def off_topic(query_vector: Sequence[float], turn_vectors: Sequence[Sequence[float]],
              section_vector: Sequence[float]) -> float:
    """Return how far below CONTEXT_HINGE a section's cosine with the conversation (query and turns) is."""
    return max(0.0, CONTEXT_HINGE - _dot(_unit(section_vector), _centre([query_vector, *turn_vectors])))


def _centre(vectors: Sequence[Sequence[float]]) -> list[float]:
    """Return the unit mean direction of some vectors."""
    units = [_unit(v) for v in vectors]
    return _unit([sum(parts) / len(units) for parts in zip(*units, strict=True)])


def _unit(vector: Sequence[float]) -> list[float]:
    """Scale a vector to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    """Return the dot product of two vectors of the same length."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def log_odds(probability: float) -> float:
    """Return a probability's log-odds, clipped to ±READ_CLIP."""
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return max(-READ_CLIP, min(READ_CLIP, math.log(p / (1 - p))))


def features(query: str, best: Sequence[Chunk], lexicon: Lexicon,
             off_topic_of: Callable[[Chunk], float] | None = None, read: float | None = None,
             ordinary: Container[str] = frozenset()) -> dict[str, float]:
    """Measure the evidence that the best sections answer `query`.

    - cosine: the best chunk's embedding similarity.
    - coverage: IDF-weighted share of the question's terms found in the best chunk that holds most of them, or of
      the asked part's terms when that share is higher (the user's story is theirs to tell, not the docs').
    - names_missing: share of the names the question asks about (Zenoh, Raspberry Pi 5, ros1_bridge) that
      the best sections never mention: the asked-for tool or version is elsewhere or nowhere. Names in the
      sentences that set out the user's situation before the question are theirs, not asked about (`asked_about`),
      and a capitalised word of `ordinary` English that the site uses is its vocabulary, not a name (`everyday`).
    - unknown: IDF-weighted share of the question's terms that the index never uses, counting only the asked
      part's: "my record shop" in the story before the question is the user's, not something the docs lack.
    - off_topic: on a question continuing a conversation, how far below CONTEXT_HINGE the best section's cosine
      with the conversation is (`off_topic_of` measures it for a section; None on a first turn: 0).
    - type_missing: 1 when the question asks for an amount, a time, a price or a version and no line of the best
      sections states one next to what is asked about ("How many maintainers…?" against a list of names); only the
      asked part counts, as for names.
    - read (only when given): the log-odds that the best passage the reading model read answers the question.
    """
    # A pasted key or e-mail address is not something asked about: it must not read as a missing name.
    query = EMAIL.sub(" ", KEY_LIKE.sub(" ", query))
    query_terms = list(dict.fromkeys(terms(query)))
    top = list(best[:DEPTH])
    if not top:
        return dict.fromkeys(FEATURES, 0.0)
    cosine = max(c["score"] for c in top)
    written = " ".join(section_text(c) for c in top)
    joined = written.lower()
    acronyms = spelled_out(query, written)
    spelled = {t for words in acronyms.values() for t in words}
    if acronyms:  # judge "adaptive Monte Carlo localization" as the "AMCL" the sections use
        query_terms = [t for t in query_terms if t not in spelled] + list(acronyms)
    # The story's words stay in the total: a long story never makes the asked words weigh more.
    asked = asked_about(query)
    asked_terms = set(terms(asked)) | set(acronyms)
    # A section that holds what is asked covers the question, whatever of the user's story it lacks ("…the Docker
    # daemon over /var/run/docker.sock. How do I point a Client at a Unix socket?").
    asked_only = [t for t in query_terms if t in asked_terms]
    coverage = max(lexicon.coverage(wanted, section_text(c)) for c in top for wanted in (query_terms, asked_only))
    named = [n for n in names(asked) if not everyday(n, ordinary, lexicon)]
    missing = [n for n in named if not writes(n, joined, spelled)]
    weights = {t: lexicon.idf(t) for t in query_terms}
    total = sum(weights.values())
    unknown = sum(w for t, w in weights.items()
                  if t in asked_terms and not lexicon.uses(t) and not matches(t, joined)) / total \
        if total > 0 else 0.0
    # Title and headings on lines of their own: "pyrefly Type checker" joined is no release named "Type".
    # Asked, not told: "…to how many copies we've sold. Is there a tidier way…?" asks for no count.
    type_missing = asked_type.missing(asked,
                                      ["\n".join([c["title"], *c["heading_hierarchy"], c["text"]]) for c in top])
    drift = off_topic_of(top[0]) if off_topic_of is not None else 0.0
    found = {"cosine": round(cosine, 4), "coverage": round(coverage, 4),
             "names_missing": round(len(missing) / len(named), 4) if named else 0.0, "unknown": round(unknown, 4),
             "off_topic": round(drift, 4), "type_missing": float(type_missing)}
    return found if read is None else with_reading(found, read)


def with_reading(values: dict[str, float], answers: float) -> dict[str, float]:
    """Add the reading model's verdict (the probability that its best passage answers) to the features."""
    return {**values, "read": round(log_odds(answers), 4)}


def worth_reading(values: dict[str, float], threshold: float) -> bool:
    """Tell whether the reading model's verdict could decide: the gate answers, and the worst verdict would not.

    Elsewhere the gate scores without it, and decides as any verdict would.
    """
    return gate_score(values) >= threshold > gate_score(with_reading(values, 0.0))


def gate_score(values: dict[str, float]) -> float:
    """Return the fitted probability that the best sections answer the question."""
    x = INTERCEPT + sum(WEIGHTS[name] * values[name] for name in FEATURES)
    if "read" in values:  # a veto: only a verdict below the centre moves the score
        x += READ_WEIGHT * min(0.0, values["read"] - READ_CENTRE)
    return round(_sigmoid(x) * (TYPE_MISSING_FACTOR if values.get("type_missing") else 1.0), 4)


def _sigmoid(x: float) -> float:
    """Map log-odds to a probability without overflowing."""
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))
