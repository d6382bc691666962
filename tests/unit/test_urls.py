"""One URL normaliser for every path rule (issue 23): dot segments, `//`, escapes and credentials."""

from __future__ import annotations

import pytest

from logic import allowlist, urls


@pytest.mark.parametrize(("path", "resolved"), [  # RFC 3986 §5.2.4 and §5.4's examples, as paths
    ("/a/b/c/./../../g", "/a/g"), ("/mid/content=5/../6", "/mid/6"), ("/a/b/../../../g", "/g"),
    ("/a/b/..", "/a/"), ("/a/./b/.", "/a/b/"), ("/a/g.", "/a/g."), ("/a/..g", "/a/..g"), ("/", "/"),
])
def test_dot_segments_are_removed_as_rfc_3986_says(path: str, resolved: str) -> None:
    assert urls.remove_dot_segments(path) == resolved


@pytest.mark.parametrize(("url", "normal"), [
    ("http://h/docs/%2e%2e/private/x.html", "http://h/private/x.html"),
    ("http://h/docs/x/%2E%2e/internal/a", "http://h/docs/internal/a"),
    ("http://h/docs//internal/b", "http://h/docs/internal/b"),
    ("http://h/docs\\..\\private/", "http://h/private/"),
    ("HTTP://User:Pw@Docs.Example:80/%7Euser/%41?q=a b#frag", "http://docs.example/~user/A?q=a%20b"),
    ("https://h:8443", "https://h:8443/"),
    ("http://h/a\x7fb.html", "http://h/a%7Fb.html"),
])
def test_normalize_gives_one_spelling(url: str, normal: str) -> None:
    assert urls.normalize(url) == normal


def test_escaped_slashes_count_as_slashes_when_paths_are_compared() -> None:
    assert urls.path_key("http://h/docs/a%2Fb/..%2F..%2Fprivate/") == "/docs/private/"
    assert urls.path_key("http://h/docs/..%2Fprivate/") == "/private/"


@pytest.mark.parametrize("url", ["mailto:a@b", "javascript:alert(1)", "http://[::1/x", "http://h:99999/", "http:///x"])
def test_urls_that_name_no_page_are_refused(url: str) -> None:
    with pytest.raises(urls.BadURLError):
        urls.normalize(url)


def test_credentials_are_read_and_stripped() -> None:
    assert urls.credentials("http://us%40er:p%3Aw@h/docs/") == ("us@er", "p:w")
    assert urls.strip_credentials("http://user:pw@h/docs/?a@b") == "http://h/docs/?a@b"
    assert urls.strip_credentials("http://h/a@b") == "http://h/a@b" and urls.credentials("http://h/") is None


@pytest.mark.parametrize(("source", "allowed"), [
    ("http://host/docs/", True), ("http://host/docs/sitemap.xml", True), ("http://host/docs", True),
    ("http://user:pw@host/docs/a/", True), ("http://HOST:80/docs/./a/", True),
    ("http://host/docs/%2e%2e/private/", False), ("http://host/docs/..%2fprivate/", False),
    ("http://host/docs//../private/", False), ("http://host/docs-private/", False), ("http://host:81/docs/", False),
    ("http://[::1/docs/", False),
])
def test_allow_list_compares_normalised_paths(source: str, allowed: bool) -> None:
    assert allowlist.url_allowed(source, ["http://host/docs/"]) is allowed
