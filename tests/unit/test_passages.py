"""Quotable units of a chunk: docs markup never becomes a quoted sentence, and no fragment is quoted."""

from __future__ import annotations

from logic.extractive import render
from logic.passages import MAX_BLOCK_LINES, closing_code, joined_code, units
from rag_agent.evaluation import figures as eval_figures

QUOTED = """If you need the binary small, you can switch from unwinding to aborting by
> adding `panic = 'abort'` to the appropriate `[profile]` sections in your
> Cargo.toml file. For example, if you want to abort on panic in release mode,
> add this:
>
> ```toml
> [profile.release]
> panic = 'abort'
> ```
"""


def test_a_block_quotes_wrapped_lines_and_code_are_quoted_whole() -> None:
    found = units("> Memory will then need to be cleaned up by the\n" + QUOTED.split("\n", 1)[1])
    code = [u for u in found if u.kind == "code"]
    assert code and "[profile.release]\npanic = 'abort'" in code[0].body
    assert code[0].lead == "For example, if you want to abort on panic in release mode, add this:"
    assert all(u.body.endswith((".", ":", "```")) for u in found)


def test_a_code_span_wrapped_over_two_lines_is_quoted_whole() -> None:
    # Hard-wrapped at 80 columns, the span breaks after a colon: the sentence goes on, and so does the next span.
    text = ("Notice that the code panicked with the message `already borrowed:\n"
            "BorrowMutError`. This is how `RefCell<T>` handles violations of the borrowing\nrules at runtime.")
    assert [u.body for u in units(text)] == [
        "Notice that the code panicked with the message `already borrowed: BorrowMutError`.",
        "This is how `RefCell<T>` handles violations of the borrowing rules at runtime."]
    # A span closed on its own line leaves the next line to the usual rule: a lead-in ends there.
    found = units("You compile the whole project with `cargo build`\nlike this:\n\n```console\n$ cargo build\n```")
    lead = "You compile the whole project with `cargo build` like this:"
    assert [(u.kind, u.lead) for u in found] == [("code", lead)]


def test_a_line_cut_from_a_wrapped_sentence_is_not_quoted() -> None:
    text = ("small as possible, you can switch from unwinding to aborting upon a panic by\n\n"
            "The stack unwinds by default.")
    assert [u.body for u in units(text)] == ["The stack unwinds by default."]


def test_comments_tags_and_admonition_markers_are_not_quoted() -> None:
    text = ('<Listing number="9-6" file-name="src/main.rs" caption="A function that returns errors">\n\n'
            "Create an account on [crates.io](https://crates.io/)<!-- ignore --> and get an API token.\n\n"
            '??? example "Performance Example"\n    Pydantic is much faster than dedicated code in this example.\n\n'
            "</Listing>\n")
    bodies = [u.body for u in units(text)]
    assert bodies == ["Create an account on [crates.io](https://crates.io/) and get an API token.",
                      "Pydantic is much faster than dedicated code in this example."]


def test_an_image_whose_alt_text_wraps_leaves_no_empty_quote() -> None:
    text = ("Now you will get error checks for required arguments.\n\n![Required argument\nerror in VS Code]"
            "(../img/vs_code_03.png)\n\nAnd you will also get error checks for invalid data types.")
    answer = render([(0, u.body) for u in units(text)])
    assert ". [1] ." not in answer and not answer.startswith(".")
    assert answer.count("[1]") == 2


def test_a_myst_role_is_quoted_as_the_name_it_shows() -> None:
    text = ("If you log to `sys.stderr` too, you must use {class}`~structlog.WriteLogger` instead of "
            "{class}`~structlog.PrintLogger`, and call {func}`structlog.configure` once.\n\n"
            "```python\nrole = {class}`kept`  # code is shown as written\n```\n")
    bodies = [u.body for u in units(text)]
    assert bodies[0] == ("If you log to `sys.stderr` too, you must use `WriteLogger` instead of `PrintLogger`, "
                         "and call `structlog.configure` once.")
    assert "{class}`kept`" in bodies[1]


