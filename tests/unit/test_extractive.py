"""Offline answers: the retrieved sentences that best match the question, in reading order."""

from __future__ import annotations

from logic.extractive import extract_answer, render, sentences
from logic.types import Chunk
from nodes.generate_grounded import follows

BAKING = ("Bread dough needs flour, water, yeast and salt. Knead the dough for ten minutes until smooth. "
          "The oven must be hot before baking starts.")


def test_picks_the_paragraph_matching_the_query_whole() -> None:
    chunk = ("Bread dough needs flour, water, yeast and salt. Weigh them before you start.\n\n"
             "Knead the dough for ten minutes until smooth. Rest it under a cloth for an hour, then shape it "
             "into a loaf, score the top with a sharp knife, dust it with flour and leave it to rise again "
             "until it has doubled in size, which takes about forty minutes in a warm kitchen.")
    assert extract_answer("How long should I knead the dough?", [chunk]) == [
        (0, "Knead the dough for ten minutes until smooth."),
        (0, "Rest it under a cloth for an hour, then shape it into a loaf, score the top with a sharp knife, dust "
            "it with flour and leave it to rise again until it has doubled in size, which takes about forty "
            "minutes in a warm kitchen."),
    ]


def test_reports_which_chunk_the_sentence_came_from() -> None:
    chunks = ["Isaac Sim is a simulator for robots.", "Replicator generates synthetic data for training."]
    assert extract_answer("What is Replicator?", chunks) == [
        (1, "Replicator generates synthetic data for training.")
    ]


def test_plural_query_matches_singular_text() -> None:
    chunks = ["The camera records colour images.", "Each lidar sensor reports a point cloud."]
    assert extract_answer("Which sensors are there?", chunks)[0][0] == 1


def test_answer_is_in_reading_order_and_bounded() -> None:
    long = " ".join(f"Step {n} of the oven routine warms the dough a little more before baking." for n in range(40))
    picked = extract_answer("oven dough knead flour", [BAKING + "\n\n" + long], max_words=60)
    positions = [(BAKING + long).index(sentence) for _, sentence in picked]
    assert positions == sorted(positions)
    assert sum(len(text.split()) for _, text in picked) <= 60


def test_a_question_whose_answer_is_the_code_block_gets_the_code_block() -> None:
    chunk = ("Cargo can build your project with optimizations.\n\n"
             "When your project is finally ready for release, compile it with optimizations:\n\n"
             "```console\n$ cargo build --release\n```\n\n"
             "This command will create an executable in target/release instead of target/debug.\n\n"
             "## Cargo as Convention\n\nWith simple projects, Cargo doesn't provide a lot of value over rustc.")
    answer = render(extract_answer("How do I build an optimized binary for release?", [chunk]))
    assert "```console\n$ cargo build --release\n```" in answer
    assert "target/release" in answer  # the line after the command says where the binary goes
    assert "Convention" not in answer and "rustc" not in answer


def test_a_code_block_cut_by_the_chunk_ends_at_its_last_whole_statement() -> None:
    chunk = ("Randomize the world with this class:\n\n```python\nclass Randomizer:\n    def __init__(self, world):\n"
             "        self.world = world\n        self.params = {\n            'mass_range': [0.8, 1.2],\n")
    answer = render(extract_answer("How do I randomize the world?", [chunk]))
    assert "self.world = world\n…\n```" in answer and "mass_range" not in answer


def test_a_code_block_cut_right_after_a_header_does_not_end_on_it() -> None:
    chunk = ("Randomize the world with this class:\n\n```python\nclass Randomizer:\n    def __init__(self, world):\n"
             "        self.world = world\n\n    def randomize(self, env_id=None):\n")
    answer = render(extract_answer("How do I randomize the world?", [chunk]))
    assert "self.world = world\n…\n```" in answer and "def randomize" not in answer
    # A whole block may end on a colon (a YAML key left empty): only a cut one is trimmed.
    whole = "Set the theme in the configuration file like this:\n\n```yaml\nsite_name: Docs\nnav:\n```\n"
    assert "nav:\n```" in render(extract_answer("How do I set the theme?", [whole]))
    # A cut block that is only a header shows nothing: its lead-in is not quoted for it.
    header = "Randomize the world with the code below, which runs at startup:\n\n```python\ndef main():\n"
    assert "def main" not in render(extract_answer("How do I randomize the world?", [header]))


