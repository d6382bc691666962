"""Offline evaluation: labelled questions through the graph, answer figures, and the score-gate sweep."""