def test_an_indented_paragraph_after_a_blank_line_stays_in_its_list_item() -> None:
    text = ("- **`PERMANENT_SESSION_LIFETIME`**: How long a permanent session's cookie lasts.\n\n"
            "    Default: `timedelta(days=31)`\n\n- **`SESSION_REFRESH_EACH_REQUEST`**: Send the cookie every time.\n\n"
            "A paragraph after the list.\n")
    bodies = [u.body for u in units(text)]
    assert bodies[0].startswith("- **`PERMANENT_SESSION_LIFETIME`**") and "Default: `timedelta(days=31)`" in bodies[0]
    assert bodies[1].startswith("- **`SESSION_REFRESH_EACH_REQUEST`**") and "PERMANENT" not in bodies[1]
    assert bodies[2] == "A paragraph after the list."


def test_a_template_in_code_before_more_code_is_not_a_role() -> None:
    text = "The syntax is `{module_import}:{app_variable}`. `module_import` is the dotted import name.\n"
    assert [u.body for u in units(text)] == ["The syntax is `{module_import}:{app_variable}`.",
                                             "`module_import` is the dotted import name."]


def test_a_definition_list_is_quoted_as_items_led_by_their_terms() -> None:
    text = ("These processors cover the common cases:\n\n{func}`structlog.processors.format_exc_info`:\n\n"
            ": Formats it to a flat string.\n\n**dict_tracebacks**\n: Gives a structured `exception` key.\n"
            "  It is JSON-serializable.\n: It needs no extra package.\n\nA paragraph after the list.\n\n"
            "```yaml\nkey\n: not a definition in code\n```\n")
    found = units(text)
    assert found[0].kind == "list" and found[0].lead == "These processors cover the common cases:"
    assert found[0].body.splitlines() == [
        "- **`structlog.processors.format_exc_info`**: Formats it to a flat string.",
        "- **dict_tracebacks**: Gives a structured `exception` key.", "  It is JSON-serializable.",
        "  It needs no extra package."]
    assert found[1].body == "A paragraph after the list."
    assert ": not a definition in code" in found[2].body


MYST = """Configure it once at start-up.

:::{important}
Call `configure()` before the first `get_logger()`.
:::

:::{versionchanged} 14.0.0 Allow final processor to return a {any}`dict`.
:::

```{versionadded} 23.1.0
```

````{note}
For example, render to JSON with this processor:

```{code-block} python
:caption: app.py
:linenos:

processors = [JSONRenderer()]
```
````

```{toctree}
:hidden:

getting-started
```

```{testsetup}
import secret_fixture
```

See the {doc}`next chapter <configuration>` and {meth}`get_active() <pkg.Renderer.get_active>`.
"""


def test_myst_directives_are_quoted_as_the_page_shows_them() -> None:
    found = units(MYST)
    bodies = [u.body for u in found]
    assert "Call `configure()` before the first `get_logger()`." in bodies
    assert "Changed in version 14.0.0: Allow final processor to return a `dict`." in bodies
    assert "Added in version 23.1.0." in bodies
    assert "See the next chapter and `get_active()`." in bodies
    code = [u for u in found if u.kind == "code"]
    assert len(code) == 1 and code[0].body == "```python\nprocessors = [JSONRenderer()]\n```"
    assert code[0].lead == "For example, render to JSON with this processor:"
    shown = "\n".join(bodies)
    # No fence, option, navigation entry or hidden test set-up is quoted.
    for markup in ("{", ":::", ":caption:", ":linenos:", "getting-started", "secret_fixture", "<configuration>"):
        assert markup not in shown



def test_a_diagrams_source_is_not_quoted() -> None:
    text = ("The processors hand the event on like this:\n\n```mermaid\ngraph LR\n  A[bind] --> B[render]\n```\n\n"
            "Each processor returns the event dictionary.")
    assert [u.body for u in units(text)] == ["Each processor returns the event dictionary."]  # nor its lead-in


