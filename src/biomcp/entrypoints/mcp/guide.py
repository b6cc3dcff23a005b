"""Words generated from the tools a server actually exposes: the `instructions`, the help guide
(`biomcp://help`, `biomcp skill render`), the skills (`biomcp://skill/<slug>`) and the tool
descriptions.

The texts are written with portable tool names (`rag_search`). `Guide.render` adapts them to
the mode:

* each exposed tool's portable name is replaced by its public name (`rag.search` under
  `BIOMCP_TOOL_NAMES=spec`);
* `<!-- if NAME [NAME...] -->...<!-- else -->...<!-- end -->` keeps its first part when every
  named tool is exposed, else its `else` part (optional). Blocks do not nest. That is how a text
  mentions a writing tool (`pubmed_sync_delta`) only where the mode exposes it: read-only mode
  hides the writing tools, so no text sends the model to a tool that does not exist.

The skills are markdown files shipped in the package (`skills/*.md`): the first line is the
title (`# ...`), the first `> ` line the one-sentence description.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from biomcp import __version__
from biomcp.domain.pico import TIERS
from biomcp.entrypoints.mcp.contract import CONTRACT_VERSION
from biomcp.entrypoints.mcp.toolspec import ToolSpec
from biomcp.entrypoints.settings import DEFAULT_TOOLSETS

__all__ = [
    "HELP_URI",
    "INFO_URI",
    "PAPER_EXAMPLE_URI",
    "PAPER_URI_TEMPLATE",
    "SKILL_URI_PREFIX",
    "STATS_URI",
    "ExposedTool",
    "Guide",
    "Skill",
    "skill_sources",
]

PAPER_URI_TEMPLATE = "resource://pubmed/paper/{pmid}"
PAPER_EXAMPLE_URI = "resource://pubmed/paper/31452104"
HELP_URI = "biomcp://help"
SKILL_URI_PREFIX = "biomcp://skill/"
INFO_URI = "pubmed-connect://info"
STATS_URI = "pubmed-connect://stats/pubmed"

_BLOCK = re.compile(
    r"<!-- if (?P<names>[\w. ]+?) -->(?P<then>.*?)(?:<!-- else -->(?P<else>.*?))?<!-- end -->",
    re.DOTALL,
)
_BLANK_RUN = re.compile(r"\n{3,}")  # what a dropped block leaves behind
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class ExposedTool:
    """One tool as the mode exposes it: its public name, portable name, title, and whether it
    writes."""

    name: str
    portable: str
    title: str
    writes: bool


@dataclass(frozen=True, slots=True)
class Skill:
    """A worked example: `slug` (its URI is `biomcp://skill/<slug>`), title, one-sentence
    description, and the markdown body rendered for the mode."""

    slug: str
    title: str
    description: str
    body: str

    @property
    def uri(self) -> str:
        return SKILL_URI_PREFIX + self.slug


@cache
def skill_sources() -> dict[str, str]:
    """The packaged skills' markdown, by slug (the file name without `.md`), sorted."""
    folder = resources.files("biomcp.entrypoints.mcp").joinpath("skills")
    found = {
        entry.name.removesuffix(".md"): entry.read_text(encoding="utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".md") and _SLUG.fullmatch(entry.name.removesuffix(".md"))
    }
    return dict(sorted(found.items()))


class Guide:
    """The texts of one mode, from the tools it exposes (in registration order)."""

    def __init__(
        self,
        tools: Iterable[ExposedTool],
        *,
        contract: str = CONTRACT_VERSION,
        toolsets: Mapping[str, bool] | None = None,
    ) -> None:
        self.tools = tuple(tools)
        self.contract = contract
        #: Each toolset with a tool in this mode, and whether it is offered (`BIOMCP_TOOLSETS`).
        self.toolsets = dict(toolsets or {})
        self._by_portable = {tool.portable: tool for tool in self.tools}
        renames = {t.portable: t.name for t in self.tools if t.portable != t.name}
        self._renames = renames
        self._rename = (
            re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, renames)) + r")(?!\w)")
            if renames
            else None
        )

    @classmethod
    def from_specs(
        cls,
        specs: Mapping[str, ToolSpec],
        *,
        contract: str = CONTRACT_VERSION,
        toolsets: Mapping[str, bool] | None = None,
    ) -> Guide:
        """The guide of a server's tools (public name -> spec, as `BioMcpServer.tool_specs`)
        under tool contract `contract` (`BIOMCP_CONTRACT`); `toolsets` says which toolsets
        are offered and which are off."""
        return cls(
            (
                ExposedTool(name, spec.portable_name, spec.title, spec.writes)
                for name, spec in specs.items()
            ),
            contract=contract,
            toolsets=toolsets,
        )

    @property
    def toolsets_off(self) -> list[str]:
        """The toolsets this mode could offer but does not, in listing order."""
        return [name for name, offered in self.toolsets.items() if not offered]

    # --- rendering ---------------------------------------------------------------------------

    def has(self, *portable: str) -> bool:
        """Whether every tool named (by portable name) is exposed."""
        return all(name in self._by_portable for name in portable)

    def name(self, portable: str) -> str:
        """The public name of an exposed tool, by its portable name."""
        return self._by_portable[portable].name

    def render(self, text: str) -> str:
        """`text` for this mode: conditional blocks resolved, tool names made public."""

        def choose(match: re.Match[str]) -> str:
            names = match["names"].split()
            return match["then"] if self.has(*names) else match["else"] or ""

        text = _BLANK_RUN.sub("\n\n", _BLOCK.sub(choose, text))
        if self._rename is not None:
            text = self._rename.sub(lambda m: self._renames[m[1]], text)
        return text

    def render_schema(self, schema: Any) -> Any:
        """A copy of a JSON Schema whose `description`s are rendered for this mode (a
        parameter's description may name another tool)."""
        if isinstance(schema, dict):
            return {
                key: self.render(value)
                if key == "description" and isinstance(value, str)
                else self.render_schema(value)
                for key, value in schema.items()
            }
        if isinstance(schema, list):
            return [self.render_schema(item) for item in schema]
        return schema

    # --- the texts ---------------------------------------------------------------------------

    def instructions(self) -> str:
        """The server's `instructions`, sent at `initialize`."""
        text = self.render(_INSTRUCTIONS)
        off = self.toolsets_off
        if off:
            text += (
                f" Toolsets off here: {', '.join(off)} (what they do: {HELP_URI}); the "
                "operator offers one by naming it in BIOMCP_TOOLSETS."
            )
        return " ".join(text.split())

    def skills(self) -> list[Skill]:
        """The packaged skills, rendered for this mode."""
        return [_parse(slug, self.render(source)) for slug, source in skill_sources().items()]

    def skill(self, slug: str) -> Skill | None:
        source = skill_sources().get(slug)
        return None if source is None else _parse(slug, self.render(source))

    def help_text(self) -> str:
        """The help guide: `biomcp://help`, and what `biomcp skill render` prints."""
        lines = [
            "# bio-mcp",
            "",
            f"Version {__version__}, tool contract v{self.contract}.",
            "",
            self.instructions(),
            "",
            "## Tools",
            "",
        ]
        lines += [f"- `{tool.name}`: {tool.title}" for tool in self.tools]
        lines += [
            "",
            *self._toolset_lines(),
            "## Resources",
            "",
            f"- `{PAPER_URI_TEMPLATE}`: a corpus document"
            + (f" (the same JSON as `{self.name('rag_get')}`)." if self.has("rag_get") else "."),
            f"- `{HELP_URI}`: this guide.",
            f"- `{INFO_URI}`: this server, its NCBI compliance and status, the corpus.",
            f"- `{STATS_URI}`: PubMed's record count, search fields and links.",
            "",
            "## Skills",
            "",
            "Worked examples to follow step by step, each a markdown resource:",
            "",
        ]
        lines += [f"- `{skill.uri}`: {skill.title}. {skill.description}" for skill in self.skills()]
        lines += [
            "",
            "## Prompts",
            "",
            "- `research_plan`: a plan to answer a biomedical question with these tools.",
            "- `pico_search`: a PubMed query built from population, intervention, comparison "
            f"and outcome, for a tier ({', '.join(TIERS)}).",
            "- `evidence_review`: review the evidence on an intervention for an indication.",
            "",
            self.render(_FLOW),
            "",
            self.render(_DETAILS).strip(),
        ]
        return "\n".join(lines) + "\n"

    def _toolset_lines(self) -> list[str]:
        """The help guide's toolsets section: what each offers, which are on, how to turn
        one on. A toolset that is off is described by what it does, never by its tools'
        names, so no text sends a model to a tool this mode lacks."""
        if not self.toolsets:
            return []
        lines = [
            "## Toolsets",
            "",
            "The tools come in toolsets, chosen by the operator with `BIOMCP_TOOLSETS` "
            "(comma-separated; `default` and `all` name groups). Each toolset costs tokens "
            "in every conversation, so only the default ones are on unless asked for.",
            "",
        ]
        on = [name for name, offered in self.toolsets.items() if offered]
        base = "default" if set(on) == set(DEFAULT_TOOLSETS) else ",".join(on)
        for name, offered in self.toolsets.items():
            state = "on" if offered else f"off: `BIOMCP_TOOLSETS={base},{name}` adds it"
            lines.append(f"- `{name}` ({state}): {_TOOLSET_WORDS.get(name, name)}.")
        lines.append("")
        return lines


