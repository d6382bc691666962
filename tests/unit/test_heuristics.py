"""Offline heuristics: chit-chat detection on word boundaries and follow-up rewriting."""

from __future__ import annotations

import pytest

from logic.heuristics import chitchat_reply, gerund, is_followup, rewrite_followup, subject_of, without_courtesies


@pytest.mark.parametrize("text", ["hi", "Hello!", "hey there", "Good morning", "HELLO", "hi bot"])
def test_greeting_gets_a_hello(text: str) -> None:
    reply = chitchat_reply(text)
    assert reply is not None
    assert reply.startswith("Hello!")


@pytest.mark.parametrize("text", ["Thanks a lot!", "thank you so much", "thx", "Cheers!", "ok thanks"])
def test_thanks_gets_you_are_welcome(text: str) -> None:
    reply = chitchat_reply(text)
    assert reply is not None
    assert "welcome" in reply


@pytest.mark.parametrize("text", ["bye", "Goodbye!", "see you later"])
def test_goodbye_gets_a_goodbye(text: str) -> None:
    reply = chitchat_reply(text)
    assert reply is not None
    assert reply.startswith("Goodbye!")


@pytest.mark.parametrize(
    "text",
    [
        "this is history",  # "hi" inside words
        "Is there a high-level API?",  # "hi" inside a word
        "okapi sensors",  # "ok" inside a word
        "Hi, what is Isaac Sim?",  # a greeting plus a question is a question
        "Thanks, how do I install it?",
        "What is Isaac Sim?",
        "cool down time for the oven",
    ],
)
def test_questions_are_not_chitchat(text: str) -> None:
    assert chitchat_reply(text) is None


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("Hi, how do I ingest my docs?", "how do I ingest my docs?"),
        ("Hello Anna! Where is the config file?", "Where is the config file?"),
        ("Hey there, can I use Postgres?", "can I use Postgres?"),
        ("Thanks a lot for the help! And how do I deploy it?", "And how do I deploy it?"),
        ("Good morning. What is Isaac Sim?", "What is Isaac Sim?"),
        ("Hi team, quick question: what is AMCL?", "what is AMCL?"),
        ("ok so, what about the theme?", "what about the theme?"),
        ("nice. can readers pick the dark theme?", "can readers pick the dark theme?"),
        ("hi how do I ingest?", "how do I ingest?"),
        ("How do I ingest? Thanks!", "How do I ingest?"),
        ("Hi,\n\nhow do I ingest?\n\nThanks in advance.", "how do I ingest?"),
        ("How do I ingest, thanks", "How do I ingest"),
        ("What is AMCL? thx", "What is AMCL?"),
        ("Where is the config? Best regards", "Where is the config?"),
        ("amcl particle count in the nav2 params cheers", "amcl particle count in the nav2 params"),
        ("What is AMCL? Thanks a lot for the help, really, thank you so much!", "What is AMCL?"),
        ("What is AMCL?" + " " * 9000 + "thanks", "What is AMCL?"),
        ("wait for another node in a launch file thx", "wait for another node in a launch file"),
    ],
)
def test_a_greeting_or_thanks_around_a_question_is_not_asked(text: str, asked: str) -> None:
    assert without_courtesies(text) == asked


@pytest.mark.parametrize(
    "text",
    [
        "Perfect forwarding: what is it?",  # an acknowledgement word that starts the topic
        "Cool theme options: which exist?",
        "Hey Jude is stuck in my head, which plugin plays audio?",  # no punctuation after the greeting
        "Hi!",  # all opener: chit-chat, left whole
        "How do I say thanks?",  # thanks that is asked about, before the question mark
        "Which field holds the type ty",  # "ty" and "regards" close a message only after its punctuation
        "What is Isaac Sim?",
    ],
)
def test_a_question_without_an_opener_is_left_whole(text: str) -> None:
    assert without_courtesies(text) == text


def test_thanks_with_contraction_is_chitchat() -> None:
    assert chitchat_reply("Thanks, that's great!") is not None


def test_followup_pronoun_is_replaced_by_previous_subject() -> None:
    rewritten = rewrite_followup("How do I use it for synthetic data?", "What is Isaac Sim?")
    assert "Isaac Sim" in rewritten
    assert rewritten == "How do I use Isaac Sim for synthetic data?"


def test_possessive_pronoun_becomes_possessive_subject() -> None:
    assert rewrite_followup("What is its license?", "What is Isaac Sim?") == "What is Isaac Sim's license?"


def test_followup_without_history_is_unchanged() -> None:
    question = "How do I use it for synthetic data?"
    assert rewrite_followup(question, "") == question


def test_question_without_pronoun_is_unchanged() -> None:
    question = "How do I bake bread?"
    assert rewrite_followup(question, "What is Isaac Sim?") == question