def test_docusaurus_admonitions_are_quoted_as_their_text() -> None:
    text = (":::tip[Use the launch file]\n\nStart every node with `ros2 launch` so they share one config.\n\n:::\n\n"
            ":::danger Take care\nNever delete the map while the robot drives.\n:::\n\n"
            "::: pkg.module.Reference\n")  # an mkdocstrings reference is not a box
    bodies = [u.body for u in units(text)]
    assert "Start every node with `ros2 launch` so they share one config." in bodies
    assert "Never delete the map while the robot drives." in bodies
    assert not any(":::tip" in b or ":::danger" in b or b.strip() == ":::" for b in bodies)


def test_a_sentence_ending_inside_emphasis_gets_no_second_stop() -> None:
    answer = render([(0, "**Do not reveal the secret key when committing code.**"), (0, "Keep it *secret*")])
    assert answer == "**Do not reveal the secret key when committing code.** [1] Keep it *secret*. [1]"


def test_a_reference_entrys_name_leads_its_descriptions_first_sentence() -> None:
    # Sphinx's `.. data::` entries as ingest writes them: the name and a colon, then what it does.
    text = ("The session settings are these.\n\n`SESSION_COOKIE_PATH`:\n\n"
            "The path that the session cookie will be valid for. If not set, the cookie is valid under `/`.\n\n"
            "`SESSION_COOKIE_SAMESITE`:\n\nRestrict how cookies are sent with requests from external sites.\n\n"
            "`pydantic.types.Strict`\n\nBy default, Pydantic will attempt to coerce values when possible.\n")
    assert [u.body for u in units(text)] == [
        "The session settings are these.",
        "`SESSION_COOKIE_PATH`: The path that the session cookie will be valid for.",
        "If not set, the cookie is valid under `/`.",
        "`SESSION_COOKIE_SAMESITE`: Restrict how cookies are sent with requests from external sites.",
        "By default, Pydantic will attempt to coerce values when possible."]  # a code span alone names nothing



def test_two_pieces_of_one_code_block_are_joined_and_two_blocks_are_not() -> None:
    call_left_open = "```js\nconst client = new Client(url, {\n  connect: tls\n```"
    rest = "```js\n  })\n\nclient.close()\n```"
    whole_call = "```js\nconst client = new Client(url, {\n  connect: tls\n  })\n\nclient.close()\n```"
    assert joined_code(call_left_open, rest) == whole_call
    # A YAML list whose next piece opens indented, inside the key the first piece ends on.
    assert joined_code("```yaml\nplugins:\n  - search\n```", "```yaml\n  - tags\n```").count("```") == 2
    whole = "```js\nclient.close()\n```"
    assert joined_code(whole, "```js\nserver.close()\n```") == ""  # each block stands on its own
    assert joined_code(call_left_open, "```python\n  })\n```") == ""  # another language is another block
    assert closing_code(f"Close it:\n\n{whole}\n") == whole
    assert closing_code(f"{whole}\n\nThen exit.") == ""


def test_code_a_chunk_opens_inside_of_is_quoted_from_its_first_whole_statement() -> None:
    tail = "Then:\n\n```js\n  })\n\nclient.request({\n  path: '/'\n})\n```\n"
    assert [u.body for u in units(tail)] == ["```js\n…\nclient.request({\n  path: '/'\n})\n```"]
    nested = "```python\n        nn.ReLU()\n    )\n\n    # Actor head\n    self.actor = nn.Linear(h, 1)\n```"
    assert [u.body for u in units(nested)] == ["```python\n…\n# Actor head\nself.actor = nn.Linear(h, 1)\n```"]
    assert units("```js\n  })\n})\n```") == []  # only the ends of calls shown elsewhere: nothing to quote


