"""The README's offline block, run as written against the fake E-utilities.

The block is the one fenced `sh` block between `<!-- try-offline:start -->` and
`<!-- try-offline:end -->` in README.md. One bash process runs its lines in order, in a fresh
folder where `.venv` links to this test's environment: `.venv/bin/biomcp` and
`$PWD/.demo-data` resolve as written, and nothing lands in the repository. One thing is
rewritten: the fake's port (8765 in the README) becomes a free one, wherever it appears.
The environment loses every bio-mcp variable (`BIOMCP_*`, `NCBI_*`, `MCP_*`, ...), as a
newcomer's shell would not have them.

Each line's exit status and output are recorded on their own. The block itself waits for the
fake (its `curl --retry-connrefused` line), so no sleep synchronises anything here.

The search tables are then checked against the corpus the block synced: at 40, 80 and 200
columns, the text of every hit is shown whole (wrapped, not cut).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.e2e

README = REPO_ROOT / "README.md"
START, END = "<!-- try-offline:start -->", "<!-- try-offline:end -->"
README_PORT = "8765"
_ISOLATED = ("BIOMCP_", "NCBI_", "MCP_", "WEAVIATE_", "OPENAI_")
BLOCK_TIMEOUT_S = 900.0  # three syncs with the local embedder on a loaded 2-core machine

#: What each kind of command must print (stdout), beyond exiting 0: something that shows it
#: did its work, not merely that it ran.
EXPECTED = {
    "curl": r'"records":\s*[1-9]',
    "biomcp sync": r"inserted\s+\d+",
    "biomcp search": r"results? for",
    "biomcp get": r"(?i)quality",
    "biomcp checkpoint get": r"demo",
    "biomcp pubmed search": r"PubMed records for",
    "biomcp pubmed cite": r"\(\d{4}",
    "biomcp pubmed mesh": r"query: ",
    "biomcp pubmed fulltext": r": available",
    "biomcp pubmed ids": r": found: pmid \d+, pmcid PMC\d+",
    "biomcp pubmed match": r"matched: PMID \d+",
}


@dataclass(frozen=True)
class Ran:
    """One line of the block and what it did."""

    line: str
    status: int | None  # None: started in the background
    stdout: str
    stderr: str

    @property
    def kind(self) -> str:
        """`biomcp pubmed ids`, `biomcp sync`, `curl`, `export`...: the longest key of
        EXPECTED the command starts with, else its first word."""
        words = shlex.split(self.line, comments=True)
        program = Path(words[0]).name if words else ""
        spoken = " ".join([program, *(w for w in words[1:3] if not w.startswith("-"))])
        keys = [k for k in EXPECTED if spoken == k or spoken.startswith(k + " ")]
        return max(keys, key=len) if keys else program


def offline_block(readme: str) -> list[str]:
    """The commands of the README's offline block, one per line, as written (a line ending
    with a backslash joined to the next)."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise AssertionError(f"README.md must hold {START} and {END} exactly once")
    between = readme.split(START, 1)[1].split(END, 1)[0].strip()
    fenced = re.fullmatch(r"```sh\n(.*?)\n```", between, flags=re.DOTALL)
    if fenced is None:
        raise AssertionError("the offline block must be one fenced ```sh block")
    joined = re.sub(r"\\\n\s*", " ", fenced.group(1))  # a command continued with a backslash
    return [line for line in joined.splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _script(lines: list[str], out: Path) -> str:
    """bash that runs `lines` in order, each with its output and exit status in `out`."""
    parts = ["set -u"]
    for number, line in enumerate(lines):
        redirect = f'>"{out}/{number}.out" 2>"{out}/{number}.err"'
        if line.split("#", 1)[0].rstrip().endswith("&"):
            parts.append(f'{{\n{line}\n}} {redirect}\necho "$!" >"{out}/background.pids"')
        else:
            parts.append(f'{{\n{line}\n}} {redirect}\necho "$?" >"{out}/{number}.status"')
    return "\n".join(parts) + "\n"


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_ISOLATED)}
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="module")
def block_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Ran]]:
    """The block, run once: the folder it ran in and each line's outcome."""
    if shutil.which("curl") is None:
        pytest.skip("the README's offline block waits for the fake with curl, absent here")
    lines = offline_block(README.read_text(encoding="utf-8"))
    port = str(_free_port())
    lines = [line.replace(README_PORT, port) for line in lines]
    home = tmp_path_factory.mktemp("newcomer")
    out = home / ".outcomes"
    out.mkdir()
    (home / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    with subprocess.Popen(  # noqa: S603 - bash running the README's own commands
        ["/bin/bash", "-c", _script(lines, out)],
        cwd=home,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the fake is stopped with it
    ) as shell:
        try:
            shell.wait(timeout=BLOCK_TIMEOUT_S)
        finally:
            _stop_background(out, shell)
    ran = [
        Ran(
            line,
            _status(out / f"{number}.status"),
            (out / f"{number}.out").read_text(encoding="utf-8", errors="replace"),
            (out / f"{number}.err").read_text(encoding="utf-8", errors="replace"),
        )
        for number, line in enumerate(lines)
    ]
    return home, ran


def _status(path: Path) -> int | None:
    return int(path.read_text().strip()) if path.exists() else None


def _stop_background(out: Path, shell: subprocess.Popen[bytes]) -> None:
    """End what the block left running (its fake), then the shell's process group."""
    pids = out / "background.pids"
    for pid in pids.read_text().split() if pids.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGTERM)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(shell.pid, signal.SIGTERM)
    shell.wait(timeout=30)


