"""Offline language heuristics for classify: chit-chat detection and follow-up rewriting."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AnyMessage, HumanMessage

from logic.answerability import asked_part
from logic.lexical import STOPWORDS, terms
from logic.passages import SENTENCE_END

_WORD = re.compile(r"\w+", re.UNICODE)
_GREETING = re.compile(
    r"\b(hi|hello|hey|hiya|howdy|greetings|good (morning|afternoon|evening|day)|thanks|thank you|"
    r"thank|thx|ty|cheers|bye|goodbye|see you|ok|okay|great|cool|nice|awesome|perfect)\b",
    re.IGNORECASE,
)
_FILLER = {"there", "you", "so", "much", "a", "lot", "very", "again", "all", "everyone", "bot", "agent",
           "for", "the", "help", "that", "s", "it", "many", "really", "oh", "and", "got", "later"}
_THANKS = re.compile(r"\b(thanks|thank|thx|ty|cheers)\b", re.IGNORECASE)
_BYE = re.compile(r"\b(bye|goodbye|see you)\b", re.IGNORECASE)
# Pronouns that stand for the previous topic and can be replaced by it in place.
_REPLACEABLE = re.compile(r"\b(it|its|they|them|their|this|that)\b", re.IGNORECASE)
# "these"/"those" standing alone right after the question's verb ("Can those call …?", "Do these run …?"): a
# pronoun for the previous topic, replaced like "they".
_PLURAL_PRONOUN = re.compile(r"^(\s*(?:and\s+)?(?:can|could|do|does|will|would|should|must)\s+)"
                             r"(these|those)\b(?!\s+(?:of|in|on|for|with)\b)(?=\s+[a-z]+\s)", re.IGNORECASE)
# Words after which "one" is a pronoun ("which one is faster", "one for Windows"), not a numeral before its noun
# ("so one request's values don't leak"); after a determiner it is a pronoun whatever follows ("the built-in one
# get in the way").
_NOT_A_NOUN = (r"(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|of|that|which|to|in|on|for|"
               r"with|and|or|but|instead|too|as|than|i|you|we|they|it)")
# Anaphors that refer back but cannot simply be swapped for a noun phrase, including "which one"
# and "this"/"that" before a noun ("this method", "that setting") or starting a relative clause.
_REFERRING = re.compile(
    r"\b(both|these|those|either|neither|the latter|the former|one(?!\s+(?!" + _NOT_A_NOUN + r"\b)[a-z])|"
    r"(?:the|a|an|which|each|any|every|another|other|same)\s+(?:[\w-]+\s+)?one|ones|(?:in|from|out of)\s+there|"
    r"(?:this|that)\s+(?!(?:is|was|are|does|do|"
    r"did|can|could|will|would|should|has|have|mean|means|work|works)\b)[a-z]+)\b",
    re.IGNORECASE,
)
# "it" with no antecedent: the weather, or an expletive before an adjective ("it is too late"). Without its verb,
# "it so" or "it too" is an object ("reset it so the next request starts clean", "can I use it too?").
_EXPLETIVE = re.compile(r"\bit(?:'s|’s|\s+is|\s+was)?\s+(?:rain|snow|hail|storm)\w*\b"
                        r"|\bit(?:'s|’s|\s+is|\s+was)\s+(?:too|so|very|just|getting)\b", re.IGNORECASE)
_FRAME = re.compile(
    r"^\s*(?:(?:what|how)\s+about\s+|(?:what|who|which|where|when|why|how)(?:'s|’s)?\s+(?:(?:am|is|are|was|were|do|does|did|can|"
    r"could|should|would|will)\s+)?(?:(?:i|we|you)\s+)?|(?:can|could|should|do|may)\s+(?:i|we|you)\s+|"
    r"tell me (?:more )?about\s+|explain\s+|describe\s+|show me\s+|define\s+)",
    re.IGNORECASE,
)
# "How do I deploy my docs?", "Can I get X?": the asker's own action, whose subject is the verb's object.
_ACTION = re.compile(r"^\s*(?:(?:how|where|when|why|what)\s+(?:am|do|can|could|should|would|will|did)\s+|"
                     r"(?:can|could|should|do|may)\s+)(?:i|we|you)\s+\w", re.IGNORECASE)
# A yes/no question ("Does undici ship a WebSocket client?") names no topic a pronoun can stand for: "its
# handshake" is the client's, "how long does it wait" the retry's; the earlier question is appended instead.
_YES_NO = re.compile(r"^\s*(?:am|is|are|was|were|do|does|did|can|could|should|would|will|may|might|must|has|have|"
                     r"had)\b", re.IGNORECASE)
# "Which renderer do I use?": the topic is "the renderer".
_WHICH = re.compile(r"^\s*(?:which|what)\s+(?!(?:am|is|are|was|were|do|does|did|can|could|should|would|will|about|"
                    r"if)\b)", re.IGNORECASE)
_DETERMINER = re.compile(r"\b(?:a|an|the|my|your|our|their|its|this|that|these|those)\s+", re.IGNORECASE)
_STOP = re.compile(
    r"\s+(?:used|use|good|useful|work|works|mean|means|do|does|different|differ|compare|compared|in|on|for|"
    r"with|and|to|from|when|if|help|helps|relate|relates|without|instead|so|go|goes|belong|belongs|live|"
    r"lives|run|runs|happen|happens|into|using|via|through|onto|across|within|between|by|is|are|was|were|have|has|"
    r"had)\b.*$",
    re.IGNORECASE,
)
# Adverbs closing the ask ("set up the server locally", "configure the plugin properly", "run it again"): how the
# action is done, never part of what it acts on. Spared: a capitalised name (Plotly), a verb in -ply or -fly
# ("terraform apply"), nouns in -ly, and frequencies, which name a thing as often ("Rust nightly", "the weekly").
_TRAILING_ADVERBS = re.compile(
    r"(?<=\w)(?:\s+(?!(?i:assembly|family|anomaly|monopoly|ally|rally|belly|jelly|bully|early|friendly|hourly|daily|"
    r"nightly|weekly|monthly|yearly)\b)"
    r"(?:[a-z]{3,}(?<![pf])ly|(?i:only|again|too|now|first|later|anyway|anymore|already|still|yet|afterwards|together)))+$")
# A plural noun ("workspaces", "tests"; not "class", "status", "analysis"): what "they" or "them" stands for.
_PLURAL_NOUN = re.compile(r"\b[A-Za-z][a-z]+[a-hj-rtv-z]s\b")
# Words ending like plurals that are verbs or function words in a question ("How does X work?", "it uses").
_NOT_PLURAL = {"does", "goes", "uses", "needs", "gets", "makes", "takes", "works", "runs", "means", "helps",
               "happens", "lives", "belongs", "relates", "always", "perhaps", "sometimes", "unless", "towards",
               "besides", "whereas"}
_PLURAL_PRONOUNS = {"they", "them", "their"}
_BEFORE_NOUN = {"the", "my", "your", "our", "their", "these", "those", "all", "some", "many", "several", "multiple",
                "two", "three", "of", "for", "with", "in", "on", "from", "using", "into", "between", "about"}
# "And for the fancy exception output?", "What about the custom CLI commands I wrote?": a fragment that borrows the
# earlier question's verb (it asks that question again of something else); it has no pronoun to swap, so the earlier
# question is kept beside it. Searched alone, "What about …" found its words anywhere on the site.
# "What if I only want some of them?" asks the earlier question again under a condition, and is kept beside it too.
# A dot inside a name ("at the top of lib.rs") does not end the fragment.
_ELLIPSIS = re.compile(r"^\s*(?:(?:and|but|also)\s+(?:for|with|without|about|on|in)|(?:and\s+|but\s+)?(?:what|how)\s+"
                       r"(?:about|if))\b(?:[^.!?]|\.(?=\w))*\??\s*$", re.IGNORECASE)
# "What's the quickest way to bump my version?": the head noun names no topic ("Does the quickest way also tag it?");
# "it" then stands for the asked action (`action_of`), else the earlier question is appended.
_EMPTY_HEADS = {"way", "ways", "thing", "things"}
# "one of them", "which of these": a part of the earlier topic's plural, whose pronoun is swapped for it.
# "one of those shared pointers" is not: there "those" leads a noun phrase of the follow-up's own.
_PART_OF = re.compile(r"\b(?:one|each|all|some|any|both|either|neither|none|many|most|few|which|two|three)\s+of\s+"
                      r"(them|these|those)\b(?!(?:\s+[a-z]+)?\s+" + _PLURAL_NOUN.pattern + ")", re.IGNORECASE)
# "that version", "this method": a demonstrative before a noun the earlier topic's phrase ends in or holds.
_SAME_NOUN = re.compile(r"\b(?:this|that|these|those)\s+([a-z]+)\b", re.IGNORECASE)
# A phrase led by a possessive pronoun ("its own slope") leans on another noun: a pronoun cannot stand for it.
_REFERS_BACK = {"its", "their", "his", "her"}
# A pronoun inside a topic phrase: "it", "them", or a demonstrative that ends the phrase.
_POINTS_BACK = re.compile(r"\b(?:it|them|they)\b|\b(?:this|that|these|those)$", re.IGNORECASE)
# "it's" is "it is": the pronoun and its verb, replaced together.
_ITS_VERB = re.compile(r"^(?:'s|’s)\b")


CHITCHAT_REPLY = "Hello! Ask me a question about the documentation and I'll answer with the sections I used."

# What a chat message may open with before its question: a greeting, which may name whom it greets ("Hi team,",
# "Hello Anna!"), thanks or an acknowledgement with only filler after it ("Thanks a lot!", "ok so,"), or "quick
# question:". Each ends at a punctuation mark (or a bare greeting at a question word), so "Perfect forwarding: what
# is it?" keeps its words. Left in, they were words the docs never use, and the gate counted them against the
# question: with "Hi, " before them, 6 of the four shared sites' 120 in-scope questions were refused.
_SALUTATION = r"(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening|day))(?:\s+[\w'’-]+)?"
_ACKNOWLEDGEMENT = (r"(?:thanks|thank\s+you|thx|ty|cheers|ok|okay|great|cool|nice|awesome|perfect)"
                    rf"(?:\s+(?:{'|'.join(sorted(_FILLER))}))*")
_ASIDE = r"(?:(?:a|one|quick|short|simple|small|another|random)\s+)*question"
# Typed fast, a greeting runs straight into the question: "hi how do I …", "hey can I …".
_ASKING = r"(?:how|what|why|where|when|which|who|is|are|can|could|do|does|did|should|would|will|i|we|my|our)\b"
_OPENER = re.compile(rf"^\s*(?:(?:{_SALUTATION}|{_ACKNOWLEDGEMENT}|{_ASIDE})\s*[,.!:;…—–-]+\s*|"
                     rf"(?:hi|hello|hey|hiya|howdy)\s+(?={_ASKING}))+", re.IGNORECASE)


# ...and what it may close with after it: thanks, "cheers", "thanks in advance", after the question's own punctuation
# ("…futures? thx": 2 of rust-book's 30 in-scope questions refused with it, 2 more lost their keywords), or after its
# last word when the word can only be thanks ("amcl particle count in the nav2 params cheers"; not "ty" or "regards").
_THANKS_WORDS = r"(?:(?:many|best|kind)\s+)?(?:thanks|thank\s+you|thx|tia|cheers)"
# Thanks fits in a message's last 80 characters. Searched for in the whole message, a run of 4,000 blanks took 2.4 s
# (every start tried); searched for there, a 10,000-character message costs what a short one does.
CLOSER_REACH = 80
_CLOSER = re.compile(rf"(?:(?<=[?.!,;:\n])\s*(?:{_THANKS_WORDS}|ty|(?:best|kind)\s+regards|regards)|\s+{_THANKS_WORDS})"
                     rf"(?:[\s,]+(?:{_THANKS_WORDS}|{'|'.join(sorted(_FILLER | {'in', 'advance', 'lots'}))}))*[\s.!]*$",
                     re.IGNORECASE)


def without_courtesies(text: str) -> str:
    """Return a message without the greeting or thanks around its question ("Hi, how do I …? Thanks!")."""
    opener = _OPENER.match(text)
    rest = text[opener.end():] if opener else text
    closer = _CLOSER.search(rest, max(0, len(rest) - CLOSER_REACH))
    rest = (rest[:closer.start()] if closer else rest).rstrip(" \n,;:") or rest
    # A message that is all courtesy is chit-chat (chitchat_reply), or else nothing is left to ask: keep it whole.
    return rest if any(w.lower() not in _FILLER for w in _WORD.findall(rest)) else text


def chitchat_reply(text: str) -> str | None:
    """Return a reply when the whole message is a greeting, thanks or goodbye; else None."""
    if not _GREETING.search(text):
        return None
    rest = _GREETING.sub(" ", text)
    if any(w.lower() not in _FILLER for w in _WORD.findall(rest)):
        return None
    if _THANKS.search(text):
        return "You're welcome! Ask me anything else about the documentation."
    if _BYE.search(text):
        return "Goodbye! Come back any time you have a question about the documentation."
    return CHITCHAT_REPLY


def subject_of(query: str) -> str:
    """Return the topic phrase of a standalone question ("What is Isaac Sim?" → "Isaac Sim").

    For an action ("How do I create a lockfile?") the topic is what is acted on ("the lockfile"), so that a
    pronoun standing for it is replaced by a noun phrase ("Can I export it?" → "Can I export the lockfile?"),
    never by a verb phrase. "" when no noun phrase can be told: a yes/no question, an action with no object
    left ("How can I check in a unit test …" → "check"), or a phrase whose head names nothing ("the quickest way").
    Only the ask counts, not the situation told before it.
    """
    query = asked_part(query)
    core = _FRAME.sub("", query.strip().rstrip("?.!")).strip()
    if _YES_NO.match(core) or not terms(core):
        return ""  # "…without storing it as a field. How?": a bare "How" names nothing
    action = _ACTION.match(query)
    if action:  # "turn on debug mode", "set up a virtual environment": the particle is the verb's, not a preposition
        core = _PARTICLE.sub(r"\1 ", core)
    short = _STOP.sub("", core).strip() or core
    short = _TRAILING_ADVERBS.sub("", short)
    if action:
        determiner = _DETERMINER.search(short)
        words = short.split()
        if not determiner and len(words) < 2:
            return ""
        # "start writing my own plugin" → "my own plugin"; "install Python 3.12" → "Python 3.12".
        short = short[determiner.start():] if determiner else " ".join(words[1:])
        if short.split()[0].lower() in _NO_OBJECT:  # "How can I sign up?", "turn off it": nothing acted on is named
            return ""
    elif _WHICH.match(query) and not _DETERMINER.match(short):
        short = f"the {short}"
    if short.split()[-1].lower() in _EMPTY_HEADS or _DETERMINER.fullmatch(f"{short} "):
        return ""  # "the quickest way", or "a good way to …" cut to its article: no noun to stand for
    if short.split()[0].lower() in _REFERS_BACK or _POINTS_BACK.search(short):
        # "give every pig its own intercept": "its own intercept" points back itself; "the VSLAM chapter recommend
        # against that" leans on the story told before the ask: neither names a topic
        return ""
    # Named once already, "a validator" is now "the validator".
    return re.sub(r"^(?:a|an)\s+", "the ", short, flags=re.IGNORECASE)


def is_followup(question: str) -> bool:
    """Tell whether a question leans on an earlier turn for its topic."""
    if _fragment(question):
        return True
    if _EXPLETIVE.search(question):
        return False
    return bool(_REPLACEABLE.search(question) or _REFERRING.search(question))


def _fragment(question: str) -> bool:
    """Tell whether a follow-up is a fragment with no pronoun of its own ("And for the exception output?")."""
    return bool(_ELLIPSIS.match(question)) and not (_REPLACEABLE.search(question) or _REFERRING.search(question))


def rewrite_followup(question: str, previous_query: str) -> str:
    """Make a follow-up standalone using the previous turn's standalone query."""
    if not previous_query or not is_followup(question) or _asks_alone(question):
        return question
    subject = subject_of(previous_query)
    plural = _PLURAL_PRONOUN.match(question)
    if plural and subject and not _REFERRING.search(question[plural.end():]):
        return f"{plural.group(1)}{subject}{question[plural.end():]}"
    part = _PART_OF.search(question)
    if part and not _REFERRING.search(question[:part.start()] + question[part.end():]):
        whole = _plural_subject(subject, previous_query)
        if whole and _PLURAL_NOUN.fullmatch(whole.split()[-1]):  # "one of the workspaces", never "one of the repo"
            whole = whole if _DETERMINER.match(whole) else f"the {whole}"  # "each of the integration tests"
            return question[:part.start(1)] + whole + question[part.end(1):]
    same = _SAME_NOUN.search(question)
    # "that the …" opens a clause ("impose that the coefficients are equal"): an article is no noun to name.
    if same and subject and same.group(1).lower() not in STOPWORDS and _names_noun(subject, same.group(1)) \
            and not _REFERRING.search(_ONE.sub("", question[:same.start()] + question[same.end():])):
        # "Once it's stable, how do I make that version the default one?" → "… make the beta version of my
        # package the default one?": the phrase that named the version, not the earlier question in brackets.
        return question[:same.start()] + subject + question[same.end():]
    match = _pronoun(question)
    word = match.group(1).lower() if match else ""
    if not subject and word in _ACTION_PRONOUNS and not plural:
        # "Does it also make a git commit?" after "What's the quickest way to bump my package?": with no object to
        # name, the pronoun as a subject stands for the asked action itself ("Does bumping my package also make …");
        # as an object it stands for what the action acts on ("How often should we rotate it?" after "What's a
        # good way to generate the secret key?": the key), and with nothing named the earlier question is kept.
        assert match is not None
        subject = way_object(previous_query) if _object(question, match) else action_of(previous_query)
    if word in {"it", "its"} and _plural(subject):
        subject = ""  # "it" never stands for "my admin pages": the earlier question is kept beside it instead
    # Nothing to substitute: the question goes as typed, the earlier one beside it.
    as_typed = bool(_REFERRING.search(question)) or _fragment(question) \
        or (match is not None and (_told_before(question, match) or _named_before(question, match)))
    if as_typed or not subject:
        return f"{question.rstrip()} ({previous_query.rstrip('?.! ')})"  # `as_asked` recognises this form
    assert match is not None
    rest = question[match.end():]
    if word == "it" and _ITS_VERB.match(rest):  # "What if it's an organization site?" → "… my docs is …"
        return f"{question[: match.start()]}{subject} is{rest[2:]}"
    if word in _PLURAL_PRONOUNS:
        subject = _plural_subject(subject, previous_query)
    replacement = f"{subject}'s" if word in {"its", "their"} else subject
    return question[: match.start()] + replacement + rest