def test_a_block_holding_only_a_template_directive_is_not_quoted() -> None:
    chunk = ("Run the tests with cargo test and read the output below.\n\n"
             "```console\n{{#include ../listings/ch11/output.txt}}\n```\n")
    answer = render(extract_answer("How do I run the tests?", [chunk]))
    assert "cargo test" in answer and "{{#include" not in answer


def test_a_lead_in_whose_list_was_cut_off_does_not_end_the_answer_mid_sentence() -> None:
    chunk = "Domain randomization is a technique that randomizes simulation parameters to make policies robust:"
    answer = render(extract_answer("What is domain randomization?", [chunk]))
    assert answer.endswith("robust: … [1]")


def test_no_chunks_means_no_answer() -> None:
    assert extract_answer("anything", []) == []


def test_code_only_chunk_is_quoted_rather_than_dropped() -> None:
    code = "```bash\npip install isaacsim\n```"
    ((position, quoted),) = extract_answer("How do I install it?", [code])
    assert position == 0
    assert quoted.strip() == code


def test_sentences_drop_code_tables_markup_and_fragments() -> None:
    markdown = (
        "Some `inline code` and [a link](http://x.example) in prose.\n\n"
        "```python\nprint('a code block line')\n```\n"
        "| col a | col b | col c |\n"
        "- a bullet item with words\n"
        "Too short."
    )
    assert sentences(markdown) == ["Some inline code and a link in prose.", "a bullet item with words"]


def test_sentences_split_on_sentence_ends() -> None:
    assert sentences("First sentence has words. Second one has words too! Third asks a question?") == [
        "First sentence has words.", "Second one has words too!", "Third asks a question?"
    ]


def test_code_lines_outside_fences_are_not_quoted_as_sentences() -> None:
    text = ("def set_initial_pose(self, x, y, theta):\ncaption = processor.decode(out, skip=True) here now\n"
            "0.0, 0.25, 0.0, 0.0, 0.0, 0.0, # y\nAMCL localises the robot on a known map with particles.")
    assert sentences(text) == ["AMCL localises the robot on a known map with particles."]


def test_sentences_sharing_a_query_term_win_over_earlier_unrelated_ones() -> None:
    chunks = ["Reinforcement learning lets robots learn behaviours from experience.",
              "AMCL localises the robot on a known map with a particle filter."]
    assert extract_answer("What is AMCL?", chunks) == [(1, chunks[1])]


def test_hard_wrapped_lines_are_joined_into_their_sentences() -> None:
    text = ("Forward kinematics maps joint angles to the position and\norientation of the end effector.\n"
            "Inverse kinematics goes the other way:\nit solves for joint angles that reach a\ntarget pose.\n"
            "- a bullet item with several words\nA new paragraph with several words.")
    assert sentences(text) == [
        "Forward kinematics maps joint angles to the position and orientation of the end effector.",
        "Inverse kinematics goes the other way: it solves for joint angles that reach a target pose.",
        "a bullet item with several words",
        "A new paragraph with several words.",
    ]


JOINTS = ("Joints connect links and define their relative motion.\n\nCommon joint types include:\n"
          "- **Fixed**: No motion allowed\n- **Revolute**: Rotation around one axis with limits\n"
          "- **Prismatic**: Sliding motion along an axis\n\nJoints also carry limits.")
URDF = ("Each link is declared in XML:\n\n```xml\n<link name=\"base_link\">\n  <visual>\n"
        "    <geometry><box size=\"1 1 1\"/></geometry>\n  </visual>\n</link>\n```\n")


def test_a_list_is_quoted_whole_with_its_lead_in() -> None:
    picked = extract_answer("What joint types are there?", [JOINTS])
    quoted = "\n".join(text for _, text in picked)
    assert "Common joint types include:\n\n- **Fixed**" in quoted and "**Prismatic**" in quoted
    assert ":." not in quoted


def test_code_is_quoted_verbatim_with_its_indentation() -> None:
    ((_, quoted),) = extract_answer("How do I declare a link?", [URDF])
    assert "<link name=\"base_link\">\n  <visual>\n    <geometry>" in quoted and quoted.count("```") == 2


def test_the_embedder_ranks_candidates_by_meaning() -> None:
    chunks = ["AMCL localises the robot on a known map.", "Reinforcement learning trains policies from rewards."]

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [1.0 if "policies" in t else 0.0 for t in texts]

    assert extract_answer("How are behaviours learned?", chunks, similarity=similarity)[0][0] == 1


