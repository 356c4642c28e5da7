"""A fake Hugging Face Hub on loopback: the endpoints ``push_to_hub`` calls, and file reads back.

It answers ``huggingface_hub.HfApi(endpoint=...)`` for ``create_repo``, ``preupload`` (every file
``"regular"``, so its content is inlined in the commit), ``create_commit``, ``create_branch``,
``create_tag``, ``validate-yaml`` (the card's header), and the reads back: ``hf_hub_download`` (``resolve``) at a branch, tag or commit, and the repo info, tree and paths-info
``datasets.load_dataset`` lists files with. It binds
127.0.0.1 on a free port, keeps every repo in memory, and stops when its ``with`` block ends.
Any token is accepted except one starting with ``bad``, which is refused with a 401.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

_API = re.compile(r"^/api/(datasets|models|spaces)/([^/]+/[^/]+)/(preupload|commit|tag|branch)/(.+)$")
_READ = re.compile(r"^/api/(datasets)/([^/]+/[^/]+)(?:/(revision|tree|paths-info)/([^/]+)(/.*)?)?$")
_RESOLVE = re.compile(r"^/(?:(datasets|spaces)/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


@dataclass
class FakeRepo:
    """One repo: its commits (each a full snapshot of path -> bytes) and its refs."""

    private: bool
    commits: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"0" * 40: {}})
    refs: dict[str, str] = field(default_factory=lambda: {"main": "0" * 40})
    tags: set[str] = field(default_factory=set)
    summaries: list[str] = field(default_factory=list)

    def files(self, revision: str = "main") -> dict[str, bytes]:
        """The files at a branch, tag or commit id."""
        return self.commits[self.refs.get(revision, revision)]


@dataclass
class FakeHub:
    """The running fake hub: its ``url`` (the endpoint to pass) and its ``repos`` by id."""

    url: str
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                  head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {"Content-Type": "application/json"}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode())

        def _error(self, status: int, message: str) -> None:
            self._send(status, json.dumps({"error": message}).encode(),
                       {"Content-Type": "application/json", "X-Error-Message": message})

        def _body(self) -> bytes:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            return gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            path = unquote(urlsplit(self.path).path)
            if self._api_read(path):  # paths-info: a read, though a POST
                return None
            auth = self.headers.get("Authorization") or ""
            if not auth.startswith("Bearer ") or auth.startswith("Bearer bad"):  # a token "bad..." is refused
                return self._error(401, "Invalid credentials in Authorization header")
            body = self._body()
            if path == "/api/repos/create":
                spec = json.loads(body)
                repo_id = f"{spec['organization']}/{spec['name']}" if spec.get("organization") else spec["name"]
                with hub.lock:
                    if repo_id in hub.repos:
                        return self._send(409, json.dumps({"error": "You already created this dataset repo",
                                                           "url": f"{hub.url}/datasets/{repo_id}"}).encode())
                    hub.repos[repo_id] = FakeRepo(private=bool(spec.get("private")) or spec.get("visibility") == "private")
                return self._json(200, {"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id})
            if path == "/api/validate-yaml":  # the card's metadata, checked before a commit that changes README.md
                content = json.loads(body)["content"]
                parts = content.split("---\n")
                if not content.startswith("---\n") or len(parts) < 3:
                    return self._send(400, json.dumps({"errors": [{"message": "no YAML header"}]}).encode())
                try:
                    import yaml  # huggingface_hub depends on PyYAML

                    yaml.safe_load(parts[1])
                except Exception as exc:  # boundary: any parse failure is the client's bad YAML, answered 400
                    return self._send(400, json.dumps({"errors": [{"message": str(exc)}]}).encode())
                return self._json(200, {"warnings": []})
            match = _API.match(path)
            if match is None:
                return self._error(404, f"no such endpoint {path}")
            _kind, repo_id, action, revision = match.groups()
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, f"Repository Not Found for url: {path}")
            if action == "preupload":
                files = json.loads(body)["files"]
                return self._json(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                                   "oid": None} for f in files]})
            if action == "commit":
                with hub.lock:
                    snapshot = dict(repo.files(revision))
                    summary = ""
                    for line in body.decode().splitlines():
                        if not line.strip():
                            continue
                        item = json.loads(line)
                        if item["key"] == "header":
                            summary = item["value"].get("summary", "")
                        elif item["key"] == "file":
                            snapshot[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                        elif item["key"] == "deletedFile":
                            snapshot.pop(item["value"]["path"], None)
                        else:
                            return self._error(400, f"fake hub: unsupported commit operation {item['key']!r}")
                    oid = hashlib.sha1(repr((repo.refs.get(revision, revision), sorted(snapshot.items()))).encode()
                                       ).hexdigest()
                    repo.commits[oid] = snapshot
                    repo.refs[revision] = oid
                    repo.summaries.append(summary)
                return self._json(200, {"commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{oid}", "commitOid": oid,
                                        "pullRequestUrl": None})
            spec = json.loads(body or b"{}")
            with hub.lock:
                if action == "tag":
                    if spec["tag"] in repo.refs:
                        return self._error(409, f"Tag {spec['tag']} already exists")
                    repo.refs[spec["tag"]] = repo.refs.get(revision, revision)
                    repo.tags.add(spec["tag"])
                else:  # branch: the name is in the path, the start point in the body
                    start = spec.get("startingPoint") or "main"
                    repo.refs[revision] = repo.refs.get(start, start)
            return self._json(200, {})

        def _resolve(self, head: bool) -> None:
            match = _RESOLVE.match(unquote(urlsplit(self.path).path))
            repo = hub.repos.get(match.group(2)) if match else None
            if match is None or repo is None:
                return self._error(404, "Repository Not Found")
            revision, filename = match.group(3), match.group(4)
            if revision not in repo.refs and revision not in repo.commits:
                return self._error(404, f"Revision Not Found: {revision}")
            oid = repo.refs.get(revision, revision)
            content = repo.commits[oid].get(filename)
            if content is None:
                return self._error(404, f"Entry Not Found: {filename}")
            etag = hashlib.sha1(content).hexdigest()
            self._send(200, content, {"Content-Type": "application/octet-stream", "X-Repo-Commit": oid,
                                      "ETag": f'"{etag}"'}, head=head)

        def _entries(self, repo: FakeRepo, oid: str, under: str, recursive: bool) -> list[dict[str, Any]]:
            files = repo.commits[oid]
            prefix = f"{under}/" if under else ""
            out: dict[str, dict[str, Any]] = {}
            for path, content in sorted(files.items()):
                if not path.startswith(prefix):
                    continue
                rest = path[len(prefix):].split("/")
                for depth in range(1, len(rest)):  # the folders on the way
                    folder = prefix + "/".join(rest[:depth])
                    if recursive or depth == 1:
                        out.setdefault(folder, {"type": "directory", "path": folder, "size": 0,
                                                "oid": hashlib.sha1(folder.encode()).hexdigest()})
                if recursive or len(rest) == 1:
                    out[path] = {"type": "file", "path": path, "size": len(content),
                                 "oid": hashlib.sha1(content).hexdigest()}
            return list(out.values())

        def _api_read(self, path: str) -> bool:
            """The repo info, tree and paths-info reads ``datasets.load_dataset`` makes; False: not one."""
            match = _READ.match(path)
            if match is None:
                return False
            repo_id, action, revision, under = match.group(2), match.group(3), match.group(4), match.group(5) or ""
            repo = hub.repos.get(repo_id)
            revision = unquote(revision or "main")
            if repo is None or (revision not in repo.refs and revision not in repo.commits):
                self._error(404, "Repository Not Found")
                return True
            oid = repo.refs.get(revision, revision)
            if action == "tree":
                recursive = "recursive=true" in (urlsplit(self.path).query or "").lower()
                self._json(200, self._entries(repo, oid, under.strip("/"), recursive))
            elif action == "paths-info":
                from urllib.parse import parse_qs

                wanted = set(parse_qs(self._body().decode()).get("paths", []))
                entries = self._entries(repo, oid, "", True)
                self._json(200, [e for e in entries if e["path"] in wanted])
            else:
                self._json(200, {"id": repo_id, "sha": oid, "private": repo.private, "disabled": False,
                                 "siblings": [{"rfilename": f} for f in sorted(repo.commits[oid])], "tags": []})
            return True

        def do_GET(self) -> None:  # noqa: N802
            if not self._api_read(unquote(urlsplit(self.path).path)):
                self._resolve(head=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._resolve(head=True)

    return Handler


@contextmanager
def fake_hub() -> Iterator[FakeHub]:
    """Run the fake hub on 127.0.0.1 (a free port) for the ``with`` block; yields it."""
    hub = FakeHub(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
