"""Offline answers: pick the retrieved sentences that best match the query and cite them."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

from logic import fences
from logic.lexical import terms
from logic.markdown_text import normalize_markdown
from logic.passages import Unit, is_prose, join_wrapped, units
from logic.selection import asked_terms

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Emphasis and code markers, quote and heading prefixes; intra-word underscores (OPENAI_API_KEY) stay.
_MD_NOISE = re.compile(r"\*+|`+|^\s*[>#]+\s*|(?<!\w)_+|_+(?!\w)")
_BULLET = re.compile(r"^\s*(?:[-+*]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
# "What is X?", "Why …?", "How does X work?": the reader wants the explanation; bare code illustrates it at most.
_EXPLAIN = re.compile(r"^\s*(?:what\s+(?:is|are|does|do)\b|why\b|how\s+(?:does|is|are)\b|explain\b|describe\b)",
                      re.IGNORECASE)
# Sections about the page rather than its subject: what a learner will do, not what the subject is.
_META_SECTION = re.compile(r"\b(?:learning\s+objectives?|objectives|what\s+you(?:'ll|\s+will)\s+learn)\b",
                           re.IGNORECASE)
# The question's own identifiers (`mkdocs get-deps`, extra_css, --strict, pyproject.toml): a rare term the
# passage that answers names, where a neighbour on the same topic does not.
_IDENTIFIER = re.compile(r"`([^`\n]+)`|(?<![\w-])(--?[A-Za-z][\w-]*|[A-Za-z][\w]*(?:[-_.][\w]+)+)")
_HOW = re.compile(r"^\s*(?:how\s+(?:do|can|should|would|to)|what\s+(?:command|steps)|steps?\b|install|set\s*up|"
                  r"configure|run|create|write|show\s+me)", re.IGNORECASE)


# How a chunk's heading path is joined (generate_grounded): its last part is the chunk's own section title.
SECTION_PATH = " › "
# Blocks quoted after a chosen unit when they follow it directly: the command after "add this:", then the
# config after "Then add it to mkdocs.yml:" (a step's second half).
FOLLOWING_BLOCKS = 2


def identifiers(query: str) -> set[str]:
    """Return the question's identifiers, lower-cased: code spans, options, dotted or dashed names."""
    found = {(m.group(1) or m.group(2)).strip().lower() for m in _IDENTIFIER.finditer(query)}
    return {f for f in found if len(f) > 2 and not f.endswith((".", "-"))}


def sentences(markdown: str) -> list[str]:
    """Split a chunk's Markdown into readable prose sentences, dropping code and table rows."""
    text = _MD_LINK.sub(r"\1", fences.BLOCK.sub(" ", normalize_markdown(markdown)))
    out: list[str] = []
    for block in join_wrapped(text.splitlines()):
        block = _MD_NOISE.sub("", _BULLET.sub("", block)).strip()
        out.extend(s.strip() for s in _SENTENCE_END.split(block) if is_prose(s))
    return out


# Words naming the kind of content a question asks for.
_KIND_WORDS = {"table": {"table", "compare", "comparison"}, "code": {"code", "snippet", "function", "script"},
               "list": {"list", "step", "method", "option", "type", "kind"}}
Similarity = Callable[[str, list[str]], list[float]]