def test_pronoun_match_is_on_word_boundaries() -> None:
    question = "Is iterative item editing possible?"  # "it" only inside words
    assert rewrite_followup(question, "What is Isaac Sim?") == question


def test_referring_word_appends_previous_query() -> None:
    rewritten = rewrite_followup("Which of these is faster?", "Compare PhysX and Warp")
    assert rewritten == "Which of these is faster? (Compare PhysX and Warp)"


@pytest.mark.parametrize(
    ("query", "subject"),
    [
        ("What is Isaac Sim?", "Isaac Sim"),
        ("Tell me about the Replicator extension", "the Replicator extension"),
        ("What is a URDF file used for?", "the URDF file"),
        ("How do I add a custom validator to a single field?", "the custom validator"),
        ("How do I start writing my own MkDocs plugin?", "my own MkDocs plugin"),
        ("Can I get Pydantic validation on a regular dataclass?", "Pydantic validation"),
        ("How does Replicator work with cameras?", "Replicator"),
        ("What about the second option?", "the second option"),
        ("Which renderer do I use?", "the renderer"),
        ("Does undici ship a WebSocket client?", ""),
        ("What's the quickest way to bump my package from 1.2.3 to 1.3.0?", ""),
        ("What's a good way to generate the secret key for my app?", ""),  # never the bare article "a"
        ("How can I check whether my regression coefficients are stable?", "my regression coefficients"),
        ("How do I give each user their own API key?", ""),  # "their own API key" points back to the user
        ("How do I set up the dev server locally?", "the dev server"),  # how it is done is no part of the topic
        ("How do I configure the search plugin properly again?", "the search plugin"),
        ("How do I publish my package manually?", "my package"),
        ("How do I build the assembly?", "the assembly"),  # a noun ending in -ly stays
        ("How do I run terraform apply?", "terraform apply"),  # so does a verb in -ply
        ("How do I install Rust nightly?", "Rust nightly"),  # and a frequency, which names a release as often
    ],
)
def test_subject_of_standalone_question(query: str, subject: str) -> None:
    assert subject_of(query) == subject


def test_followup_names_the_topic_without_the_adverb() -> None:
    rewritten = rewrite_followup("What port does it use?", "How do I start the dev server locally?")
    assert rewritten == "What port does the dev server use?"


def test_is_followup() -> None:
    assert is_followup("Does it support ROS?")
    assert not is_followup("Does Isaac Sim support ROS?")


@pytest.mark.parametrize("question", ["What if it rains?", "It is too late now.", "it's getting dark"])
def test_expletive_it_is_not_a_followup(question: str) -> None:
    assert rewrite_followup(question, "What is Isaac Sim?") == question


@pytest.mark.parametrize("question", ["Is this method safe?", "Which one is faster?", "Is there one for Jetson?",
                                      "What if I only want past ones in there?",
                                      "Does the built-in one get in the way?",
                                      "What is the node that publishes odometry?"])
def test_determiner_and_relative_uses_append_the_topic_instead_of_replacing(question: str) -> None:
    assert rewrite_followup(question, "What is Isaac Sim?") == f"{question} (What is Isaac Sim)"


@pytest.mark.parametrize(("question", "previous", "standalone"), [
    # The pronoun stands for what the earlier question acts on, never for its verb phrase.
    ("Can I export it to a requirements.txt?", "How do I create a lockfile?",
     "Can I export the lockfile to a requirements.txt?"),
    ("What if it needs to look at another field's value?", "How do I add a custom validator to a single field?",
     "What if the custom validator needs to look at another field's value?"),
    ("Can I put example values for a field into it?", "How do I get the JSON schema of my model?",
     "Can I put example values for a field into the JSON schema of my model?"),
    ("And how should it log warnings?", "How do I start writing my own MkDocs plugin?",
     "And how should my own MkDocs plugin log warnings?"),
    ("How come I can use * on it like a reference?", "What is Box<T> good for?",
     "How come I can use * on Box<T> like a reference?"),
    ("Can those call my private functions?", "Where should integration tests go?",
     "Can integration tests call my private functions?"),
    # "they"/"them" stand for the earlier question's plural noun, not for its singular object.
    ("How many of them can I have before installs get slow?",
     "How do I turn my repo into a monorepo using npm workspaces?",
     "How many of the workspaces can I have before installs get slow?"),
    ("Can I rename them?", "How do I publish scoped packages?", "Can I rename scoped packages?"),
    # "one of them" is one of the earlier plural, with its article.
    ("How do I add lodash as a dependency of just one of them?",
     "How do I turn my repo into a monorepo using npm workspaces?",
     "How do I add lodash as a dependency of just one of the workspaces?"),
    ("Is each of them run in parallel?", "Where should integration tests go?",
     "Is each of the integration tests run in parallel?"),
    # "that version" is the version the earlier question named, with what it said of it.
    ("Once it's stable, how do I make that version the default one?", "How do I publish a beta version of my package?",
     "Once it's stable, how do I make the beta version of my package the default one?"),
    ("Does that validator run before the field?", "How do I add a custom validator to a single field?",
     "Does the custom validator run before the field?"),
    # The object ends at a preposition such as "into" or "using".
    ("Can I use it with pnpm?", "How do I link my library into another project?", "Can I use my library with pnpm?"),
    # "it's" is "it is": the verb stays.
    ("What if it's an organization site instead?", "How do I deploy my site to GitHub Pages?",
     "What if my site is an organization site instead?"),
])
def test_a_followup_about_an_action_is_rewritten_into_a_grammatical_question(question: str, previous: str,
                                                                            standalone: str) -> None:
    assert rewrite_followup(question, previous) == standalone