# "How do I bump my package?", "What's the quickest way to bump my package?": the asked action, its verb and the rest.
_HOW_TO = re.compile(r"^\s*(?:and\s+)?(?:how\s+(?:do|can|could|should|would|will)\s+(?:i|we|you)|"
                     r"(?:what(?:'s|’s|\s+is)|is\s+there)\s+(?:the|a|an)\s+(?:[a-z]+\s+)?ways?\s+to)\s+"
                     r"([a-z]+)\b\s*(.*?)[\s?.!]*$", re.IGNORECASE)
# Pronouns that can stand for an action ("does it also tag", "is that safe"), unlike "they" or "its".
_ACTION_PRONOUNS = {"it", "this", "that"}
_VOWELS = "aeiou"


def gerund(verb: str) -> str:
    """Return a verb's -ing form by the spelling rules ("make" → "making", "get" → "getting", "tie" → "tying")."""
    word = verb.lower()
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")) and len(word) > 2:
        return word[:-1] + "ing"
    # One syllable ending consonant-vowel-consonant doubles its consonant ("run" → "running"), never w, x or y.
    if (len(word) >= 3 and word[-1] not in _VOWELS + "wxy" and word[-2] in _VOWELS and word[-3] not in _VOWELS
            and sum(c in _VOWELS for c in word) == 1):
        return word + word[-1] + "ing"
    return word + "ing"


