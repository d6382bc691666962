"""Re-ranking: lexical coverage, page evidence and the gate's confidence behave as documented."""

import math

import pytest

from logic import lexical, ranking
from logic.lexical import Lexicon
from logic.types import Chunk
from tools import lexicon_store


def chunk(source: str, score: float, text: str, title: str = "Page") -> Chunk:
    return {"chunk_id": f"{source}-{score}", "source": source, "source_url": source, "title": title,
            "heading_hierarchy": [], "score": score, "text": text}


def test_terms_drop_stopwords_and_singularise() -> None:
    assert lexical.terms("What are the Sensors of a robot?") == ["sensor", "robot"]


def test_idf_and_coverage_are_exact() -> None:
    lex = lexical.build(["amcl localises the robot", "the robot moves", "robot arms"])
    assert lex.chunks == 3 and lex.df["robot"] == 3 and lex.df["amcl"] == 1
    assert lex.idf("amcl") == pytest.approx(math.log(4 / 1.5))
    assert lex.idf("unseen") == pytest.approx(math.log(4 / 0.5))
    query = ["amcl", "robot"]
    expected = lex.idf("amcl") / (lex.idf("amcl") + lex.idf("robot"))
    assert lex.coverage(query, "AMCL is a localiser") == pytest.approx(expected)
    assert lex.coverage(query, "nothing relevant") == 0.0
    assert lex.coverage([], "anything") == 0.0


def test_the_section_whose_heading_names_the_question_wins_a_near_tie() -> None:
    lex = lexical.build(["release build optimized", "debug build", "cargo build", "release notes"])
    mention = chunk("intro.md", 0.41, "Cargo builds a debug binary by default; a release build is optimized.")
    section = {**chunk("cargo.md", 0.40, "Run cargo build with the flag to compile with optimizations."),
               "heading_hierarchy": ["Hello, Cargo!", "Building for Release"]}
    ranked, _ = ranking.rank("How do I make a release build?", [mention, section], lex, top_k=2)
    assert [c["source"] for c in ranked] == ["cargo.md", "intro.md"]


def test_rare_query_term_lifts_a_near_tie() -> None:
    lex = lexical.build(["amcl particle filter", "navigation stack", "navigation planner", "planner"])
    hits = [chunk("nav.md", 0.40, "The navigation stack plans paths."),
            chunk("loc.md", 0.39, "AMCL is a particle filter localiser.")]
    ranked, _ = ranking.rank("What is AMCL?", hits, lex, top_k=2)
    assert [c["source"] for c in ranked] == ["loc.md", "nav.md"]


def test_page_with_several_strong_chunks_beats_one_lucky_chunk() -> None:
    hits = [chunk("lucky.md", 0.70, "x"), chunk("page.md", 0.68, "y"), chunk("page.md", 0.67, "z"),
            chunk("page.md", 0.66, "w")]
    ranked, _ = ranking.rank("unrelated words", hits, Lexicon(), top_k=1)
    assert ranked[0]["source"] == "page.md"


def test_a_short_page_is_not_taken_for_one_lucky_chunk() -> None:
    # The one-chunk overview page is the best match; long pages' other chunks are weak.
    hits = [chunk("guide.md", 0.62, "x"), chunk("tour.md", 0.61, "y"), chunk("index.md", 0.64, "z")]
    ranked = ranking.order("weeks", hits, Lexicon(), 3, {"guide.md": 40, "tour.md": 30, "index.md": 1})
    assert ranked[0]["source"] == "index.md"
    # Without page sizes (an index ingested before they were stored) every page counts as long.
    assert ranking.order("weeks", hits, Lexicon(), 3)[0]["source"] == "index.md"
    assert ranking.page_sizes([{"source": "a.md", "page_chunks": 2}, {"source": "b.md"}]) == {"a.md": 2, "b.md": 3}


