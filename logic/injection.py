"""Retrieved text is data: which sentences address a model instead of the reader, and which hosts may be named."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

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
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _PHRASES), re.IGNORECASE)
# Role markers are case-sensitive on purpose ("Assistant: ..." in a transcript shape, not "assistant:" in prose).
_ROLE = re.compile(r"(?:^|[\s\[(])(?:SYSTEM|ASSISTANT)\s*:")
# A sentence ends at . ! ? followed by whitespace (so "attacker.example/login" stays whole) or at a line break.
SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?]+(?=[^\s.!?]))*(?:[.!?]+|\n|$)")

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


def is_instruction(sentence: str) -> bool:
    """Tell whether a sentence addresses a model (an order, a role marker, a fixed answer) rather than the reader."""
    return bool(_INSTRUCTION.search(sentence) or _ROLE.search(sentence))


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


def strip_foreign_hosts(text: str, allowed: set[str], keep_urls: set[str] | None = None) -> str:
    """Remove links and bare domains whose host is not one of `allowed` (URLs in `keep_urls` stay)."""
    keep = keep_urls or set()

    def url(match: re.Match[str]) -> str:
        link = match.group(0)
        return link if link.split("#")[0] in keep else ""

    def host(match: re.Match[str]) -> str:
        return match.group(0) if _host_of(match.group(0)) in allowed else ""

    def email(match: re.Match[str]) -> str:
        return match.group(0) if match.group(1).lower().removeprefix("www.") in allowed else ""

    return _HOST.sub(host, _EMAIL.sub(email, _URL.sub(url, text)))
