"""Storage failures name the part, the file and the remedy, through the real CLI; `--recreate` always recovers."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile import Run, run_cli

QUESTION = "How does a lidar measure distance?"


def docs(tmp_path: Path, pages: int = 3) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    for i in range(pages):
        (folder / f"lidar{i}.md").write_text(f"# Lidar {i}\n\nA lidar measures distance with laser pulses, part {i}.\n")
    return folder


def clean(run: Run) -> str:
    """The run's output, checked for the one thing a storage failure must never show."""
    output = run.stdout + run.stderr
    assert "Traceback" not in output, output
    return output


def file_size_limit(limit: int) -> Callable[[], None]:
    """A child's files cannot grow past `limit` bytes: writes fail like on a full disk (EFBIG)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_corrupt_index_file_is_named_and_recreate_recovers(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    assert run_cli(data, "ingest", str(folder)).returncode == 0
    snapshot = data / "embedded" / "docs" / (data / "embedded" / "docs" / "CURRENT").read_text().strip()
    (snapshot / "vectors.npy").write_bytes(os.urandom(4096))
    asked = run_cli(data, "ask", "--threshold", "0", QUESTION)
    assert asked.returncode == 1 and "re-run ingest" in clean(asked)
    (folder / "radar.md").write_text("# Radar\n\nA radar measures distance with radio waves.\n")
    plain = run_cli(data, "ingest", str(folder))  # the merge would read the damaged snapshot: it names it
    output = clean(plain)
    assert plain.returncode == 1
    assert str(snapshot) in output and "index" in output and "--recreate" in output
    assert "conversation store" not in output
    rebuilt = run_cli(data, "ingest", str(folder), "--recreate")
    assert rebuilt.returncode == 0, clean(rebuilt)
    assert "added 4" in rebuilt.stdout
    again = run_cli(data, "ask", "--threshold", "0", QUESTION)
    assert again.returncode == 0, clean(again)


def test_garbage_manifest_gives_the_remedy_and_recreate_recovers(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    assert run_cli(data, "ingest", str(folder)).returncode == 0
    manifest = data / "manifest.json"
    for garbage in ('{"collections": [1, 2', '["not", "a", "manifest"]', '{"collections": {"docs": 5}}'):
        manifest.write_text(garbage)
        commands = [("ingest", str(folder)), ("ask", QUESTION)] if garbage.startswith('{"collections": [') \
            else [("ingest", str(folder))]
        for command in commands:
            refused = run_cli(data, *command)
            output = clean(refused)
            assert refused.returncode == 1, output
            assert str(manifest) in output and "manifest" in output and "--recreate" in output
    rebuilt = run_cli(data, "ingest", str(folder), "--recreate")
    assert rebuilt.returncode == 0, clean(rebuilt)
    assert "moved to" in rebuilt.stderr
    assert json.loads(manifest.read_text())["collections"]["docs"]["chunks"] == 3
    assert len(list(data.glob("manifest.json.corrupt-*"))) == 1  # kept for inspection


def test_a_manifest_nested_too_deep_to_parse_is_named_and_recreate_repairs_it(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    assert run_cli(data, "ingest", str(folder)).returncode == 0
    manifest = data / "manifest.json"
    manifest.write_text("[" * 100_000)  # a RecursionError in the JSON parser, not a ValueError
    refused = run_cli(data, "ask", QUESTION)
    output = clean(refused)
    assert refused.returncode == 1, output
    assert f"the index manifest is corrupt: {manifest}" in output and "--recreate" in output
    rebuilt = run_cli(data, "ingest", str(folder), "--recreate")
    assert rebuilt.returncode == 0, clean(rebuilt)
    assert "moved to" in rebuilt.stderr
    assert json.loads(manifest.read_text())["collections"]["docs"]["chunks"] == 3
    assert run_cli(data, "ask", "--threshold", "0", QUESTION).returncode == 0


def test_full_disk_while_writing_the_manifest_names_it_and_leaves_no_temp_file(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    data.mkdir()
    # Another collection's large entry makes every manifest write bigger than the disk allows.
    big = {"embedding_model": "hash/256", "documents": {f"page{i}.md": "0" * 64 for i in range(5000)}}
    manifest = data / "manifest.json"
    manifest.write_text(json.dumps({"collections": {"other": big}}))
    run = run_cli(data, "ingest", str(folder), setup=file_size_limit(200_000))
    output = clean(run)
    assert run.returncode == 1
    assert f"cannot write the index manifest {manifest}" in output and "free disk space" in output
    assert not list(data.glob(".manifest-*"))
    assert json.loads(manifest.read_text())["collections"]["other"] == big  # the old manifest is intact


def test_full_disk_while_writing_the_index_is_named(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path, pages=300)
    run = run_cli(data, "ingest", str(folder), setup=file_size_limit(150_000))
    output = clean(run)
    assert run.returncode == 1
    assert "cannot write the index" in output and str(data / "embedded") in output and "free disk space" in output
    assert not list(data.glob(".manifest-*"))
    finished = run_cli(data, "ingest", str(folder))  # with space again, the next run completes the index
    assert finished.returncode == 0, clean(finished)
    assert "300 chunks in 'docs'" in finished.stdout


def _read_only(path: Path) -> Callable[[], None]:
    """Make a folder read-only for the CLI: by permissions, or for root by a read-only tmpfs mount."""
    if os.geteuid() != 0:
        for item in [path, *path.rglob("*")]:
            item.chmod(item.stat().st_mode & ~0o222)
        return lambda: None
    probe = subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("read-only disk not simulated: running as root without permission to mount "
                    "(the full-disk tests cover the same error path)")
    subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True)
    return lambda: subprocess.run(["umount", str(path)], check=True)


def test_read_only_data_folder_is_named(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    assert run_cli(data, "ingest", str(folder)).returncode == 0
    (folder / "new.md").write_text("# New\n\nA new page about radar.\n")
    undo = _read_only(data)
    try:
        run = run_cli(data, "ingest", str(folder))
    finally:
        undo()
    output = clean(run)
    assert run.returncode == 1
    assert str(data) in output and "is read-only" in output, output


def test_read_only_data_folder_is_named_when_asking(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", docs(tmp_path)
    assert run_cli(data, "ingest", str(folder)).returncode == 0
    undo = _read_only(data)
    try:
        run = run_cli(data, "ask", QUESTION)  # the conversation store is written on every turn
    finally:
        undo()
    output = clean(run)
    assert run.returncode == 1
    assert f"the folder {data} is read-only" in output and "RAG_AGENT_CHECKPOINTER" in output, output