def test_summarize_quotes_the_opening_sentences() -> None:
    picked = extract_answer("Summarize this page.", [BAKING])
    assert picked[0] == (0, "Bread dough needs flour, water, yeast and salt.")


def test_a_summary_skims_every_section_not_only_the_first() -> None:
    chunks = ["Bread dough needs flour, water, yeast and salt. Weigh them before you start.\n\n"
              "Knead the dough for ten minutes until smooth. Rest it under a cloth.",
              "The oven must be hot before baking starts. Put a tray of water in it for steam.",
              "Store the loaf in a paper bag. A plastic bag makes the crust soft.",
              "- Flour, water, yeast, salt\n- Knead, rest, bake"]
    headings = ["Baking › Dough", "Baking › Oven", "Baking › Storing", "Baking › Key points"]
    answer = render(extract_answer("Summarize this page.", chunks, headings=headings))
    # Each section's opening, titled, in reading order; then a later paragraph's opening as room allows.
    assert answer.index("**Dough**: Bread dough needs") < answer.index("Knead the dough") \
        < answer.index("**Oven**: The oven must be hot") < answer.index("**Storing**: Store the loaf")
    assert "**Key points**:" in answer and "- Knead, rest, bake" in answer
    # What room is left goes to the rest of each paragraph, from the top.
    assert answer.index("Bread dough needs") < answer.index("Weigh them") < answer.index("**Oven**")
    short = extract_answer("Give me an overview.", chunks, headings=headings, max_words=25)
    assert [text.split(":")[0] for _, text in short] == ["**Dough**", "**Oven**", "**Storing**"], \
        "sections' openings before a paragraph's, within the words allowed"
    assert [rank for rank, _ in extract_answer("Summarize this.", chunks, headings=headings, max_words=20)] == [0, 1]
    # Code alone: its first block is the gist there is.
    code = "```python\nprint('hi')\n```"
    assert extract_answer("Summarize this.", [code]) == [(0, f"\n{code}\n")]


def test_a_lead_in_without_its_list_is_not_quoted_alone() -> None:
    chunk = "Once Isaac Sim is running, configure the following:\n\n## Next steps\n\nIsaac Sim renders scenes with RTX."
    quoted = " ".join(text for _, text in extract_answer("What should I configure in Isaac Sim?", [chunk]))
    assert "configure the following:" not in quoted and ":." not in quoted


def test_a_code_only_best_chunk_is_quoted_rather_than_unrelated_prose_from_a_weaker_one() -> None:
    config = "```yaml\namcl:\n  ros__parameters:\n    max_particles: 2000\n```"
    unrelated = "Reinforcement learning is a machine learning paradigm. Agents maximise rewards."
    picked = extract_answer("What is AMCL?", [config, unrelated])
    assert [rank for rank, _ in picked] == [0]
    assert "max_particles" in picked[0][1]


def test_the_runner_up_is_quoted_too_when_the_embedders_favourite_misses_the_answer() -> None:
    overview = "Isaac Sim setup:\n\n- Download the Omniverse launcher\n- Install the Isaac Sim extension\n"
    needs = "Before installing Isaac Sim:\n\n1. Install NVIDIA drivers (535 or later)\n2. Install CUDA 11.8\n"

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "launcher" in t else 0.5 for t in texts]  # the overview reads closer to the question

    picked = extract_answer("Which NVIDIA driver and CUDA versions do I need for Isaac Sim?", [overview, needs],
                            similarity=similarity)
    quoted = " ".join(text for _, text in picked)
    assert "535" in quoted and "11.8" in quoted
    assert [rank for rank, _ in picked] == [0, 1]  # reading order, each cited to its own chunk


def test_a_definition_cut_from_its_list_is_still_quoted_when_it_is_all_there_is() -> None:
    chunk = "Domain randomization is a technique that randomizes simulation parameters to make policies robust:"
    assert extract_answer("What is domain randomization?", [chunk]) == [(0, chunk)]


def test_a_name_found_only_in_a_sections_heading_wins_over_prose_that_never_names_it() -> None:
    config = "```yaml\namcl:\n  ros__parameters:\n    max_particles: 2000\n```"
    unrelated = "Reinforcement learning lets robots learn behaviours from experience."

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "Reinforcement" in t else 0.1 for t in texts]  # the embedder never learned "AMCL"

    picked = extract_answer("What is Nav2's localizer?", [unrelated, config], similarity=similarity,
                            headings=["Reinforcement Learning", "Nav2 Localizer Configuration"])
    assert [rank for rank, _ in picked] == [1]


