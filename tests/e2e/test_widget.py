"""The chat widget in real Chromium, against a real `langgraph dev` serving the tiny corpus and its demo pages.

Runs when CI=true (Debian's /usr/bin/chromium driven by Playwright; no browser download). The
demo site is served by the agent's own server; a second static server on another origin embeds the
widget with one script tag, as a docs team would. Screenshots land in tests/e2e/screenshots/ (ignored
by git).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e import devserver
from tools import manifest

pytestmark = pytest.mark.e2e

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
SHOTS = Path(__file__).parent / "screenshots"
VISITOR_LIMIT = 4  # questions per visitor per 10 minutes on this server
HANDOFF = ("Email the docs team", "mailto:docs@example.org")
SELECTED = ("Inverse kinematics solves for the joint angles of a robot arm that place its end effector at a target "
            "pose. Forward kinematics computes the pose from the joint angles.")
WAIT = 90_000  # ms: a turn on a busy 2-core machine


def _needs() -> None:
    if os.environ.get("CI") != "true":
        pytest.skip("widget browser tests run when CI=true (they start langgraph dev and Chromium)")
    missing = [str(p) for p in (CHROMIUM, devserver.LANGGRAPH) if not p.exists()]
    if missing:
        pytest.fail(f"widget browser tests need {', '.join(missing)} (.ci/run installs chromium)")


class StaticSite:
    """A plain HTML page on its own origin that embeds the widget with one script tag."""

    def __init__(self) -> None:
        self.agent = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                body = site.page().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def page(self) -> str:
        label, url = HANDOFF
        return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Robot notes</title></head>
<body><h1>Robot arm notes</h1><p id="ik">{SELECTED}</p><p>Unrelated filler text.</p>
<script src="{self.agent}/widget/rag-agent.js" data-title="Robot help" data-starters="What is Isaac Sim?"
 data-handoff-url="{url}" data-handoff-label="{label}" data-shortcut="j" defer></script></body></html>"""