#: What each toolset offers, in words that name no tool.
_TOOLSET_WORDS = {
    "corpus": "the synced evidence corpus: saved PubMed queries, their sync and checkpoints, "
    "hybrid search reranked by study quality, and its documents",
    "live": "PubMed live: search, article details in four formats, similar, citing and "
    "cited articles, and one article's citation",
    "fulltext": "PubMed Central open-access full text by section",
    "mesh": "MeSH headings for a term, with a fielded PubMed query",
    "references": "reference lists: match references to PMIDs, convert PMID / PMCID / DOI, "
    "and format many citations at once",
    "projects": "your own evidence in project collections (one per project): store chunks, "
    "vector and hybrid search, inspect; the operator declares the projects",
    "chatgpt": "the search / fetch pair that ChatGPT connectors and deep research look for",
}


def _parse(slug: str, text: str) -> Skill:
    lines = text.splitlines()
    title = lines[0].removeprefix("#").strip() if lines else slug
    description = next((ln.removeprefix(">").strip() for ln in lines if ln.startswith("> ")), "")
    return Skill(slug, title, description, text)


_INSTRUCTIONS = """
Evidence from PubMed for biomedical questions.
<!-- if rag_search rag_get -->Search the synced corpus with rag_search (hybrid BM25 + vector
search, reranked by study quality and evidence tier) and read a document with rag_get or
resource://pubmed/paper/{pmid}.<!-- end -->
<!-- if pubmed_sync_delta -->Grow the corpus with pubmed_sync_delta (a saved PubMed query,
synced incrementally).<!-- else -->This server is read-only: the corpus is grown by its operator
(`biomcp sync`).<!-- end -->
<!-- if pubmed_search_articles pubmed_fetch_article_details pubmed_article_relationships -->For
PubMed itself, live: pubmed_search_articles, pubmed_fetch_article_details (abstracts, MeSH,
grants, full XML, MEDLINE) and pubmed_article_relationships (similar, cited-by, references,
citation formats).<!-- end -->
<!-- if pubmed_fetch_fulltext -->Open-access full text (sections, captions, references; an
outline when long): pubmed_fetch_fulltext.<!-- end -->
<!-- if pubmed_lookup_mesh -->MeSH descriptors and a fielded query for a term:
pubmed_lookup_mesh.<!-- end -->
<!-- if pubmed_convert_ids -->PMID / PMCID / DOI conversion: pubmed_convert_ids.<!-- end -->
<!-- if pubmed_lookup_citation -->Check a reference list (each reference to its PMID):
pubmed_lookup_citation.<!-- end -->
<!-- if pubmed_format_citations -->Citations of many PMIDs at once:
pubmed_format_citations.<!-- end -->
<!-- if search fetch -->For a quick look, search (ids, titles and URLs: the corpus first, then
PubMed live) and fetch (one article's text by id).<!-- end -->
Cite documents by their doc_id (pmid:<digits>) or PMID.
<!-- if list_projects -->Your own evidence lives in projects (one collection per project,
never mixed): list_projects, find_chunks, query_hybrid and inspect_collection.<!-- end -->
<!-- if store_chunks -->Add chunks to a project with store_chunks.<!-- end -->
Worked examples: the biomcp://skill/... resources (listed in biomcp://help).
"""

