"""Training: the loop, a run's session and writer, checkpoints, evaluation, trackers. docs/ARCHITECTURE.md"""
