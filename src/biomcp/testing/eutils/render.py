"""E-utilities answers in NCBI's own XML shapes (declarations, DOCTYPEs, element order).

Every function returns the complete response body as UTF-8 bytes. Shapes follow real NCBI
responses: ESearch as `esearch 20060628`, ESummary as the pubmed v2.0 DocumentSummarySet,
ELink as `elink 20101123`, EInfo as `einfo 20190110`, EFetch as `PubmedArticleSet`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from biomcp.domain.records import PubMedRecord
from biomcp.testing.eutils.medline import ArticleExtras, medline_date
from biomcp.testing.eutils.query import FIELDS

__all__ = [
    "LINK_NAMES",
    "LinkSetOut",
    "efetch_xml",
    "einfo_db",
    "einfo_dblist",
    "elink_xml",
    "error_xml",
    "esearch_count_xml",
    "esearch_xml",
    "esummary_xml",
]

_DECLARATION = '<?xml version="1.0" encoding="UTF-8" ?>\n'
_DOCTYPES = {
    "eSearchResult": '<!DOCTYPE eSearchResult PUBLIC "-//NLM//DTD esearch 20060628//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">',
    "eSummaryResult": '<!DOCTYPE eSummaryResult PUBLIC "-//NLM//DTD eSummaryResult//EN" '
    '"http://www.ncbi.nlm.nih.gov/entrez/query/DTD/eSummaryDTD/eSummary_pubmed.dtd">',
    "eLinkResult": '<!DOCTYPE eLinkResult PUBLIC "-//NLM//DTD elink 20101123//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20101123/elink.dtd">',
    "eInfoResult": '<!DOCTYPE eInfoResult PUBLIC "-//NLM//DTD einfo 20190110//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20190110/einfo.dtd">',
    # (sic: NCBI's efetch DTD names its root "eEfetchResult")
    "eFetchResult": '<!DOCTYPE eEfetchResult PUBLIC "-//NLM//DTD efetch 20131226//EN" '
    '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20131226/efetch.dtd">',
}
_PUBMED_HEADER = (
    b'<?xml version="1.0" ?>\n'
    b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
#: (name, menu, description) of the links the fake serves.
LINK_NAMES = (
    ("pubmed_pubmed", "Similar articles",
     "Similar PubMed articles, obtained by matching text and MeSH terms"),
    ("pubmed_pubmed_citedin", "Cited by", "PubMed articles that cite the current article"),
    ("pubmed_pubmed_refs", "References for PMC Articles", "References for this PMC Article"),
)  # fmt: skip
_NCBI_FIELD_NAMES = {
    "all": "ALL", "uid": "UID", "ti": "TITL", "ab": "ABST", "mh": "MESH", "majr": "MAJR",
    "ta": "JOUR", "dp": "PDAT", "edat": "EDAT", "pt": "PTYP", "la": "LANG", "tiab": "TIAB",
    "ot": "OTRM", "mdat": "MDAT", "au": "AUTH",
}  # fmt: skip
_ID_TYPE_N = {"pubmed": 1, "medline": 2, "doi": 3, "pii": 4, "pmcid": 5, "pmc": 8, "mid": 8}
_RECORD_STATUS = {
    "MEDLINE": "PubMed - indexed for MEDLINE",
    "PubMed-not-MEDLINE": "PubMed",
    "In-Process": "PubMed - in process",
    "In-Data-Review": "PubMed - in process",
    "Publisher": "PubMed - as supplied by publisher",
}


def _document(root: str, body: str) -> bytes:
    return f"{_DECLARATION}{_DOCTYPES[root]}\n<{root}>{body}</{root}>\n".encode()


def _e(value: object) -> str:
    return escape(str(value)) if value is not None else ""


def error_xml(root: str, message: str) -> bytes:
    """An in-band NCBI error: the endpoint's root element holding one `<ERROR>`."""
    return _document(root, f"\n\t<ERROR>{_e(message)}</ERROR>\n")


