"""Scenario modules, one per endpoint group; importing them fills `registry.SCENARIOS`."""

from . import assistants, crons, runs, store, streams, system, threads, wire

__all__ = ["assistants", "crons", "runs", "store", "streams", "system", "threads", "wire"]