def test_pronoun_before_a_verb_is_replaced() -> None:
    assert rewrite_followup("Can they run on Jetson?", "What is Isaac Sim?") == "Can Isaac Sim run on Jetson?"
    assert rewrite_followup("What does that mean?", "What is NITROS?") == "What does NITROS mean?"


@pytest.mark.parametrize(("question", "previous"), [
    # A yes/no question names no topic to swap in: "its handshake" is the client's, not undici's.
    ("Can I send an Authorization header during its handshake?", "Does undici ship a WebSocket client?"),
    ("How long does it wait between attempts?", "Can the client retry failed requests automatically?"),
    # "they" or "its" never stands for an action ("Can I undo bumping my package's?").
    ("Can I undo its changes?", "What's the quickest way to bump my package to 1.3.0?"),
    ("Can they run in parallel?", "How can I check in a unit test which events my code logged?"),
    # A fragment borrows the earlier question's verb: "And for the fancy exception output?" asks what to install.
    ("And for the fancy exception output?", "What do I need to install so the console output is coloured?"),
    # "What about X?" asks the earlier question again of X: testing the CLI commands, letting the variance switch.
    ("What about the custom CLI commands I wrote?", "How do I test my views with pytest without starting a server?"),
    ("And what about letting the variance switch too?", "How do I fit a model whose mean switches between regimes?"),
    # "it" is singular: never "Can my plugins be turned off one by one?".
    ("Can it be turned off one by one?", "How do I configure my plugins?"),
])
def test_a_followup_without_a_nameable_topic_keeps_the_earlier_question_beside_it(question: str,
                                                                                  previous: str) -> None:
    assert rewrite_followup(question, previous) == f"{question} ({previous.rstrip('?')})"


@pytest.mark.parametrize("question", [
    # The question names what its pronoun stands for: Nav2's launch file, JPL, the language.
    "Can I also pull in Nav2's own launch file from mine and hand it my own params file?",
    "What does JPL stand for, and what is it?",
    "Is the language still spoken today, or has it become extinct?",
    # A pronoun in what the user says before asking; the opening may name what the ask's "it" stands for.
    "That is fine. Could you tell me a little bit about the greenhouse effect. Is it good or bad?",
    "I did what you said but it still crashes. What else can I try?",
    "That was not my question. When I say America, I mean the continent.",
])
def test_a_pronoun_its_own_question_may_resolve_is_left_as_typed_with_the_earlier_question_beside(
        question: str) -> None:
    previous = "How do I make part of a launch file conditional?"
    assert rewrite_followup(question, previous) == f"{question} ({previous.rstrip('?')})"


@pytest.mark.parametrize("question", [
    "That is OK. Besides breast cancer and prostate cancer, what are the most common types of cancer?",
    "got it. What doesn't belong in the green organics cart?",
    "Also the arm joint keeps swinging back and forth after it moves. How do I give a joint some damping?",
])
def test_an_ask_that_names_its_own_topic_is_searched_as_typed(question: str) -> None:
    assert rewrite_followup(question, "What are the symptoms of breast cancer?") == question


def test_a_pronoun_after_a_bare_verb_and_and_still_takes_the_earlier_topic() -> None:
    previous = "How do I write a hello world program?"
    rewritten = rewrite_followup("And how do I compile and run it in one step?", previous)
    assert rewritten == "And how do I compile and run the hello world program in one step?"


def test_the_topic_comes_from_the_earlier_ask_not_from_the_situation_before_it() -> None:
    previous = "I want JSON logs in production. Which renderer do I use?"
    rewritten = rewrite_followup("Can it use something faster?", previous)
    assert rewritten == "Can the renderer use something faster?"


