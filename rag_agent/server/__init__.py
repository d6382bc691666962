"""The LangGraph server's own surface: auth, visitor tokens and policy, the HTTP app, widget, demo and MCP."""
