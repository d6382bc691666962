#!/bin/sh
# Build the rag-agent server image: the Dockerfile `langgraph dockerfile` generates from langgraph.json (locked,
# hash-checked dependencies, pinned base image, healthcheck), ending with USER: langgraph.json's dockerfile_lines
# come before the CLI's own installs, which need root, so the switch to the unprivileged user is appended here.
#   deploy/build-image.sh [TAG]                 build the image (default tag: rag-agent-server)
#   deploy/build-image.sh --dockerfile FILE     only write the Dockerfile (tests/integration/test_deploy_artifacts.py)
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--dockerfile" ]; then
    out=$2
else
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
fi
LANGGRAPH_CLI_NO_ANALYTICS=1 "${LANGGRAPH:-langgraph}" dockerfile -c langgraph.json "$out" >/dev/null
printf '\n# rag-agent: the server runs as the unprivileged user created above (uid 10001), never as root.\nUSER 10001:10001\n' >> "$out"
if [ "${1:-}" = "--dockerfile" ]; then
    exit 0
fi
docker build -f "$out" -t "${1:-rag-agent-server}" .