@pytest.mark.parametrize("question", ["Where do I reset it so the next request starts clean?", "Can I use it too?"])
def test_it_before_so_or_too_is_an_object_not_an_expletive(question: str) -> None:
    assert "Isaac Sim" in rewrite_followup(question, "What is Isaac Sim?")


@pytest.mark.parametrize(("question", "previous", "standalone"), [
    # "The quickest way" names nothing: "it" is the bumping, not "the quickest way".
    ("Does it also make a git commit and tag?", "What's the quickest way to bump my package to 1.3.0?",
     "Does bumping my package to 1.3.0 also make a git commit and tag?"),
    # An action whose object is cut off ("check"): the pronoun stands for the whole action.
    ("Is it safe to use under pytest-xdist?", "How can I check in a unit test which events my code logged?",
     "Is checking in a unit test which events my code logged safe to use under pytest-xdist?"),
    ("Will it work offline?", "Is there a way to run the tests again on every change?",
     "Will running the tests again on every change work offline?"),
    # "one" before its noun is a number, not a pronoun that would need the earlier question beside it.
    ("Where do I reset it so one request's values don't leak into the next?",
     "How do I get a request id onto every log line?",
     "Where do I reset the request id so one request's values don't leak into the next?"),
    # As an object, the pronoun stands for what the action acts on: the key is rotated, not its generating.
    ("How often should we rotate it?", "What's a good way to generate the secret key for my app?",
     "How often should we rotate the secret key?"),
])
def test_a_pronoun_with_no_object_to_name_stands_for_the_asked_action(question: str, previous: str,
                                                                     standalone: str) -> None:
    assert rewrite_followup(question, previous) == standalone


def test_that_opening_a_clause_is_no_demonstrative_before_a_noun() -> None:
    previous = "How can I check whether my regression coefficients are stable over the sample?"
    question = "Can I make it impose that the copper and aluminium coefficients are equal?"
    assert rewrite_followup(question, previous) == f"{question} ({previous.rstrip('?')})"


def test_an_it_that_anticipates_a_clause_is_not_the_pronoun_replaced() -> None:
    question = "Is it OK to leave it on in production, since it's protected by a PIN?"
    assert rewrite_followup(question, "How do I turn on debug mode?") == \
        "Is it OK to leave debug mode on in production, since it's protected by a PIN?"
    # "it" is the thing asked about when the clause has no object of its own.
    assert rewrite_followup("Is it safe to use in production?", "What is Isaac Sim?") == \
        "Is Isaac Sim safe to use in production?"


@pytest.mark.parametrize(("verb", "form"), [("make", "making"), ("use", "using"), ("get", "getting"),
                                            ("run", "running"), ("bump", "bumping"), ("tie", "tying"),
                                            ("see", "seeing"), ("install", "installing"), ("fix", "fixing"),
                                            ("open", "opening"), ("Configure", "configuring")])
def test_gerund_follows_english_spelling(verb: str, form: str) -> None:
    assert gerund(verb) == form


@pytest.mark.parametrize(("question", "previous", "expected"), [
    # "How can X have Y?": the topic is X, not the rest of the clause.
    ("How many readers does it have right now?", "How can one file have several readers?",
     "How many readers does one file have right now?"),
])
def test_the_topic_of_a_question_with_its_own_subject_ends_before_its_verb(question: str, previous: str,
                                                                            expected: str) -> None:
    assert rewrite_followup(question, previous) == expected


@pytest.mark.parametrize(("question", "previous"), [
    # A bare "How?" after the story names no topic: never "for How instead".
    ("Can I cache it instead?", "I want a derived total in the dump without storing it as a field. How?"),
    # The ask leans on the story ("against that"): the topic phrase would hold the pronoun.
    ("Does it also happen at night?", "Our sensor drifts after an hour. What does the guide suggest against that?"),
    # "those" leading a noun phrase of the follow-up's own is no pronoun for the earlier plural.
    ("Can I write through one of those shared handles?", "Several threads should share one counter. How?"),
    # A condition on the earlier question: "What if …" asks it again, with no pronoun to swap.
    ("What if I only want the first three results?", "How do I sort the search results by date?"),
    # A dot inside a file name does not end the fragment.
    ("What about a note at the top of main.rs?", "How do I document my public functions?"),
    # "What am I missing?" names no topic: "them" cannot become "the am I missing".
    ("Can I also print them?", "The loop compiles but nothing runs. What am I missing?"),
])
def test_a_followup_that_names_no_topic_of_its_own_keeps_the_earlier_question(question: str, previous: str) -> None:
    assert rewrite_followup(question, previous) == f"{question} ({previous.rstrip('?')})"


def test_subject_of_a_bare_how_is_empty() -> None:
    assert subject_of("It must not be stored. How?") == ""
