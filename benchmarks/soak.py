"""`python -m benchmarks.soak [--runs N] [--state-kb K] [--every M] [--stateless]`: memory of a
long-lived single host (issue 26 §3).

Starts a real `graphrun serve` subprocess on a loopback port (SQLite file in a temporary
directory), then runs N runs one after another: each on a new thread (`/threads/{id}/runs/wait`)
whose state carries K KB, and the thread deleted afterwards (or N stateless `/runs/wait` with
`--stateless`). Nothing the runs made is kept by the client or the records, so a server that
holds nothing per finished run levels off. Every M runs it samples the server's resident memory
from /proc and prints it; at the end it prints the plateau: the growth over the second half of
the runs against the growth over the first half.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx

from .http import Server, free_port, project


def serve(work: Path) -> Server:
    """`graphrun serve` (the real CLI) on a loopback port, its SQLite file under `work`."""
    config = project(work, "engine")
    port = free_port()
    argv = [sys.executable, "-m", "http_adapter.cli", "serve", "--config", str(config),
            "--port", str(port), "--log-level", "warning", "--data-dir", str(work / "data")]
    return Server("graphrun", argv, port, work)


def _one(client: httpx.Client, payload: str, stateless: bool) -> None:
    body = {"assistant_id": "chain", "input": {"x": 1, "log": [payload]}}
    if stateless:
        response = client.post("/runs/wait", json=body)
        response.raise_for_status()
        return
    thread = client.post("/threads", json={}).json()["thread_id"]
    client.post(f"/threads/{thread}/runs/wait", json=body).raise_for_status()
    client.delete(f"/threads/{thread}").raise_for_status()


def soak(runs: int, state_kb: int, every: int, stateless: bool) -> list[tuple[int, float]]:
    """(runs done, RSS MiB) samples, the first one before any run."""
    payload = "x" * (state_kb * 1024)
    with tempfile.TemporaryDirectory() as tmp:
        server = serve(Path(tmp))
        try:
            samples = [(0, server.rss_mib())]
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for done in range(1, runs + 1):
                    _one(client, payload, stateless)
                    if done % every == 0:
                        samples.append((done, server.rss_mib()))
                        print(f"{done:>7} runs  {samples[-1][1]:8.1f} MiB", flush=True)
            return samples
        finally:
            server.stop()


def plateau(samples: list[tuple[int, float]]) -> tuple[float, float]:
    """RSS growth (MiB) over the first half of the runs and over the second half."""
    half = samples[-1][0] / 2
    middle = min(samples, key=lambda s: abs(s[0] - half))[1]
    return middle - samples[0][1], samples[-1][1] - middle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--runs", type=int, default=4000, help="runs in all (default 4000)")
    parser.add_argument("--state-kb", type=int, default=1, help="KB of state per run (default 1)")
    parser.add_argument("--every", type=int, default=500, help="sample RSS every M runs")
    parser.add_argument("--stateless", action="store_true", help="stateless /runs/wait runs")
    args = parser.parse_args(argv)
    started = time.monotonic()
    samples = soak(args.runs, args.state_kb, args.every, args.stateless)
    first, second = plateau(samples)
    print(f"start {samples[0][1]:.1f} MiB, end {samples[-1][1]:.1f} MiB after {args.runs} runs "
          f"of {args.state_kb} KB in {time.monotonic() - started:.0f} s")
    print(f"growth: first half {first:+.1f} MiB, second half {second:+.1f} MiB "
          f"({'plateau' if second <= max(first / 4, 2.0) else 'NO plateau'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
