"""A question asking for an amount, a time, a price or a version is answerable only where a section states one."""

from __future__ import annotations

import pytest

from logic.asked_type import AMOUNT, PRICE, TIME, VERSION, asked, missing

MAINTAINERS = ("# Maintainers\n\nThese are the current maintainers of the Acme repository:\n\n"
               "- Ada Lovelace\n- Alan Turing\n")


@pytest.mark.parametrize(("question", "kind"), [
    ("How many core maintainers does Acme have?", AMOUNT),
    ("What's the default stack size of a worker?", AMOUNT),
    ("How often should the sensors publish?", AMOUNT),
    ("When is Acme 3.0 expected to be released?", TIME),
    ("In what year was Acme first released?", TIME),
    ("How much does the hosted plan cost per month?", PRICE),
    ("How do I enable HTTP/2?", None),
    ("When should I use a pool?", None),  # a condition, not a date
    ("What's the minimum Node.js version for the search index?", VERSION),
    ("Which Unity Editor version is recommended?", VERSION),
    ("Since which ROS 2 version is Fast DDS the default?", VERSION),
    ("What happens when versions differ?", None),
    ("What is the latest version?", None),  # nothing named: no word a version must stand next to
    ("How do I pin the version of a dependency?", None),
    ("Is there a way to check how many connections the pool holds?", None),  # asks for a way to find out
    ("How do I limit how many workers start at once?", None),
    ("How many workers start at once?", AMOUNT),
    ("Do you know how much a maintainer earns?", AMOUNT),  # politeness: the value is still what is asked
    ("Can you tell me how many workers start?", AMOUNT),
])
def test_the_kind_of_value_asked_for(question: str, kind: str | None) -> None:
    assert asked(question) == kind


def test_a_count_is_missing_from_a_list_of_names_and_stated_by_a_sentence_that_counts() -> None:
    question = "How many core maintainers does Acme have?"
    assert missing(question, [MAINTAINERS])
    assert not missing(question, ["Acme has five core maintainers and many contributors."])
    assert not missing(question, ["Acme is run by 5 core maintainers."])


def test_a_value_stated_in_the_sentence_after_what_it_measures_counts() -> None:
    question = "How long does the client wait between retry attempts?"
    item = "- **minTimeout** `number` - Minimum number of milliseconds to wait before retrying. Default: `500`"
    assert not missing(question, [item])
    # Only the sentence right before, in the same list item or paragraph: not a line further up.
    further = "The client can wait before retrying.\n\nThe pool holds up to 10 sockets. Default: `500`"
    assert missing(question, [further])


def test_a_number_next_to_the_product_name_only_is_not_a_count_of_what_is_asked() -> None:
    # Every page names the product: a version or an issue link next to it counts nothing.
    sections = ["Acme 2.4 fixes [a bug](https://github.com/acme/acme/issues/9992) in Acme's parser.",
                "In Listing 8-1, Acme builds the parser."]
    assert missing("How many GitHub stars does Acme have?", sections)


def test_a_year_dates_what_it_follows_and_counts_nothing() -> None:
    question = "How much runtime overhead does the cache add?"
    # "zero-overhead" and "in his 2012 Turing lecture" share the words, and say no amount of overhead.
    assert missing(question, ["The cache is what Stroustrup called zero-overhead in his 2012 Turing lecture."])
    assert missing(question, ["Since 2021, the cache adds runtime overhead only on a miss."])
    # A number after the same prepositions that counts what follows it is an amount.
    assert not missing(question, ["The cache adds runtime overhead in 2000 cycles at most."])
    assert not missing(question, ["The runtime overhead of the cache is 2000 ns."])


def test_in_code_only_a_value_given_to_a_setting_counts() -> None:
    question = "How many particles does the localizer use?"
    assert not missing(question, ["Localizer settings:\n\n```yaml\nlocalizer:\n  max_particles: 2000\n```\n"])
    printed = "Run it:\n\n```text\nparticles left: none\nhi number 1 from the particles thread!\n```\n"
    assert missing(question, [printed])


def test_an_xml_element_holding_a_number_states_it_under_its_parent_element() -> None:
    question = "How many horizontal rays does the scanner use?"
    config = ("The scanner:\n\n```xml\n<scan>\n  <horizontal>\n    <samples>640</samples>\n  </horizontal>\n"
              "</scan>\n```\n")
    assert not missing(question, [config])
    # The element's parent names something else: the count is of that, not of what is asked.
    other = "The camera:\n\n```xml\n<image>\n  <width>640</width>\n</image>\n```\n"
    assert missing(question, [other])


def test_a_release_date_must_be_stated_and_not_only_a_version() -> None:
    question = "When is Acme 3.0 expected to be released?"
    assert missing(question, ["Acme 3.0 will merge the core package; breaking changes will be released with care."])
    assert not missing(question, ["Acme 3.0 is expected to be released in March, after the beta."])


def test_a_price_is_stated_by_an_amount_or_by_free() -> None:
    question = "How much does the hosted plan cost per month?"
    assert missing(question, ["The hosted plan adds dashboards and alerts to your project."])
    assert not missing(question, ["The hosted plan costs $20 per month per seat."])
    assert not missing(question, ["The hosted plan is free for open-source projects."])


def test_a_version_is_stated_by_a_number_or_a_release_name_next_to_what_is_versioned() -> None:
    question = "What's the minimum Node.js version for the search index?"
    assert missing(question, ["The search index needs Node.js installed and `node` on the path."])
    assert not missing(question, ["The search index needs Node.js 18 or later."])
    ros = "Which ROS 2 version does the course use?"
    assert missing(ros, ["Fast DDS is the default in recent ROS 2 versions."])  # the question's own "2" states nothing
    assert not missing(ros, ["Every example runs on ROS 2 Humble."])
    assert missing("Which minimum Pyrefly version is needed?", ["Install the Pyrefly IDE extension."])
    assert not missing("Which Unity Editor version is recommended?", ["Install Unity Editor 2021.3.22f1 (LTS)."])
