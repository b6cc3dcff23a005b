"""Synthetic twins of PubMedQA PQA-L (`ori_pqal.json`) and a BEIR corpus (`corpus.jsonl`).

The records are invented; only the file formats are the real ones. `FIRST_SENTENCE` is the
question whose text is the first sentence of its own abstract. One distractor's id equals a
PQA-L PMID, so that a clash of ids would show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["CLASHING_ID", "FIRST_SENTENCE", "PQAL", "write_distractors", "write_pubmedqa"]

FIRST_SENTENCE = "39000003"
CLASHING_ID = "39000001"


def _record(question: str, contexts: list[str], labels: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "QUESTION": question,
        "CONTEXTS": contexts,
        "LABELS": labels,
        "MESHES": ["Humans", "Adult"],
        "YEAR": "2019",
        "reasoning_required_pred": "yes",
        "reasoning_free_pred": "yes",
        "final_decision": "yes",
        "LONG_ANSWER": "The long answer is the conclusion and must stay out of the corpus.",
        **extra,
    }


PQAL: dict[str, dict[str, Any]] = {
    "39000001": _record(
        "Does nightly melatonin shorten sleep onset in rotating shift nurses?",
        [
            "Rotating shifts disturb the sleep of hospital nurses.",
            "In a crossover trial of 48 nurses, 3 mg melatonin at bedtime shortened sleep "
            "onset latency by 12 minutes (95% CI 6 to 18).",
        ],
        ["BACKGROUND", "RESULTS"],
    ),
    "39000002": _record(
        "Is hand hygiene compliance higher after monthly audit feedback on surgical wards?",
        [
            "Audit feedback is a common intervention in infection control.",
            "Compliance rose from 54% to 71% on six surgical wards after monthly feedback.",
        ],
        ["OBJECTIVE", "RESULTS"],
    ),
    FIRST_SENTENCE: _record(
        "Zinc lozenges taken within a day of symptom onset shorten the common cold in adults.",
        [
            "Zinc lozenges taken within a day of symptom onset shorten the common cold in adults.",
            "Colds lasted 4.1 days with zinc and 6.3 days with placebo in 120 volunteers.",
        ],
        ["BACKGROUND", "RESULTS"],
    ),
    "39000004": _record(
        "Do statins lower LDL cholesterol as much in adults over 80 as in younger adults?",
        [
            "Older adults are rarely enrolled in lipid trials.",
            "Atorvastatin lowered LDL cholesterol by 41% in 310 patients over 80 years.",
        ],
        ["BACKGROUND", "RESULTS"],
    ),
    "39000005": _record(
        "Does a walking programme improve glycaemic control in type 2 diabetes?",
        [
            "Physical activity is advised in type 2 diabetes.",
            "HbA1c fell by 0.4 points after 12 weeks of brisk walking in 88 patients.",
        ],
        ["BACKGROUND", "RESULTS"],
        TITLE="Brisk walking and HbA1c in type 2 diabetes: a pilot study",
    ),
}

_DISTRACTORS = [
    {"_id": "5101", "title": "Melatonin receptors in the retina", "text": "MT1 receptors were "
     "mapped in the mouse retina by in situ hybridisation."},
    {"_id": "5102", "title": "Statin myopathy", "text": "Simvastatin raised creatine kinase in "
     "a minority of patients with muscle pain."},
    {"_id": "5103", "title": "Zinc transporters", "text": "ZIP4 mutations cause acrodermatitis "
     "enteropathica through impaired zinc uptake."},
    {"_id": "5104", "title": "Surgical site infection", "text": "Chlorhexidine skin preparation "
     "reduced infections after clean surgery."},
    {"_id": CLASHING_ID, "title": "Insulin pumps in children", "text": "Pump therapy lowered "
     "HbA1c in children with type 1 diabetes."},
    {"_id": "5106", "title": "Common cold viruses", "text": "Rhinoviruses cause most common "
     "colds in adults and children."},
]  # fmt: skip


def write_pubmedqa(folder: Path, records: dict[str, Any] | None = None) -> Path:
    """Write `records` (default `PQAL`) as `folder/ori_pqal.json`; returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(PQAL if records is None else records, indent=2)
    (folder / "ori_pqal.json").write_text(text, encoding="utf-8")
    return folder


def write_distractors(folder: Path) -> Path:
    """Write a BEIR `folder/corpus.jsonl` of six distractors; returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(doc) for doc in _DISTRACTORS]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