def test_a_list_under_a_heading_that_names_the_question_is_quoted_as_the_runner_up() -> None:
    intro = "Gazebo is a 3D simulator that provides realistic physics."
    features = "- **Sensor simulation**: cameras and LiDAR\n- **Plugin architecture**: extend the simulator\n"

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "3D simulator" in t else 0.2 for t in texts]

    picked = extract_answer("What are the key features of Gazebo?", [intro, features], similarity=similarity,
                            headings=["Introduction to Gazebo", "Key Features of Gazebo"])
    assert "Plugin architecture" in " ".join(text for _, text in picked)


def test_review_questions_are_not_quoted_as_the_answer() -> None:
    review = ("1. What is the basic structure of a ROS 2 node?\n2. How do you clean up a node?\n"
              "3. When would you use an action instead of a service?")
    answer = "Use an action for a long-running goal that sends feedback and can be cancelled; a service returns once."
    picked = extract_answer("When should I use an action instead of a service?", [review, answer])
    quoted = " ".join(text for _, text in picked)
    assert "long-running goal" in quoted and "?" not in quoted


def test_an_explanation_opens_with_the_definition_rather_than_a_higher_ranked_chunks_code() -> None:
    code = "```xml\n<xacro:macro name=\"arm\" params=\"side\">\n  <link name=\"${side}_arm\"/>\n</xacro:macro>\n```"
    prose = "Xacro is a macro language for URDF that adds parameters and reuse to robot descriptions."
    picked = extract_answer("What is Xacro used for?", [code, prose])
    assert picked[0] == (1, prose)
    # Asked how to do something, the chunks keep their ranked order: the code comes first.
    steps = extract_answer("How do I write a Xacro macro?", [code, prose])
    assert steps[0][0] == 0


def test_learning_objectives_give_way_to_the_section_that_explains() -> None:
    objectives = "- Understand how behavior trees drive navigation\n- Learn to write behavior tree XML"
    explained = ("Nav2 runs a behavior tree:\n\n- The tree ticks the planner, then the controller\n"
                 "- Recovery nodes run when a behavior tree branch fails")
    picked = extract_answer("How are behavior trees used in Nav2?", [objectives, explained],
                            headings=["Learning Objectives", "Behavior Trees"])
    assert [rank for rank, _ in picked][0] == 1 and "Understand how" not in " ".join(t for _, t in picked)


def test_the_section_whose_heading_names_the_questions_identifier_opens_the_answer() -> None:
    chunks = ["This command guesses the Python dependencies that a site requires in order to build. "
              "Of course, you're welcome to use a virtualenv with such a command. "
              "Also note that for environments that require stability installing deps this way is not reliable.",
              "Use a virtualenv to keep the dependencies of each project apart from the system Python."]
    picked = extract_answer("What does mkdocs get-deps do?", chunks,
                            headings=["New command `mkdocs get-deps`", "Installing"])
    assert picked[0] == (0, "This command guesses the Python dependencies that a site requires in order to build.")


def test_the_blocks_that_follow_the_chosen_step_are_quoted_with_it() -> None:
    chunk = ("Create a file called `style.css` next to the docs. In that file add the following CSS.\n\n"
             "```css\nh1 {\n  color: red;\n}\n```\n\nThen you need to add it to `mkdocs.yml`:\n\n"
             "```yaml\nextra_css:\n  - style.css\n```\n\nAfter these changes the colours show when you serve the site.")
    answer = render(extract_answer("I want red headings. How do I add my own stylesheet on top of the theme?",
                                  [chunk]))
    assert "color: red;" in answer and "extra_css:\n  - style.css" in answer


