"""The golden numeric claims: as they appear in real abstracts, each one never to be cut."""

from __future__ import annotations

__all__ = ["GOLDEN_CLAIMS"]

# Each entry is a claim as it appears in real abstracts, from varied fields; the whole string
# must stay in one piece.
GOLDEN_CLAIMS: tuple[str, ...] = (
    # cardiology / general trials
    "HR 0.74 (95% CI 0.61-0.90) vs placebo",
    "hazard ratio for death, 0.74; 95% CI, 0.65 to 0.85; P<0.001",
    "HR 0.74 [0.61, 0.90]",
    "RR 0.85; 95% CI 0.76-0.95",
    "risk ratio 0.82 (0.71–0.95)",
    "mean difference −3.2 mm Hg (−4.8 to −1.6)",
    "120/80 mm Hg",
    "NNT 14 (95% CI 9 to 32)",
    # respiratory (NEJM SYGMA 1 style)
    "34.4% vs. 31.1% of weeks",
    "odds ratio, 1.14; 95% confidence interval [CI], 1.00 to 1.30; P=0.046",
    "0.20 with terbutaline, 0.07 with budesonide-formoterol, and 0.09 with budesonide maintenance",
    "rate ratio 0.36 (95% CI, 0.27 to 0.49) for budesonide-formoterol versus terbutaline",
    "FEV1 improved by 120 mL (95% CI 80 to 160)",
    # metabolism / obesity
    "-12.4% vs -2.1%",
    "−12.4% vs −2.1%",
    "14.9% with semaglutide and 2.4% with placebo",
    "1.2 percentage points compared with the control group",
    "59% (from 92 to 30 mg/dL)",
    "60 mL/min/1.73 m2",
    "4.1 per 1000 person-years vs 2.3 per 1000 person-years",
    # oncology
    "ORR 37.1% (95% CI 28.6-46.2)",
    "12.6 months vs 9.8 months",
    "adjusted OR 1.8 [1.2–2.7]",
    "OR 2.3, 1.1 to 4.8",
    # pharmacology / dosing
    "1.5 mg/kg",
    "2.5 ± 0.3 µg/mL",
    "12.3 ± 4.5 kg",
    "Kd = 3.4 nM",
    "IC50 of 12 nM",
    "3.2-fold",
    # infectious disease / virology
    "1.2 × 10−3 copies/mL",
    "< 50 copies/mL in 92% of patients",
    # diagnostics
    "AUC 0.87 (95% CI 0.82–0.92)",
    "sensitivity 92.3% (95% CI 88.1-95.2%)",
    "κ = 0.72",
    # statistics as printed in psychology, epidemiology and genetics
    "p = 0.03",
    "P = .05",
    "n = 1,234",
    "r = 0.62, p < 0.001",
    "β = −0.21 (SE 0.05)",
    "SMD 0.45, 95% CI 0.21 to 0.69",
    "I² = 68%",
    "Cohen's d = 0.8",
    "χ2 = 7.81, P = .02",
    # preclinical
    "58% versus vehicle-treated mice",
    "fold change 2.5 (p = 0.004)",
    "37.5 °C",
)
