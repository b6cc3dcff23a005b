"""The design_text benchmark: its NLM reference mapping, its metrics and its gzip reader."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from benchmarks import design_text
from benchmarks.design_text import EXCLUDED, UNKNOWN, read_records, reference_design, scores

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("types", "mesh", "expected"),
    [
        (["Journal Article", "Randomized Controlled Trial"], ["Humans"], "rct"),
        (["Clinical Trial", "Randomized Controlled Trial"], ["Humans"], "rct"),
        (["Clinical Trial"], ["Humans"], "nonrandomized_trial"),
        (["Clinical Trial, Phase II"], [], "nonrandomized_trial"),
        (["Controlled Clinical Trial"], ["Humans"], "nonrandomized_trial"),
        (["Pragmatic Clinical Trial"], ["Humans"], "nonrandomized_trial"),
        (["Randomized Controlled Trial"], ["Animals", "Rats"], "animal"),
        (["Case Reports"], ["Animals", "Dogs"], "animal"),
        (["Clinical Trial, Veterinary"], [], "animal"),
        (["Randomized Controlled Trial"], ["Animals", "Humans"], "rct"),
        (["Meta-Analysis", "Randomized Controlled Trial"], ["Humans"], "systematic_review"),
        (["Systematic Review"], [], "systematic_review"),
        (["Practice Guideline"], ["Humans"], "guideline"),
        (["Consensus Development Conference, NIH"], [], "guideline"),
        (["Review"], ["Animals"], "narrative_review"),
        (["Case Reports", "Journal Article"], ["Humans"], "case_report"),
        (["Letter", "Case Reports"], ["Humans"], "case_report"),
        (["Editorial"], ["Animals"], EXCLUDED),
        (["Letter"], ["Humans"], EXCLUDED),
        (["Historical Article", "Journal Article"], ["Humans"], EXCLUDED),
        (["Observational Study"], ["Humans"], "observational"),
        (["Journal Article"], ["Humans", "Retrospective Studies"], "observational"),
        (["Journal Article"], ["Humans", "Follow-Up Studies"], "observational"),
        (["Journal Article"], ["Cells, Cultured"], "in_vitro"),
        (["Journal Article"], ["In Vitro Techniques", "Humans"], UNKNOWN),
        (["Journal Article", "Comparative Study"], ["Humans"], UNKNOWN),
        (["Journal Article"], [], UNKNOWN),
        (["RANDOMIZED CONTROLLED TRIAL"], ["humans"], "rct"),
    ],
)
def test_the_reference_design_follows_nlm_types_and_check_tags(
    types: list[str], mesh: list[str], expected: str
) -> None:
    assert reference_design(types, mesh) == expected


def test_scores_give_recall_precision_and_f1_per_design() -> None:
    confusion = {
        "rct": {"rct": 8, "observational": 2},
        "observational": {"observational": 6, "rct": 2},
        "case_report": {"other": 3},
    }
    out = scores(confusion)
    assert out["rct"] == {
        "support": 10,
        "predicted": 10,
        "correct": 8,
        "recall": 0.8,
        "precision": 0.8,
        "f1": 0.8,
    }
    assert out["observational"]["recall"] == 0.75
    assert out["observational"]["precision"] == 0.75
    assert out["case_report"] == {
        "support": 3,
        "predicted": 0,
        "correct": 0,
        "recall": 0.0,
        "precision": None,
        "f1": None,
    }
    assert out["other"]["recall"] is None
    assert out["other"]["precision"] == 0.0
    assert sum(row["support"] for row in out.values()) == 21


def test_f1_is_zero_when_a_design_is_predicted_but_never_right() -> None:
    out = scores({"rct": {"observational": 4}, "observational": {"rct": 1}})
    assert out["rct"]["f1"] == 0.0
    assert out["observational"]["precision"] == 0.0


def _article(pmid: int, title: str, abstract: str, types: str, mesh: str) -> str:
    type_list = "".join(f"<PublicationType>{t}</PublicationType>" for t in types.split("|"))
    mesh_list = "".join(
        f"<MeshHeading><DescriptorName>{m}</DescriptorName></MeshHeading>"
        for m in mesh.split("|")
        if m
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE"><PMID Version="1">{pmid}</PMID>'
        f"<Article><ArticleTitle>{title}</ArticleTitle><Abstract><AbstractText>{abstract}"
        f"</AbstractText></Abstract><PublicationTypeList>{type_list}</PublicationTypeList>"
        f"</Article><MeshHeadingList>{mesh_list}</MeshHeadingList></MedlineCitation>"
        f"</PubmedArticle>\n"
    )


_RCT_TEXT = (
    "In this randomized controlled trial, 120 patients were randomly assigned to drug or "
    "placebo. Pain fell more with the drug."
)


def _write_file(path: Path, articles: int) -> Path:
    """A synthetic baseline-like file: half RCTs, half editorials, one MathML formula
    whose `mml:` prefix is bound nowhere (as NCBI files rely on the DTD)."""
    body = [
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle//EN" "pubmed.dtd">\n'
        "<PubmedArticleSet>\n"
    ]
    for pmid in range(1, articles + 1):
        if pmid % 2:
            body.append(
                _article(
                    pmid,
                    f"Drug {pmid} for pain",
                    _RCT_TEXT,
                    "Randomized Controlled Trial",
                    "Humans",
                )
            )
        else:
            body.append(_article(pmid, "On <mml:mi>x</mml:mi> values", "Opinion.", "Editorial", ""))
    body.append("<DeleteCitation><PMID>99</PMID></DeleteCitation></PubmedArticleSet>\n")
    path.write_bytes(gzip.compress("".join(body).encode()))
    return path


def test_the_reader_streams_every_article_in_file_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(design_text, "BATCH", 7)
    monkeypatch.setattr(design_text, "CHUNK", 512)  # many feeds, articles cut across them
    path = _write_file(tmp_path / "set.xml.gz", 40)
    records = list(read_records(path))
    assert [r.pmid for r in records] == [str(n) for n in range(1, 41)]
    assert records[1].title == "On x values"
    assert records[0].publication_types == ("Randomized Controlled Trial",)
    assert [r.pmid for r in read_records(path, limit=9)] == [str(n) for n in range(1, 10)]


def test_a_file_declaring_entities_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml.gz"
    path.write_bytes(
        gzip.compress(
            b'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [<!ENTITY x "boom">]>\n'
            b"<PubmedArticleSet></PubmedArticleSet>"
        )
    )
    with pytest.raises(ValueError, match="declares entities"):
        list(read_records(path))


def test_a_run_reports_the_reference_the_confusion_and_a_seeded_sample(tmp_path: Path) -> None:
    _write_file(tmp_path / "a.xml.gz", 20)
    argv = ["--data", str(tmp_path), "--files", "a.xml.gz,absent.xml.gz", "--sample", "rct:3"]
    out = design_text.run(quick=True, argv=argv)
    result = out["files"]["a.xml.gz"]
    assert result["records"] == 20
    assert result["reference_counts"] == {"rct": 10, EXCLUDED: 10}
    assert result["measured_records"] == 10
    assert sum(result["confusion_reference_x_predicted"]["rct"].values()) == 10
    assert sum(result["text_only_labels"].values()) == 20
    assert result["scores"]["rct"]["support"] == 10
    assert "skipped" in out["files"]["absent.xml.gz"]
    drawn = [r["pmid"] for r in result["sample"]["records"]]
    assert len(drawn) == 3
    assert "random.Random(41)" in result["sample"]["how"]
    again = design_text.run(quick=True, argv=argv)["files"]["a.xml.gz"]["sample"]["records"]
    assert [r["pmid"] for r in again] == drawn


def test_a_malformed_sample_option_is_refused() -> None:
    with pytest.raises(SystemExit):
        design_text.run(quick=True, argv=["--sample", "rct"])


def test_the_rct_ceiling_counts_the_trials_whose_text_never_says_random(tmp_path: Path) -> None:
    blind = "In this double-blind trial, 40 patients took drug or placebo. Pain fell with the drug."
    articles = [
        _article(1, "Drug for pain", _RCT_TEXT, "Randomized Controlled Trial", "Humans"),
        _article(2, "Drug for gout", _RCT_TEXT, "Randomized Controlled Trial", "Humans"),
        _article(3, "Drug for acne", blind, "Randomized Controlled Trial", "Humans"),
        _article(4, "Drug for cough", blind, "Clinical Trial", "Humans"),
    ]
    text = '<?xml version="1.0"?>\n<PubmedArticleSet>' + "".join(articles) + "</PubmedArticleSet>"
    (tmp_path / "c.xml.gz").write_bytes(gzip.compress(text.encode()))
    out = design_text.run(quick=True, argv=["--data", str(tmp_path), "--files", "c.xml.gz"])
    ceiling = out["files"]["c.xml.gz"]["rct_text_ceiling"]
    assert ceiling["reference"] == 3
    assert ceiling["text_says_random"] == 2
    assert ceiling["recall_ceiling"] == pytest.approx(2 / 3, abs=0.001)
    assert ceiling["labelled_rct"] == 2
    assert ceiling["recall_within_ceiling"] == 1.0
