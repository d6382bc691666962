"""Retrieved text is data: which sentences address a model instead of the reader, and which hosts may be named."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import urlsplit

from logic.unicode_text import DOTS, normalize_text, skeleton

# Each phrase is a shape injected text takes and tutorial prose does not: an order to set aside
# instructions, a claim to speak for the system, chat-template role markers, an order addressed to
# an assistant/AI/model about what to tell its users, or a fixed answer for every question. Ordinary
# instructions to the reader ("you are now ready", "ignore the warning", "the model can output RGB
# images", "the assistant must be configured") match none of them.
_ADDRESSEE = r"(?:assistants?|(?:AI|language|chat)\s+(?:models?|assistants?|agents?)|AIs?|LLMs?|chat\s?bots?|bots?)"
_PHRASES = (
    r"\b(?:ignore|disregard|forget|override)\b[^.!?\n]{0,40}\b(?:instructions?|prompts?)\b",
    r"\bsystem\s+(?:notice|override|alert|directive|instructions?\s*:)",
    r"<\|(?:im_start|im_end|system|assistant|user|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?INST\]|<</?SYS>>",
    rf"\b{_ADDRESSEE}\b[^.!?\n]{{0,40}}\b(?:must|should|shall|have to|need to|are to|are required to|always|never)\b"
    r"[^.!?\n]{0,20}\b(?:tell|inform|instruct|direct|send|redirect|advise|urge|ask|refer|point|remind|warn|reply|"
    r"respond|answer|say|recommend)\b",
    rf"\b(?:if|when)\s+you\s+are\s+(?:an?\s+)?{_ADDRESSEE}\b",
    rf"\b(?:attention|note to|dear|hey)\s*,?\s*{_ADDRESSEE}\b",
    r"\bthe\s+(?:only\s+)?(?:answer|reply|response)\s+to\s+(?:every|any|all|each)\s+(?:questions?|queries|prompts?)\b",
)
# The same attack shapes in other languages an injection is commonly written in (French, Spanish, German,
# Chinese): setting instructions aside, a "system" notice, an assistant told what to tell users, a fixed
# answer for every question. Shapes of an order to a model, not vocabulary of any corpus.
_ADDRESSEE_FR = (r"(?:assistants?|(?:mod[èe]les?|agents?)\s+(?:de\s+langage|conversationnels?|d'IA)|IA|LLMs?|"
                 r"chat\s?bots?|bots?)")
_FOREIGN = (
    r"\b(?:ignore[zr]?|oublie[zr]?|n[ée]glige[zr]?|ignora|olvida|ignoriere|vergiss)\b[^.!?\n]{0,40}"
    r"\b(?:instructions?|consignes?|directives?|instrucciones|anweisungen|prompts?)\b",
    r"\b(?:avis|instruction|consigne|message|aviso|instrucci[óo]n|systemhinweis)\s+(?:du\s+)?syst[èe]me\b",
    rf"\b{_ADDRESSEE_FR}\b[^.!?\n]{{0,40}}\b(?:doi(?:t|vent)|devra(?:it|ient)?|deben?|m[üu]ssen|muss)\b[^.!?\n]{{0,20}}"
    r"\b(?:dire|indiquer|informer|r[ée]pondre|rediriger|envoyer|conseiller|recommander|demander|decir|responder|"
    r"sagen|antworten)\b",
    r"\bla\s+(?:seule\s+)?r[ée]ponse\s+[àa]\s+(?:toutes?\s+les|chaque|toute)\s+questions?\b",
    r"(?:忽略|无视|忽视|不要理会|忘记|忘掉)[^。！？\n]{0,20}(?:指令|指示|提示词?|规则|说明|命令)",
    r"系统(?:通知|指令|提示|消息|公告)\s*[:：]",
    r"(?:助手|人工智能|AI|模型|机器人)[^。！？\n]{0,10}(?:必须|应该|应当|需要|一定要)[^。！？\n]{0,20}"
    r"(?:告诉|告知|回复|回答|引导|建议|发送|让用户|提醒)",
    r"(?:所有|每个|任何)(?:的)?问题的(?:答案|回答|回复)(?:都|均)?是",
)
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in (*_PHRASES, *_FOREIGN)), re.IGNORECASE)
# A run that may be base64 (standard or URL-safe alphabet): long enough to hold an order.
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
# Role markers are case-sensitive on purpose ("Assistant: ..." in a transcript shape, not "assistant:" in prose).
_ROLE = re.compile(r"(?:^|[\s\[(])(?:SYSTEM|ASSISTANT)\s*:")
# A sentence ends at . ! ? followed by whitespace (so "attacker.example/login" stays whole) or at a line break.
# CJK full stops end a sentence as they are: no space follows them.
SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?]+(?=[^\s.!?]))*(?:[.!?]+|[。！？]+|\n|$)")

# Bare hosts: www.anything, or a dotted name followed by a path or port, or one ending in a TLD that
# is not also a common file extension (README.md, setup.py and install.sh are files, not sites).
_TLDS = ("com|net|org|info|biz|xyz|top|site|online|click|link|live|app|dev|io|co|me|ly|ai|gg|tk|ru|cn|uk|de|fr|"
         "us|eu|example|test|invalid|onion")
_HOST = re.compile(
    r"(?<![\w@./-])(?:"
    r"www\.(?:[a-z0-9-]+\.)*[a-z0-9-]+"  # www.host
    r"|(?:[a-z0-9-]+\.)+[a-z]{2,24}(?=[/:]\w)"  # host/path, host:port
    rf"|(?:[a-z0-9-]+\.)+(?:{_TLDS})\b(?!\(|\w|\.\w)"  # host.tld
    r")(?::\d{1,5})?(?:/[^\s)\]>\"'`]*[^\s)\]>\"'`.,;:!?])?",
    re.IGNORECASE,
)
# An e-mail address names a host too: one on a foreign host is a way to send users elsewhere.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@((?:[a-z0-9-]+\.)+[a-z]{2,24})\b", re.IGNORECASE)
# Links a reader can follow; other schemes (ROS's package:// and model://, database URLs) name no site.
_URL = re.compile(r"\b(?:https?|ftps?|wss?|file)://[^\s)\]>\"'`]+(?<![.,;:!?])", re.IGNORECASE)


def _decoded(text: str) -> list[str]:
    """Return the readable text of the base64 runs in `text` (an order hidden from a plain-text check)."""
    found = []
    for match in _BASE64.finditer(text):
        run = match.group(0).rstrip("=").replace("-", "+").replace("_", "/")
        try:
            plain = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):  # not base64, or not text (a hash, an identifier)
            continue
        if plain and sum(ch.isprintable() or ch.isspace() for ch in plain) >= 0.95 * len(plain) \
                and sum(ch.isalpha() for ch in plain) >= 0.5 * len(plain.replace(" ", "")):
            found.append(plain)
    return found


def readings(sentence: str) -> list[str]:
    """Return the ways a sentence can be read: as written, as a homoglyph skeleton, and as the base64 it carries.

    As written means with hidden characters removed (an order split by zero-width spaces reads whole).
    """
    plain = normalize_text(sentence)
    views = [plain, skeleton(plain)] if not plain.isascii() else [plain]
    for decoded in _decoded(plain):
        views += [decoded, skeleton(decoded)]
    return views


def is_instruction(sentence: str) -> bool:
    """Tell whether a sentence addresses a model (an order, a role marker, a fixed answer) rather than the reader.

    Read through zero-width splits, homoglyphs, several languages and base64: an order is an order however
    it is spelled.
    """
    return any(_INSTRUCTION.search(view) or _ROLE.search(view) for view in readings(sentence))


def instructions(text: str) -> list[str]:
    """Return the instruction-like sentences of a text, stripped."""
    return [s.strip() for s in SENTENCE.findall(text) if s.strip() and is_instruction(s)]


def flag_pages(pages: dict[str, str], limit: int = 3) -> dict[str, list[str]]:
    """Return, per page, its first instruction-like sentences (shortened): what a docs team should review."""
    flagged = {}
    for source, text in pages.items():
        found = instructions(text)[:limit]
        if found:
            flagged[source] = [s if len(s) <= 160 else s[:157] + "..." for s in found]
    return flagged


def without_instructions(text: str, replacement: str = "") -> str:
    """Replace each instruction-like sentence by `replacement` (a following space keeps the layout)."""
    return "".join((f"{replacement} " if replacement else "") if is_instruction(s) else s
                   for s in SENTENCE.findall(text))


def own_hosts(source_urls: list[str]) -> set[str]:
    """Return the hosts (lowercase, without www.) the cited sources are published on."""
    hosts = set()
    for url in source_urls:
        host = (urlsplit(url).hostname or "") if "://" in url else ""
        if host:
            hosts.add(host.lower().removeprefix("www."))
    return hosts


def _host_of(link: str) -> str:
    """Return the lowercase host of a URL or bare host[:port][/path], without www."""
    target = link if "://" in link else f"//{link}"
    try:
        host = urlsplit(target).hostname or ""
    except ValueError:
        return ""
    return host.lower().removeprefix("www.")


# Links written so that a plain check misses them: a defanged scheme (hxxps://, https[:]//) ...
_DEFANGED = re.compile(r"\b(?:h[x*]{2}ps?|fxps?)(?:\[:\]|:)//[^\s)\]>\"'`]+|\b(?:https?|ftp)\[:\]//[^\s)\]>\"'`]+",
                       re.IGNORECASE)
# ... or a host whose dots are spelled out or bracketed ("evil . example", "evil[.]example", "evil(dot)example").
# Matched on the ASCII view of the text (`_view`), where homoglyphs and CJK full stops already read as ASCII.
_OBFUSCATED_DOT = r"(?:\s?[\[({]\s?(?:\.|dot)\s?[\])}]\s?|\s\.\s|\.)"
_LOOSE_HOST = re.compile(
    rf"(?<![A-Za-z0-9/.-])[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?(?:{_OBFUSCATED_DOT}[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?)+"
    r"(?::\d{1,5})?(?:/[^\s)\]>\"'`]*[^\s)\]>\"'`.,;:!?])?",
    re.IGNORECASE,
)


def _view(text: str) -> str:
    """Return `text` with each homoglyph as the ASCII letter it imitates and CJK full stops as dots, same length."""
    if text.isascii():
        return text
    folded = skeleton(text)
    if len(folded) != len(text):  # a character folded to two: compare one by one instead
        folded = "".join(f if len(f := skeleton(ch)) == 1 else ch for ch in text)
    return folded.translate({ord(d): "." for d in DOTS[1:]})


def _disguised(text: str, allowed: set[str], keep: set[str]) -> str:
    """Remove defanged links and hosts spelled with look-alike letters or disguised dots.

    A disguise of the sources' own host (dots only) is left to the plain checks; look-alike letters never
    are, whatever they spell: that is how a phishing host imitates the real one.
    """
    view = _view(text)
    spans: list[tuple[int, int]] = []
    for match in _DEFANGED.finditer(view):
        if text[match.start():match.end()] not in keep:
            spans.append(match.span())
    for match in _LOOSE_HOST.finditer(view):
        written = text[match.start():match.end()]
        plain = re.sub(_OBFUSCATED_DOT, ".", match.group(0))
        if written == plain or written in keep or not _HOST.fullmatch(plain):
            continue  # written plainly (the checks below decide), quoted from the sources, or no host at all
        if written.isascii() and _host_of(plain) in allowed:
            continue
        mailbox = re.search(r"[\w.+-]+@$", text[:match.start()])  # an address on that host goes whole
        spans.append((mailbox.start() if mailbox else match.start(), match.end()))
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + text[end:]
    return text


def strip_foreign_hosts(text: str, allowed: set[str], keep_urls: set[str] | None = None) -> str:
    """Remove links and bare domains whose host is not one of `allowed` (links in `keep_urls` stay).

    Disguised ones go too: defanged schemes, spelled-out or bracketed dots, CJK full stops and look-alike
    letters from other scripts. `keep_urls` holds links, hosts and addresses written in the sources.
    """
    keep = keep_urls or set()
    text = _disguised(text, allowed, keep)

    def url(match: re.Match[str]) -> str:
        link = match.group(0)
        return link if link.split("#")[0] in keep or link in keep else ""

    def host(match: re.Match[str]) -> str:
        return match.group(0) if _host_of(match.group(0)) in allowed or match.group(0) in keep else ""

    def email(match: re.Match[str]) -> str:
        return match.group(0) if match.group(1).lower().removeprefix("www.") in allowed or match.group(0) in keep \
            else ""

    return _HOST.sub(host, _EMAIL.sub(email, _URL.sub(url, text)))


def named_links(text: str) -> set[str]:
    """Return the links, hosts and e-mail addresses a text names, as written: what a quote of it may repeat."""
    return {m.group(0) for pattern in (_URL, _HOST, _EMAIL) for m in pattern.finditer(text)}