@pytest.fixture(scope="module")
def site() -> Iterator[StaticSite]:
    _needs()
    static = StaticSite()
    yield static
    static.httpd.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, site: StaticSite) -> Iterator[devserver.DevServer]:
    workdir = tmp_path_factory.mktemp("widget")
    label, url = HANDOFF
    env = devserver.prepare(
        workdir, ingest_args=["--base-url", "/demo"], RAG_AGENT_DEMO_DOCS=str(workdir / "docs"),
        RAG_AGENT_DEMO_STARTERS="What is Isaac Sim?|How long should I knead bread dough?",
        RAG_AGENT_HANDOFF_URL=url, RAG_AGENT_HANDOFF_LABEL=label,
        RAG_AGENT_ALLOWED_ORIGINS=f"http://127.0.0.1:{site.port}",
        RAG_AGENT_RATE_LIMIT_VISITOR=f"{VISITOR_LIMIT}/600", RAG_AGENT_RATE_LIMIT_IP="300/600")
    # The hash embedder scores lower than a real model: the deployment's threshold, not a visitor's setting.
    manifest.store_threshold(workdir / "data", "docs", 0.2, {"by": "tests/e2e/test_widget.py"})
    running = devserver.start(workdir, env)
    site.agent = running.url
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def browser(server: devserver.DevServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def visitor(browser: Any) -> Iterator[Any]:
    """A fresh browser context: a new visitor with empty localStorage."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.set_default_timeout(WAIT)
    yield context
    context.close()


def open_widget(page: Any, name: str = "Ask the docs") -> None:
    page.get_by_role("button", name=name).click()
    assert page.get_by_role("dialog", name=name).is_visible()


def ask(page: Any, question: str) -> Any:
    """Type a question, send it with Enter, and return the new answer bubble once it is complete."""
    before = page.locator(".msg.assistant .feedback, .notice").count()
    page.get_by_label("Your question").fill(question)
    page.get_by_label("Your question").press("Enter")
    page.locator(".msg.assistant .feedback, .notice").nth(before).wait_for()
    return page.locator(".msg.assistant").last


def _shots() -> Path:
    """The screenshot folder (tests/e2e/screenshots/, ignored by git) for a reviewer to open."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def stored(page: Any, name: str) -> Any:
    return page.evaluate("""(name) => { const k = Object.keys(localStorage).find(k => k.endsWith(':' + name));
                             return k ? JSON.parse(localStorage.getItem(k)) : null; }""", name)


def api(server: devserver.DevServer, page: Any) -> httpx.Client:
    """An API client holding this browser's visitor token."""
    token = stored(page, "token")["token"]
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def test_demo_answer_streams_links_to_the_section_and_the_thread_survives_a_reload(
        server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/baking")
    page.evaluate("""() => { window.deltas = []; document.getElementById('rag-agent-widget')
                                 .addEventListener('rag-agent:delta', e => deltas.push(e.detail)); }""")
    open_widget(page)
    assert page.evaluate("document.activeElement.id") == "rag-agent-widget"  # focus went into the panel
    page.get_by_role("button", name="What is Isaac Sim?").click()  # a starter question
    page.locator(".msg.assistant .feedback").first.wait_for()
    answer = page.locator(".msg.assistant").last
    text = answer.locator(".text").inner_text()
    assert "Isaac Sim is a robotics simulator" in text
    deltas = page.evaluate("deltas")
    assert deltas and "Isaac Sim is a robotics simulator" in "".join(d.get("answer_delta", "") for d in deltas)
    assert "High confidence" in answer.locator(".confidence").inner_text()
    # The quoted passage is one click away, and the source link points at the exact section.
    answer.locator(".sources summary").first.click()
    assert "robotics simulator built on Omniverse" in answer.locator(".sources blockquote").first.inner_text()
    link = answer.locator(".sources a").first
    assert link.get_attribute("href") == f"{server.url}/demo/isaac-sim#isaac-sim"
    answer_sources = answer.locator(".sources a").count()
    assert page.locator(".panel > [role=status]").inner_text().startswith("Answer: Isaac Sim")

    assert link.get_attribute("target") == "_top"  # this site's page: same tab
    link.click()
    page.wait_for_url(f"{server.url}/demo/isaac-sim#isaac-sim")
    assert page.locator("h1#isaac-sim").inner_text() == "Isaac Sim"
    # A new page load: the panel reopens by itself and restores the conversation from the thread id it kept.
    page.get_by_role("dialog", name="Ask the docs").wait_for()
    page.locator(".msg.assistant").first.wait_for()
    assert "What is Isaac Sim?" in page.locator(".msg.user").first.inner_text()
    restored = page.locator(".msg.assistant").first
    assert restored.locator(".sources a").first.get_attribute("href") == f"{server.url}/demo/isaac-sim#isaac-sim"
    # The stored message ends with a Markdown "Sources:" list for other chat UIs; the widget shows its own list once.
    assert "Sources:" not in restored.locator(".text").inner_text()
    assert restored.locator(".sources a").count() == answer_sources

    follow = ask(page, "How do I use it for synthetic data?")
    assert "Replicator" in follow.inner_text()
    assert follow.locator(".sources a").first.get_attribute("href") == f"{server.url}/demo/isaac-sim#synthetic-data"
    with api(server, page) as client:
        state = client.get(f"/threads/{stored(page, 'thread')}/state").json()["values"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human", "ai"]
    assert state["page_hint"] == f"{server.url}/demo/isaac-sim#isaac-sim"  # the page the question was asked on


def test_out_of_scope_shows_nearest_sections_and_the_hand_off_link(server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    answer = ask(page, "What is the capital of France?")
    assert "I don't have information about" in answer.inner_text()
    nearest = answer.locator(".nearest li a")
    assert nearest.count() >= 1
    hrefs = [nearest.nth(i).get_attribute("href") for i in range(nearest.count())]
    assert all(h and h.startswith(f"{server.url}/demo/") for h in hrefs)
    handoff = answer.get_by_role("link", name=HANDOFF[0])
    assert handoff.get_attribute("href") == HANDOFF[1]
    assert answer.locator(".confidence").count() == 0  # nothing answered: no confidence claimed

    page.get_by_label("Your question").fill("/reset")  # clears the thread on the server too
    page.get_by_label("Your question").press("Enter")
    page.locator(".msg.assistant", has_text="Conversation cleared").wait_for()
    assert page.locator(".msg").count() == 1
    with api(server, page) as client:
        values = client.get(f"/threads/{stored(page, 'thread')}/state").json()["values"]
    assert [m["type"] for m in values["messages"]] == ["ai"] and values["turns"] == 0


def test_embed_on_another_origin_answers_about_the_selected_text(server: devserver.DevServer, site: StaticSite,
                                                                 visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"http://127.0.0.1:{site.port}/notes.html")
    page.evaluate("""() => { const r = document.createRange(); r.selectNodeContents(document.getElementById('ik'));
                              const s = getSelection(); s.removeAllRanges(); s.addRange(r); }""")
    page.get_by_role("button", name="Ask about this").click()
    assert page.get_by_role("dialog", name="Robot help").is_visible()
    page.wait_for_timeout(600)  # past the widget's selection debounce
    assert page.locator(".ask-this").is_hidden()  # used once: it does not come back for the same selection
    assert "Asking about: “Inverse kinematics" in page.locator(".chip").inner_text()
    answer = ask(page, "What does inverse kinematics solve for?")
    assert "joint angles" in answer.locator(".text").inner_text()
    assert "Your selection" in answer.locator(".sources").inner_text()
    assert page.locator(".chip").is_hidden()  # the selection went with that question only

    # The same page served from an origin the server does not allow cannot use the agent.
    other = visitor.new_page()
    other.goto(f"http://localhost:{site.port}/notes.html")
    open_widget(other, "Robot help")
    # Told on opening, before typing anything; in words a visitor can act on, with the hand-off link.
    told = other.locator(".notice")
    assert "the assistant can't be reached from this page" in told.inner_text()
    assert other.locator(".starters").count() == 0
    assert other.get_by_role("link", name=HANDOFF[0]).get_attribute("href") == HANDOFF[1]
    refused = other.get_by_label("Your question")
    refused.fill("What is Isaac Sim?")
    refused.press("Enter")
    told.nth(1).wait_for()
    panel_text = other.locator(".panel").inner_text()
    assert "RAG_AGENT" not in panel_text and "ORIGIN" not in panel_text.upper()
    assert other.evaluate("localStorage.length") == 0  # no token was ever issued to it
    other.screenshot(path=str(_shots() / "widget-disallowed-origin.png"))


def test_thumbs_down_with_a_comment_is_stored_and_readable_through_the_api(
        server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    answer = ask(page, "How long should I knead bread dough?")
    answer.get_by_role("button", name="Not helpful").click()
    answer.get_by_label("Optional comment about this answer").fill("Say how to tell when it is done")
    answer.get_by_role("button", name="Send comment").click()
    answer.get_by_text("your comment was saved").wait_for()
    assert answer.get_by_role("button", name="Not helpful").get_attribute("aria-pressed") == "true"
    with api(server, page) as client:
        turn_id = client.get(f"/threads/{stored(page, 'thread')}/state").json()["values"]["turn_id"]
        ratings = client.get("/widget/feedback", params={"turn_id": turn_id}).json()["feedback"]
    assert [(r["rating"], r["comment"]) for r in ratings] == [(-1, "Say how to tell when it is done")]

    page.get_by_role("button", name="New chat").click()  # a new thread on the next question
    assert page.locator(".msg").count() == 0 and page.locator(".starters").is_visible()
    assert stored(page, "thread") is None


def test_another_visitor_cannot_see_the_first_ones_thread(server: devserver.DevServer, browser: Any,
                                                          visitor: Any) -> None:
    first = visitor.new_page()
    first.goto(f"{server.url}/demo/")
    open_widget(first)
    ask(first, "What is Isaac Sim?")
    thread = stored(first, "thread")

    second_context = browser.new_context()
    try:
        second = second_context.new_page()
        second.goto(f"{server.url}/demo/")
        open_widget(second)
        ask(second, "What is Isaac Sim?")  # its own token and thread
        assert stored(second, "thread") != thread
        with api(server, second) as client:
            assert client.get(f"/threads/{thread}").status_code == 404
            assert client.get(f"/threads/{thread}/state").status_code == 404
            assert thread not in {t["thread_id"] for t in client.post("/threads/search", json={}).json()}
        # Even handed the first visitor's thread id, the widget shows nothing of it.
        second.evaluate("""(t) => { const k = Object.keys(localStorage).find(k => k.endsWith(':token'));
                                    localStorage.setItem(k.replace(/token$/, 'thread'), JSON.stringify(t)); }""",
                        thread)
        assert stored(second, "thread") == thread
        second.reload()
        open_widget(second)
        second.locator(".starters").wait_for()
        assert second.locator(".msg").count() == 0
    finally:
        second_context.close()


def test_rate_limit_gives_a_friendly_slow_down_and_keeps_the_question(server: devserver.DevServer,
                                                                        visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    for _ in range(VISITOR_LIMIT):
        ask(page, "hello")
    ask(page, "What is Isaac Sim?")
    notice = page.locator(".notice.slow")
    assert "You're asking faster than I can answer. Please wait" in notice.inner_text()
    assert notice.get_attribute("role") == "alert"
    assert page.get_by_label("Your question").input_value() == "What is Isaac Sim?"


def test_keyboard_dark_mode_and_phone_screenshots(server: devserver.DevServer, browser: Any) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, options in {"desktop": {"viewport": {"width": 1280, "height": 800}, "color_scheme": "light"},
                          "phone": {"viewport": {"width": 390, "height": 844}, "color_scheme": "dark",
                                    "is_mobile": True, "has_touch": True}}.items():
        context = browser.new_context(**options)
        context.set_default_timeout(WAIT)
        try:
            page = context.new_page()
            page.goto(f"{server.url}/demo/isaac-sim")
            launcher = page.get_by_role("button", name="Ask the docs")
            launcher.focus()
            page.keyboard.press("Enter")  # opens from the keyboard, focus lands in the question box
            assert page.evaluate("document.getElementById('rag-agent-widget').shadowRoot.activeElement.tagName") \
                == "TEXTAREA"
            answer = ask(page, "What is Isaac Sim?")
            answer.locator(".sources summary").first.click()
            ask(page, "What is the capital of France?")
            page.screenshot(path=str(SHOTS / f"widget-{name}.png"))
            panel = page.locator(".panel")
            background = panel.evaluate("el => getComputedStyle(el).backgroundColor")
            box = panel.bounding_box()
            if name == "phone":
                assert background == "rgb(13, 17, 23)"  # dark theme
                assert box and box["width"] == 390  # full screen on a phone
            else:
                assert background == "rgb(255, 255, 255)"
                assert box and box["width"] <= 420
            page.keyboard.press("Escape")
            assert panel.is_hidden()
            assert page.evaluate("document.getElementById('rag-agent-widget').shadowRoot.activeElement.className") \
                == "launcher"
        finally:
            context.close()
    assert (SHOTS / "widget-desktop.png").stat().st_size > 10_000
    assert (SHOTS / "widget-phone.png").stat().st_size > 10_000


# ---- issue 25: Markdown answers, copy, shortcut, progress, thumbs-up, the selection button ----------------

MARKDOWN = """Install the CLI, then index the docs [1]:

```bash
pip install rag-agent
rag-agent ingest https://docs.example.org/ [1]
```

Then:

- run `rag-agent ask` for one question
- run **rag-agent chat** for a conversation

| Flag | Meaning |
|---|---:|
| `--base-url` | where links point |

<img src=x onerror="window.pwned=1"> [click me](javascript:window.pwned=2) and https://example.org/guide [1]"""


def _sse(events: list[tuple[str, Any]]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def _markdown_run(server: devserver.DevServer) -> str:
    """A run's event stream as the server sends it, for an answer written in Markdown (a chat model's style)."""
    citation = {"index": 1, "source_url": "/demo/isaac-sim#isaac-sim", "title": "Isaac Sim", "heading_hierarchy": [],
                "text": "Isaac Sim is a robotics simulator built on Omniverse.", "chunk_id": "c1"}
    half = MARKDOWN.index("Then:")
    values = {"messages": [{"type": "human", "content": "How do I install it?", "id": "h1"},
                           {"type": "ai", "content": MARKDOWN, "id": "a1"}],
              "status": "grounded", "answer": MARKDOWN, "citations": [citation], "turn_id": "t-markdown",
              "confidence": 0.9, "not_found": None}
    return _sse([("metadata", {"run_id": "r1"}), ("values", {"messages": values["messages"][:1], "status": "pending"}),
                 ("custom", {"answer_delta": MARKDOWN[:half]}), ("custom", {"answer_delta": MARKDOWN[half:]}),
                 ("values", values)])


def test_a_markdown_answer_shows_code_lists_and_tables_safely_with_copy_buttons(
        server: devserver.DevServer, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(WAIT)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    try:
        page = context.new_page()
        page.route("**/runs/stream", lambda route: route.fulfill(
            status=200, headers={"Content-Type": "text/event-stream"}, body=_markdown_run(server)))
        page.goto(f"{server.url}/demo/baking")
        open_widget(page)
        answer = ask(page, "How do I install it?")
        text = answer.locator(".text")
        code = text.locator("pre code")
        assert code.inner_text().rstrip("\n") == "pip install rag-agent\nrag-agent ingest https://docs.example.org/ [1]"
        assert code.locator("a").count() == 0  # a URL or a marker inside code is not a link
        items = text.locator("ul > li")
        assert [items.nth(i).inner_text() for i in range(items.count())] == [
            "run rag-agent ask for one question", "run rag-agent chat for a conversation"]
        assert text.locator("li code").inner_text() == "rag-agent ask" and text.locator("li strong").count() == 1
        assert text.locator("th").nth(1).inner_text() == "Meaning"
        assert text.locator("td code").inner_text() == "--base-url"
        # Raw HTML is text, never markup; a javascript: link is not a link; a bare URL outside code is one.
        assert text.locator("img").count() == 0 and page.evaluate("window.pwned") is None
        assert '<img src=x onerror="window.pwned=1">' in text.inner_text()
        assert text.get_by_role("link", name="click me").count() == 0
        external = text.get_by_role("link", name="https://example.org/guide")
        assert external.get_attribute("target") == "_blank" and "noopener" in (external.get_attribute("rel") or "")
        cites = text.locator("a.cite")
        assert cites.count() == 2 and cites.first.get_attribute("href") == f"{server.url}/demo/isaac-sim#isaac-sim"

        answer.get_by_role("button", name="Copy code").click()
        assert page.evaluate("navigator.clipboard.readText()") == \
            "pip install rag-agent\nrag-agent ingest https://docs.example.org/ [1]"
        answer.get_by_role("button", name="Copied").wait_for()
        answer.get_by_role("button", name="Copy answer").click()
        assert page.evaluate("navigator.clipboard.readText()") == MARKDOWN
        page.screenshot(path=str(_shots() / "widget-markdown.png"))
    finally:
        context.close()


def test_ctrl_k_opens_the_panel_and_a_page_can_choose_its_own_key(server: devserver.DevServer, site: StaticSite,
                                                                    visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    assert page.locator(".panel").is_hidden()
    page.keyboard.press("Control+k")
    assert page.get_by_role("dialog", name="Ask the docs").is_visible()
    assert page.evaluate("document.getElementById('rag-agent-widget').shadowRoot.activeElement.tagName") == "TEXTAREA"
    page.keyboard.press("Escape")
    page.keyboard.press("Meta+k")  # ⌘-K on a Mac
    assert page.get_by_role("dialog", name="Ask the docs").is_visible()

    other = visitor.new_page()  # data-shortcut="j" on this page
    other.goto(f"http://127.0.0.1:{site.port}/notes.html")
    other.locator(".launcher").wait_for()
    other.keyboard.press("Control+k")
    assert other.locator(".panel").is_hidden()
    other.keyboard.press("Control+j")
    assert other.get_by_role("dialog", name="Robot help").is_visible()


def test_waiting_shows_searching_the_docs_and_progress_for_an_offline_answer(
        server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    # Record every progress line the visitor sees while the (offline, extractive) answer is made.
    page.evaluate("""() => { window.seen = []; const root = document.getElementById('rag-agent-widget').shadowRoot;
        new MutationObserver(() => { for (const p of root.querySelectorAll('.progress')) {
            const t = p.textContent; if (p.checkVisibility() && !seen.includes(t)) seen.push(t); } })
          .observe(root, { subtree: true, childList: true, characterData: true }); }""")
    answer = ask(page, "What is Isaac Sim?")
    seen = page.evaluate("seen")
    assert seen[0] == "Searching the docs…"
    assert any(s.startswith("Found ") and s.endswith("writing the answer…") for s in seen), seen
    assert answer.locator(".progress").count() == 0  # gone once the answer is there
    assert "Isaac Sim is a robotics simulator" in answer.locator(".text").inner_text()


def test_thumbs_up_asks_nothing_is_stored_and_shows_pressed_after_a_reload(
        server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    answer = ask(page, "What is Isaac Sim?")
    answer.get_by_role("button", name="Helpful", exact=True).click()
    answer.get_by_text("Thanks for the feedback.").wait_for()
    assert answer.get_by_role("button", name="Helpful", exact=True).get_attribute("aria-pressed") == "true"
    assert "What was missing or wrong" not in answer.inner_html()  # nothing asked of a happy reader
    assert answer.get_by_placeholder("What helped? (optional)").is_visible()  # offered, not required
    with api(server, page) as client:
        turn_id = client.get(f"/threads/{stored(page, 'thread')}/state").json()["values"]["turn_id"]
        ratings = client.get("/widget/feedback", params={"turn_id": turn_id}).json()["feedback"]
    assert [(r["rating"], r["comment"]) for r in ratings] == [(1, None)]

    page.reload()
    open_widget(page)
    restored = page.locator(".msg.assistant").first
    restored.locator(".feedback").wait_for()
    assert restored.get_by_role("button", name="Helpful", exact=True).get_attribute("aria-pressed") == "true"
    assert restored.get_by_role("button", name="Not helpful").get_attribute("aria-pressed") == "false"
    page.screenshot(path=str(_shots() / "widget-thumbs-up-restored.png"))


def test_the_ask_about_this_button_never_appears_for_the_widgets_own_text(
        server: devserver.DevServer, visitor: Any) -> None:
    page = visitor.new_page()
    page.goto(f"{server.url}/demo/")
    open_widget(page)
    box = page.get_by_label("Your question")
    box.fill("How do I install Isaac Sim on Ubuntu?")
    box.press("Control+a")  # select all of one's own question
    page.wait_for_timeout(600)  # past the widget's selection debounce
    assert page.locator(".ask-this").is_hidden()
    answer = ask(page, "What is Isaac Sim?")
    answer.locator(".text p").first.click(click_count=3)  # select a paragraph of the answer
    page.wait_for_timeout(600)
    assert page.locator(".ask-this").is_hidden()
    page.screenshot(path=str(_shots() / "widget-own-selection.png"))
