"""The two-page corpus the unit and end-to-end tests index: one robotics page, one off-topic page."""

ISAAC_SIM_MD = """\
---
title: Isaac Sim
---
# Isaac Sim

Isaac Sim is a robotics simulator built on Omniverse. It renders physically accurate scenes for robot testing.

## Synthetic data

Isaac Sim generates synthetic data with Replicator. Replicator randomizes lighting, textures and camera \
poses to produce labelled images.
"""

BAKING_MD = """\
# Baking bread

Bread dough needs flour, water, yeast and salt. Knead the dough for ten minutes until smooth.

## Oven

Bake the loaf in a hot oven at two hundred and twenty degrees for forty minutes.
"""

CORPUS = {"isaac-sim.md": ISAAC_SIM_MD, "baking.md": BAKING_MD}