def action_of(query: str) -> str:
    """Return the action a how-to question asks about as a gerund phrase ("bumping my package"); "" for others."""
    found = _HOW_TO.match(asked_part(query))
    return f"{gerund(found.group(1))} {found.group(2)}".strip() if found else ""


# A phrasal verb's particle before its object ("turn on debug mode"), which _STOP would take for a preposition.
_PARTICLE = re.compile(r"^([a-z]+)\s+(?:on|off|up|down|out)\s+(?=(?:the|a|an|my|our|your|[a-z]+\s+[a-z]+)\b)",
                       re.IGNORECASE)
_NO_OBJECT = {"on", "off", "up", "down", "out", "it", "them", "this", "that"}
# "What's a good way to generate the secret key?": the action after "way to", whose object a pronoun can stand for.
_WAY = re.compile(r"^\s*(?:what(?:'s|’s|\s+is)|is\s+there)\s+(?:the|a|an)\s+(?:[a-z]+\s+)?ways?\s+to\s+([a-z]+\s+.*)$",
                  re.IGNORECASE)
# Words after which "it" is a verb's subject ("does it", "what if it"), not its object ("rotate it", "into it").
_BEFORE_SUBJECT = {"is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "would", "will", "may",
                   "might", "must", "has", "have", "had", "if", "and", "but", "so", "when", "once", "because", "as",
                   "since", "while", "until", "unless", "then", "also", "still", "why", "how", "where", "what"}
