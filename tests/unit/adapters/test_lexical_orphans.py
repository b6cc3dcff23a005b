"""The lexical index after a writer was killed inside tantivy's commit: the files it had
written but not yet published (a segment's deletes, a new segment) are left behind, and the
next writer, replaying the same operations, would need the same file names. The next writer
clears them first (tantivy's garbage collection) instead of failing with FileAlreadyExists."""

from __future__ import annotations

from pathlib import Path

from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex


def _docs(start: int, count: int) -> list[LexicalDoc]:
    return [
        LexicalDoc(
            rid=i,
            text=f"aspirin stroke trial number {i}",
            doc_id=f"pmid:{i}",
            year=2020,
            evidence_type="clinical",
            quality_total=5.0,
            journal="Lancet",
        )
        for i in range(start, start + count)
    ]


def test_a_writer_killed_inside_commit_does_not_block_the_next_one(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path)
    index.create_if_missing()
    index.add(_docs(0, 200))
    index.commit(1)
    index.release_writer()
    folder = tmp_path / "lexical"
    published = {p.name: p.read_bytes() for p in folder.glob("meta.json")}
    lexical_json = (tmp_path / "lexical.json").read_bytes()
    before = {p.name for p in folder.iterdir()}

    # A writer deletes documents and commits: its deletes file is written, then meta.json.
    index.delete(list(range(0, 200, 3)))
    index.commit(2)
    index.release_writer()
    written = {p.name for p in folder.iterdir()} - before
    assert any(name.endswith(".del") for name in written), written
    # ... killed before meta.json and lexical.json were published: the new files stay behind.
    for name, data in published.items():
        (folder / name).write_bytes(data)
    (tmp_path / "lexical.json").write_bytes(lexical_json)

    reopened = LexicalIndex(tmp_path)
    assert reopened.generation == 1
    assert reopened.num_docs() == 200
    reopened.delete(list(range(0, 200, 3)))  # the same operations: the same file names
    reopened.commit(2)
    reopened.release_writer()
    assert reopened.num_docs() == 200 - len(range(0, 200, 3))
