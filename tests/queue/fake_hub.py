"""A tiny in-memory Hugging Face Hub speaking the HTTP subset our code uses.

The real ``huggingface_hub.HfApi`` is pointed at it with ``endpoint=``; nothing of
the client is patched.  Served endpoints (``{kind}`` is ``datasets`` or ``models``):

* ``GET  /api/{kind}/{repo}[/revision/{rev}]`` — repo info with the head ``sha``
  (models also get ``siblings``, ``cardData``, ``config`` and ``safetensors``);
* ``GET  /api/{kind}/{repo}/tree/{rev}[/{path}]`` — tree with blob ``oid``s;
* ``POST /api/{kind}/{repo}/preupload/{rev}`` — every file is "regular";
* ``POST /api/{kind}/{repo}/commit/{rev}`` — NDJSON; ``412`` when ``parentCommit``
  is not the head (what the Hub does when someone committed meanwhile); with
  ``?create_pr=1`` the files go to a pull request (``FakeRepo.pull_requests``), main unchanged;
* ``HEAD|GET /{kind}/{repo}/resolve/{rev}/{path}`` (models: ``/{repo}/resolve/…``).

Writes need ``Authorization: Bearer <token>`` when the hub has a token; a wrong
token gets ``401``.  Every request is counted in ``requests_seen`` for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class FakeRepo:
    files: dict[str, bytes] = field(default_factory=dict)
    head: str = field(default_factory=lambda: uuid.uuid4().hex + "00000000")
    # commit sha -> files at that commit (so downloads at a pinned sha work)
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    #: Pull requests opened with ``create_pr``: their title, description and files (main untouched).
    pull_requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.commits[self.head] = dict(self.files)

    def commit(self, files: dict[str, bytes]) -> str:
        self.files = files
        self.head = uuid.uuid4().hex + "00000000"
        self.commits[self.head] = dict(files)
        return self.head

    def at(self, revision: str) -> dict[str, bytes] | None:
        if revision == "main":
            return self.files
        return self.commits.get(revision)


class FakeHub:
    """``with FakeHub() as hub: HfApi(endpoint=hub.url)``."""

    def __init__(self, *, token: str | None = None) -> None:
        self.token = token
        self.repos: dict[tuple[str, str], FakeRepo] = {}
        self.lock = threading.Lock()
        self.requests_seen: Counter[str] = Counter()
        self.conflicts = 0  # commits refused with 412
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_repo(
        self, kind: str, repo_id: str, files: dict[str, bytes] | None = None, **info: Any
    ) -> FakeRepo:
        repo = FakeRepo(files=dict(files or {}), info=info)
        self.repos[(kind, repo_id)] = repo
        return repo


def _handler_for(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        pass

    Handler.hub = hub
    return Handler


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    body: bytes = b""
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle on, each answer waits ~40 ms.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- routing -----------------------------------------------------------------

    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        # Read the whole body first so that every answer keeps the connection usable.
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        query = parse_qs(url.query)
        if parts[0] == "api" and len(parts) >= 4 and parts[1] in {"datasets", "models"}:
            kind, repo_id, rest = parts[1], f"{parts[2]}/{parts[3]}", parts[4:]
            self.hub.requests_seen[f"{method} {rest[0] if rest else 'info'}"] += 1
            self._api(method, kind, repo_id, rest, query)
            return
        if parts[0] == "datasets" and len(parts) >= 5 and parts[3] == "resolve":
            self._resolve(method, "datasets", f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:]))
            return
        if len(parts) >= 4 and parts[2] == "resolve":
            self._resolve(method, "models", f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:]))
            return
        self._error(404, "Not found", "EntryNotFound")

    def _api(
        self, method: str, kind: str, repo_id: str, rest: list[str], query: dict[str, list[str]]
    ) -> None:
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
        elif method == "GET" and (not rest or rest[0] == "revision"):
            self._info(repo_id, repo, rest[1] if len(rest) > 1 else "main")
        elif method == "GET" and rest[0] == "tree":
            self._tree(repo, rest[1], "/".join(rest[2:]))
        elif method == "POST" and rest[0] == "preupload" and self._authorized():
            self._preupload(repo)
        elif method == "POST" and rest[0] == "commit" and self._authorized():
            if query.get("create_pr", ["0"])[0] in {"1", "true", "True"}:
                self._pull_request(kind, repo_id, repo)
            else:
                self._commit(kind, repo_id, repo)
        elif method == "POST":
            pass  # _authorized() answered 401
        else:
            self._error(404, "Not found", "EntryNotFound")

    # -- endpoints ---------------------------------------------------------------

    def _info(self, repo_id: str, repo: FakeRepo, revision: str) -> None:
        with self.hub.lock:
            files = repo.at(revision)
            sha = repo.head if revision == "main" else revision
        if files is None:
            self._error(404, "Revision not found", "RevisionNotFound")
            return
        body = {"id": repo_id, "sha": sha, "private": False, **repo.info}
        body["siblings"] = [{"rfilename": p, "size": len(d)} for p, d in sorted(files.items())]
        self._json(200, body)

    def _tree(self, repo: FakeRepo, revision: str, folder: str) -> None:
        with self.hub.lock:
            files = repo.at(revision)
        if files is None:
            self._error(404, "Revision not found", "RevisionNotFound")
            return
        prefix = f"{folder}/" if folder else ""
        entries = [
            {"type": "file", "path": p, "size": len(d), "oid": git_blob_id(d)}
            for p, d in sorted(files.items())
            if p.startswith(prefix)
        ]
        folders = sorted({p.rsplit("/", 1)[0] for p in files if "/" in p and p.startswith(prefix)})
        entries += [
            {"type": "directory", "path": f, "oid": git_blob_id(f.encode()), "size": 0} for f in folders
        ]
        self._json(200, entries)

    def _preupload(self, repo: FakeRepo) -> None:
        payload = json.loads(self._body())
        with self.hub.lock:
            files = dict(repo.files)
        answer = [
            {
                "path": f["path"],
                "uploadMode": "regular",
                "shouldIgnore": False,
                "oid": git_blob_id(files[f["path"]]) if f["path"] in files else None,
            }
            for f in payload["files"]
        ]
        self._json(200, {"files": answer})

    def _commit(self, kind: str, repo_id: str, repo: FakeRepo) -> None:
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        with self.hub.lock:
            parent = header.get("parentCommit")
            if parent is not None and parent != repo.head:
                self.hub.conflicts += 1
                self._error(412, "A commit has happened since. Please refresh and try again.", None)
                return
            files = dict(repo.files)
            for item in lines:
                value = item["value"]
                if item["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif item["key"] == "deletedFile":
                    if value["path"] not in files:
                        self._error(404, "A file with this name doesn't exist", "EntryNotFound")
                        return
                    del files[value["path"]]
            sha = repo.commit(files)
        self._json(200, {"commitUrl": f"{self.hub.url}/{kind}/{repo_id}/commit/{sha}", "commitOid": sha})

    def _pull_request(self, kind: str, repo_id: str, repo: FakeRepo) -> None:
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        files = {
            item["value"]["path"]: base64.b64decode(item["value"]["content"])
            for item in lines
            if item["key"] == "file"
        }
        with self.hub.lock:
            number = len(repo.pull_requests) + 1
            repo.pull_requests.append(
                {"title": header.get("summary"), "description": header.get("description"), "files": files}
            )
        self.hub.requests_seen["POST pull request"] += 1
        self._json(
            200,
            {
                "commitUrl": f"{self.hub.url}/{kind}/{repo_id}/commit/pr{number}",
                "commitOid": uuid.uuid4().hex + "00000000",
                "pullRequestUrl": f"{self.hub.url}/{repo_id}/discussions/{number}",
            },
        )

    def _resolve(self, method: str, kind: str, repo_id: str, revision: str, path: str) -> None:
        self.hub.requests_seen[f"{method} resolve"] += 1
        repo = self.hub.repos.get((kind, repo_id))
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
            return
        with self.hub.lock:
            files = repo.at(revision)
            sha = repo.head if revision == "main" else revision
        if files is None or path not in files:
            self._error(404, "Entry not found", "EntryNotFound")
            return
        data = files[path]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", f'"{git_blob_id(data)}"')
        self.send_header("X-Repo-Commit", sha)
        self.end_headers()
        if method == "GET":
            self.wfile.write(data)

    # -- helpers -----------------------------------------------------------------

    def _authorized(self) -> bool:
        if self.hub.token is None or self.headers.get("Authorization") == f"Bearer {self.hub.token}":
            return True
        self._error(401, "Invalid credentials in Authorization header", None)
        return False

    def _body(self) -> bytes:
        return self.body

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None) -> None:
        data = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Error-Message", message)
        if code:
            self.send_header("X-Error-Code", code)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
