"""The web side of the server: widget assets, demo pages, visitor tokens, limits and feedback."""
