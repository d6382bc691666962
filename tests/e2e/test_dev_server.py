"""The agent served by `langgraph dev`, driven through the real `langgraph-sdk` client.

One server per module, over a two-file corpus embedded with the hash embedder (no torch, no model
download), with owner-based auth on (`RAG_AGENT_API_KEYS`) so the same server also shows that one
user cannot read or run another's thread.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from tests.conversation import EXPECTED, TURNS, sources, summary
from tests.e2e import devserver

pytestmark = pytest.mark.e2e

KEYS = {"alice": "alice-token-1", "bob": "bob-token-2"}
# The hash embedder's scores are lower than the real model's; this lets on-topic questions through.
CONTEXT = {"score_threshold": 0.2}
NODES = ("classify", "retrieve", "score_gate", "generate_grounded", "generate_not_found", "error_handler")


def ask(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def text_of(message: dict[str, Any]) -> str:
    """A serialized message's text: a plain string, or its text blocks joined (the AI answer's form)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[devserver.DevServer]:
    devserver.require_langgraph()
    workdir = tmp_path_factory.mktemp("devserver")
    env = devserver.prepare(workdir, RAG_AGENT_API_KEYS=",".join(f"{u}:{t}" for u, t in KEYS.items()))
    running = devserver.start(workdir, env)
    try:
        yield running
    finally:
        running.stop()
        # Nothing of the server's process group may outlive the module.
        with pytest.raises(ProcessLookupError):
            os.killpg(running.process.pid, 0)


def client_for(server: devserver.DevServer, user: str | None) -> SyncLangGraphClient:
    headers = {"Authorization": f"Bearer {KEYS[user]}"} if user else {}
    # api_key=None: never pick up a LangSmith key from the environment and send it anywhere.
    return get_sync_client(url=server.url, api_key=None, headers=headers, timeout=60)


@pytest.fixture(scope="module")
def alice(server: devserver.DevServer) -> SyncLangGraphClient:
    return client_for(server, "alice")


@pytest.fixture(scope="module")
def bob(server: devserver.DevServer) -> SyncLangGraphClient:
    return client_for(server, "bob")


def test_studio_sees_schemas_context_form_and_six_nodes(alice: SyncLangGraphClient) -> None:
    [assistant] = alice.assistants.search(graph_id="agent")
    schemas = alice.assistants.get_schemas(assistant["assistant_id"])
    assert "messages" in schemas["input_schema"]["properties"]
    assert {"answer", "citations", "status", "turns"} <= set(schemas["output_schema"]["properties"])
    context = schemas["context_schema"]["properties"]
    assert {"top_k", "score_threshold", "max_history", "answer_mode", "system_prompt"} <= set(context)
    assert "data_dir" not in context  # the deployment's, not a run's (tests below: refused if sent)
    assert "best retrieval similarity" in schemas["output_schema"]["properties"]["top_score"]["description"].lower()
    assert "Chunks to retrieve" in context["top_k"]["description"]
    nodes = {node["id"] for node in alice.assistants.get_graph(assistant["assistant_id"])["nodes"]}
    assert set(NODES) <= nodes


def test_two_turns_remember_the_subject(alice: SyncLangGraphClient) -> None:
    thread = alice.threads.create()
    first = alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT)
    assert isinstance(first, dict) and first["status"] == "grounded", first
    # The server inherited RAG_AGENT_EMBEDDING_MODEL and RAG_AGENT_DATA_DIR: it searched our index.
    assert first["embedding_model"] == "hash/256"

    second = alice.runs.wait(thread["thread_id"], "agent", input=ask("How do I use it for synthetic data?"),
                             context=CONTEXT)
    assert isinstance(second, dict) and second["status"] == "grounded", second
    assert "Isaac Sim" in second["retrieval_query"]
    assert "Replicator" in second["answer"]
    assert {c["source"] for c in second["citations"]} == {"isaac-sim.md"}

    state = alice.threads.get_state(thread["thread_id"])
    values = state["values"]
    assert isinstance(values, dict)
    assert values["turns"] == 2
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "human", "ai"]
    # A chat UI that drops annotations still shows the sources: Markdown links after the answer.
    answer, sources = text_of(values["messages"][-1]).split("\n\nSources:\n")
    assert answer == second["answer"]
    # One line per citation, named as its deep link goes: page title › the section's heading.
    lines = sources.splitlines()
    assert lines[0] == f"- [1] [Isaac Sim › Synthetic data]({second['citations'][0]['source_url']})"
    assert [(line.split("] [")[0], line.rsplit("](", 1)[1]) for line in lines] == [
        (f"- [{c['index']}", f"{c['source_url']})") for c in second["citations"]]
    assert all(line.split("] [", 1)[1].startswith("Isaac Sim") for line in lines)
    # A generic client reading the message finds a standard citation annotation, with its link, on every marker.
    [block] = values["messages"][-1]["content"]
    by_index = {c["index"]: c["source_url"] for c in second["citations"]}
    assert [(a["start_index"], a["url"]) for a in block["annotations"]] == [
        (m.start(), by_index[int(m.group(1))]) for m in re.finditer(r"\[(\d+)\]", answer)]
    assert all(a["type"] == "citation" and a["cited_text"] for a in block["annotations"])
    assert state["next"] == []


