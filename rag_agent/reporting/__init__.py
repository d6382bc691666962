"""`rag-agent report`: what users asked, from the turn records, as text, JSON or one HTML page."""
