"""Study design from text alone, measured against NLM's indexing on real PubMed files.

Reads `../shared/data/ncbi_files/pubmed20n0014.xml.gz` (MEDLINE-indexed records from 1979) and
`pubmed21n1298.xml.gz` (a 2021 update file, mostly not indexed yet), or --data/--files.
Each gzip is streamed: articles are cut out with a hardened pull parser (no entity, no DTD,
nothing fetched, libxml2's size limits) and handed in batches to the project's own
`parse_pubmed_articles`. `--quick` reads the first `QUICK_RECORDS` records of each file.

A reference design is derived from NLM's publication types and MeSH (`reference_design`), then
`classify_design` labels a copy of the record whose publication types and MeSH are emptied.
The mapping, first match wins:

1. A Veterinary publication type -> animal.
2. Meta-Analysis / Systematic Review -> systematic_review; Practice Guideline / Guideline /
   Consensus Development Conference -> guideline; Review -> narrative_review.
3. A non-research type (Editorial, Letter, Comment, News, Historical Article, Biography...)
   without a trial, Case Reports or Observational Study type -> excluded from the measure.
4. The Animals check tag without Humans -> animal (it trumps trial types and case reports).
5. Randomized Controlled Trial -> rct; any other trial type (Clinical Trial of any phase,
   Controlled, Pragmatic, Equivalence, Adaptive) -> nonrandomized_trial.
6. Case Reports -> case_report.
7. Observational Study, or a MeSH design descriptor (Cohort, Case-Control, Cross-Sectional,
   Retrospective, Prospective, Longitudinal, Follow-Up Studies) -> observational.
8. MeSH Cells, Cultured / In Vitro Techniques without Humans -> in_vitro.
9. Anything else -> unknown: left out of recall and precision, counted on its own.

Recall and precision use the records whose reference is a design. Labels given to records of
unknown reference are reported apart, with the label distribution over the whole file.
`rct_text_ceiling` counts the reference RCTs whose title and abstract use any word of "random":
text alone cannot call the others randomized, so their share bounds text-only RCT recall.
`--sample rct:50` draws records labelled `rct` from text alone for a hand check.
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from lxml import etree

from benchmarks.machine import describe, goal, loadavg
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.records import PubMedRecord

DATA = Path(__file__).resolve().parents[1].parent / "shared/data/ncbi_files"
FILES = ("pubmed20n0014.xml.gz", "pubmed21n1298.xml.gz")
BASELINE = FILES[0]
QUICK_RECORDS = 2_000
BATCH = 500
CHUNK = 1 << 20
MAX_ARTICLE_BYTES = 2_000_000
EXCERPT = 300
DEFAULT_SEED = 41
EXCLUDED, UNKNOWN = "excluded", "unknown"
_ANY_RANDOM = re.compile(r"random", re.IGNORECASE)

_SYNTHESIS = frozenset({"meta-analysis", "systematic review", "network meta-analysis"})
_GUIDELINE = frozenset(
    {
        "practice guideline",
        "guideline",
        "consensus development conference",
        "consensus development conference, nih",
    }
)
_NON_RESEARCH = frozenset(
    {
        "editorial",
        "letter",
        "comment",
        "news",
        "newspaper article",
        "historical article",
        "biography",
        "autobiography",
        "portrait",
        "interview",
        "lecture",
        "address",
        "obituary",
        "bibliography",
        "directory",
        "dictionary",
        "published erratum",
        "retraction of publication",
        "expression of concern",
        "congress",
        "personal narrative",
        "patient education handout",
    }
)
_TRIAL = frozenset(
    {
        "controlled clinical trial",
        "pragmatic clinical trial",
        "equivalence trial",
        "adaptive clinical trial",
    }
)
_OBSERVATIONAL_MESH = frozenset(
    {
        "cohort studies",
        "case-control studies",
        "cross-sectional studies",
        "retrospective studies",
        "prospective studies",
        "longitudinal studies",
        "follow-up studies",
    }
)
_CELL_MESH = frozenset({"cells, cultured", "in vitro techniques"})
_ARTICLE_TAGS = ("PubmedArticle", "PubmedBookArticle")
_ROOT = re.compile(rb"<PubmedArticleSet(?=[\s/>])")
_PREFIXES = {
    b"mml": b"http://www.w3.org/1998/Math/MathML",
    b"xlink": b"http://www.w3.org/1999/xlink",
}


def reference_design(publication_types: Iterable[str], mesh: Iterable[str]) -> str:
    """The design NLM's indexing states (module docstring), `excluded` or `unknown`.

    Both arguments are names as NLM writes them; case does not matter.
    """
    types = {t.casefold() for t in publication_types}
    headings = {m.casefold() for m in mesh}
    if any("veterinary" in t for t in types):
        return "animal"
    if types & _SYNTHESIS:
        return "systematic_review"
    if types & _GUIDELINE:
        return "guideline"
    if "review" in types:
        return "narrative_review"
    rct = "randomized controlled trial" in types
    trial = rct or bool(types & _TRIAL) or any(t.startswith("clinical trial") for t in types)
    studied = trial or "case reports" in types or "observational study" in types
    if types & _NON_RESEARCH and not studied:
        return EXCLUDED
    humans, animals = "humans" in headings, "animals" in headings
    if animals and not humans:
        return "animal"
    if trial:
        return "rct" if rct else "nonrandomized_trial"
    if "case reports" in types:
        return "case_report"
    if "observational study" in types or headings & _OBSERVATIONAL_MESH:
        return "observational"
    if headings & _CELL_MESH and not humans:
        return "in_vitro"
    return UNKNOWN


def scores(confusion: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, Any]]:
    """Per design: support (reference), predicted, correct, recall, precision and F1.

    `confusion[reference][predicted]` counts records. A ratio with nothing to divide is None.
    """
    support: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    for reference, row in confusion.items():
        for label, count in row.items():
            support[reference] += count
            predicted[label] += count
    out: dict[str, dict[str, Any]] = {}
    for design in sorted(set(support) | set(predicted)):
        correct = confusion.get(design, {}).get(design, 0)
        recall = _ratio(correct, support[design])
        precision = _ratio(correct, predicted[design])
        f1 = None
        if recall is not None and precision is not None:
            f1 = _ratio(2 * recall * precision, recall + precision) or 0.0
        out[design] = {
            "support": support[design],
            "predicted": predicted[design],
            "correct": correct,
            "recall": recall,
            "precision": precision,
            "f1": None if f1 is None else round(f1, 3),
        }
    return out


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


def text_only(record: PubMedRecord) -> PubMedRecord:
    """The record as an unindexed one: no publication types, no MeSH."""
    return replace(record, publication_types=(), mesh=())


# --------------------------------------------------------------------------- reading


def read_records(path: Path, limit: int | None = None) -> Iterator[PubMedRecord]:
    """The records of a gzipped PubmedArticleSet, in file order, at most `limit` of them."""
    count = 0
    batch: list[bytes] = []
    for raw in _articles(path):
        batch.append(raw)
        if len(batch) == BATCH:
            for record in _parse(batch):
                if limit is not None and count >= limit:
                    return
                count += 1
                yield record
            batch = []
    for record in _parse(batch):
        if limit is not None and count >= limit:
            return
        count += 1
        yield record


def _parse(batch: list[bytes]) -> tuple[PubMedRecord, ...]:
    if not batch:
        return ()
    body = b"<PubmedArticleSet>" + b"".join(batch) + b"</PubmedArticleSet>"
    return parse_pubmed_articles(body).records


def _articles(path: Path) -> Iterator[bytes]:
    """Each `<PubmedArticle>` element's XML, cut from the gzip stream as it is read.

    Raises:
        ValueError: no `<PubmedArticleSet>` in the first megabyte, or a prolog that declares
            entities.
    """
    parser = etree.XMLPullParser(
        events=("end",),
        tag=_ARTICLE_TAGS,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    with gzip.open(path, "rb") as stream:
        head = stream.read(CHUNK)
        parser.feed(_checked_head(head, path.name))
        yield from _drain(parser)
        while chunk := stream.read(CHUNK):
            parser.feed(chunk)
            yield from _drain(parser)
    parser.close()
    yield from _drain(parser)


def _checked_head(head: bytes, name: str) -> bytes:
    """The first chunk with MathML and XLink bound on the root (NCBI's DTD binds them)."""
    match = _ROOT.search(head)
    if match is None:
        raise ValueError(f"{name}: no <PubmedArticleSet> in its first megabyte")
    if b"<!ENTITY" in head[: match.start()].upper():
        raise ValueError(f"{name}: the document declares entities: refused")
    tag_end = head.find(b">", match.end())
    start_tag = head[match.start() : tag_end]
    declare = b"".join(
        b' xmlns:%s="%s"' % (prefix, uri)
        for prefix, uri in _PREFIXES.items()
        if b"xmlns:" + prefix not in start_tag
    )
    return head[: match.end()] + declare + head[match.end() :]


def _drain(parser: etree.XMLPullParser) -> Iterator[bytes]:
    for _, element in parser.read_events():
        if not isinstance(element, etree._Element):
            continue  # only "end" events were asked for: always elements
        parent = element.getparent()
        if parent is None or parent.getparent() is not None:
            continue  # only the article set's own children are articles
        if element.tag == "PubmedArticle":
            raw = etree.tostring(element, with_tail=False)
            if len(raw) <= MAX_ARTICLE_BYTES:
                yield raw
        element.clear()
        while element.getprevious() is not None:
            del parent[0]  # memory stays flat over the whole file


# --------------------------------------------------------------------------- measuring


class _Tally:
    """Counts for one file, filled one record at a time."""

    def __init__(self, sample_design: str | None) -> None:
        self.records = 0
        self.with_abstract = 0
        self.indexed = 0
        self.reference: Counter[str] = Counter()
        self.confusion: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.confusion_abstract: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.rules: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.labels: Counter[str] = Counter()
        self.labels_unknown: Counter[str] = Counter()
        self.labels_metadata: Counter[str] = Counter()
        self.sample_design = sample_design
        self.candidates: list[dict[str, str]] = []
        self.classify_s = 0.0
        self.rct = Counter[str]()

    def add(self, record: PubMedRecord, classify: Any) -> None:
        self.records += 1
        self.indexed += bool(record.mesh)
        has_abstract = bool(record.abstract)
        self.with_abstract += has_abstract
        reference = reference_design(record.publication_types, (h.descriptor for h in record.mesh))
        self.reference[reference] += 1
        began = time.perf_counter()
        found = classify(text_only(record))
        full = classify(record)
        self.classify_s += time.perf_counter() - began
        label = found.design.value
        self.labels[label] += 1
        self.labels_metadata[full.design.value] += 1
        self.rules[label][found.rule] += 1
        if reference == UNKNOWN:
            self.labels_unknown[label] += 1
        elif reference != EXCLUDED:
            self.confusion[reference][label] += 1
            if has_abstract:
                self.confusion_abstract[reference][label] += 1
        if label == self.sample_design:
            self.candidates.append(_excerpt(record))
        if reference == "rct":
            self._count_rct(record, label)

    def _count_rct(self, record: PubMedRecord, label: str) -> None:
        """What the text of a reference RCT offers: an abstract, and any word of "random"."""
        says_random = bool(_ANY_RANDOM.search(f"{record.title or ''} {record.abstract_text}"))
        self.rct["reference"] += 1
        self.rct["without_abstract"] += not record.abstract
        self.rct["text_says_random"] += says_random
        self.rct["labelled_rct"] += label == "rct"
        self.rct["labelled_rct_when_text_says_random"] += says_random and label == "rct"

    def summary(self) -> dict[str, Any]:
        measured = sum(sum(row.values()) for row in self.confusion.values())
        correct = sum(row[design] for design, row in self.confusion.items())
        return {
            "records": self.records,
            "with_abstract": self.with_abstract,
            "indexed_with_mesh": self.indexed,
            "reference_counts": dict(self.reference.most_common()),
            "measured_records": measured,
            "accuracy": _ratio(correct, measured),
            "scores": scores(self.confusion),
            "scores_with_abstract": scores(self.confusion_abstract),
            "confusion_reference_x_predicted": {
                ref: dict(row.most_common()) for ref, row in sorted(self.confusion.items())
            },
            "top_rules_per_predicted": {
                label: dict(rules.most_common(5)) for label, rules in sorted(self.rules.items())
            },
            "text_only_labels": dict(self.labels.most_common()),
            "text_only_labels_on_unknown_reference": dict(self.labels_unknown.most_common()),
            "labels_with_types_and_mesh": dict(self.labels_metadata.most_common()),
            "rct_text_ceiling": self._rct_ceiling(),
        }

    def _rct_ceiling(self) -> dict[str, Any]:
        """How far text can go on RCTs: a trial whose title and abstract never use a word of
        "random" states no randomization, so a reader of the text cannot call it an RCT."""
        figures: dict[str, Any] = dict(self.rct)
        figures["recall_ceiling"] = _ratio(self.rct["text_says_random"], self.rct["reference"])
        figures["recall_within_ceiling"] = _ratio(
            self.rct["labelled_rct_when_text_says_random"], self.rct["text_says_random"]
        )
        return figures


def _excerpt(record: PubMedRecord) -> dict[str, str]:
    abstract = " ".join(record.abstract_text.split())
    return {"pmid": record.pmid, "title": record.title or "", "abstract": abstract[:EXCERPT]}


def measure_file(
    path: Path, limit: int | None, sample: tuple[str, int] | None, seed: int
) -> dict[str, Any]:
    """Every figure of one file (see the module docstring)."""
    from biomcp.domain.design import classify_design  # late: another module may be mid-edit

    tally = _Tally(sample[0] if sample else None)
    began = time.perf_counter()
    for record in read_records(path, limit):
        tally.add(record, classify_design)
    total = time.perf_counter() - began
    result = {"file": path.name, **tally.summary()}
    result["seconds"] = {
        "total": round(total, 1),
        "classify_twice": round(tally.classify_s, 1),
        "read_and_parse": round(total - tally.classify_s, 1),
        "records_per_s": round(tally.records / total, 1) if total else None,
    }
    if sample is not None:
        design, size = sample
        drawn = random.Random(seed).sample(tally.candidates, min(size, len(tally.candidates)))
        result["sample"] = {
            "how": (
                f"random.Random({seed}).sample of the {len(tally.candidates)} records labelled "
                f"{design!r} from text alone, in file order; {len(drawn)} drawn, shown in "
                f"PMID order; abstracts cut at {EXCERPT} characters"
            ),
            "records": sorted(drawn, key=lambda r: int(r["pmid"])),
        }
    return result


def _sample(text: str) -> tuple[str, int]:
    design, _, size = text.partition(":")
    if not design or not size.isdigit() or int(size) < 1:
        raise argparse.ArgumentTypeError(f"expected DESIGN:COUNT such as rct:50, got {text!r}")
    return design.strip(), int(size)


def _goals(files: dict[str, Any], quick: bool) -> dict[str, Any]:
    """The goal: RCT recall >= 80% at precision >= 90%, text only, on the baseline file."""
    baseline = files.get(BASELINE, {}).get("scores", {}).get("rct")
    if baseline is None:
        return {}
    met = None if quick else baseline["recall"] is not None and baseline["recall"] >= 0.8
    precise = None if quick else baseline["precision"] is not None and baseline["precision"] >= 0.9
    return {
        "baseline_rct_text_recall": goal(">= 0.80", baseline["recall"], met),
        "baseline_rct_text_precision": goal(">= 0.90", baseline["precision"], precise),
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks design_text",
        description="Study design from text alone against NLM's publication types and MeSH.",
    )
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the gzip files")
    parser.add_argument("--files", default=",".join(FILES), help="comma-separated file names")
    parser.add_argument("--limit", type=int, default=None, help="records per file (quick 2000)")
    parser.add_argument("--sample", type=_sample, default=None, help="DESIGN:COUNT, e.g. rct:50")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the sample's seed")
    args = parser.parse_args(argv)
    limit = args.limit or (QUICK_RECORDS if quick else None)
    before = loadavg()
    files: dict[str, Any] = {}
    for name in (n.strip() for n in args.files.split(",") if n.strip()):
        path = args.data / name
        if not path.is_file():
            files[name] = {"skipped": "file absent (the shared data folder is not here)"}
            continue
        files[name] = measure_file(path, limit, args.sample, args.seed)
    return {
        "benchmark": "design_text",
        "machine": describe(),
        "config": {
            "quick": quick,
            "records_per_file": limit or "all",
            "sample": None if args.sample is None else ":".join(map(str, args.sample)),
            "seed": args.seed,
            "loadavg_before_after": [before, loadavg()],
        },
        "goals": _goals(files, quick),
        "files": files,
    }