def test_a_how_to_answer_of_prose_goes_on_to_the_command_further_on_in_its_section() -> None:
    chunk = ("Once the package has a name and a licence, it is ready to be released to the registry. A release "
             "uploads one version for everyone to download.\n\n"
             "Think before you release: a version can never be replaced, and its files stay on the registry for good, "
             "so that every project that depends on it keeps building.\n\n"
             "Run the `pkg release` command. It prints what it uploads:\n\n"
             "```console\n$ pkg release\nUploading demo 0.1.0\n```\n\n"
             "## Yanking\n\nA yanked version stays downloadable for projects that already use it.")

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "ready to be released" in t else 0.1 for t in texts]

    answer = render(extract_answer("how do i release my package to the registry", [chunk], similarity=similarity))
    # The passage that matched says when and why; the step that does it comes with it, with its own sentence.
    assert "ready to be released" in answer and "Run the `pkg release` command." in answer
    assert "$ pkg release" in answer and "yanked" not in answer
    # A question that asks no "how" keeps the passage alone.
    plain = render(extract_answer("is a release to the registry permanent", [chunk], similarity=similarity))
    assert "$ pkg release" not in plain


def test_a_one_line_answer_is_quoted_with_the_paragraph_before_it_in_its_section() -> None:
    chunk = ("Determines the address used when running the dev server. Must be of the format `IP:PORT`.\n\n"
             "Allows a custom default to be set without passing the option every time the server starts.\n\n"
             "## Other settings\n\nThe theme decides the colours of every default page of the site.")

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "custom default" in t else 0.1 for t in texts]

    answer = render(extract_answer("Can I set a custom default address so I don't pass the option every time?",
                                   [chunk], similarity=similarity))
    assert "`IP:PORT`" in answer and "custom default" in answer and "colours" not in answer


def test_a_sentence_that_points_back_is_quoted_with_the_one_it_points_to() -> None:
    # Long enough that the quote would not reach back for a one-liner's context.
    chunk = ("The default mode for union validation is `smart`.\n\n"
             "In this mode, the validator tries every member of the union and keeps the best match for the input, "
             "preferring exact type matches, then strict matches, then lax ones, so that the result does not depend "
             "on the order in which the members were written, which is what most models want from a union field. "
             "The exact rules may change between minor releases as the matching improves.\n\n"
             "## Field order\n\nFields keep the order they are declared in.")

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if t.startswith("In this mode") else 0.1 for t in texts]

    answer = render(extract_answer("Which mode validates unions by default, and how does it choose a member?",
                                   [chunk], similarity=similarity))
    assert answer.index("is `smart`") < answer.index("In this mode") and "declared in" not in answer


def test_an_answer_split_over_three_sections_quotes_each_of_them() -> None:
    chunks = ["Isaac Sim needs an NVIDIA RTX graphics card to render its scenes.",
              "Isaac Sim needs at least 32 GB of memory for larger scenes.",
              "Isaac Sim needs Ubuntu 22.04 or Windows 10 as its operating system."]

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "RTX" in t else 0.5 for t in texts]

    picked = extract_answer("What hardware and system does Isaac Sim need?", chunks, similarity=similarity)
    assert [rank for rank, _ in picked] == [0, 1, 2]


def test_a_chunk_of_review_questions_alone_is_still_quoted() -> None:
    review = ("1. What are the three main components of a URDF link?\n"
              "2. Why do visual and collision properties differ in URDF?")
    picked = extract_answer("What are the components of a URDF link?", [review])
    assert picked and "URDF link" in picked[0][1]


def test_a_url_in_a_template_string_does_not_read_as_a_header() -> None:
    chunk = ("Start both servers first, as the test suite does:\n\n```js\nconst server = await buildServer()\n\n"
             "const serverUrl = `http://localhost:${server.address().port}`\n")
    assert "const serverUrl" in render(extract_answer("How do I start both servers?", [chunk]))


def test_a_sentence_or_block_two_sections_share_is_quoted_once() -> None:
    config = ("## audit-level\n\nThe minimum level of vulnerability for the audit to exit with a non-zero code.\n\n"
              "* Default: null\n* Type: null, info, low, moderate, high, critical")
    command = ("By default the audit exits with a non-zero code if any vulnerability is found. The minimum level of "
               "vulnerability for the audit to exit with a non-zero code.")
    picked = extract_answer("Which vulnerability level makes the audit exit with a non-zero code?", [command, config])
    quotes = [text for _, text in picked]
    said = [q for q in quotes if q.startswith("The minimum level of vulnerability")]
    assert len(said) == 1 and len(quotes) == len(set(quotes))


def test_a_list_item_a_longer_quoted_list_holds_is_not_quoted_again() -> None:
    options = ("Options of the theme:\n\n* **`analytics`**: Defines options for an analytics service.\n\n"
               "    * **`gtag`**: To enable Google Analytics, set to a tracking ID in the `G-` format.\n")
    item = "Analytics:\n\n* **`gtag`**: To enable Google Analytics, set to a tracking ID in the `G-` format.\n"
    quotes = [text for _, text in extract_answer("How do I enable Google Analytics with the gtag option?",
                                                 [options, item])]
    assert sum("To enable Google Analytics" in q for q in quotes) == 1, quotes


