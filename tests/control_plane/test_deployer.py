"""The revision lifecycle with real processes: build, deploy, switch, restart, delete."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from http_adapter.control_plane import _processes as processes
from http_adapter.control_plane._processes import pid_alive

from .conftest import KEY, ControlPlaneServer, write_project


@pytest.fixture(autouse=True)
def _no_sdk_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _server_pid(cp: ControlPlaneServer, deployment_id: str, revision_id: str) -> int:
    path = cp.settings.data_dir / "deployments" / deployment_id / "revisions" / revision_id / "server.pid"
    return int(path.read_text())


def _wait_gone(pid: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        assert time.monotonic() < deadline, f"pid {pid} is still running"
        time.sleep(0.02)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ok").status_code == 200
    except httpx.HTTPError:
        return False


def _run(url: str, text: str = "hi") -> dict:
    with _sdk(url) as client:
        return client.runs.wait(None, "agent", input={"text": text})  # type: ignore[return-value]


@contextlib.contextmanager
def _sdk(url: str, api_key: str | None = KEY) -> Iterator[SyncLangGraphClient]:
    client = get_sync_client(url=url, api_key=api_key)
    try:
        yield client
    finally:
        client.close()


def test_deploy_stream_with_the_org_key_and_401_without(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project, secrets=[{"name": "MY_SECRET", "value": "s3cr3t"}])
    assert dep["latest_revision_id"] and dep["active_revision_id"] is None
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    assert revision["status"] == "DEPLOYED", revision
    dep = control_plane.deployment(dep["id"])
    url = dep["source_config"]["custom_url"]
    assert url.startswith("http://127.0.0.1:") and dep["active_revision_id"] == revision["id"]
    assert dep["status"] == "READY" and dep["secrets"] == [{"name": "MY_SECRET", "value": "********"}]

    with _sdk(url) as client:
        chunks = list(client.runs.stream(None, "agent", input={"text": "hi"}, stream_mode="values"))
    assert [c.event for c in chunks] == ["metadata", "values", "values"]
    assert chunks[-1].data == {"text": "hi!", "version": "v1", "secret": "s3cr3t"}

    with _sdk(url, api_key=None) as anonymous, pytest.raises(httpx.HTTPStatusError) as denied:
        anonymous.assistants.search()
    assert denied.value.response.status_code == 401
    assert httpx.post(f"{url}/assistants/search", json={},
                      headers={"X-Api-Key": "wrong"}).status_code == 401

    logs = control_plane.http.get(
        f"/v2/deployments/{dep['id']}/revisions/{revision['id']}/logs").json()
    assert "graph 'agent': ok" in logs["build_log"]
    assert "answers at" in logs["deploy_log"] and "graphrun serve: serving" in logs["server_log"]
    assert "s3cr3t" not in str(logs)


def test_patch_deploys_a_new_revision_and_stops_the_old_server(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project)
    first = control_plane.wait(dep["id"], dep["latest_revision_id"])
    old_url = control_plane.deployment(dep["id"])["source_config"]["custom_url"]
    old_pid = _server_pid(control_plane, dep["id"], first["id"])
    with _sdk(old_url) as client:
        thread = client.threads.create()
        client.runs.wait(thread["thread_id"], "agent", input={"text": "kept"})

    write_project(project, "v2")
    patched = control_plane.http.patch(f"/v2/deployments/{dep['id']}", json={
        "source_revision_config": {"langgraph_config_path": "langgraph.json"},
        "secrets": [{"name": "MY_SECRET", "value": "new"}],
    })
    assert patched.status_code == 200, patched.text
    second_id = patched.json()["latest_revision_id"]
    assert second_id != first["id"] and patched.json()["active_revision_id"] == first["id"]
    assert control_plane.wait(dep["id"], second_id)["status"] == "DEPLOYED"

    dep = control_plane.deployment(dep["id"])
    new_url = dep["source_config"]["custom_url"]
    assert dep["active_revision_id"] == second_id and new_url != old_url
    assert _run(new_url) == {"text": "hi?", "version": "v2", "secret": "new"}
    assert not pid_alive(old_pid)  # stopped before the revision was marked DEPLOYED
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{old_url}/ok")
    # The deployment's data outlives the revision: the thread of v1 is there in v2.
    with _sdk(new_url) as client:
        state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["text"] == "kept!"
    revisions = control_plane.http.get(f"/v2/deployments/{dep['id']}/revisions").json()
    assert [r["id"] for r in revisions["resources"]] == [second_id, first["id"]]


def test_a_broken_revision_fails_to_build_and_the_old_one_keeps_serving(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project)
    control_plane.wait(dep["id"], dep["latest_revision_id"])
    url = control_plane.deployment(dep["id"])["source_config"]["custom_url"]

    write_project(project, "v2", broken=True)
    patched = control_plane.http.patch(f"/v2/deployments/{dep['id']}",
                                       json={"source_revision_config": {"langgraph_config_path": "langgraph.json"}})
    broken = control_plane.wait(dep["id"], patched.json()["latest_revision_id"])
    assert broken["status"] == "BUILD_FAILED"
    assert "nowhere" in broken["status_message"], broken
    logs = control_plane.http.get(f"/v2/deployments/{dep['id']}/revisions/{broken['id']}/logs").json()
    assert "Traceback" in logs["build_log"] and logs["server_log"] == ""
    after = control_plane.deployment(dep["id"])
    assert after["active_revision_id"] == dep["latest_revision_id"]
    assert after["source_config"]["custom_url"] == url
    assert _run(url)["version"] == "v1"

    missing = control_plane.http.patch(f"/v2/deployments/{dep['id']}", json={
        "source_revision_config": {"langgraph_config_path": "sub/langgraph.json"}})
    failed = control_plane.wait(dep["id"], missing.json()["latest_revision_id"])
    assert failed["status"] == "BUILD_FAILED"
    assert failed["status_message"] == "no sub/langgraph.json in the source"


def test_a_server_that_cannot_start_is_deploy_failed(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    (project / "agent.py").write_text(
        (project / "agent.py").read_text() + "\nimport sys\nif 'serve' in sys.argv: sys.exit(3)\n")
    dep = control_plane.create(project)
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    assert revision["status"] == "DEPLOY_FAILED"
    assert "exited with code" in revision["status_message"]
    assert control_plane.deployment(dep["id"])["active_revision_id"] is None


def test_git_source_at_a_ref_records_the_commit(
    control_plane: ControlPlaneServer, tmp_path: Path
) -> None:
    from .conftest import git, git_project

    repo = git_project(tmp_path / "repo", "v1")
    git(repo, "tag", "v1.0")
    first_sha = git(repo, "rev-parse", "HEAD")
    git_project(repo, "v2")
    dep = control_plane.create(f"file://{repo}", source="github", repo_ref="refs/tags/v1.0")
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    assert revision["status"] == "DEPLOYED"
    assert revision["source_revision_config"]["repo_commit_sha"] == first_sha
    dep = control_plane.deployment(dep["id"])
    assert dep["source_revision_config"]["repo_commit_sha"] == first_sha
    assert _run(dep["source_config"]["custom_url"])["version"] == "v1"

    bad = control_plane.http.patch(f"/v2/deployments/{dep['id']}",
                                   json={"source_revision_config": {"repo_ref": "no-such-branch"}})
    failed = control_plane.wait(dep["id"], bad.json()["latest_revision_id"])
    assert failed["status"] == "BUILD_FAILED" and "no-such-branch" in failed["status_message"]


def test_redeploy_runs_the_code_of_an_earlier_revision(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project)
    first = control_plane.wait(dep["id"], dep["latest_revision_id"])
    write_project(project, "v2")
    second = control_plane.http.patch(f"/v2/deployments/{dep['id']}", json={
        "source_revision_config": {"langgraph_config_path": "langgraph.json"}}).json()
    control_plane.wait(dep["id"], second["latest_revision_id"])

    response = control_plane.http.post(f"/v2/deployments/{dep['id']}/revisions/{first['id']}/redeploy")
    assert response.status_code == 200, response.text
    third = response.json()["latest_revision_id"]
    assert third not in (first["id"], second["latest_revision_id"])
    assert control_plane.wait(dep["id"], third)["status"] == "DEPLOYED"
    assert _run(control_plane.deployment(dep["id"])["source_config"]["custom_url"])["version"] == "v1"


def test_delete_stops_the_server_and_removes_its_data(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project)
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    pid = _server_pid(control_plane, dep["id"], revision["id"])
    directory = control_plane.settings.data_dir / "deployments" / dep["id"]
    assert (directory / "data" / "graphrun.sqlite").exists()

    assert control_plane.http.delete(f"/v2/deployments/{dep['id']}").status_code == 204
    assert not pid_alive(pid) and not directory.exists()
    assert control_plane.http.get(f"/v2/deployments/{dep['id']}").status_code == 404


def test_delete_interrupts_a_revision_in_progress(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    (project / "agent.py").write_text("import time\ntime.sleep(30)\n" + (project / "agent.py").read_text())
    dep = control_plane.create(project)
    deadline = time.monotonic() + 10
    while control_plane.http.get(
            f"/v2/deployments/{dep['id']}/revisions/{dep['latest_revision_id']}").json()["status"] != "BUILDING":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    started = time.monotonic()
    assert control_plane.http.delete(f"/v2/deployments/{dep['id']}").status_code == 204
    assert time.monotonic() - started < 5
    assert not (control_plane.settings.data_dir / "deployments" / dep["id"]).exists()


def test_a_crashed_server_is_started_again(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    dep = control_plane.create(project)
    revision = control_plane.wait(dep["id"], dep["latest_revision_id"])
    pid = _server_pid(control_plane, dep["id"], revision["id"])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while True:
        url = control_plane.deployment(dep["id"])["source_config"]["custom_url"]
        try:
            if _server_pid(control_plane, dep["id"], revision["id"]) != pid and \
                    httpx.get(f"{url}/ok").status_code == 200:
                break
        except (httpx.HTTPError, OSError, ValueError):
            pass
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert _run(url)["version"] == "v1"
    logs = control_plane.http.get(f"/v2/deployments/{dep['id']}/revisions/{revision['id']}/logs").json()
    assert "exited" in logs["deploy_log"]


def test_a_restarted_control_plane_adopts_live_servers_and_restarts_dead_ones(
    start_control_plane: Callable[..., ControlPlaneServer], tmp_path: Path
) -> None:
    first = start_control_plane(stop_servers_on_exit=False)
    kept = first.create(write_project(tmp_path / "kept"), "kept")
    lost = first.create(write_project(tmp_path / "lost"), "lost")
    kept_rev = first.wait(kept["id"], kept["latest_revision_id"])
    lost_rev = first.wait(lost["id"], lost["latest_revision_id"])
    kept_url = first.deployment(kept["id"])["source_config"]["custom_url"]
    lost_url = first.deployment(lost["id"])["source_config"]["custom_url"]
    kept_pid = _server_pid(first, kept["id"], kept_rev["id"])
    lost_pid = _server_pid(first, lost["id"], lost_rev["id"])
    first.stop()
    assert pid_alive(kept_pid) and httpx.get(f"{kept_url}/ok").status_code == 200
    os.killpg(lost_pid, signal.SIGKILL)
    _wait_gone(lost_pid)

    second = start_control_plane()
    assert _server_pid(second, kept["id"], kept_rev["id"]) == kept_pid  # adopted, not restarted
    assert second.deployment(kept["id"])["source_config"]["custom_url"] == kept_url
    assert _run(kept_url)["version"] == "v1"
    deadline = time.monotonic() + 20
    while not _answers(lost_url):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert second.deployment(lost["id"])["source_config"]["custom_url"] == lost_url  # same port
    assert _run(lost_url)["version"] == "v1"
    second.stop()  # stop_servers_on_exit: both servers end with it...
    _wait_gone(kept_pid)
    third = start_control_plane()  # ...and the next start brings them back
    deadline = time.monotonic() + 20
    while not _answers(kept_url) or not _answers(lost_url):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert third.deployment(kept["id"])["source_config"]["custom_url"] == kept_url


def test_a_revision_in_progress_resumes_after_a_restart(
    start_control_plane: Callable[..., ControlPlaneServer], project: Path
) -> None:
    first = start_control_plane()
    marker = project / "slow"
    marker.write_text("")
    (project / "agent.py").write_text(  # the build check waits while the marker exists
        f"import os, time\nwhile os.path.exists({str(marker)!r}):\n    time.sleep(0.05)\n"
        + (project / "agent.py").read_text())
    dep = first.create(project)
    first.stop()
    marker.unlink()
    second = start_control_plane()
    assert second.wait(dep["id"], dep["latest_revision_id"])["status"] == "DEPLOYED"


def test_revisions_queued_behind_a_build_are_skipped_but_the_newest(
    control_plane: ControlPlaneServer, project: Path
) -> None:
    marker, holding = project / "hold", project / "holding"
    marker.write_text("")
    original = (project / "agent.py").read_text()
    (project / "agent.py").write_text(  # this revision's build check says so, then waits for the marker
        f"import os, pathlib, time\npathlib.Path({str(holding)!r}).touch()\n"
        f"while os.path.exists({str(marker)!r}):\n    time.sleep(0.05)\n" + original)
    dep = control_plane.create(project)
    path = f"/v2/deployments/{dep['id']}"
    # Its build has copied the source once its check runs: rewriting agent.py while BUILDING
    # but before that copy raced it (a half-written copy failed the build under load).
    deadline = time.monotonic() + 30
    while not holding.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert control_plane.http.get(f"{path}/revisions/{dep['latest_revision_id']}").json()["status"] == "BUILDING"
    (project / "agent.py").write_text(original)
    again = {"source_revision_config": {"langgraph_config_path": "langgraph.json"}}
    middle = control_plane.http.patch(path, json=again).json()["latest_revision_id"]
    newest = control_plane.http.patch(path, json=again).json()["latest_revision_id"]
    marker.unlink()
    assert control_plane.wait(dep["id"], newest)["status"] == "DEPLOYED"
    skipped = control_plane.http.get(f"{path}/revisions/{middle}").json()
    assert skipped["status"] == "SKIPPED" and skipped["status_message"] == f"superseded by revision {newest}"
    assert control_plane.wait(dep["id"], dep["latest_revision_id"])["status"] == "DEPLOYED"
    statuses = [r["status"] for r in control_plane.http.get(f"{path}/revisions").json()["resources"]]
    assert statuses == ["DEPLOYED", "SKIPPED", "DEPLOYED"]
    assert control_plane.deployment(dep["id"])["active_revision_id"] == newest


def test_a_port_taken_before_the_server_binds_is_retried(
    control_plane: ControlPlaneServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    real = processes.free_port
    ports = iter([taken.getsockname()[1]])
    monkeypatch.setattr(processes, "free_port", lambda host, preferred=None: next(ports, None) or real(host))
    try:
        dep = control_plane.create(project)
        assert control_plane.wait(dep["id"], dep["latest_revision_id"])["status"] == "DEPLOYED"
    finally:
        taken.close()
    logs = control_plane.http.get(
        f"/v2/deployments/{dep['id']}/revisions/{dep['latest_revision_id']}/logs").json()
    assert "was taken meanwhile; trying another" in logs["deploy_log"]
    assert "cannot listen on" in logs["server_log"]