# "Is it OK to leave it on?": the first "it" anticipates the clause ("to leave … on"); the second is the pronoun.
_ANTICIPATORY = re.compile(r"\b(?:is|was|isn't|wasn't)\s+(it)\s+[a-z]+\s+to\s+[a-z]+\s+(?:it|them|this|that)\b",
                           re.IGNORECASE)


def _pronoun(question: str) -> re.Match[str] | None:
    """Find the pronoun a rewrite replaces: the first, unless it only anticipates a clause that holds another."""
    ahead = _ANTICIPATORY.search(question)
    return _REPLACEABLE.search(question, ahead.end(1) if ahead else 0)


# A pronoun a few words after "and", "or" or "but" ("… Nav2's own launch file and hand it my params file").
_CONJOINED = re.compile(r"^(.*)\b(?:and|or|but)\s+(?:[\w'’-]+\s+){0,3}$", re.IGNORECASE | re.DOTALL)


def _named_before(question: str, match: re.Match[str]) -> bool:
    """Tell whether a pronoun follows a clause of its own question that names what it may stand for.

    "…pull in Nav2's own launch file from mine and hand it my own params file?": "it" is that launch file, not
    the earlier topic, so substituting the earlier subject would garble the question; "And how do I compile and
    run it?" names nothing before "and" and still takes the earlier topic.
    """
    conjoined = _CONJOINED.match(question[:match.start()])
    if conjoined is None:
        return False
    return len(terms(re.sub(r"^\W*(?:and|or|but)\b", "", conjoined.group(1), flags=re.IGNORECASE))) >= 2