def test_a_command_two_pages_show_in_differently_fenced_blocks_is_quoted_once() -> None:
    config = ("Generate a secret key and copy it to your config:\n\n```\n$ python -c 'import secrets; "
              "print(secrets.token_hex())'\n'192b9bdd22ab9ed4d12e'\n```\n")
    tutorial = ("You can use the following command to output a random secret key:\n\n```none\n$ python -c 'import "
                "secrets; print(secrets.token_hex())'\n\n'192b9bdd22ab9ed4d12e'\n```\n")
    quotes = [text for _, text in extract_answer("How do I generate a random secret key?", [config, tutorial])]
    assert sum("token_hex" in q for q in quotes) == 1, quotes


def test_two_pieces_of_one_example_each_joined_to_the_other_are_quoted_once() -> None:
    body = "\n".join(f"    self.client_{n} = self.create_client(AddTwoInts, 'add_{n}')" for n in range(8))
    start = f"```python\nclass CalculatorClient(Node):\n  def __init__(self):\n{body}\n```"
    rest = f"```python\n{body}\n\n  def send_add_request(self, a, b):\n    return self.client_0.call_async(a + b)\n```"
    quotes = [text for _, text in extract_answer("How do I call the service from a client?", [start, rest])]
    assert sum("self.client_3 = " in q for q in quotes) == 1, quotes
    # Examples sharing their imports are two examples, both quoted.
    imports = "from rclpy.node import Node\nfrom example_interfaces.srv import AddTwoInts\n"
    one = f"```python\n{imports}\nclass Adder(Node):\n    pass\n```"
    two = f"```python\n{imports}\nclass Multiplier(Node):\n    pass\n```"
    quotes = [text for _, text in extract_answer("How do I write an adder and a multiplier node?", [one, two])]
    assert sum("class " in q for q in quotes) == 2, quotes


def test_a_quote_goes_on_into_the_next_chunk_of_its_section_when_both_were_retrieved() -> None:
    # Chunking cut the page after the one-liner; the step it announces opens the page's next chunk.
    first = ("Iterating over a vector gives a reference to each element in turn.\n\n"
             "The loop in the listing adds 50 to each element.")
    second = ("To change the value the mutable reference refers to, use the `*` dereference operator before `+=`.\n\n"
              "Iterating is safe because the borrow checker stops the vector changing size inside the loop.")

    def similarity(query: str, texts: list[str]) -> list[float]:
        return [0.9 if "adds 50" in t else 0.5 if "safe because" in t else 0.1 for t in texts]

    query = "How do I add 50 to every element of a vector in place?"
    joined = render(extract_answer(query, [first, second], similarity=similarity, follows=[None, 0]))
    apart = render(extract_answer(query, [first, second], similarity=similarity))
    assert joined.index("adds 50") < joined.index("dereference operator")
    assert "dereference operator" not in apart  # two unrelated chunks: the runner-up's best passage instead


def test_chunks_that_go_on_from_one_another_are_read_in_the_pages_order() -> None:
    # Ranked second-before-first: the answer still reads as the page does, each piece citing its own chunk.
    later = "Then a second `let` shadows `x` again, doubling the value to give 12."
    earlier = "Shadowing declares a new variable with the same name by repeating `let`, here giving `x` the value 6."
    picked = extract_answer("How does shadowing with let change x?", [later, earlier], follows=[1, None])
    assert [chunk for chunk, _ in picked] == [1, 0]


def test_follows_links_a_chunk_to_its_pages_previous_chunk_of_the_same_section_only() -> None:
    def chunk(source: str, index: int, heading: str) -> Chunk:
        return {"chunk_id": f"{source}{index}", "source": source, "source_url": "", "title": "", "score": 0.5,
                "heading_hierarchy": [heading], "text": "x", "chunk_index": index}

    chunks = [chunk("a.md", 4, "Loops"), chunk("a.md", 3, "Loops"), chunk("b.md", 5, "Loops"),
              chunk("a.md", 5, "Other"), chunk("b.md", 7, "Loops")]
    assert follows(chunks) == [1, None, None, None, None]