_FLOW = """
## Typical flow

<!-- if pubmed_sync_delta -->1. Sync a saved query into the corpus (`pubmed_sync_delta`).
<!-- else -->1. The operator syncs the saved queries (this server is read-only).
<!-- end --><!-- if rag_search rag_get -->2. Search it (`rag_search`), read the documents behind
the best chunks (`rag_get`), and cite them by doc_id.
<!-- end --><!-- if pubmed_search_articles pubmed_fetch_article_details -->3. Fill gaps live
(`pubmed_search_articles`, then `pubmed_fetch_article_details`).<!-- end -->
""".strip()

_DETAILS = """
## Details

What the tool descriptions leave out, for the calls that need it.
<!-- if rag_search -->

`rag_search`:

- Optional filters: `study_design` (rct, observational, systematic_review...),
  `evidence_type` (clinical, preclinical, basic, other), `year_min` and `year_max`,
  `min_quality` (0-10), `query_key` (the records of one saved query), `trial_id` (an NCT,
  ISRCTN, EudraCT or ChiCTR id, or `any`), `source` (abstract or fulltext chunks) and
  `include_retracted`.
- `quality_bias` (on by default) favours higher-quality studies, Results and Conclusions,
  and the evidence tier the question calls for.
- `group_by` `paper` gives one result per paper, its other matching chunks beside it.
<!-- end --><!-- if pubmed_sync_delta -->

`pubmed_sync_delta`:

- Each record is classified (clinical, preclinical, basic), scored and chunked.
- A long sync runs as a job that goes on even if the request is cancelled.
- `fulltext` also indexes PMC open-access full text; the saved query remembers it.
<!-- end --><!-- if corpus_checkpoint_set -->
- A checkpoint moved backward re-syncs that period (a backfill); every manual move is audited.
<!-- end --><!-- if pubmed_search_articles -->

`pubmed_search_articles`:

- `dateRange.dateType`: pdat (publication), mdat (modification) or edat (Entrez) date.
- `offset` pages up to result 9,999; past it, pass the answer's `nextCursor` as `cursor`.
- Brief summaries give title, authors, source, dates and retraction.
- A likely misspelling gets ESpell's suggestion, searched only when the query finds nothing.
- The E-utility URLs in the answer carry no API key.
<!-- end --><!-- if pubmed_fetch_article_details -->

`pubmed_fetch_article_details`:

- `abstract_plus` parses title, abstract, authors and affiliations, journal, date, types,
  keywords, MeSH with qualifiers and major topics, grants, DOI and retraction.
- `full_xml` is the PubmedArticle XML, `medline_text` the MEDLINE record, `citation_data`
  what a citation needs. Fetches are cached.
<!-- end --><!-- if pubmed_article_relationships -->

`pubmed_article_relationships`: `relationshipType` is pubmed_similar_articles,
pubmed_citedin, pubmed_references or citation_formats. An unknown PMID is NOT_FOUND.
<!-- end --><!-- if pubmed_fetch_fulltext -->

`pubmed_fetch_fulltext`:

- Each id has a status: available, not_in_pmc, not_open_access, withdrawn or upstream_error.
- Captions include table footnotes and supplement files.
- The outline lists section paths and sizes; `sections` then picks by title word or type.
<!-- end --><!-- if pubmed_lookup_mesh -->

`pubmed_lookup_mesh`: the suggested query has the form `"X"[mh] OR X[tiab]`.
<!-- end -->
"""