# "What else can I try?" asks about what came before as much as a pronoun would.
_ELSE = re.compile(r"\belse\b", re.IGNORECASE)


def _asks_alone(question: str) -> bool:
    """Tell whether a question's ask names its own topic, whatever the words before it point back to.

    "Also the arm joint keeps swinging after it moves. How do I give a joint some damping?" is searched as asked;
    "What else can I try?" names nothing but what came before, and a statement ("That was not my question. I
    mean the continent.") asks nothing of its own.
    """
    ask = asked_part(question)
    return ask != question and ask.rstrip().endswith("?") and not is_followup(ask) and not _ELSE.search(ask) \
        and len(terms(ask)) >= 2


def _told_before(question: str, match: re.Match[str]) -> bool:
    """Tell whether a pronoun sits in what the user says before asking ("I did what you said but it crashes. …?").

    "That" in "That is fine." is no topic to substitute ("the groundwater is fine"); nor is a pronoun after it, whose
    antecedent that opening may name ("… about the greenhouse effect. Is it good or bad?").
    """
    ask = asked_part(question)
    if ask == question:
        return False
    opening = SENTENCE_END.split(ask.strip())[0]  # a sentence of the question as typed (the ask re-joins them)
    return match.start() < question.rfind(opening)


def _object(question: str, match: re.Match[str]) -> bool:
    """Tell whether a pronoun is a verb's or a preposition's object rather than a clause's subject."""
    before = re.findall(r"[a-z']+", question[:match.start()].lower())
    return bool(before) and before[-1] not in _BEFORE_SUBJECT


