"""`biomcp export -o` into what it is given: a device, a pipe or an open descriptor is written
to as a stream and stays what it is; a regular file is replaced whole. The real console
script in child processes, on a corpus synced from the fake E-utilities server."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from biomcp.testing.eutils import FakeEutilsServer
from tests.support.cli import KEY, TERM, Cli, Expected, make_cli
from tests.support.cli import expected as expected
from tests.support.cli import fake as fake

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cli(fake: FakeEutilsServer, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = make_cli(fake, tmp_path_factory.mktemp("export-targets"))
    done = cli("sync", "-k", KEY, "-t", TERM, "-q", "--json")
    assert done.returncode == 0, done.stderr
    # The exports below are about the real process's standard output: no forked commands.
    return dataclasses.replace(cli, forked=False)


def pmids(expected: Expected) -> list[str]:
    return sorted(expected.pmids, key=int)


def export_with_stdout(cli: Cli, stdout: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`biomcp export ARGS` with its standard output on `stdout`."""
    return subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [str(Path(sys.executable).with_name("biomcp")), "export", *args],
        env=cli.env,
        cwd=cli.cwd,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


def test_dev_stdout_gets_the_export_and_stays_a_link_to_standard_output(
    cli: Cli, expected: Expected
) -> None:
    link = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
    done = cli("export", "-k", KEY, "-f", "pmids", "-o", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == pmids(expected)
    assert done.stderr.startswith(f"exported {len(expected.pmids)} of the ")
    kept = os.readlink("/dev/stdout") if os.path.islink("/dev/stdout") else None
    assert kept == link
    assert not stat.S_ISREG(os.lstat("/dev/stdout").st_mode)


def test_dev_stdout_redirected_to_a_file_writes_into_that_file(
    cli: Cli, expected: Expected, tmp_path: Path
) -> None:
    """`biomcp export -o /dev/stdout > out`: the descriptor's file gets the export in place,
    nothing is created beside /dev/stdout."""
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        done = export_with_stdout(
            cli, handle.fileno(), "-k", KEY, "-f", "pmids", "-o", "/dev/stdout"
        )
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").split() == pmids(expected)
    assert [p.name for p in Path("/dev").iterdir() if p.name.startswith(".stdout")] == []
    assert not stat.S_ISREG(os.lstat("/dev/stdout").st_mode)


def test_a_fifo_read_by_another_thread_receives_the_whole_export(
    cli: Cli, expected: Expected, tmp_path: Path
) -> None:
    fifo = tmp_path / "screening.pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as pipe:  # blocks until the export opens the other end
            received.append(pipe.read())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        done = cli("export", "-k", KEY, "-f", "pmids", "-o", str(fifo))
    finally:
        if reader.is_alive() and not received:
            # The export never opened the pipe: open it ourselves so the reader returns.
            with os.fdopen(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
        reader.join()
    assert done.returncode == 0, done.stderr
    assert received[0].decode("utf-8").split() == pmids(expected)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["screening.pipe"]


def test_a_descriptor_path_as_process_substitution_gives_receives_the_export(
    cli: Cli, expected: Expected
) -> None:
    """`biomcp export -o >(gzip > x)`: bash passes /dev/fd/N, the write end of a pipe."""
    reader, writer = os.pipe()
    try:
        done = subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
            [
                str(Path(sys.executable).with_name("biomcp")),
                "export", "-k", KEY, "-f", "pmids", "-o", f"/dev/fd/{writer}",
            ],
            env=cli.env,
            cwd=cli.cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            pass_fds=(writer,),
        )  # fmt: skip
    finally:
        os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        received = pipe.read()  # the few PMIDs fit in the pipe's buffer
    assert done.returncode == 0, done.stderr
    assert received.decode("utf-8").split() == pmids(expected)


def test_a_full_device_fails_cleanly_and_moves_no_export_mark(cli: Cli) -> None:
    if not os.path.exists("/dev/full") or not os.access("/dev/full", os.W_OK):
        pytest.skip("no writable /dev/full on this machine")
    done = cli("export", "-k", KEY, "--new", "-f", "pmids", "-o", "/dev/full")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error [VALIDATION]: cannot write /dev/full: No space left on device"
    )
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)
    assert cli.json("checkpoint", "get", KEY)["export_mark"] is None


def test_a_link_to_an_earlier_export_stays_a_link_to_the_new_one(
    cli: Cli, expected: Expected
) -> None:
    target = cli.cwd / "exports" / "latest.txt"
    target.parent.mkdir()
    target.write_text("an earlier export\n", encoding="utf-8")
    link = cli.cwd / "current.txt"
    link.symlink_to(target)
    done = cli("export", "-k", KEY, "-f", "pmids", "-o", "current.txt")
    assert done.returncode == 0, done.stderr
    assert os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8").split() == pmids(expected)
    assert [p.name for p in target.parent.iterdir()] == ["latest.txt"]  # no scratch file
