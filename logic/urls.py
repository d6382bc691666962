"""One URL normaliser for every path rule: crawl prefix, robots.txt, sitemaps, links, redirects, the allow-list.

A path rule compared on the raw text is bypassed by `/docs/%2e%2e/private/`, `/docs//internal/` or a
backslash, which a server resolves to another path. Every rule compares what `normalize` and `path_key`
return, and the crawler requests the normalised URL, so what was checked is what is asked for.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["BadURLError", "credentials", "normalize", "path_key", "remove_dot_segments", "strip_credentials",
           "under"]
_DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 3986 §2.3: escapes of unreserved characters mean the character itself (%2e is `.`, %7E is `~`).
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# What may stand unescaped in a path or query (RFC 3986 pchar, plus `/` and `?`); `%` only as an escape.
_ALLOWED = _UNRESERVED | frozenset("!$&'()*+,;=:@/?%")
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# Escaped `/` and `\`: kept in the URL sent (their meaning is the server's), decoded when comparing paths.
_ESCAPED_SLASH = re.compile(r"%(2[Ff]|5[Cc])")
_SLASHES = re.compile(r"/{2,}")
# `scheme://user:password@`: the userinfo ends at the authority's last `@`.
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/?#]*@", re.IGNORECASE)


class BadURLError(ValueError):
    """A URL that names no page: unparseable, no host, a bad port or a scheme other than http(s)."""


def remove_dot_segments(path: str) -> str:
    """Resolve `.` and `..` segments as RFC 3986 §5.2.4 says (a `..` above the root stays at the root)."""
    output: list[str] = []
    for segment in path.split("/")[1:] if path.startswith("/") else path.split("/"):
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    resolved = "/" + "/".join(output) if path.startswith("/") else "/".join(output)
    # A path ending in a dot segment names the folder it resolves to: `/a/b/..` is `/a/`.
    if path.rsplit("/", 1)[-1] in (".", "..") and not resolved.endswith("/"):
        resolved += "/"
    return resolved


def _escape(text: str) -> str:
    """Decode escaped unreserved characters, upper-case the other escapes, escape what may not stand bare."""
    text = _ESCAPE.sub(lambda m: chr(int(m[1], 16)) if chr(int(m[1], 16)) in _UNRESERVED else f"%{m[1].upper()}",
                       text)
    text = _LONE_PERCENT.sub("%25", text)
    # A browser escapes control, space and non-ASCII characters rather than refusing the link (WHATWG URL).
    return "".join(c if c in _ALLOWED else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def _clean_path(path: str) -> str:
    r"""Return a path with `\` as `/` (as browsers read it), escapes normalised, `//` collapsed, dots resolved."""
    path = _escape(path.replace("\\", "/"))
    return remove_dot_segments(_SLASHES.sub("/", path or "/")) or "/"


def normalize(url: str) -> str:
    """Return an http(s) URL in one form: no credentials or fragment, lower-case host, no default port, clean path.

    Raises BadURLError for a URL that cannot name a page.
    """
    try:
        parts = urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError as exc:  # an unclosed IPv6 bracket, a port that is not a number
        raise BadURLError(f"invalid URL {url!r}: {exc}") from None
    if scheme not in _DEFAULT_PORTS:
        raise BadURLError(f"not an http(s) URL: {url!r}")
    if not host or any(c <= " " or c in "\x7f\\%" for c in host):
        raise BadURLError(f"invalid host in URL {url!r}")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    query = _escape(parts.query.replace("\\", "%5C"))
    return urlunsplit((scheme, netloc, _clean_path(parts.path), query, ""))


def path_key(url: str) -> str:
    """Return the path every path rule compares: normalised, with escaped slashes read as slashes.

    A server that decodes `%2F` before resolving `..` serves `/docs/..%2Fprivate/` from `/private/`;
    read the same way here, such a path is outside `/docs/` too.
    """
    path = urlsplit(normalize(url)).path
    return _clean_path(_ESCAPED_SLASH.sub("/", path)) if _ESCAPED_SLASH.search(path) else path


def under(path: str, prefix: str) -> bool:
    """Tell whether a normalised path is the folder `prefix` (ending in `/`) or inside it, by whole segments."""
    return (path if path.endswith("/") else path + "/").startswith(prefix)


def credentials(url: str) -> tuple[str, str] | None:
    """Return the (user, password) a URL carries, decoded, or None when it has none."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username is None and parts.password is None:
        return None
    return unquote(parts.username or ""), unquote(parts.password or "")


def strip_credentials(url: str) -> str:
    """Return the URL without `user:password@` (anything else unchanged); text that is no URL is returned as is."""
    return _USERINFO.sub(r"\1", url)
