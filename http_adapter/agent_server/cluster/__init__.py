"""The agent server's scale-out back end (issue 19): PostgreSQL for every durable record, Redis
for wake-ups, cancel signals and run event streams. Many `graphrun serve` processes on many hosts
share one database; SQLite stays the embedded default (`records.py`, `queue.py`, `broker.py`).
"""
