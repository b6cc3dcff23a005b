"""The server's prompts: `research_plan`, `pico_search` and `evidence_review`, their argument
completion (tiers, focuses, study designs), and the protocol errors of `prompts/get`.

Each prompt is one user message naming the tools of the current mode (`Guide.render`), so a
read-only or spec-names server never suggests a tool it does not expose. A bad argument (an
unknown tier, a term PubMed cannot express) and an unknown prompt are JSON-RPC invalid-params
errors (-32602) whose message says what is accepted: never the SDK's default code 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Completion, CompletionArgument, PromptReference
from pydantic import Field

from biomcp.domain.errors import DomainError
from biomcp.domain.pico import TIERS, pico_query
from biomcp.entrypoints.mcp.guide import Guide
from biomcp.usecases.pico_query import PicoSearch, build_pico_search

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["FOCUSES", "PROMPTS", "STUDY_DESIGNS", "complete", "prompt_error", "register_prompts"]

PROMPTS = ("research_plan", "pico_search", "evidence_review")
FOCUSES = {
    "efficacy": "efficacy-evidence-review",
    "safety": "safety-signal-check",
    "mechanism": "mechanism-question",
}
#: PubMed publication types offered for `evidence_review.study_design` (filterByPublicationTypes).
STUDY_DESIGNS = (
    "Randomized Controlled Trial",
    "Clinical Trial",
    "Meta-Analysis",
    "Systematic Review",
    "Observational Study",
    "Case Reports",
    "Clinical Trial, Phase III",
)
_MAX_ARGUMENT = 500


def prompt_error(message: str) -> MCPError:
    """An invalid-params error for `prompts/get`, listing the prompts."""
    return MCPError(INVALID_PARAMS, f"{message}. Prompts: {', '.join(PROMPTS)}.")


def complete(argument: CompletionArgument, ref: Any) -> Completion | None:
    """Completion values for a prompt argument (prefix match, case-insensitive), or None."""
    if not isinstance(ref, PromptReference):
        return None
    choices: dict[tuple[str, str], tuple[str, ...]] = {
        ("pico_search", "tier"): tuple(TIERS),
        ("evidence_review", "focus"): tuple(FOCUSES),
        ("evidence_review", "study_design"): STUDY_DESIGNS,
    }
    options = choices.get((ref.name, argument.name))
    if options is None:
        return None
    prefix = argument.value.casefold()
    values = [option for option in options if option.casefold().startswith(prefix)]
    return Completion(values=values, total=len(values), has_more=False)


def _checked(name: str, value: str | None) -> str | None:
    if value is not None and len(value) > _MAX_ARGUMENT:
        raise prompt_error(f"argument {name} is longer than {_MAX_ARGUMENT} characters")
    return value


def register_prompts(
    server: MCPServer[Any], guide: Guide, services: Services | None = None
) -> None:
    """Add the three prompts and their argument completion to `server`. `pico_search` looks
    MeSH up through `services.live`, built on its first call (None: free text only)."""
    _register_research_plan(server, guide)
    _register_pico_search(server, guide, services)
    _register_evidence_review(server, guide)

    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # the SDK's is untyped
    async def completion(ref: Any, argument: CompletionArgument, _context: Any) -> Any:
        return complete(argument, ref)


def _register_research_plan(server: MCPServer[Any], guide: Guide) -> None:
    @server.prompt(
        name="research_plan",
        title="Plan a biomedical research question",
        description="A step-by-step plan to answer a biomedical question with this server's "
        "tools: which evidence tier, which searches, how to read and cite.",
    )
    def research_plan(
        question: Annotated[str, Field(description="The question, in plain words.")],
    ) -> str:
        _checked("question", question)
        return guide.render(_RESEARCH_PLAN).format(question=question)


def _register_pico_search(server: MCPServer[Any], guide: Guide, services: Services | None) -> None:
    @server.prompt(
        name="pico_search",
        title="PubMed query from a PICO question",
        description="Builds a PubMed query from population, intervention, comparison and "
        "outcome with the evidence-tier templates (A: clinical, B: basic / preclinical, both), "
        "each element looked up in MeSH first, and says how to check and use it. Separate "
        "synonyms with ';', the main name first.",
    )
    async def pico_search(
        population: Annotated[str, Field(description="P: the condition / population.")],
        intervention: Annotated[
            str | None, Field(description="I: the drug, target or exposure.")
        ] = None,
        comparison: Annotated[
            str | None, Field(description="C: the comparator (Tier A only).")
        ] = None,
        outcome: Annotated[str | None, Field(description="O: the outcome (Tier A only).")] = None,
        tier: Annotated[str, Field(description="A (clinical), B (basic) or both.")] = "A",
    ) -> str:
        for name, value in (
            ("population", population),
            ("intervention", intervention),
            ("comparison", comparison),
            ("outcome", outcome),
        ):
            _checked(name, value)
        try:
            if services is None:
                found = PicoSearch(
                    pico_query(population, intervention, comparison, outcome, tier=tier)
                )
            else:
                found = await build_pico_search(
                    services.live, population, intervention, comparison, outcome, tier=tier
                )
        except DomainError as exc:
            raise prompt_error(f"pico_search: {exc}") from None
        return guide.render(_PICO).format(
            term=found.query.term,
            tier=found.query.tier,
            key=found.query.query_key,
            mesh=_pico_mesh(found),
        )


def _pico_mesh(found: PicoSearch) -> str:
    """What MeSH said about the elements, and the elements this tier leaves out."""
    lines = []
    if found.query.headings:
        used = ", ".join(f"{heading} ({element})" for element, heading in found.query.headings)
        lines.append(f"MeSH headings used: {used}.")
    for element, term, others in found.not_in_mesh:
        near = f" (closest headings: {'; '.join(others)})" if others else ""
        lines.append(f"Not found in MeSH, searched as free text: {element} {term!r}{near}.")
    lines += [f"Note: {note}." for note in found.notes]
    if found.query.unused:
        lines.append(f"Not searched in this tier: {', '.join(found.query.unused)} (Tier A "
                     "searches them).")  # fmt: skip
    return "".join(f"\n\n{line}" for line in lines)


def _register_evidence_review(server: MCPServer[Any], guide: Guide) -> None:
    @server.prompt(
        name="evidence_review",
        title="Review the evidence",
        description="Review the evidence on an intervention for an indication (efficacy, "
        "safety or mechanism), following the matching skill, with one citation per claim.",
    )
    def evidence_review(
        intervention: Annotated[str, Field(description="The drug, target or exposure.")],
        indication: Annotated[str, Field(description="The condition or population.")],
        focus: Annotated[str, Field(description="efficacy, safety or mechanism.")] = "efficacy",
        study_design: Annotated[
            str | None, Field(description="A PubMed publication type to favour (Meta-Analysis...).")
        ] = None,
    ) -> str:
        for name, value in (
            ("intervention", intervention),
            ("indication", indication),
            ("study_design", study_design),
        ):
            _checked(name, value)
        slug = FOCUSES.get(focus.strip().casefold())
        if slug is None:
            raise prompt_error(f"evidence_review: unknown focus {focus[:20]!r}; focuses: "
                               f"{', '.join(FOCUSES)}")  # fmt: skip
        skill = guide.skill(slug)
        design = (
            f'\nFavour {study_design}: pass "filterByPublicationTypes": ["{study_design}"] to '
            + guide.render("pubmed_search_articles.")
            if study_design
            else ""
        )
        return guide.render(_REVIEW).format(
            focus=focus.strip().casefold(),
            intervention=intervention,
            indication=indication,
            design=design,
            uri=skill.uri if skill else "biomcp://help",
        )


_RESEARCH_PLAN = """Plan how to answer this biomedical question with the bio-mcp tools, then
carry the plan out: {question}