def test_messages_tuple_stream_yields_the_answer_in_pieces(alice: SyncLangGraphClient) -> None:
    thread = alice.threads.create()
    # What agent-chat-ui and Studio ask for: message chunks as the answer is written, then the stored thread.
    parts = list(alice.runs.stream(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT,
                                   stream_mode="messages-tuple"))
    values = alice.threads.get_state(thread["thread_id"])["values"]
    assert isinstance(values, dict) and values["status"] == "grounded", values
    stored = values["messages"][-1]
    pieces = [part.data[0] for part in parts if part.event == "messages"]
    assert all(p["id"] == stored["id"] and p["type"] == "AIMessageChunk" for p in pieces)
    assert len(pieces) >= 3 and "".join(text_of(p) for p in pieces) == text_of(stored)
    # The answer itself arrives in several pieces before its Sources list.
    assert len([p for p in pieces if "Sources:" not in text_of(p) and not text_of(p).startswith("- [")]) >= 2


def test_concurrent_runs_on_one_thread_do_not_fork_its_history(alice: SyncLangGraphClient) -> None:
    thread = alice.threads.create()
    questions = ("What is Isaac Sim?", "How do I use it for synthetic data?")
    runs = [alice.runs.create(thread["thread_id"], "agent", input=ask(q), context=CONTEXT,
                              multitask_strategy="enqueue") for q in questions]
    for run in runs:
        alice.runs.join(thread["thread_id"], run["run_id"])
    assert [alice.runs.get(thread["thread_id"], r["run_id"])["status"] for r in runs] == ["success", "success"]
    values = alice.threads.get_state(thread["thread_id"])["values"]
    assert isinstance(values, dict) and values["turns"] == 2
    messages = values["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "human", "ai"]
    assert [messages[0]["content"], messages[2]["content"]] == list(questions)


def test_each_server_turn_writes_a_record(alice: SyncLangGraphClient, server: devserver.DevServer) -> None:
    thread = alice.threads.create()
    out = alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT)
    assert isinstance(out, dict) and out["turn_id"] and out["timestamp"].endswith("Z"), out
    # The server path has no Agent: the graph itself wrote the record, in the data dir's SQLite file.
    with sqlite3.connect(server.workdir / "data" / "checkpoints.sqlite") as conn:
        rows = conn.execute("SELECT thread_id, status, question FROM rag_agent_turns WHERE turn_id = ?",
                            (out["turn_id"],)).fetchall()
    assert rows == [(thread["thread_id"], "grounded", "What is Isaac Sim?")]


def test_updates_stream_shows_each_node_decision(alice: SyncLangGraphClient) -> None:
    thread = alice.threads.create()
    updates = [part.data for part in alice.runs.stream(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"),
                                                       context=CONTEXT, stream_mode="updates")
               if part.event == "updates"]
    assert [next(iter(u)) for u in updates] == ["classify", "retrieve", "score_gate", "generate_grounded"]
    by_node = {node: value for u in updates for node, value in u.items()}
    assert by_node["classify"]["retrieval_query"] == "What is Isaac Sim?"
    assert by_node["retrieve"]["retrieved"][0]["source"] == "isaac-sim.md"
    assert by_node["score_gate"] == {"grounded": True}
    assert by_node["generate_grounded"]["status"] == "grounded"


def test_messages_stream_yields_the_answer_message(alice: SyncLangGraphClient) -> None:
    # The server's own "messages" mode (what Studio's chat uses): the AI message grows sentence by sentence
    # (messages/partial carries the text so far) and ends as the stored message.
    # (messages-tuple, in pieces: test_messages_tuple_stream_yields_the_answer_in_pieces.)
    thread = alice.threads.create()
    events = list(alice.runs.stream(thread["thread_id"], "agent", input=ask("What does Replicator randomize?"),
                                    context=CONTEXT, stream_mode="messages"))
    shown = [m for part in events if part.event in ("messages/partial", "messages/complete") for m in part.data
             if m["type"] in ("ai", "AIMessageChunk")]
    values = alice.threads.get_state(thread["thread_id"])["values"]  # type: ignore[call-overload]
    stored = values["messages"][-1]
    assert len(shown) >= 2 and text_of(shown[-1]) == text_of(stored), [part.event for part in events]
    assert all(text_of(shown[-1]).startswith(text_of(m)) for m in shown)  # each partial a prefix of the whole
    # The message is the answer the other outputs show, then its sources as Markdown links.
    assert text_of(stored).startswith(values["answer"])


