"""The kind of value a question asks for (an amount, a time, a price, a version) and whether a section states one.

"How many maintainers…?", "When is 3.0 released?", "How much does the hosted plan cost?" and "What's the
minimum Node.js version?" are the commonest near misses on a docs site: the docs name the product and say
it must be installed, never the count, the date, the price or the version.
Such a question is answerable only where a line of the best sections states a value of the asked kind
next to a word of the question. Classic question answering's expected answer type; English only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from logic.fences import Tracker
from logic.lexical import STOPWORDS, matches, terms

PRICE, AMOUNT, TIME, VERSION = "price", "amount", "time", "version"
# Words that qualify the version asked for rather than name what is versioned ("the oldest Rust version").
_QUALIFIERS = r"(?:minimum|min|maximum|max|oldest|earliest|latest|newest|lowest|highest|required|supported|recommended)"
# Price first: "how much does X cost" asks for a price, which an amount alone does not state.
_ASKS = {
    PRICE: re.compile(r"\bhow much\b[^?.!]*\b(?:cost|costs|charge|charges|pay|fee|fees|price)\b"
                      r"|\bwhat does\b[^?.!]*\bcost\b|\bcosts?\s+per\s+\w+|\bprice of\b|\bpricing\b"
                      r"|\bwhat(?:'s|\s+is|\s+are)\s+the\s+(?:price|prices|cost|costs|fee|fees)\b"
                      r"|\bhow (?:expensive|cheap)\b", re.IGNORECASE),
    AMOUNT: re.compile(r"\bhow (?:many|much|long|often|fast|big|large|small|far|old)\b"
                       r"|\bwhat(?:'s|\s+is|\s+are)?\s+the\s+(?:maximum|minimum|max|min|default|total|average)\s+"
                       r"(?:\w+\s+){0,2}(?:number|size|count|length|limit|amount|percentage|rate)\b"
                       r"|\bwhat percentage\b", re.IGNORECASE),
    TIME: re.compile(r"\b(?:in\s+)?(?:what|which)\s+(?:year|date|month)\b"
                     r"|\bwhen\s+(?:is|was|will|were|did|does)\b[^?!]*\b(?P<event>released?|releasing|created|"
                     r"invented|founded|introduced|launched|published|announced|expected|coming|shipped|scheduled|"
                     r"planned|due)\b", re.IGNORECASE),
    # "Which Unity version…", "what's the oldest Rust version", "since which ROS 2 version", "minimum Node.js
    # version for X": the words between name what is versioned (no stopword: "what happens when versions differ").
    VERSION: re.compile(r"\b(?:(?:which|what)(?:'s|\s+is|\s+are)?(?:\s+the)?|" + _QUALIFIERS + r")"
                        r"(?P<versioned>(?:\s+(?!(?:a|an|do|does|did|i|if|is|are|to|of|the|when|we|you|it|happens?|"
                        r"changed?|changes|between)\b)[\w.+#-]+){0,3})\s+versions?\b", re.IGNORECASE),
}
# A number standing for itself: not part of a name (i32, V2), a version (1.4.0), a link or a cross-reference
# ("Listing 8-1", "Chapter 3"); with its unit or range if it has one (5-20 Hz, 300%, 1.5ms, 3.45x).
_REFERENCE = re.compile(r"\b(?:listing|chapter|figure|fig|section|table|step|line|page|issue|example|version|v)"
                        r"\.?\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.\-/#@$€£¥])\d[\d,_]*(?:\.\d+)?(?!\.\d)(?![A-Za-z_]\w*[A-Za-z_])")
_NUMBER_WORD = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                          r"forty|fifty|hundreds?|thousands?|millions?|billions?|dozens?|twice)\b", re.IGNORECASE)
_PRICE = re.compile(r"[$€£¥]\s?\d|\b\d[\d,.]*\s?(?:usd|eur|gbp|dollars?|euros?|cents?)\b"
                    r"|\b(?:free|no cost|no charge|open[- ]source)\b", re.IGNORECASE)
_TIME = re.compile(r"\b(?:1[0-9]|20)\d\d(?:s\b|\b(?![.\-]\d\d?\b(?![-/])))|\b\d{4}-\d\d-\d\d\b"
                   r"|\b\d{1,2}(?:st|nd|rd|th)[\s-]+centur(?:y|ies)\b"
                   r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b")
# A version as docs state one: dotted (3.8, 2021.3.22f1, v1.65.0) or a bare number after a name ("Node.js 18").
_VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+[a-z0-9]*\b|(?<![\w.])v\d+\b|(?<=[A-Za-z.] )\d+\b(?![.,]\d)")
_LINK = re.compile(r"\]\([^)]*\)|<?https?://\S+")
# In code, only a value given to a name counts (`max_particles: 2000`, `timeout=30`): printed output and
# indices ("hi number 1 from the thread") state nothing.
# An XML element holding a number (`<samples>32</samples>`, `<iters>20</iters>`) sets one as well.
_SETTING = re.compile(r"[\w\-\"']+\s*[:=]\s*[\"']?\d|<[\w:.\-]+(?:\s[^<>]*)?>\s*-?\d")
# Words that join a noun phrase rather than end it ("graph and network problems", "bytes of memory").
_JOINERS = frozenset({"and", "or", "of"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# "Is there a way to see how many owners it has?", "How do I limit how many workers start?": "how many" after the
# asker's own verb of finding out or setting is that verb's object; the question asks for a way (a method, an
# option), not a value. "Do you know how much …?" and "Can you tell me how many …?" still ask for the value.
_WAY_TO = re.compile(r"\b(?:to|i|we)\s+(?:\w+\s+)?(?:see|check|find out|print|display|measure|determine|compute|"
                     r"calculate|count|track|monitor|inspect|query|control|limit|set|configure|specify|choose|change|"
                     r"adjust)\s+$", re.IGNORECASE)


def asked(question: str) -> str | None:
    """Return the kind of value the question asks for, or None when it asks for none in particular."""
    for kind, pattern in _ASKS.items():
        match = pattern.search(question)
        if match and kind == AMOUNT and _WAY_TO.search(question[:match.start()]):
            continue
        # A version of nothing named ("what's the latest version?") has no word a stated one must stand next to.
        if match and (kind != VERSION or focus(question, kind, match)):
            return kind
    return None


def _lines(text: str) -> Iterable[tuple[str, bool, str]]:
    """Yield each sentence of prose and each line of code, telling which is code, with the sentence before it.

    The sentence before is the one of the same line (a list item, a paragraph): reference docs state what a
    setting is in one sentence and its value in the next ("Minimum number of milliseconds to wait before
    retrying. Default: `500`"); for a line of code, the line above it.
    """
    fences = Tracker()
    previous = ""
    for line in text.splitlines():
        if fences.fence_line(line):
            previous = ""
            continue
        if fences.inside:
            # A nested setting's meaning is its parent's line (`<vertical>` above `<samples>32</samples>`).
            yield line, True, previous
            previous = line
            continue
        sentences = [sentence for sentence in _SENTENCE_END.split(line) if sentence.strip()]
        yield from ((sentence, False, sentences[n - 1] if n else "") for n, sentence in enumerate(sentences))


# A year after a preposition and not before a word it counts ("in his 2012 Turing lecture", "since 2021,") dates
# something: it states no amount ("in 2000 steps" counts steps).
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_DATED = re.compile(r"\b(?:in|since|until|till|by|from|during|around|circa)\s+"
                    r"(?:(?:his|her|its|their|the|early|late|mid)\s+)?$", re.IGNORECASE)
_COUNTED = re.compile(r"\s*[a-z%]")


def _numbers(line: str, own: set[str]) -> bool:
    """Tell whether a line states an amount the question does not already give."""
    for match in _NUMBER.finditer(line):
        number = match.group(0).rstrip(",_")  # "since 2021, the tool": the comma ends the number
        year = _YEAR.fullmatch(number) and _DATED.search(line[:match.start()]) \
            and not _COUNTED.match(line, match.start() + len(number))
        if match.group(0) not in own and not _REFERENCE.search(line[:match.start()]) and not year:
            return True
    return bool(_NUMBER_WORD.search(line))


def _states(kind: str, line: str, code: bool, own: set[str]) -> bool:
    """Tell whether one line states a value of the asked kind."""
    if code and not _SETTING.search(line):
        return False
    if kind == PRICE:
        return bool(_PRICE.search(line))
    if kind == TIME:
        return any(m.group(0) not in own for m in _TIME.finditer(line))
    if kind == VERSION:
        return any(m.group(0).lstrip("vV") not in own for m in _VERSION.finditer(line))
    return _numbers(line, own)


def _counted(rest: str) -> str:
    """Return the noun phrase after "how many" / "how much": the words up to the verb or punctuation."""
    kept = []
    for word in re.findall(r"[\w'-]+|[^\w\s]", rest)[:6]:
        if not re.match(r"\w", word) or (word.lower() in STOPWORDS and word.lower() not in _JOINERS):
            break
        kept.append(word)
    return " ".join(kept)


def focus(question: str, kind: str, match: re.Match[str] | None = None) -> list[str]:
    """Return the words a stated value must stand next to: what is counted or versioned, or the event dated.

    "How many core maintainers does X have?" is answered by a line counting maintainers, not by any
    line with a number that names X (the product a docs site names everywhere).
    """
    match = match or _ASKS[kind].search(question)
    if kind == VERSION:
        return [w for w in terms(match.group("versioned")) if not re.fullmatch(_QUALIFIERS, w)] if match else []
    words: list[str] = []
    if match and kind == AMOUNT and match.group(0).lower().startswith(("how many", "how much")):
        words = terms(_counted(question[match.end():]))
    elif match and kind == TIME and match.group("event"):
        words = terms(match.group("event"))
    return words or terms(question)


def _released(line: str, versioned: list[str], asked_words: set[str]) -> bool:
    """Tell whether the line names a release of what is versioned by its name ("ROS 2 Humble", "Gazebo Garden")."""
    if not versioned or not all(matches(w, line.lower()) for w in versioned):
        return False
    tokens = re.findall(r"[\w.+#-]+", line)
    for at, token in enumerate(tokens):
        if matches(versioned[-1], token.lower()):
            after = [t.rstrip(".") for t in tokens[at + 1:at + 3] if not t.isdigit()][:1]
            # A release name is a title-cased word ("Humble"); an acronym after a name is part of it ("Pyrefly IDE").
            if after and after[0].istitle() and after[0].isalpha() and after[0].lower() not in asked_words \
                    and after[0].lower() not in STOPWORDS:
                return True
    return False


def missing(question: str, sections: Iterable[str]) -> bool:
    """Tell whether the question asks for a kind of value that no line of the sections states next to its words."""
    kind = asked(question)
    if kind is None:
        return False
    own = set(re.findall(r"\d[\d,_.]*", question))
    counted, words = focus(question, kind), set(terms(question))
    for text in sections:
        for line, code, before in _lines(_LINK.sub(" ", text)):
            if kind == VERSION and _released(line, counted, words):
                return False
            if not _states(kind, line, code, own):
                continue
            lowered = line.lower()
            if kind == VERSION:
                # A version of the very thing named ("Node.js 18"), not of a neighbour sharing a word ("Lunr.js 2.3").
                if all(matches(w, lowered) for w in counted):
                    return False
                continue
            # Next to what is counted or dated, or to two of the question's words ("the recommended 60 minutes
            # a day" answers "how much activity a day is recommended"): one word alone may be the product's name.
            near = f"{before} {line}".lower()
            if any(matches(w, near) for w in counted) or sum(matches(w, near) for w in words) >= 2:
                return False
    return True
