# Set-up is part of every target: a fresh clone needs only Python >= 3.11 and these commands.
# The newest python3.1x on PATH that is >= 3.11; `make PYTHON=/path/to/python3 ...` overrides it.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { command -v $$p; break; }; done)
VENV := .venv
# Two or more pytest processes (up to 4): most tests wait on a subprocess, a server or a stub; tests that share
# an expensive fixture stay in one process (xdist_group). `make test PYTEST_WORKERS=` runs in one process.
PYTEST_WORKERS ?= -n auto --maxprocesses 4 --dist loadgroup
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export LANGSMITH_TRACING := false

.PHONY: install lock demo test test-unit lint dev clean widget bench-env

UV_INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || test -n "$(PYTHON)" || \
		{ echo "no Python >= 3.11 found (tried python3.13, python3.12, python3.11, python3); set PYTHON=" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9
	# requirements.lock pins every package with its hashes (`make lock` regenerates it); then the project itself.
	$(UV_INSTALL) --require-hashes -r requirements.lock
	$(UV_INSTALL) --no-deps -e '.[server]'
	touch $(STAMP)

# The checks and tests add pytest, ruff, mypy and matplotlib (requirements-dev.lock: a superset of requirements.lock).
$(DEV_STAMP): $(STAMP) requirements-dev.lock
	$(UV_INSTALL) --require-hashes -r requirements-dev.lock
	touch $(DEV_STAMP)

install: $(DEV_STAMP)

# Re-resolve after changing pyproject.toml or constraints.txt: every platform, hashes for every file.
LOCK = $(BIN)/uv pip compile pyproject.toml -c constraints.txt --universal --python-version 3.11 \
	--generate-hashes --no-header --quiet
lock: $(STAMP)
	$(LOCK) --extra server -o requirements.lock
	$(LOCK) --extra dev -o requirements-dev.lock

# --base-url /demo: citations link to the pages `make dev` serves at /demo/ (the docs with the chat widget).
demo: $(STAMP)
	$(BIN)/rag-agent ingest docs --exclude benchmarks.md --base-url /demo
	$(BIN)/rag-agent ask "How do I ingest my documentation?"

test: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy graph nodes logic tools rag_agent
	$(BIN)/lint-imports
	$(BIN)/pytest -q $(PYTEST_WORKERS)

test-unit: $(DEV_STAMP)
	$(BIN)/pytest -q tests/unit

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy graph nodes logic tools rag_agent
	$(BIN)/lint-imports

# The server reads the index in $$RAG_AGENT_DATA_DIR (default ./.rag-agent, like the CLI): ingest first.
# PORT=8123 make dev pins the port; otherwise the OS picks a free one on 127.0.0.1.
# The demo page (this project's docs with the chat widget) is printed first; `make demo` builds its index.
dev: $(STAMP)
	touch .env
	@port=$${PORT:-$$($(BIN)/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}; \
	echo "Demo page (the docs with the chat widget): http://127.0.0.1:$$port/demo/"; \
	$(BIN)/langgraph dev --no-browser --host 127.0.0.1 --port $$port

# The benchmarks' own venv: the project as locked plus what they compare against (benchmarks/llamaindex_side.py),
# never part of the product's install. llama-index-core is pinned; requirements.lock constrains what they share.
BENCH_VENV := .venv-bench
LLAMA_INDEX_CORE := llama-index-core==0.14.25
bench-env: $(STAMP)
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BIN)/uv pip install --quiet --python $(BENCH_VENV)/bin/python --require-hashes -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BENCH_VENV)/bin/python --no-deps -e .
	$(BIN)/uv pip install --quiet --python $(BENCH_VENV)/bin/python -c requirements.lock '$(LLAMA_INDEX_CORE)'

clean:
	rm -rf $(VENV) $(BENCH_VENV) .rag-agent .langgraph_api

# Rebuild rag_agent/server/web/static/rag-agent.js from widget/src (needs node and npm; the built file is committed,
# so nothing else needs them). `npm ci` installs exactly widget/package-lock.json.
widget:
	cd widget && npm ci --no-audit --no-fund && node build.mjs
