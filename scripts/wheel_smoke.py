"""Build bio-mcp's wheel and sdist, install the wheel alone into a fresh virtual environment
(no source tree on the path), and check that the installed package works: what CI runs after
the tests, and what `pip install bio-mcp` gives a user.

    python3 scripts/wheel_smoke.py [--keep DIR]

Checks, each a failure when it does not hold:
* the default install holds no PyTorch (nor sentence-transformers, nor CUDA libraries);
* `biomcp db upgrade` finds its migrations and creates the database;
* the default embedder loads the packaged model (checksums verified) and embeds;
* `biomcp serve` over stdio answers `initialize`, `tools/list`, reads `biomcp://help`, a
  `rag_search` sent while the model loads in the background answers (NOT_FOUND: the corpus
  is empty), and `corpus_checkpoint_get` answers from the fresh database;
* packaged data loads (the tokenizer, the migrations, the skills): the `biomcp://skill/...`
  resources are listed and read as markdown, the prompts are listed, and `biomcp skill render`
  prints the body of `biomcp://help`.

Prints one JSON object: the checks, the size of the environment and its five largest
packages (the start-up figures), and the wall time of each step.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "sentence_transformers", "transformers", "nvidia")

PROBE = r"""
import importlib.util, json, sys
from pathlib import Path
import biomcp
from biomcp.adapters.embeddings.onnx import OnnxEmbedder
here = Path(biomcp.__file__).resolve()
vector = OnnxEmbedder().embed_sync(["aspirin after a first stroke"])[0]
print(json.dumps({
    "biomcp_file": str(here),
    "heavy_present": [m for m in sys.argv[1].split(",") if importlib.util.find_spec(m)],
    "vector_dim": len(vector),
    "vector_norm": round(sum(x * x for x in vector) ** 0.5, 6),
}))
"""


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)  # noqa: S603


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _largest(site: Path, count: int = 5) -> list[dict[str, Any]]:
    sizes = [
        {"name": entry.name, "mb": round(_size(entry) / 1e6, 1)}
        for entry in site.iterdir()
        if entry.is_dir() and not entry.name.endswith((".dist-info", "__pycache__"))
    ]
    return sorted(sizes, key=lambda e: -e["mb"])[:count]


def _serve_checks(biomcp: Path, env: dict[str, str]) -> dict[str, Any]:
    child = subprocess.Popen(  # noqa: S603 - the fresh environment's console script
        [str(biomcp), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    stdin, stdout = child.stdin, child.stdout
    if stdin is None or stdout is None:  # pragma: no cover - PIPE was asked for
        raise RuntimeError("no pipes to biomcp serve")

    def ask(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError(f"biomcp serve exited before answering {method}")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return dict(answer["result"])

    try:
        client = {"name": "wheel-smoke", "version": "0"}
        init = ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": client})  # fmt: skip
        stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        stdin.flush()
        tools = [t["name"] for t in ask(2, "tools/list", {})["tools"]]
        help_text = ask(3, "resources/read", {"uri": "biomcp://help"})["contents"][0]["text"]
        listed = ask(6, "resources/list", {})["resources"]
        skills = sorted(r["uri"] for r in listed if r["uri"].startswith("biomcp://skill/"))
        skill = ask(7, "resources/read", {"uri": skills[0]})["contents"][0] if skills else {}
        prompts = [p["name"] for p in ask(8, "prompts/list", {})["prompts"]]
        # Sent at once, while the model still loads in the background: it must wait for it
        # (an empty corpus answers NOT_FOUND), never fail on the half-done warm-up.
        search = ask(4, "tools/call", {"name": "rag_search",
                                       "arguments": {"query": "aspirin", "top_k": 3}})  # fmt: skip
        call = ask(5, "tools/call", {"name": "corpus_checkpoint_get",
                                     "arguments": {"query_key": "smoke"}})  # fmt: skip
    finally:
        stdin.close()
        child.wait(timeout=60)
    return {
        "server": init["serverInfo"]["name"],
        "tools": len(tools),
        "has_rag_search": "rag_search" in tools,
        "help_chars": len(help_text),
        "help_text": help_text,
        "skills": len(skills),
        "skill_is_markdown": skill.get("mimeType") == "text/markdown"
        and skill.get("text", "").startswith("# "),
        "prompts": sorted(prompts),
        "checkpoint_call_ok": not call.get("isError", False),
        "first_search": json.loads(search["content"][0]["text"]).get("error", {}).get("code")
        if search.get("isError")
        else "results",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build and install here (kept afterwards)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="biomcp-wheel-"))
    work.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    failures: list[str] = []
    began = time.perf_counter()
    dist = work / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    _run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)])
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    times["build_s"] = round(time.perf_counter() - began, 1)
    if len(wheels) != 1 or len(sdists) != 1:
        failures.append(f"expected one wheel and one sdist, got {[p.name for p in dist.iterdir()]}")

    step = time.perf_counter()
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    python, biomcp = venv / "bin/python", venv / "bin/biomcp"
    _run([str(python), "-m", "pip", "install", "--quiet", str(wheels[0])])
    times["install_s"] = round(time.perf_counter() - step, 1)

    # Run from an empty folder with a clean environment: nothing of the source tree is visible.
    outside = work / "outside"
    outside.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIOMCP_", "MCP_", "PYTHON"))}
    env["BIOMCP_DATA_DIR"] = str(work / "data")
    env["NCBI_EUTILS_BASE_URL"] = "http://127.0.0.1:9/"
    step = time.perf_counter()
    probe = json.loads(
        _run([str(python), "-c", PROBE, ",".join(HEAVY)], cwd=outside, env=env).stdout
    )
    if str(ROOT) in probe["biomcp_file"]:
        failures.append(f"biomcp was imported from the source tree: {probe['biomcp_file']}")
    if probe["heavy_present"]:
        failures.append(f"the default install holds {probe['heavy_present']}")
    if probe["vector_dim"] != 384 or abs(probe["vector_norm"] - 1) > 1e-3:
        failures.append(f"the packaged embedder gave {probe}")
    upgrade = _run([str(biomcp), "db", "upgrade"], cwd=outside, env=env)
    if not (work / "data").is_dir():
        failures.append(f"`biomcp db upgrade` created no data folder: {upgrade.stdout}")
    doctor = subprocess.run(  # noqa: S603 - the installed console script, fixed arguments
        [str(biomcp), "doctor", "--offline", "--json"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    checks = {c["name"]: c for c in json.loads(doctor.stdout or "{}").get("checks", [])}
    if doctor.returncode != 0 or checks.get("embedder", {}).get("status") != "ok":
        failures.append(f"`biomcp doctor --offline` found problems: {doctor.stdout[-2000:]}")
    serve = _serve_checks(biomcp, env)
    if not (serve["has_rag_search"] and serve["checkpoint_call_ok"] and serve["help_chars"]) or (
        serve["first_search"] not in ("NOT_FOUND", "results")
    ):
        failures.append(f"biomcp serve: {serve}")
    rendered = _run([str(biomcp), "skill", "render"], cwd=outside, env=env).stdout
    if serve["skills"] < 6 or not serve["skill_is_markdown"]:
        failures.append(f"the packaged skills are missing: {serve['skills']} skill resources")
    if rendered != serve.pop("help_text"):
        failures.append("`biomcp skill render` differs from the biomcp://help resource")
    times["checks_s"] = round(time.perf_counter() - step, 1)

    site = next((venv / "lib").glob("python3*/site-packages"))
    report = {
        "wheel": wheels[0].name if wheels else None,
        "wheel_mb": round(wheels[0].stat().st_size / 1e6, 2) if wheels else None,
        "sdist": sdists[0].name if sdists else None,
        "venv_mb": round(_size(venv) / 1e6, 1),
        "largest_packages": _largest(site),
        "probe": probe | {"biomcp_file": "<site-packages>/biomcp/__init__.py"},
        "serve": serve,
        "doctor": {name: check["status"] for name, check in checks.items()},
        "times": times,
        "failures": failures,
    }
    print(json.dumps(report, indent=2))
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
