"""Real servers for the cluster and chaos tests: ``mao-embed serve`` in a subprocess,
``redis-server`` and ``nginx`` (Debian packages, installed by ``scripts/bootstrap``), each
started on a free port in a temporary directory and stopped afterwards; never the system
services."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from backend_fakes import PAGE_ORIGIN


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on {port}")


class MaoAddress:
    """Where agents and pages reach a mao-embed backend on ``port`` (itself or nginx)."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/sdk"


class ServeProcess(MaoAddress):
    """``mao-embed serve`` in a subprocess on ``port`` (a restart reuses it), its audit log in
    ``db``. ``announced``: a pattern its "serving on" line must match (by default the port)."""

    def __init__(
        self, tmp: Path, port: int, secret: str, db: Path, args: tuple[str, ...] = (),
        announced: str | None = None,
    ) -> None:
        self.port = port
        self.db = db
        self._tmp = tmp
        self._secret = secret
        self._args = args
        self._announced = announced or rf":{port}\b"
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> ServeProcess:
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        env = {
            **os.environ,
            "MAO_EMBED_SECRET": self._secret,
            "MAO_EMBED_ORIGINS": PAGE_ORIGIN,
            "XDG_CONFIG_HOME": str(self._tmp / "config"),
            "XDG_STATE_HOME": str(self._tmp / "state"),
            # The test needs the server, not a fresh asset build.
            "MAO_EMBED_SKIP_BUILD": "1",
        }
        env.pop("MAO_EMBED_API_KEY", None)
        env.pop("MAO_EMBED_REDIS_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mao_embed.cli", "serve", "--host", "127.0.0.1",
             "--port", str(self.port), "--db", str(self.db), *self._args],
            env=env, stderr=subprocess.PIPE, text=True,
        )

    def wait_ready(self) -> ServeProcess:
        assert self.process is not None and self.process.stderr is not None
        deadline = time.monotonic() + 180
        line = ""
        while "serving on" not in line:
            line = self.process.stderr.readline()
            assert line or self.process.poll() is None, "serve exited before announcing"
            assert time.monotonic() < deadline, "serve did not start"
        assert re.search(self._announced, line), line
        return self

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=15)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


class RedisServer:
    """``redis-server`` without persistence: a restart loses every key, the worst case an
    instance must recover from."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (scripts/bootstrap installs it)")
        self._binary = binary
        self._directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [self._binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self._directory), "--logfile",
             str(self._directory / "redis.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.process, "redis-server")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


class Nginx(MaoAddress):
    """nginx as the load balancer in front of instances, round robin, WebSocket upgrade on
    ``/ws/`` (the README's example configuration)."""

    def __init__(self, directory: Path, upstreams: list[int]) -> None:
        binary = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                           else None)
        if binary is None:
            pytest.skip("nginx is not installed (scripts/bootstrap installs it)")
        self._binary = binary
        self._directory = directory
        self.port = free_port()
        servers = "\n".join(f"        server 127.0.0.1:{port};" for port in upstreams)
        user = "user root;" if os.geteuid() == 0 else ""
        (directory / "nginx.conf").write_text(f"""
{user}
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream mao_embed {{
{servers}
    }}
    upstream mao_embed_mcp {{
        ip_hash;
{servers}
    }}
    server {{
        listen 127.0.0.1:{self.port};
        location /ws/ {{
            proxy_pass http://mao_embed;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_read_timeout 1h;
        }}
        location /mcp {{
            proxy_pass http://mao_embed_mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_buffering off;
        }}
        location / {{
            proxy_pass http://mao_embed;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }}
    }}
}}
""")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Nginx:
        self.process = subprocess.Popen(
            [self._binary, "-p", str(self._directory), "-c", str(self._directory / "nginx.conf"),
             "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _wait_for_port(self.port, self.process, "nginx")
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
