"""A revision switch with a run in flight (issue 26, finding 8): the old revision's server
finishes the run before it stops, the new one waits for it and does not run it again, and new
runs go to the new revision."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from http_adapter.control_plane import ControlPlaneSettings
from http_adapter.control_plane.deployer import Deployer

from .conftest import KEY, ControlPlaneServer

# A node that says it started, waits for the test's release file, then appends its revision's
# version to the effects file: the side effect that must happen once per run.
GRAPH = '''\
import os
import time
from pathlib import Path
from typing import TypedDict

from engine import END, START, StateGraph


class State(TypedDict, total=False):
    started: str
    release: str
    effects: str
    version: str


def work(state: State) -> dict:
    Path(state["started"]).touch()
    deadline = time.monotonic() + 120
    while not os.path.exists(state["release"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    with open(state["effects"], "a") as file:
        file.write("{version}\\n")
    return {{"version": "{version}"}}


builder = StateGraph(State)
builder.add_node("work", work)
builder.add_edge(START, "work")
builder.add_edge("work", END)
graph = builder.compile()
'''


@pytest.fixture(autouse=True)
def _no_sdk_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _project(directory: Path, version: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "langgraph.json").write_text(
        '{"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}}')
    (directory / "agent.py").write_text(GRAPH.format(version=version))
    return directory


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ok").status_code == 200
    except httpx.HTTPError:
        return False


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    output: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: output.update(result=call()), daemon=True)
    thread.start()
    return thread, output


def _wait_stateless(url: str, files: dict[str, str]) -> Any:
    client = get_sync_client(url=url, api_key=KEY, timeout=60)
    try:
        return client.runs.wait(None, "agent", input=files)
    finally:
        client.close()


def _until(check: Callable[[], Any], what: str, timeout: float = 45) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.02)
    return found


def _in_flight(cp: ControlPlaneServer, tmp_path: Path) -> tuple[Path, dict[str, str],
                                                                  dict[str, Any], str, Any]:
    """Revision v1 deployed, with a run whose node has started and waits for `release`:
    (project dir, the node's files, the deployment, v1's URL, the run)."""
    project = _project(tmp_path / "project", "v1")
    files = {name: str(tmp_path / name) for name in ("started", "release", "effects")}
    dep = cp.create(project)
    assert cp.wait(dep["id"], dep["latest_revision_id"])["status"] == "DEPLOYED"
    old_url = cp.deployment(dep["id"])["source_config"]["custom_url"]
    old = get_sync_client(url=old_url, api_key=KEY)
    run = old.runs.create(old.threads.create()["thread_id"], "agent", input=files)
    _until(lambda: Path(files["started"]).exists(), "the run's node to start")
    old.close()
    return project, files, dep, old_url, run


def test_a_run_in_flight_finishes_once_across_a_revision_switch(
    start_control_plane: Callable[..., ControlPlaneServer], tmp_path: Path
) -> None:
    cp = start_control_plane(drain_grace=45.0)
    project, files, dep, old_url, run = _in_flight(cp, tmp_path)

    _project(project, "v2")
    patched = cp.http.patch(f"/v2/deployments/{dep['id']}", json={
        "source_revision_config": {"langgraph_config_path": "langgraph.json"}})
    assert patched.status_code == 200, patched.text
    second = patched.json()["latest_revision_id"]
    # The deployment points at the new server before the old one is asked to stop: the run is
    # still in flight on the old one while both servers are up.
    _until(lambda: cp.deployment(dep["id"])["active_revision_id"] == second,
           "the deployment to switch")
    new_url = cp.deployment(dep["id"])["source_config"]["custom_url"]
    assert new_url != old_url
    # The old server got SIGTERM (it stopped listening) while the run's node still waits; the
    # new one answers /ok in standby and does not open the data before the old one has exited.
    _until(lambda: not _answers(old_url), "the old server to stop listening")
    assert httpx.get(f"{new_url}/ok").headers.get("x-graphrun-standby") == "1"
    held, held_output = _in_thread(lambda: _wait_stateless(new_url, files))  # waits for v2
    Path(files["release"]).touch()
    assert cp.wait(dep["id"], second, timeout=60)["status"] == "DEPLOYED"
    held.join(60)
    assert held_output == {"result": {**files, "version": "v2"}}  # a new run, on v2

    new = get_sync_client(url=new_url, api_key=KEY)
    try:
        done = _until(lambda: (r := new.runs.get(run["thread_id"], run["run_id"]))["status"]
                      not in ("pending", "running") and r, "the run to end")
        assert done["status"] == "success", done
        # The run in flight ran once, on v1; the run held during the switch then ran on v2.
        assert Path(files["effects"]).read_text().splitlines() == ["v1", "v2"]
        assert new.threads.get_state(run["thread_id"])["values"]["version"] == "v1"
        # The thread goes on on the new revision.
        later = new.runs.wait(run["thread_id"], "agent", input=files)
        assert later["version"] == "v2"
        assert Path(files["effects"]).read_text().splitlines() == ["v1", "v2", "v2"]
        runs = new.runs.list(run["thread_id"])
        assert sorted(r["status"] for r in runs) == ["success", "success"]
    finally:
        new.close()
    log = cp.http.get(f"/v2/deployments/{dep['id']}/revisions/{second}/logs").json()["deploy_log"]
    assert "its runs in flight get 45 s to finish" in log
    assert "took the deployment's data over" in log


def test_the_drain_grace_is_ours_else_the_revisions_else_the_servers(tmp_path: Path) -> None:
    def grace(ours: float | None, env: dict[str, str]) -> float:
        settings = ControlPlaneSettings(data_dir=tmp_path, drain_grace=ours)
        return Deployer(settings, None)._grace(env)  # type: ignore[arg-type]

    assert grace(None, {}) == 20.0
    assert grace(None, {"BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS": " 180 "}) == 180.0
    assert grace(None, {"BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS": "soon"}) == 20.0  # refused by serve
    assert grace(5.0, {"BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS": "180"}) == 5.0


def test_deleting_a_deployment_does_not_wait_for_the_drain(
    start_control_plane: Callable[..., ControlPlaneServer], tmp_path: Path
) -> None:
    cp = start_control_plane(drain_grace=45.0)
    project, files, dep, old_url, _ = _in_flight(cp, tmp_path)
    _project(project, "v2")
    second = cp.http.patch(f"/v2/deployments/{dep['id']}", json={
        "source_revision_config": {"langgraph_config_path": "langgraph.json"}}).json()
    _until(lambda: cp.deployment(dep["id"])["active_revision_id"] == second["latest_revision_id"],
           "the deployment to switch")
    _until(lambda: not _answers(old_url), "the old server to stop listening")
    # The node is never released: the drain would last 45 s + 15 s, longer than the client's
    # 30 s timeout; the deletion ends it instead.
    assert cp.http.delete(f"/v2/deployments/{dep['id']}").status_code == 204
    assert not (cp.settings.data_dir / "deployments" / dep["id"]).exists()
    assert not Path(files["effects"]).exists()