def test_after_the_sections_the_gate_reads_another_page_goes_before_more_of_the_same_page() -> None:
    # Release notes mention everything: six of their chunks outscore the configuration page's one.
    hits = [chunk("notes.md", 0.70 - i / 100, f"note {i}") for i in range(6)] + [chunk("config.md", 0.64, "strict")]
    ranked = ranking.order("unrelated words", hits, Lexicon(), 5)
    assert [c["source"] for c in ranked] == ["notes.md"] * 3 + ["config.md", "notes.md"]
    assert [c["chunk_id"] for c in ranked[:3]] == [c["chunk_id"] for c in hits[:3]]  # what the gate reads: as ranked
    assert ranked[3]["relevance"] < ranked[2]["relevance"]  # each keeps its own score; only its place moved
    # With no more places than the gate reads, nothing moves; with one page only, the order is the ranking's.
    assert [c["source"] for c in ranking.order("unrelated words", hits, Lexicon(), 3)] == ["notes.md"] * 3
    alone = ranking.order("unrelated words", hits[:6], Lexicon(), 5)
    assert [c["chunk_id"] for c in alone] == [c["chunk_id"] for c in hits[:5]]



def test_gate_score_rises_with_the_asked_for_terms_present_and_keeps_chunk_scores() -> None:
    lex = lexical.build(["blip captions images", "robot arm", "robot leg", "Zenoh"])
    hits = [chunk("m.md", 0.30, "BLIP captions images")]
    ranked, present = ranking.rank("What is BLIP?", hits, lex, 5)
    assert ranked[0]["score"] == 0.30  # the stored cosine is reported unchanged
    _, named_elsewhere = ranking.rank("Does BLIP run on Zenoh?", hits, lex, 5)
    _, never_used = ranking.rank("Does BLIP run on Quux?", hits, lex, 5)
    assert present is not None and named_elsewhere is not None and never_used is not None
    assert 0 < named_elsewhere < present < 1 and never_used < present
    assert ranking.rank("anything", [], lex, 5) == ([], None)


def test_lexicon_round_trips_and_rejects_a_corrupt_file(tmp_path) -> None:
    lex = lexical.build(["alpha beta", "beta"])
    lexicon_store.save(tmp_path, "docs", lex)
    assert lexicon_store.load(tmp_path, "docs") == lex
    assert lexicon_store.load(tmp_path, "other") is None
    lexicon_store.path_for(tmp_path, "docs").write_text("{not json")
    with pytest.raises(Exception, match="re-run ingest"):
        lexicon_store.load(tmp_path, "docs")


@pytest.mark.parametrize("question", ["How much does an Isaac Sim licence cost?", "What is the price of Isaac Sim?",
                                      "What does Isaac Sim cost per seat?"])
def test_a_price_question_is_doubted_where_no_price_is_stated(question: str) -> None:
    lex = lexical.build(["isaac sim licence seat simulator", "robot arm"])
    silent = [chunk("i.md", 0.7, "Isaac Sim is a simulator; each seat needs a licence from NVIDIA.")]
    priced = [chunk("i.md", 0.7, "Isaac Sim is a simulator; each seat needs a licence, $99 a year, from NVIDIA.")]
    _, without = ranking.rank(question, silent, lex, 5)
    _, with_price = ranking.rank(question, priced, lex, 5)
    assert without is not None and with_price is not None
    assert without <= 0.1 * with_price + 1e-4


@pytest.mark.parametrize("question", ["What is the latency cost of hybrid search?",
                                      "Can the hybrid search fees be waived?"])
def test_a_question_about_cost_or_fees_that_asks_no_amount_is_not_a_price_question(question: str) -> None:
    lex = lexical.build(["hybrid search cost latency fees waived", "robot arm"])
    hits = [chunk("s.md", 0.7, "Hybrid search costs about 30 ms of latency per query; its fees can be waived.")]
    _, score = ranking.rank(question, hits, lex, 5)
    assert score is not None and score > 0.25