def extract_answer(query: str, chunks: list[str], similarity: Similarity | None = None,
                   headings: list[str] | None = None, max_words: int | None = None,
                   follows: list[int | None] | None = None) -> list[tuple[int, str]]:
    """Return (chunk position, quoted text) pairs that answer `query`, in reading order.

    A list, table or code block is quoted whole with the sentence that introduces it; prose is quoted
    by sentence. `similarity(query, texts)` (the embedder's cosine) ranks the candidates by meaning; word
    overlap with the question, the chunk's rank and a "how do I" question's preference for steps add to it.
    `headings` (one per chunk) name each chunk's section; `follows[i]`, when given, is the position of the chunk
    that chunk i directly goes on from (the page's previous chunk, same section), whose units it is read after.
    """
    # A lead-in whose list, table or code did not follow it ("configure the following:") answers nothing alone,
    # nor does a question (review questions often repeat the user's own, word for word), nor a section about
    # the page itself ("Learning Objectives": what a reader will do, not what the subject is).
    meta = {i for i, heading in enumerate(headings or []) if _META_SECTION.search(heading)}
    found = [(i, u) for i in _reading_order(follows, len(chunks)) for u in units(chunks[i])]
    # ...unless it is all there is: a chunk cut right after its definition ("X is a technique that ...:").
    candidates = [(i, u) for i, u in found
                  if not (u.kind == "sentence" and u.body.endswith(":")) and not _asks(u) and i not in meta] or found
    if not candidates:
        return []
    max_words = MAX_WORDS if max_words is None else max_words
    query_terms = set(terms(query))
    # A passage sharing none of the question's words answers it only by the embedder's say-so, which fails
    # on a name the embedder never learned ("What is AMCL?"): such passages give way when others name it.
    # A section's heading counts: "AMCL" may be named only there, above a code block.
    named = [set(terms(heading)) for heading in headings or [""] * len(chunks)]
    words = {u: set(terms(u.text)) for _, u in candidates}  # each unit's terms, counted once

    def shares(candidate: tuple[int, Unit]) -> bool:
        return bool(query_terms & (words[candidate[1]] | named[candidate[0]]))

    candidates = [c for c in candidates if shares(c)] or candidates
    document_freq = Counter(t for _, u in candidates for t in words[u])
    n = len(candidates)
    meaning = similarity(query, [u.text[:1000] for _, u in candidates]) if similarity else []
    meaning = meaning if len(meaning) == n else [0.0] * n
    wants_steps = bool(_HOW.search(query))
    wanted_kind = next((kind for kind, words in _KIND_WORDS.items() if words & set(terms(query))), None)
    explains = bool(_EXPLAIN.search(query)) and not wants_steps and wanted_kind != "code"
    if not asked_terms(query) and wanted_kind is None:
        # "Summarize this": nothing to match, so quote what a reader skims: each section's and paragraph's opening.
        titles = [h.split(SECTION_PATH)[-1].strip() for h in headings or [""] * len(chunks)]
        return outline(candidates, max_words, titles)

    raw = {u: f"{u.lead} {u.body}".lower() for _, u in candidates}
    # Only an identifier few candidates name tells them apart: a site's own config file (`mkdocs.yml`) is everywhere.
    rare = {r for r in identifiers(query) if sum(r in raw[u] for _, u in candidates) <= max(1, len(candidates) // 5)}
    heads = [h.lower() for h in headings or [""] * len(chunks)]

    def names_rare(k: int) -> float:
        """Score a unit that names the question's identifier, or opens the section its heading names."""
        rank, unit = candidates[k]
        if not rare:
            return 0.0
        if any(r in raw[unit] for r in rare):
            return 0.4
        first = next(j for j in range(n) if candidates[j][0] == rank)
        return 0.3 if k == first and any(r in heads[rank] for r in rare) else 0.0

    def score(k: int) -> float:
        rank, unit = candidates[k]
        overlap = query_terms & words[unit]
        lexical = sum(math.log(1 + n / document_freq[t]) for t in overlap) / max(len(query_terms), 1)
        steps = 0.15 if wants_steps and unit.kind in ("code", "list") else 0.0
        steps += 0.5 if unit.kind == wanted_kind else 0.0
        dangling = 0.3 if unit.kind == "sentence" and unit.body.endswith(":") else 0.0
        dangling += 0.3 if explains and unit.kind == "code" and not unit.lead else 0.0
        return (2.0 * meaning[k] + 0.3 * lexical + 0.2 / (1 + rank) + 0.05 / (1 + unit.position) + steps - dangling
                + names_rare(k))

    order = sorted(range(n), key=score, reverse=True)
    best = order[0]
    # Passages are read from every quotable unit, not only those sharing the question's words: the sentence
    # after the one that names the subject is often the one that answers.
    chosen = set(candidates)  # all of them when nothing else was left (a page of review questions)
    pool = [(i, u) for i, u in found if (i, u) in chosen or (not _asks(u) and i not in meta)]
    where = {c: p for p, c in enumerate(pool)}
    # The passage, not a mosaic of sentences: the best unit's paragraph with the block it introduces, then
    # what directly follows it in its chunk while the quote is short (the command after "run this:").
    # Where one retrieved chunk goes on from another, so may a quote: chunking cut the page, not its argument.
    seams = frozenset(k for k in range(1, len(pool)) if follows and follows[pool[k][0]] == pool[k - 1][0]
                      and pool[k][0] != pool[k - 1][0] and pool[k][1].position == 0 and not pool[k][1].section)
    picked = _passage(pool, where[candidates[best]], max_words, seams)
    if wants_steps:
        picked += _step_after(pool, picked, seams)
    used = _words(pool, picked)
    # The runner-up sections too, while the quote has room: an answer is often split (the list in one section,
    # the numbers in the next), and the embedder's favourite is not always the passage that answers. Measured
    # on the sites benchmark: without a runner-up keyword recall falls by a fifth; one from the best passage's
    # own chunk adds little; a second one from a third chunk lifts every site (docs/benchmarks.md).
    quoted = {candidates[best][0]}
    for _ in range(RUNNER_UPS):
        runner = next((k for k in order[1:] if candidates[k][0] not in quoted), None)
        if runner is None or used >= max_words:
            break
        quoted.add(candidates[runner][0])
        if shares(candidates[runner]):
            extra = _passage(pool, where[candidates[runner]], max(max_words - used, RUNNER_UP_WORDS), seams,
                             follow=False)
            picked += [k for k in extra if k not in picked]
            used = _words(pool, picked)
    # Reading order; an explanation opens with the chunk of its best unit (the definition, not the code of a
    # higher-ranked chunk) and the chunks that go on from it, whose units keep their order.
    lead = set(_run_from(follows, candidates[best][0])) if explains else set()
    picked = sorted(set(picked), key=lambda k: (pool[k][0] not in lead, k))
    return [(pool[k][0], _quote(pool[k][1])) for k in _once(pool, picked)]


def _reading_order(follows: list[int | None] | None, n: int) -> list[int]:
    """Return chunk positions best first, each run of a page's consecutive chunks read whole, in the page's order."""
    placed: list[int] = []
    for i in range(n):
        first = i
        for _ in range(n):  # back to the run's first retrieved chunk (bounded: a bad `follows` may loop)
            back = follows[first] if follows else None
            if back is None or back in placed:
                break
            first = back
        placed += [j for j in _run_from(follows, first) if j not in placed]
    return placed


def _run_from(follows: list[int | None] | None, first: int) -> list[int]:
    """Return a chunk and the retrieved chunks that go on from it, one after another."""
    after = {f: i for i, f in enumerate(follows or []) if f is not None}
    run = [first]
    while (later := after.get(run[-1])) is not None and later not in run:
        run.append(later)
    return run


def _content(unit: Unit) -> str:
    """Return what a unit says, spacing aside: a code block's lines without its fences (```none, ```console)."""
    lines = unit.body.splitlines()
    fence = fences.opening(lines[0]) if unit.kind == "code" and lines else None
    if fence:
        lines = lines[1:-1] if len(lines) > 1 and fences.closes(lines[-1], fence) else lines[1:]
    return " ".join(" ".join(lines).split())


def _runs(unit: Unit) -> set[tuple[str, ...]]:
    """Return every SHARED_RUN consecutive written lines of a code unit (none for prose)."""
    if unit.kind != "code":
        return set()
    lines = [line.strip() for line in unit.body.splitlines()[1:] if line.strip() and line.strip() != "…"]
    return {tuple(lines[n:n + SHARED_RUN]) for n in range(len(lines) - SHARED_RUN + 1)}


def _once(candidates: list[Candidate], picked: list[int]) -> list[int]:
    """Drop a unit the answer already quotes: a sentence two pages repeat, a block two chunks were both given.

    A unit held whole in another (a list item that a longer list also holds) is said by the other, and so is code
    that shares SHARED_RUN lines in a row with code already quoted (two pieces of one long example, each joined
    to its neighbour).
    """
    said = {k: _content(candidates[k][1]) for k in picked}
    runs = {k: _runs(candidates[k][1]) for k in picked}
    kept: list[int] = []
    for k in picked:
        if any(said[k] == said[j] or (len(said[k]) >= _HELD and said[k] in said[j]) or runs[k] & runs[j]
               for j in kept):
            continue
        kept = [j for j in kept if not (len(said[j]) >= _HELD and said[j] in said[k])]
        kept.append(k)
    return kept


def outline(candidates: list[tuple[int, Unit]], max_words: int, titles: list[str]) -> list[tuple[int, str]]:
    """Quote what a skim reads (sections' openings, then paragraphs'), within `max_words`, in reading order.

    When the quotes come from more than one section, each section's first quote is led by its title in bold.
    """
    openings: list[tuple[int, int]] = []  # (how early a skim reads it, its place)
    opened: set[tuple[int, int]] = set()  # (chunk, section within it) whose first sentence is taken
    seen: set[tuple[int, int]] = set()
    for k, (i, unit) in enumerate(candidates):
        if unit.kind in ("code", "table") or unit.body.endswith(":"):
            continue
        if (i, unit.paragraph) in seen:  # the rest of a paragraph, as room is left, from the top
            openings.append((3, k) if unit.kind == "sentence" else (4, k))
            continue
        seen.add((i, unit.paragraph))
        if unit.kind != "sentence":  # a list of key points, if room is left
            openings.append((2, k))
            continue
        # A section's first sentence (a chunk that starts a section, or a heading inside one), then each paragraph's.
        starts = (i == 0 or titles[i] != titles[i - 1] or unit.section > 0) and (i, unit.section) not in opened
        opened.add((i, unit.section))
        openings.append((0 if starts else 1, k))
    picked: list[int] = []
    for _, k in sorted(openings):
        if _words(candidates, [*picked, k]) <= max_words:
            picked.append(k)
    # A selection of code or a table alone: its first block is the gist there is.
    picked = sorted(picked) or [0]
    if len({titles[candidates[k][0]] for k in picked}) < 2:
        return [(candidates[k][0], _quote(candidates[k][1])) for k in picked]
    out, shown = [], {""}
    for k in picked:
        i = candidates[k][0]
        title = titles[i] if (i == 0 or titles[i] != titles[i - 1]) and titles[i] not in shown else ""
        shown.add(title)
        out.append((i, _titled(title, _quote(candidates[k][1])) if title else _quote(candidates[k][1])))
    return out


def _titled(title: str, quote: str) -> str:
    """Lead a quote with its section's title, as an outline shows it."""
    return f"**{title}**: {quote.lstrip()}" if not quote.startswith("\n") else f"\n**{title}**:\n{quote}"


# A quote's prose is bounded (code and tables are bounded by lines in logic/passages.py); a passage shorter
# than SHORT_PASSAGE words is a lead-in or a one-liner, completed by what follows it in its chunk.
MAX_WORDS = 120
SHORT_PASSAGE = 40
RUNNER_UP_WORDS = 40
RUNNER_UPS = 2
Candidate = tuple[int, Unit]
# A unit this long found inside another quoted unit is a repeat; a shorter one ("Default: true.") may just coincide.
_HELD = 20
# Code lines in a row that make two quoted blocks the same code; examples sharing only their imports stay apart.
SHARED_RUN = 6
# How many units past a prose passage a how-to answer looks for the command that carries it out.
STEP_REACH = 6
# A sentence opening on a word that refers to the sentence before it.
_POINTS_BACK = re.compile(r"(?:this|these|that|those|it|its|they|such|here|however|but|also|so|therefore|thus|then|"
                          r"instead|otherwise|in\s+(?:this|that|these|those|such))\b", re.IGNORECASE)


def _key(candidates: list[Candidate], k: int) -> tuple[int, int]:
    """Return the passage a candidate belongs to: its chunk and paragraph."""
    return candidates[k][0], candidates[k][1].paragraph


def _words(candidates: list[Candidate], picked: list[int]) -> int:
    """Count the prose words of picked units (lead-ins and lists count; code and tables do not)."""
    return sum(len(candidates[k][1].lead.split()) + (len(candidates[k][1].body.split())
                                                     if candidates[k][1].kind in ("sentence", "list") else 0)
               for k in picked)


def _passage(candidates: list[Candidate], k: int, max_words: int, seams: frozenset[int] = frozenset(),
             follow: bool = True) -> list[int]:
    """Return the units of k's paragraph around k within `max_words`, then (with `follow`) what follows it.

    `seams` are the units that open a chunk going on from the one before them in `candidates`.
    """
    key = _key(candidates, k)
    members = [j for j in range(len(candidates)) if _key(candidates, j) == key]
    picked = [k]
    # A sentence opening on a word that points back ("In this mode, …", "However, …") comes with the unit before it
    # in its section, which says what it means.
    unit = candidates[k][1]
    if unit.kind == "sentence" and _POINTS_BACK.match(unit.body) and k > 0 and _adjacent(candidates, k - 1, k, seams):
        picked.insert(0, k - 1)
    # Grow around them: forward first (the key line usually follows its topic sentence), then backward.
    ahead = [j for j in members if j > k]
    behind = [j for j in reversed(members) if j < picked[0]]
    for j in [*ahead, *behind]:
        if _words(candidates, [*picked, j]) > max_words and candidates[j][1].kind == "sentence":
            if j > k:
                ahead = []
            continue
        if j > k and j - 1 not in picked:
            continue  # no gap inside a quote
        if j < k and j + 1 not in picked:
            continue
        picked.append(j)
    picked.sort()
    if not follow:
        return picked
    # What directly follows in the same chunk belongs to the step: the blocks after "add this:" (at most
    # FOLLOWING_BLOCKS), and the next paragraph while the quote is still a lead-in or a one-liner.
    blocks = 0  # adjacent units share k's chunk and section
    for j in range(picked[-1] + 1, len(candidates)):
        if not _adjacent(candidates, j - 1, j, seams):
            break
        if candidates[j][1].kind != "sentence" and blocks < FOLLOWING_BLOCKS:
            blocks += 1
        elif _words(candidates, picked) >= SHORT_PASSAGE or _words(candidates, [*picked, j]) > max_words:
            break
        picked.append(j)
    # Still a one-liner (a setting's second paragraph): what comes before it in its section says what it is.
    for j in range(picked[0] - 1, -1, -1):
        if not _adjacent(candidates, j, j + 1, seams) \
                or _words(candidates, picked) >= SHORT_PASSAGE or _words(candidates, [j, *picked]) > max_words:
            break
        picked.insert(0, j)
    return picked


def _step_after(candidates: list[Candidate], picked: list[int], seams: frozenset[int]) -> list[int]:
    """Return the first code block after a passage of prose only, further on in its section, for a "how do I"."""
    if any(candidates[k][1].kind != "sentence" for k in picked):
        return []
    for j in range(picked[-1] + 1, min(picked[-1] + 1 + STEP_REACH, len(candidates))):
        if not _adjacent(candidates, j - 1, j, seams):
            break
        if candidates[j][1].kind == "code":
            # With the rest of its paragraph: "Run the `cargo publish` command again." before "It should succeed now:".
            step = [i for i in range(picked[-1] + 1, j) if _key(candidates, i) == _key(candidates, j)]
            return [*step, j] if _words(candidates, step) <= SHORT_PASSAGE else [j]
    return []


def _adjacent(candidates: list[Candidate], j: int, k: int, seams: frozenset[int] = frozenset()) -> bool:
    """Tell whether unit j directly precedes unit k in the same chunk and section, or across a seam of two chunks."""
    if k == j + 1 and k in seams:
        return True
    (chunk_j, before), (chunk_k, after) = candidates[j], candidates[k]
    return chunk_j == chunk_k and after.position == before.position + 1 and after.section == before.section


def _asks(unit: Unit) -> bool:
    """Tell a question, or a list of them, from a statement: a question states no answer."""
    if unit.kind == "sentence":
        return unit.body.rstrip().endswith("?")
    items = [line for line in unit.body.splitlines() if _BULLET.match(line)] if unit.kind == "list" else []
    return bool(items) and 2 * sum(line.rstrip().endswith("?") for line in items) > len(items)


def _quote(unit: Unit) -> str:
    """Render a unit as quoted Markdown: a block on its own lines after its lead-in."""
    if unit.kind == "sentence":
        return unit.body
    return f"{unit.lead}\n\n{unit.body}\n" if unit.lead else f"\n{unit.body}\n"


def _terminate(sentence: str) -> str:
    """End a bullet-point fragment with a full stop so stitched sentences read as prose."""
    # Closing emphasis or quotes after the stop ("**Never commit the key.**") end the sentence too.
    ended = sentence.endswith("\n") or sentence.rstrip("*_\"'”’)").endswith((".", "!", "?", ":", "…"))
    return sentence if ended else sentence + "."


def _marked(rank: int, text: str) -> str:
    """Mark a quoted sentence, or a block after its lead-in (a block without one gets the marker after it)."""
    if "\n" not in text:
        return f"{_terminate(text)} [{rank + 1}]"
    lead, _, body = text.strip("\n").partition("\n\n") if not text.startswith("\n") else ("", "", text.strip("\n"))
    if lead:
        return f"\n\n{lead} [{rank + 1}]\n\n{body}\n\n"
    return f"\n\n{body}\n[{rank + 1}]\n\n"


def render(picked: list[tuple[int, str]]) -> str:
    """Join picked quotes into one answer, each with the [n] marker of its chunk (1-based).

    A quote ending in a colon whose list or code did not come with it (the chunk ended there) says so with
    an ellipsis rather than ending the answer mid-sentence.
    """
    shown = [(rank, text.rstrip() + " …" if text.rstrip().endswith(":") and
              (n + 1 == len(picked) or not picked[n + 1][1].startswith("\n")) else text)
             for n, (rank, text) in enumerate(picked)]
    return re.sub(r"\n{3,}", "\n\n", " ".join(_marked(rank, text) for rank, text in shown)).strip()