def test_selection_filters_and_answer_stream_through_the_server(alice: SyncLangGraphClient) -> None:
    thread = alice.threads.create()
    selection = ("Inverse kinematics solves for the joint angles of a robot arm that place its end effector at a "
                 "target pose. Forward kinematics computes the pose from the joint angles.")
    parts = list(alice.runs.stream(thread["thread_id"], "agent", context=CONTEXT, stream_mode=["custom", "values"],
                                   input={**ask("What does inverse kinematics solve for?"), "context": selection}))
    final = [part.data for part in parts if part.event == "values"][-1]
    assert final["status"] == "grounded", final["answer"]
    assert {c["source"] for c in final["citations"]} == {"selection"}
    # The custom stream carries the cleaned answer; its deltas add up to the stored one.
    assert "".join(p.data.get("answer_delta", "") for p in parts if p.event == "custom") == final["answer"]

    # A filter that hides the answer: the reply says so and points at the page that has it.
    run = alice.runs.wait(thread["thread_id"], "agent", context=CONTEXT,
                          input={**ask("What is Isaac Sim?"), "context": "", "filters": {"source": "baking"}})
    assert run["not_found"]["reason"] == "filtered_out"  # type: ignore[index,call-overload]
    assert run["not_found"]["nearest"][0]["source"] == "isaac-sim.md"  # type: ignore[index,call-overload]


def test_per_turn_inputs_apply_to_their_turn_only(alice: SyncLangGraphClient) -> None:
    # As Studio and the SDK send them: each run carries only what changed (tests/unit/test_turn_inputs.py
    # runs the same conversation through graph.invoke and Agent.ask and expects the same).
    thread = alice.threads.create()
    seen = [summary(alice.runs.wait(thread["thread_id"], "agent", context=CONTEXT,  # type: ignore[arg-type]
                                    input={**ask(text), **extra}))
            for text, extra in TURNS]
    assert sources(seen) == EXPECTED


def test_a_run_cannot_choose_the_servers_folder_collection_or_provider(
        alice: SyncLangGraphClient, server: devserver.DevServer, tmp_path: Any) -> None:
    # Issue 15: a remote caller must not pick another index on the server's disk, nor a provider URL.
    # Deployment fields are not in the context schema, so the server drops them before the graph runs:
    # the run answers from the server's own index and never touches the folder it was sent.
    thread = alice.threads.create()
    for context in ({"data_dir": str(tmp_path)}, {"openai_base_url": "http://127.0.0.1:9/v1"}):
        run = alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"),
                              context={**CONTEXT, **context})
        assert run["status"] == "grounded" and run["model_used"].startswith("extractive")  # type: ignore[index,call-overload]
        assert {c["source"] for c in run["citations"]} == {"isaac-sim.md"}  # type: ignore[index,call-overload]
    assert list(tmp_path.iterdir()) == []  # nothing opened or created in the folder it was sent
    # A collection is a run setting, limited to those the deployment serves: refused by name, no path.
    run = alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"),
                          context={**CONTEXT, "collection": "someone-elses"}, raise_error=False)
    error = json.dumps(run)
    assert "collection 'someone-elses' is not served here" in error, error
    assert server.env["RAG_AGENT_DATA_DIR"] not in error


def test_another_user_cannot_read_or_run_a_thread(alice: SyncLangGraphClient, bob: SyncLangGraphClient,
                                                  server: devserver.DevServer) -> None:
    thread = alice.threads.create()
    alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT)
    assert alice.threads.get(thread["thread_id"])["metadata"]["owner"] == "alice"

    for attempt in (
        lambda: bob.threads.get(thread["thread_id"]),
        lambda: bob.threads.get_state(thread["thread_id"]),
        lambda: bob.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT),
        lambda: bob.threads.update(thread["thread_id"], metadata={"owner": "bob"}),
        lambda: bob.threads.delete(thread["thread_id"]),
    ):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            attempt()
        assert refused.value.response.status_code in {403, 404}
    assert thread["thread_id"] not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    # Alice's thread is untouched: still hers, still one turn.
    assert alice.threads.get_state(thread["thread_id"])["values"]["turns"] == 1  # type: ignore[call-overload]

    for anonymous in (client_for(server, None), get_sync_client(url=server.url, api_key=None,
                                                                 headers={"Authorization": "Bearer wrong"})):
        with pytest.raises(httpx.HTTPStatusError) as rejected:
            anonymous.threads.search()
        assert rejected.value.response.status_code == 401


def test_cli_asks_while_the_server_serves_the_same_index(server: devserver.DevServer,
                                                         alice: SyncLangGraphClient) -> None:
    # The server has searched the index (so a local Qdrant lock would be held by now)...
    thread = alice.threads.create()
    served = alice.runs.wait(thread["thread_id"], "agent", input=ask("What is Isaac Sim?"), context=CONTEXT)
    assert isinstance(served, dict) and served["status"] == "grounded", served
    # ...and a CLI process on the same data dir answers all the same: readers never open Qdrant.
    done = subprocess.run([str(devserver.RAG_AGENT), "ask", "--json", "--threshold", "0.2", "What is Isaac Sim?"],
                          env=server.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "grounded" and {c["source"] for c in out["citations"]} == {"isaac-sim.md"}