def test_a_phrase_spelled_out_is_found_under_its_acronym() -> None:
    lex = lexical.build(["AMCL max_particles 2000 nav2 localization config", "robot arm", "gazebo world"])
    hits = [chunk("n.md", 0.55, "AMCL configuration for Nav2: max_particles: 2000, min_particles: 500.")]
    _, spelled = ranking.rank("How many particles does the adaptive Monte Carlo localization use in Nav2?",
                              hits, lex, 5)
    _, unrelated = ranking.rank("How many particles does the Webots Particle Engine use in Nav2?", hits, lex, 5)
    assert spelled is not None and unrelated is not None and spelled > 0.25 > unrelated


def test_a_lowercase_word_is_no_acronym() -> None:
    from logic.answerability import spelled_out

    assert spelled_out("take home exam", "the exam") == {}
    assert spelled_out("the adaptive Monte Carlo localization", "uses AMCL") == {
        "amcl": ["adaptive", "monte", "carlo", "localization"]}


def test_a_section_quoting_the_questions_identifier_is_ranked_first() -> None:
    lex = lexical.build(["index missing error", "json response fields error", "rebuild index"])
    codes = chunk("errors.md", 0.33, "INDEX_MISSING: nothing has been ingested yet; run rag-agent ingest.")
    general = chunk("response.md", 0.45, "The JSON response carries an error object when a turn fails.")
    ranked, _ = ranking.rank("What does the INDEX_MISSING error mean?", [general, codes], lex, 2)
    assert ranked[0]["source"] == "errors.md"
    plain, _ = ranking.rank("What does an index error mean?", [general, codes], lex, 2)
    assert plain[0]["source"] == "response.md"  # no identifier quoted: the embedding leads as before


def test_a_follow_up_whose_best_section_left_the_conversation_is_doubted() -> None:
    lex = lexical.build(["appeal fee waiver", "flu sick home", "appeal form"])
    hits = [chunk("flu.md", 0.45, "If you are sick with flu, stay home.")]
    question = "What about if I'm sick?"
    _, alone = ranking.rank(question, hits, lex, 5)
    _, near = ranking.rank(question, hits, lex, 5, off_topic_of=lambda c: 0.0)
    _, drifted = ranking.rank(question, hits, lex, 5, off_topic_of=lambda c: 0.3)
    assert alone == near and drifted is not None and alone is not None and drifted < alone


def test_off_topic_measures_the_section_against_the_whole_conversation() -> None:
    from logic import answerability

    fee, waiver, flu = [1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]
    assert answerability.continues(waiver, [fee])  # the same subject
    assert not answerability.continues(flu, [fee])  # a new subject: the earlier turns do not apply
    assert answerability.off_topic(waiver, [fee], fee) == 0.0  # the section is what the conversation is about
    assert answerability.off_topic(waiver, [fee], flu) == pytest.approx(answerability.CONTEXT_HINGE)
    assert not answerability.continues(waiver, [])


def test_names_from_the_users_own_situation_are_not_asked_about() -> None:
    from logic.answerability import features

    lex = lexical.build(["serialize subclass fields model_dump", "field validators", "json schema"])
    hits = [chunk("s.md", 0.6, "To serialize a subclass's extra fields, pass serialize_as_any=True to model_dump.")]
    chatty = ("Our audit Event model has an actor field, and for admin actions we pass an AdminUser. "
              "How do I serialize the subclass's extra fields?")
    asked = "How do I serialize the extra fields of an AdminUser subclass?"
    assert features(chatty, hits, lex)["names_missing"] == 0.0
    # Named in the question itself, the name still has to be in the docs.
    assert features(asked, hits, lex)["names_missing"] == 1.0


