"""Pure maths the trainer and the readers share (advantages, statistics). docs/ARCHITECTURE.md"""