def test_the_retrieved_piece_of_a_long_block_stays_whole_when_the_piece_before_it_is_joined() -> None:
    before = "```python\nworld = World(\n" + "".join(f"    option_{n}=True,\n" for n in range(40)) + "```"
    loop = "```python\n)\nfor i in range(1000):\n    world.step(render=True)\n```"
    joined = joined_code(before, loop, keep_later=True)
    assert joined.endswith("for i in range(1000):\n    world.step(render=True)\n```")
    assert len(joined.splitlines()) <= MAX_BLOCK_LINES
    # Quoted, it opens at a whole statement: the options of a call whose start is not shown go.
    assert [u.body for u in units(joined)] == ["```python\n…\nfor i in range(1000):\n    world.step(render=True)\n```"]


def test_a_piece_that_ends_by_closing_what_encloses_it_quotes_the_statements_between() -> None:
    piece = ("```python\n            ]\n        ),\n\n        # The bridge node\n        Node(\n"
             "            parameters=[{'unity_port': 10000}]\n        )\n    ])\n```")
    assert [u.body for u in units(piece)] == \
        ["```python\n…\n# The bridge node\nNode(\n    parameters=[{'unity_port': 10000}]\n)\n…\n```"]


LIST_ITEM_CODE = """* `exclude_none`: Exclude all fields whose value is `None`.
* `exclude_unset`: Pydantic keeps track of the fields that were set. Using `exclude_unset`, any field that
  was not explicitly provided will be excluded:

    ```python
    class UserModel(BaseModel):
        name: str
        age: int = 18
    ```

    | option | effect |
    | --- | --- |
    | `exclude_unset` | drops unset fields |

Fields set later count as set.
"""


def test_code_and_a_table_from_a_list_item_are_quoted_at_the_margin() -> None:
    # Indented four spaces, a quoted fence opens no block, and a closing fence indented past its opening one
    # closes nothing: the rest of the answer would render as code.
    blocks = [u for u in units(LIST_ITEM_CODE) if u.kind in ("code", "table")]
    assert [u.kind for u in blocks] == ["code", "table"]
    assert blocks[0].body == "```python\nclass UserModel(BaseModel):\n    name: str\n    age: int = 18\n```"
    assert blocks[1].body.splitlines()[0] == "| option | effect |"
    answer = render([(0, f"\n{u.body}\n") for u in blocks] + [(0, "Fields set later count as set.")])
    assert eval_figures.answer_defects(answer) == []
    # A chunk that opens with such a block has lost its opening fence's indentation, not the rest's.
    opened = units(LIST_ITEM_CODE[LIST_ITEM_CODE.index("```python"):])[0]
    assert opened.body == blocks[0].body


def test_a_list_items_line_that_goes_on_without_indentation_is_the_items_own() -> None:
    # Hard-wrapped Markdown often goes on a list item's paragraph at the margin (CommonMark's lazy continuation):
    # cut at the wrap, the item would be quoted ending "in the case where you'd like to use".
    text = ("Changes:\n\n* When subclassing a model, `model_config` is inherited. This helps where you'd like to use\n"
            "a base class with one configuration for many models.\n-\n# Next section\n\n"
            "The next section opens with its own paragraph.\n")
    lists = [u for u in units(text) if u.kind == "list"]
    assert len(lists) == 1 and lists[0].body.endswith("a base class with one configuration for many models.")
    assert [u.body for u in units(text) if u.kind == "sentence"] == ["The next section opens with its own paragraph."]


def test_a_number_starting_a_wrapped_line_goes_on_its_paragraph() -> None:
    # "255." opens a line of hard-wrapped prose; only a list starting at 1 may interrupt a paragraph.
    text = ("Say you have a `u8` that holds values between 0 and\n"
            "255. If you try to change it to a value outside that\nrange, integer overflow will occur.\n\n"
            "## Steps\n2. Run the build again.\n")
    found = units(text)
    assert [u.body for u in found if u.kind == "sentence"][:2] == [
        "Say you have a `u8` that holds values between 0 and 255.",
        "If you try to change it to a value outside that range, integer overflow will occur."]
    assert [u.body for u in found if u.kind == "list"] == ["2. Run the build again."]