def test_a_name_made_an_adjective_is_the_name_without_its_suffix() -> None:
    from logic.answerability import features

    lex = lexical.build(["3D LiDAR like Velodyne", "camera plugin", "imu sensor"])
    hits = [chunk("s.md", 0.6, "For 3D LiDAR like Velodyne, load the GPU laser plugin.")]
    # "Velodyne-style" is the Velodyne the section names; the suffix is no word it must write.
    assert features("Which plugin do I load for a Velodyne-style lidar?", hits, lex)["names_missing"] == 0.0
    assert features("Which plugin do I load for an Ouster-style lidar?", hits, lex)["names_missing"] == 1.0


def test_an_everyday_word_the_site_uses_is_not_a_missing_name() -> None:
    from logic.answerability import features

    lex = lexical.build(["retry methods GET PUT", "send a POST request with a body", "the zenoh bridge",
                         "headers sent with the request"])
    hits = [chunk("r.md", 0.6, "methods: the HTTP methods to retry. Default: GET, PUT, HEAD, OPTIONS, DELETE.")]
    ordinary = {"post", "java", "authorization"}
    # "POST" is a word of English the docs use elsewhere: the methods option answers whether POST is retried.
    assert features("Will it retry my POST requests too?", hits, lex, ordinary=ordinary)["names_missing"] == 0.0
    # Without the vocabulary (or a word the site never uses, or no word of English) it is a name the sections lack.
    assert features("Will it retry my POST requests too?", hits, lex)["names_missing"] == 1.0
    assert features("Can it retry requests from Java?", hits, lex, ordinary=ordinary)["names_missing"] == 1.0
    assert features("Can it retry requests over Zenoh?", hits, lex, ordinary=ordinary)["names_missing"] == 1.0


def test_words_the_docs_never_use_count_only_where_the_question_asks() -> None:
    from logic.answerability import features

    lex = lexical.build(["hash map entry api", "counter insert value", "vectors and strings"])
    hits = [chunk("h.md", 0.6, "Use the entry API to insert a value only if the key has none: a counter.")]
    story = "I keep a hash map from album title to copies sold at my record shop. How do I insert a counter value?"
    asked = "How do I insert a counter value for an album at my record shop?"
    assert features(story, hits, lex)["unknown"] == 0.0
    # The same words in what is asked are something the docs would have to cover.
    assert features(asked, hits, lex)["unknown"] > 0.3
    # Their weight still dilutes the share: a story's words never make the asked ones weigh more.
    told = "My record shop sells albums. How do I insert a lunar counter?"
    assert 0 < features(told, hits, lex)["unknown"] < features("How do I insert a lunar counter?", hits, lex)["unknown"]


def test_a_value_told_in_the_story_is_not_asked_for() -> None:
    from logic.answerability import features

    lex = lexical.build(["hash map entry api", "counter insert value", "vectors and strings"])
    hits = [chunk("h.md", 0.6, "Use the entry API to insert a value only if the key has none: a counter.")]
    story = ("I keep a HashMap from album title to how many copies we've sold. "
             "Is there a tidier way to bump a counter that might not exist yet?")
    assert features(story, hits, lex)["type_missing"] == 0.0
    # Asked for, the count must be stated next to what is counted.
    assert features("How many counters can the map hold?", hits, lex)["type_missing"] == 1.0


def test_an_identifier_or_a_language_must_be_written_whole() -> None:
    from logic.answerability import features, writes

    lex = lexical.build(["config max_length", "error messages", "ros tcp connector"])
    hits = [chunk("c.md", 0.6, "Set ConfigDict(max_length=5) in model_config; errors are listed by the error type.")]
    # "max" and "errors" are there apart; the setting `max_errors` is not.
    assert features("How do I set ConfigDict(max_errors=5)?", hits, lex)["names_missing"] == 0.5
    assert features("How do I set ConfigDict(max_length=5)?", hits, lex)["names_missing"] == 0.0
    unity = "the ros tcp connector links unity and ros 2; see BaseModel.model_dump() and c++ nodes"
    assert not writes("ROS#", unity) and writes("C++", unity) and writes("ROS", unity)
    assert writes("model_dump", unity) and not writes("model_dump_json", unity)