def esearch_xml(
    *,
    count: int,
    retstart: int,
    ids: Sequence[str],
    translation: str,
    query_key: str | None = None,
    webenv: str | None = None,
    errors: Iterable[tuple[str, str]] = (),
    warnings: Iterable[tuple[str, str]] = (),
) -> bytes:
    """An eSearchResult. `errors` / `warnings` are (element, text) pairs such as
    ("PhraseNotFound", "abcXYZ") and ("OutputMessage", "No items found.")."""
    parts = [f"<Count>{count}</Count><RetMax>{len(ids)}</RetMax><RetStart>{retstart}</RetStart>"]
    if query_key is not None and webenv is not None:
        parts.append(f"<QueryKey>{_e(query_key)}</QueryKey><WebEnv>{_e(webenv)}</WebEnv>")
    if ids:
        parts.append("<IdList>\n" + "".join(f"<Id>{i}</Id>\n" for i in ids) + "</IdList>")
    else:
        parts.append("<IdList/>")
    parts.append(f"<TranslationSet/><QueryTranslation>{_e(translation)}</QueryTranslation>")
    for wrapper, items in (("ErrorList", list(errors)), ("WarningList", list(warnings))):
        if items:
            inner = "".join(f"<{kind}>{_e(text)}</{kind}>" for kind, text in items)
            parts.append(f"<{wrapper}>{inner}</{wrapper}>")
    return _document("eSearchResult", "".join(parts))


def esearch_count_xml(count: int) -> bytes:
    """ESearch's `rettype=count` answer: the count alone."""
    return _document("eSearchResult", f"<Count>{count}</Count>")


def efetch_xml(articles: Iterable[bytes]) -> bytes:
    """A PubmedArticleSet of raw `<PubmedArticle>` elements, in the order given."""
    return _PUBMED_HEADER + b"<PubmedArticleSet>\n" + b"".join(articles) + b"</PubmedArticleSet>"


def esummary_xml(
    items: Iterable[tuple[str, PubMedRecord | None, ArticleExtras | None]], build: str
) -> bytes:
    """An ESummary v2.0 DocumentSummarySet; a None record gives NCBI's per-uid error."""
    parts = ['\n<DocumentSummarySet status="OK">\n', f"<DbBuild>{_e(build)}</DbBuild>\n"]
    for uid, record, extras in items:
        if record is None:
            parts.append(
                f"<DocumentSummary uid={quoteattr(uid)}>"
                f"<error>cannot get document summary</error></DocumentSummary>\n"
            )
        else:
            parts.append(_summary(record, extras or ArticleExtras()))
    parts.append("</DocumentSummarySet>\n")
    return _document("eSummaryResult", "".join(parts))


def _references(record: PubMedRecord) -> str:
    """ESummary's `References`: the record's notices, typed as ESummary spells them."""
    return "".join(
        f"\t\t<Reference>\n\t\t\t<RefSource>{_e(notice.source)}</RefSource>\n"
        f"\t\t\t<RefType>{_e(_ref_type(notice.kind))}</RefType>\n"
        f"\t\t\t<PMID>{_e(notice.pmid)}</PMID>\n\t\t\t<Note></Note>\n\t\t</Reference>\n"
        for notice in record.notices
    )


def _ref_type(kind: str) -> str:
    """`RetractionIn` (EFetch's RefType) -> `Retraction in` (ESummary's)."""
    words = re.findall(r"[A-Z][a-z]*", kind)
    return " ".join([words[0], *(w.lower() for w in words[1:])])


