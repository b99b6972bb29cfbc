"""Rules on settings whose size alone explains a failure: gradient clipping, discount horizon,
network width, action noise, clip range."""

from __future__ import annotations