1. Classify it: efficacy (does it work?), safety (does it harm?), mechanism (how / why?), or a
   mix. Efficacy and safety rest on clinical evidence (Tier A); mechanism on basic and
   preclinical evidence (Tier B).
2. Write the PICO (population, intervention, comparison, outcome) and build the PubMed query
   with the pico_search prompt, or by hand from the tier templates.
3. <!-- if pubmed_sync_delta -->Sync it into the corpus with pubmed_sync_delta (a stable
   query_key per question and tier)<!-- else -->Check the corpus covers it
   (corpus_checkpoint_get; this server is read-only)<!-- end -->, then search with rag_search
   and read the best documents with rag_get.
4. Fill gaps live: pubmed_search_articles, pubmed_fetch_article_details, and
   pubmed_article_relationships around a key paper.
5. Answer with one citation (doc_id or PMID) per claim, numbers cited to the chunk that states
   them, and a clinical plus a basic-science citation when mechanism and efficacy mix.

The skills (biomcp://skill/...) are worked examples of each kind of question."""

_PICO = """PubMed query (tier {tier}) for this PICO question:

```text
{term}
```

Suggested query_key: `{key}`.{mesh}

1. Check its size live: pubmed_search_articles with this query as queryTerm (maxResults 20).
   Narrow it (a date range, an outcome) when count is in the thousands; widen it (synonyms
   separated by ';', drop the comparison) when it is a handful.<!-- if pubmed_lookup_mesh -->
   For an element MeSH did not name, pubmed_lookup_mesh with a shorter or broader term finds
   its heading; give it back as the element's first term.<!-- end -->
2. <!-- if pubmed_sync_delta -->Save it: pubmed_sync_delta with query_key `{key}` and this
   query as term; then rag_search and rag_get to screen.<!-- else -->This server is read-only:
   screen the live results with pubmed_fetch_article_details, and give the query and its key
   to the operator to sync.<!-- end -->
3. Include a study when its population, intervention, comparison and outcome all match; give
   the reason when you exclude one. Report the query, the date, and the counts screened and
   included."""

_REVIEW = """Review the {focus} evidence on {intervention} for {indication}.

Follow the worked example in {uri}: gather the evidence, read the best documents, weigh them
by design and quality, and answer with one citation (doc_id or PMID) per claim.{design}
Say what is missing or conflicting, and how strong the evidence is overall."""
