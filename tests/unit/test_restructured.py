"""reStructuredText pages (Sphinx sources) are read as their built pages show them, and index like Markdown."""

from __future__ import annotations

from pathlib import Path

from logic.passages import units
from tests.unit.test_ingest_folder import chunks_of
from tools.restructured import rst_to_markdown
from tools.sources import from_folder
from tools.webpage import html_to_markdown

PAGE = """\
Uploading Files
===============

.. currentmodule:: flask

Files arrive in :attr:`~flask.Request.files`; save one with :meth:`FileStorage.save`.
See :doc:`/patterns/index` and :ref:`the security notes <security-xss>`.

.. toctree::
   :maxdepth: 2

   patterns/index

A Gentle Introduction
---------------------

Set the limit in ``MAX_CONTENT_LENGTH``::

    app.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000

.. code-block:: python

   from werkzeug.utils import secure_filename

.. versionchanged:: 2.3
    Added :data:`MAX_FORM_MEMORY_SIZE` to limit form data.

.. note::
   Never trust the file name a client sends.

.. data:: request
   :noindex:

   The current request object.

.. autoclass:: Flask
   :members:
"""


def test_sphinx_roles_and_directives_read_as_the_built_page_shows_them() -> None:
    markdown = rst_to_markdown(PAGE, "patterns/fileuploads.rst")
    assert markdown.startswith("---\ntitle: Uploading Files\n---\n\n# Uploading Files\n")
    # An object's name as a code span (`~` keeps its last part, a method gets its parentheses), a link as its text.
    assert "Files arrive in `files`; save one with `FileStorage.save()`." in markdown
    assert "See patterns/index and the security notes." in markdown
    assert "## A Gentle Introduction {#a-gentle-introduction}" in markdown
    assert "Set the limit in `MAX_CONTENT_LENGTH`:\n\n```\napp.config['MAX_CONTENT_LENGTH'] = 16 * 1000 * 1000\n```" \
        in markdown
    assert "```python\nfrom werkzeug.utils import secure_filename\n```" in markdown
    assert "Changed in version 2.3: Added `MAX_FORM_MEMORY_SIZE` to limit form data." in markdown
    assert "Never trust the file name a client sends." in markdown
    assert "`request`:\n\nThe current request object." in markdown  # an entry's name, then its description
    # Navigation, a module marker, autodoc stubs and directive options are not text a reader sees.
    for hidden in ("toctree", "maxdepth", "currentmodule", "noindex", "autoclass", "members", ":attr:", "``MAX"):
        assert hidden not in markdown, hidden


def test_a_titled_method_keeps_its_title_and_the_page_default_role_is_docutils() -> None:
    page = ("Logging\n=======\n\n.. default-role:: code\n\nIf :meth:`app.logger <flask.Flask.logger>` is accessed, "
            ":func:`~logging.getLogger` and `dictConfig` are too.\n")
    assert "If `app.logger` is accessed, `getLogger()` and `dictConfig` are too." in rst_to_markdown(page)


def test_a_page_never_reads_other_files_or_passes_raw_html(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TOKEN")
    page = (f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n\n   <script>alert(1)</script>\n\n"
            f".. csv-table:: t\n   :file: {secret}\n\nBody text.\n")
    markdown = rst_to_markdown(page)
    assert "Body text." in markdown
    assert "TOP-SECRET" not in markdown and "alert" not in markdown


def test_a_page_with_broken_markup_is_still_read() -> None:
    page = ("Title\n===\n\nText with :unheard-of:`thing` and *unclosed emphasis.\n\n"
            ".. unknown-directive:: x\n\n   Kept body.\n")
    markdown = rst_to_markdown(page)
    assert "Text with `thing` and" in markdown
    assert "Kept body." in markdown


def test_sphinx_html_headings_take_their_section_id_without_the_pilcrow() -> None:
    html = ('<html><body><div role="main"><section id="quickstart"><h1>Quickstart<a class="headerlink" '
            'href="#quickstart">¶</a></h1><p>Intro.</p><section id="routing"><h2>Routing<a class="headerlink" '
            'href="#routing">¶</a></h2><p>Use the route decorator.</p></section></section></div></body></html>')
    markdown = html_to_markdown(html)[0]
    assert "## Routing {#routing}" in markdown and "# Quickstart {#quickstart}" in markdown
    assert "¶" not in markdown


def test_a_folder_of_rst_pages_is_ingested_with_section_anchors(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "patterns").mkdir(parents=True)
    (root / "patterns" / "fileuploads.rst").write_text(PAGE)
    (root / "index.rst").write_text("Welcome\n=======\n\nStart with the file uploads pattern.\n")
    found = from_folder(root)
    assert sorted(found.docs) == ["index.rst", "patterns/fileuploads.rst"]
    uploads = chunks_of(root, tmp_path / "data", "patterns/fileuploads.rst")
    assert {m["title"] for m in uploads} == {"Uploading Files"}
    assert "a-gentle-introduction" in {m["anchor"] for m in uploads}
    assert any("`MAX_CONTENT_LENGTH`" in m["text"] for m in uploads)
    assert not any(":meth:" in m["text"] or "toctree" in m["text"] for m in uploads)


def test_an_entry_whose_description_opens_with_code_leads_the_code_with_its_name() -> None:
    markdown = rst_to_markdown(".. function:: make_response(*args)\n\n    .. code-block:: python\n\n        x = 1\n\n"
                               ".. data:: EMPTY\n")
    assert "`make_response(*args)`:\n\n```python\nx = 1\n```" in markdown and "`EMPTY`:" in markdown
    assert [(u.lead, u.kind) for u in units(markdown)] == [("`make_response(*args)`:", "code")]


def test_single_backticks_read_as_a_sphinx_projects_default_role() -> None:
    # Sphinx projects set `default_role` ("any", "py:obj", "code"): the name as code, a titled target by its title.
    page = ("Access\n======\n\nBy default, marshmallow uses `utils.get_value <marshmallow.utils.get_value>` "
            "to pull attributes, and `Schema.dump` writes them.\n")
    shown = "marshmallow uses `utils.get_value` to pull attributes, and `Schema.dump` writes them."
    assert shown in rst_to_markdown(page)


def test_sphinx_file_wide_metadata_is_not_shown_and_keeps_the_title() -> None:
    page = ":orphan:\n:tocdepth: 2\n\nAJAX with jQuery\n================\n\nSend a request with `fetch`.\n"
    markdown = rst_to_markdown(page)
    assert markdown.startswith("---\ntitle: AJAX with jQuery\n---")
    assert "orphan" not in markdown and "tocdepth" not in markdown
    assert "Send a request with `fetch`." in markdown
