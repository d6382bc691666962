"""The `rag-agent` command line: its entry point, each subcommand, and the warm agent that serves `ask`."""
