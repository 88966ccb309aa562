"""Sphinx configuration of the reading edition.

``scripts/build_book.py`` stages the pages under ``build/book-src/`` and runs Sphinx with this
folder as its configuration directory (``make book``).
"""

import re

project = "paperlib"
author = "paperlib contributors"
html_title = "paperlib — reading edition"

extensions = [
    "myst_nb",  # the executed notebooks, read as they are (never executed here)
    "sphinx.ext.autodoc",  # one page per paperlib module, from its docstrings
    "sphinx.ext.napoleon",  # the docstrings' Google-style Args: / Returns: sections
    "sphinx_codeautolink",  # names in code cells link to those pages
    "sphinx-mathjax-offline",  # MathJax 3 served from the site itself: no CDN
]

nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
add_module_names = False

codeautolink_concat_default = True  # a notebook's cells form one script: imports carry over
codeautolink_warn_on_missing_inventory = False

exclude_patterns = ["_notebooks/**", "**/.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

html_theme = "sphinx_book_theme"
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
html_static_path = ["_static"]
html_favicon = "_static/favicon.svg"  # else browsers ask for /favicon.ico, which 404s
html_context = {"default_mode": "light"}  # the theme logs an error when no mode is set
html_css_files = ["book.css"]
html_last_updated_fmt = None


LITERAL = re.compile(r"(``.*?``)")


def escape_bars(app, what, name, obj, options, lines):
    """paperlib's docstrings write norms and set sizes as ``|x|``, never RST substitutions: escape
    each ``|`` outside literals (lines that open with ``|`` or ``+``, tables, are left alone)."""
    for i, line in enumerate(lines):
        if not line.lstrip().startswith(("|", "+")):
            parts = LITERAL.split(line)
            lines[i] = "".join(p if p.startswith("``") else p.replace("|", "\\|") for p in parts)


def setup(app):
    app.connect("autodoc-process-docstring", escape_bars)