def test_a_word_the_docs_use_in_another_form_is_not_unknown_to_them() -> None:
    from logic.answerability import features

    lex = lexical.build(["a release becomes the default tag", "tags are picked by name",
                         "publish a package without a tag", "a quick start"])
    hits = [chunk("t.md", 0.6, "A release becomes the default tag when you publish it.")]
    # "becoming" and "picking" are forms of words the docs use ("becomes", "picked"): nothing is missing.
    assert lex.uses("becoming") and lex.uses("picking") and lex.uses("quickest")
    assert features("How do I publish without it becoming the default?", hits, lex)["unknown"] == 0.0
    # A word no form of which the docs use still is.
    assert not lex.uses("rollback")
    assert features("How do I publish a rollback?", hits, lex)["unknown"] > 0.3


def test_a_section_holding_the_ask_covers_a_question_that_tells_a_story_first() -> None:
    from logic.answerability import features

    lex = lexical.build(["client options socket path", "unix socket", "docker daemon compose", "tcp port"])
    hits = [chunk("c.md", 0.5, "To point a client at a Unix socket, give its path as the socketPath option.")]
    ask = "How do I point a client at a Unix socket?"
    story = f"We talk to the Docker daemon over its socket file, not a TCP port. {ask}"
    # The user's story (Docker, daemon, TCP port) is not something the section must hold: the ask decides.
    assert features(story, hits, lex)["coverage"] == features(ask, hits, lex)["coverage"] > 0.6
    # A one-sentence question is all ask: its every word counts.
    whole = "How do I point a client at a Unix socket from the Docker daemon over TCP?"
    assert features(whole, hits, lex)["coverage"] < 0.6


def test_an_ask_that_points_back_asks_about_what_the_story_named() -> None:
    from logic.answerability import asked_about, features

    lex = lexical.build(["parallel environments num_envs training", "isaac lab", "gpu memory"])
    hits = [chunk("rl.md", 0.6, "Isaac Lab trains many parallel environments at once: set num_envs in the config.")]
    story = "We have a single RTX 4090 for Isaac Lab training. How many parallel environments should we run on it?"
    # What "run on it" runs on is the RTX 4090: a name the section never writes (Isaac Lab it does).
    assert asked_about(story) == story
    assert features(story, hits, lex)["names_missing"] == 0.5
    # An ask that does not point back leaves the story the user's own, as before.
    told = "We have a single RTX 4090 for Isaac Lab training. How many parallel environments should we run?"
    assert asked_about(told) == "How many parallel environments should we run?"
    assert features(told, hits, lex)["names_missing"] == 0.0


def test_the_earlier_question_a_followup_carries_in_brackets_is_context_not_the_ask() -> None:
    from logic.answerability import asked_about, features
    from logic.heuristics import rewrite_followup

    searched = rewrite_followup("Can it pick the proxy up from HTTPS_PROXY?", "How do I route my requests via a proxy?")
    assert searched.endswith("(How do I route my requests via a proxy)")
    assert asked_about(searched) == "Can it pick the proxy up from HTTPS_PROXY?"
    lex = lexical.build(["pick the proxy up from the environment: HTTPS_PROXY", "requests dispatcher",
                         "pool connections"])
    hits = [chunk("proxy.md", 0.6, "EnvHttpProxyAgent reads the proxy from HTTPS_PROXY and NO_PROXY.")]
    # Words only the earlier question holds ("route") are not the follow-up's unknown words.
    assert features(searched, hits, lex)["unknown"] == 0.0
    # A bracket the user typed is theirs: only a whole earlier question after the ask is set aside.
    assert asked_about("Is the (async) client faster?") == "Is the (async) client faster?"