def _summary(record: PubMedRecord, x: ArticleExtras) -> str:
    journal = record.journal
    names = [(a.display_name, "CollectiveName" if a.collective_name else "Author")
             for a in record.authors]  # fmt: skip
    authors = "".join(
        f"\t\t<Author>\n\t\t\t<Name>{_e(name)}</Name>\n\t\t\t<AuthType>{kind}</AuthType>\n"
        f"\t\t\t<ClusterID></ClusterID>\n\t\t</Author>\n"
        for name, kind in names
    )
    person_names = [name for name, kind in names if kind == "Author"]
    epub = x.epub
    epub_text = f"{epub[:4]} {_month(epub[4:6])} {int(epub[6:8])}" if epub else ""
    ids = x.article_ids or tuple(
        (kind, value)
        for kind, value in (("pubmed", record.pmid), ("doi", record.doi), ("pmc", record.pmcid))
        if value
    )
    article_ids = "".join(
        f"\t\t<ArticleId>\n\t\t\t<IdType>{_e(kind)}</IdType>\n"
        f"\t\t\t<IdTypeN>{_ID_TYPE_N.get(kind, 8)}</IdTypeN>\n"
        f"\t\t\t<Value>{_e(value)}</Value>\n\t\t</ArticleId>\n"
        for kind, value in ids
    )
    history = x.history or (
        (("entrez", record.edat.strftime("%Y/%m/%d %H:%M")),) if record.edat else ()
    )
    history_xml = "".join(
        f"\t\t<PubMedPubDate>\n\t\t\t<PubStatus>{_e(status)}</PubStatus>\n"
        f"\t\t\t<Date>{_e(when)}</Date>\n\t\t</PubMedPubDate>\n"
        for status, when in history
    )
    elocation = ". ".join(f"{kind}: {value}" for kind, value in x.elocations) or (
        f"doi: {record.doi}" if record.doi else ""
    )
    sort_pub = record.pdat.earliest().strftime("%Y/%m/%d 00:00") if record.pdat else ""
    status = _RECORD_STATUS.get(x.status or "", "PubMed")
    flags = "\t\t<flag>Has Abstract</flag>\n" if record.abstract else ""
    return (
        f"<DocumentSummary uid={quoteattr(record.pmid)}>\n"
        f"\t<PubDate>{_e(medline_date(record.pdat))}</PubDate>\n"
        f"\t<EPubDate>{_e(epub_text)}</EPubDate>\n"
        f"\t<Source>{_e(x.medline_ta or journal.iso_abbreviation)}</Source>\n"
        f"\t<Authors>\n{authors}\t</Authors>\n"
        f"\t<LastAuthor>{_e(person_names[-1] if person_names else '')}</LastAuthor>\n"
        f"\t<Title>{_e(record.title)}</Title>\n"
        f"\t<SortTitle>{_e((record.title or '').lower())}</SortTitle>\n"
        f"\t<Volume>{_e(journal.volume)}</Volume>\n"
        f"\t<Issue>{_e(journal.issue)}</Issue>\n"
        f"\t<Pages>{_e(record.pages)}</Pages>\n"
        "\t<Lang>\n" + "".join(f"\t\t<string>{_e(la)}</string>\n" for la in record.languages)
        + "\t</Lang>\n"
        f"\t<NlmUniqueID>{_e(x.nlm_unique_id)}</NlmUniqueID>\n"
        f"\t<ISSN>{_e(journal.issn)}</ISSN>\n"
        f"\t<ESSN>{_e(journal.eissn)}</ESSN>\n"
        "\t<PubType>\n"
        + "".join(f"\t\t<flag>{_e(pt)}</flag>\n" for pt in record.publication_types)
        + "\t</PubType>\n"
        f"\t<RecordStatus>{_e(status)}</RecordStatus>\n"
        f"\t<ArticleIds>\n{article_ids}\t</ArticleIds>\n"
        f"\t<History>\n{history_xml}\t</History>\n"
        f"\t<References>\n{_references(record)}\t</References>\n"
        f"\t<Attributes>\n{flags}\t</Attributes>\n"
        "\t<PmcRefCount>0</PmcRefCount>\n"
        f"\t<FullJournalName>{_e(journal.title)}</FullJournalName>\n"
        f"\t<ELocationID>{_e(elocation)}</ELocationID>\n"
        "\t<DocType>citation</DocType>\n"
        f"\t<SortPubDate>{sort_pub}</SortPubDate>\n"
        f"\t<SortFirstAuthor>{_e(names[0][0] if names else '')}</SortFirstAuthor>\n"
        "</DocumentSummary>\n"
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class LinkSetOut:
    """One LinkSet to render: its source ids and, per link name, (pmid, score) pairs."""

    ids: tuple[str, ...]
    links: tuple[tuple[str, tuple[tuple[str, int | None], ...]], ...] = ()


def elink_xml(linksets: Iterable[LinkSetOut], *, with_scores: bool) -> bytes:
    """An eLinkResult, one LinkSet per entry; link names without links are left out."""
    parts = ["\n"]
    for linkset in linksets:
        ids = "".join(f"\t\t<Id>{_e(i)}</Id>\n" for i in linkset.ids)
        parts.append(f"<LinkSet>\n\t<DbFrom>pubmed</DbFrom>\n\t<IdList>\n{ids}\t</IdList>\n")
        for name, links in linkset.links:
            if not links:
                continue
            parts.append(
                f"\t<LinkSetDb>\n\t\t<DbTo>pubmed</DbTo>\n\t\t<LinkName>{name}</LinkName>\n"
            )
            for pmid, score in links:
                scored = (
                    f"\t\t\t<Score>{score}</Score>\n" if with_scores and score is not None else ""
                )
                parts.append(f"\t\t<Link>\n\t\t\t<Id>{_e(pmid)}</Id>\n{scored}\t\t</Link>\n")
            parts.append("\t</LinkSetDb>\n")
        parts.append("</LinkSet>\n")
    return _document("eLinkResult", "".join(parts))


def einfo_dblist() -> bytes:
    """EInfo without a db: the databases the fake serves (PubMed only)."""
    return _document("eInfoResult", "\n<DbList>\n\t<DbName>pubmed</DbName>\n</DbList>\n")


def einfo_db(*, count: int, last_update: str, build: str) -> bytes:
    """EInfo for PubMed: the record count, the fields the fake searches and its link names."""
    fields = []
    for key, spec in FIELDS.items():
        single = "N" if spec.kind in ("text", "author") else "Y"
        fields.append(
            "\t\t\t<Field>\n"
            f"\t\t\t\t<Name>{_NCBI_FIELD_NAMES[key]}</Name>\n"
            f"\t\t\t\t<FullName>{_e(spec.name)}</FullName>\n"
            f"\t\t\t\t<Description>{_e(spec.description)}</Description>\n"
            "\t\t\t\t<TermCount/>\n"
            f"\t\t\t\t<IsDate>{'Y' if spec.kind == 'date' else 'N'}</IsDate>\n"
            f"\t\t\t\t<IsNumerical>{'Y' if spec.kind == 'uid' else 'N'}</IsNumerical>\n"
            f"\t\t\t\t<SingleToken>{single}</SingleToken>\n"
            f"\t\t\t\t<Hierarchy>{'Y' if key in ('mh', 'majr') else 'N'}</Hierarchy>\n"
            f"\t\t\t\t<IsHidden>{'Y' if key == 'uid' else 'N'}</IsHidden>\n"
            "\t\t\t</Field>\n"
        )
    links = "".join(
        f"\t\t\t<Link>\n\t\t\t\t<Name>{name}</Name>\n\t\t\t\t<Menu>{_e(menu)}</Menu>\n"
        f"\t\t\t\t<Description>{_e(description)}</Description>\n"
        "\t\t\t\t<DbTo>pubmed</DbTo>\n\t\t\t</Link>\n"
        for name, menu, description in LINK_NAMES
    )
    body = (
        "\n\t<DbInfo>\n"
        "\t\t<DbName>pubmed</DbName>\n"
        "\t\t<MenuName>PubMed</MenuName>\n"
        "\t\t<Description>PubMed bibliographic record</Description>\n"
        f"\t\t<DbBuild>{_e(build)}</DbBuild>\n"
        f"\t\t<Count>{count}</Count>\n"
        f"\t\t<LastUpdate>{_e(last_update)}</LastUpdate>\n"
        f"\t\t<FieldList>\n{''.join(fields)}\t\t</FieldList>\n"
        f"\t\t<LinkList>\n{links}\t\t</LinkList>\n"
        "\t</DbInfo>\n\n"
    )
    return _document("eInfoResult", body)


def _month(text: str) -> str:
    names = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    return names[int(text) - 1]
