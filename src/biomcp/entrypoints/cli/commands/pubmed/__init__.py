"""`biomcp pubmed ...`: live PubMed from the command line.

The commands mirror the MCP tools (`pubmed_search_articles`, `pubmed_fetch_article_details`,
`pubmed_article_relationships`) on the same use case, `LivePubMed`. Output is for people by
default and the tool's JSON with `--json`. Failures follow `cli.common`: one line on stderr,
`error [CODE]: message` (the envelope on stdout with `--json`), exit 2 for `VALIDATION`, 1 for
everything else.
"""

from __future__ import annotations

from biomcp.entrypoints.cli.commands.pubmed import articles, lookups
from biomcp.entrypoints.cli.common import group_app

__all__ = ["app"]

app = group_app(
    "pubmed",
    "Live PubMed (NCBI E-utilities): search, fetch, related articles, citations, PMC full "
    "text, identifiers, MeSH, reference matching.",
)
app.command("fulltext")(lookups.fulltext)
app.command("ids")(lookups.ids)
app.command("mesh")(lookups.mesh)
app.command("match")(lookups.match)
app.command("search")(articles.search)
app.command("fetch")(articles.fetch)
app.command("related")(articles.related)
app.command("cite")(articles.cite)