def test_the_block_is_one_shell_block_with_a_fake_and_one_ncbi_setting() -> None:
    lines = offline_block(README.read_text(encoding="utf-8"))
    text = "\n".join(lines)
    assert "fake-eutils" in lines[0]
    assert lines[0].split("#", 1)[0].rstrip().endswith("&")
    assert "NCBI_EUTILS_BASE_URL" in text
    assert "NCBI_IDCONV_BASE_URL" not in text  # one setting points every NCBI service
    assert "NNN" not in text  # no placeholder to fill in


def test_every_command_of_the_readme_offline_block_succeeds(
    block_run: tuple[Path, list[Ran]],
) -> None:
    _home, ran = block_run
    failed = [r for r in ran if r.status not in (0, None)]
    assert not failed, "\n\n".join(
        f"$ {r.line}\nexit {r.status}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}" for r in failed
    )
    assert sum(r.status is None for r in ran) == 1  # the fake, in the background
    for r in ran:
        expected = EXPECTED.get(r.kind)
        if expected is not None:
            assert re.search(expected, r.stdout), f"$ {r.line}\n{r.stdout}\n{r.stderr}"
        assert "Traceback" not in r.stderr, r.line
        assert "error [" not in r.stderr, r.line


def test_the_block_keeps_its_files_out_of_the_working_folder(
    block_run: tuple[Path, list[Ran]],
) -> None:
    home, ran = block_run
    written = [r for r in ran if " -o " in r.line]
    assert written, "the block exports to a file"
    for r in written:
        target = Path(shlex.split(r.line, comments=True)[-1])
        assert target.parts[0] == ".demo-data", r.line  # beside the demo's data, ignored by git
        assert (home / target).read_text(encoding="utf-8").startswith("TY  - ")
    assert sorted(p.name for p in home.iterdir()) == [".demo-data", ".outcomes", ".venv"]


@pytest.mark.parametrize("columns", [40, 80, 200])
def test_search_tables_wrap_the_text_without_cutting_it(
    block_run: tuple[Path, list[Ran]], columns: int
) -> None:
    home, _ran = block_run
    env = _environment() | {"BIOMCP_DATA_DIR": str(home / ".demo-data"), "COLUMNS": str(columns)}
    biomcp = str(home / ".venv" / "bin" / "biomcp")
    query = [biomcp, "search", "aspirin versus placebo randomized trial", "--top-k", "5"]
    as_json = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [*query, "--json"], env=env, cwd=home, capture_output=True, text=True, check=True
    )
    table = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        query, env=env, cwd=home, capture_output=True, text=True, check=True
    )
    passages = [
        _passage(hit["text"], hit["section"]) for hit in json.loads(as_json.stdout)["results"]
    ]
    assert len(passages) == 5
    assert any(re.search(r"\d+% \(95% CI \d+ to \d+\)", p) for p in passages)  # numbers to keep
    shown = table.stdout.split()
    for passage in passages:
        assert _holds_in_order(shown, passage.split()), (columns, passage, table.stdout)
    assert "…" not in table.stdout
    lines = table.stdout.splitlines()[1:]  # under the title line, which quotes the query
    if columns >= 80:
        assert max(len(line) for line in lines) <= columns, table.stdout
    else:  # the text goes under its row, within the width; the other columns stay whole
        wrapped = [line for line in lines if line.startswith(" ")]
        assert wrapped, table.stdout
        assert max(len(line) for line in wrapped) <= columns, table.stdout


def _passage(text: str, section: str | None) -> str:
    """A hit's text as a table row shows it: without its title line and section label."""
    _title, newline, body = text.partition("\n")
    body = body if newline and body.strip() else text
    return body.removeprefix(f"{section}: ") if section else body


def _holds_in_order(shown: list[str], words: list[str]) -> bool:
    """Whether `words` appear in `shown` one after another (lines joined by wrapping)."""
    n = len(words)
    return any(shown[i : i + n] == words for i in range(len(shown) - n + 1))