def way_object(query: str) -> str:
    """Return what a "what's a good way to …" question acts on ("the secret key"); "" for other questions."""
    found = _WAY.match(asked_part(query).rstrip("?.! "))
    # The action's object, as `subject_of` reads it from "How do I generate the secret key …?".
    return subject_of(f"How do I {found.group(1)}?") if found else ""


# "the default one", "a newer one": "one" standing for a noun of the same sentence, not for the earlier topic.
_ONE = re.compile(r"\b(?:the|a|an)\s+(?:[a-z]+\s+)?one\b", re.IGNORECASE)


def _names_noun(subject: str, noun: str) -> bool:
    """Tell whether the earlier topic's phrase holds `noun` as a word of its own, singular or plural."""
    stem = noun.lower().removesuffix("s")
    return re.search(rf"\b{re.escape(stem)}s?\b", subject.lower()) is not None


def as_asked(question: str, query: str) -> str:
    """Return `question` when `query` is it with the earlier question appended in brackets, else `query`.

    That is the rewrite's fallback for a reference it cannot swap for a noun ("Is that version the default?"):
    good for searching, not for naming the question back to the user.
    """
    said = question.rstrip()
    return said if said and query.startswith(f"{said} (") and query.endswith(")") else query


def asked_question(messages: Sequence[AnyMessage], retrieval_query: str) -> str:
    """Return the question to name back to the user: the standalone query, or the user's words it only extended."""
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    return as_asked(without_courtesies(humans[-1].text.strip()) if humans else "", retrieval_query)


