# Set-up is part of every target: a fresh clone needs only Python 3.11 and these commands.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export LANGSMITH_TRACING := false

.PHONY: install demo test test-unit lint dev clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==0.13.9
	# torch comes from the machine's CPU wheel (--find-links); constraints.txt pins everything else.
	$(BIN)/uv pip install --quiet --python $(BIN)/python --find-links /opt/wheels \
		-c constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rag-agent ingest docs --exclude benchmarks.md
	$(BIN)/rag-agent ask "How do I ingest my documentation?"

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy graph nodes logic tools rag_agent
	$(BIN)/lint-imports
	$(BIN)/pytest -q

test-unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy graph nodes logic tools rag_agent
	$(BIN)/lint-imports

# The server reads the index in $$RAG_AGENT_DATA_DIR (default ./.rag-agent, like the CLI): ingest first.
# PORT=8123 make dev pins the port; otherwise the OS picks a free one on 127.0.0.1.
dev: $(STAMP)
	touch .env
	$(BIN)/langgraph dev --no-browser --host 127.0.0.1 \
		--port $${PORT:-$$($(BIN)/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}

clean:
	rm -rf $(VENV) .rag-agent .langgraph_api
