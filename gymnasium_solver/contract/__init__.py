"""The contract: what a run folder, a metric, a status and an algorithm are (imports nothing of ours but the config). docs/ARCHITECTURE.md"""