def _plural(subject: str) -> bool:
    """Tell whether a topic phrase's head noun is plural ("my admin pages"; not "the status", "a class")."""
    head = subject.split()[-1] if subject else ""
    return bool(_PLURAL_NOUN.fullmatch(head)) and head.lower() not in _NOT_PLURAL


def _plural_subject(subject: str, previous_query: str) -> str:
    """Return what "they"/"them" stands for: the subject when it is plural, else the earlier question's last plural.

    "How many of them …?" after "How do I turn my repo into a monorepo using npm workspaces?" asks about the
    workspaces, not the repo.
    """
    if subject and _PLURAL_NOUN.fullmatch(subject.split()[-1]):
        return subject
    words = _FRAME.sub("", previous_query.strip().rstrip("?.!")).split()
    # A noun where a verb cannot be: the question's last word, or after a determiner, number or preposition
    # ("… using npm workspaces", "the tests in …"); not "where water enters the basin".
    plurals = [w for n, w in enumerate(words) if _PLURAL_NOUN.fullmatch(w) and w.lower() not in _NOT_PLURAL
               and (n == len(words) - 1 or (n > 0 and words[n - 1].lower() in _BEFORE_NOUN))]
    return f"the {plurals[-1]}" if plurals else subject


RESET_COMMANDS = frozenset({"/reset", "/clear", "/new"})
RESET_REPLY = "Conversation cleared. What would you like to know?"


def canned_reply(intent: str, text: str) -> str:
    """Return the short fixed reply of a turn that needs no documentation: a reset or chit-chat."""
    if intent == "reset":
        return RESET_REPLY
    return chitchat_reply(text) or CHITCHAT_REPLY
