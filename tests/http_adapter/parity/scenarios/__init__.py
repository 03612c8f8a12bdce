"""Scenario modules, one per endpoint group; importing them fills `registry.SCENARIOS`."""

from . import (assistants, crons, issue31, runs, sdk_methods, sdk_variants, store, streams, system,
               threads, wire)

__all__ = ["assistants", "crons", "issue31", "runs", "sdk_methods", "sdk_variants", "store", "streams", "system", "threads", "wire"]
