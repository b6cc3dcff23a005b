"""Reference pages of the documentation site, generated from the code at build time.

`hooks.py` is the MkDocs hook that adds them; each other module renders one page as markdown.
Nothing here is part of the product: the package `biomcp` never imports it.
"""
