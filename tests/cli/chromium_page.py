"""Open a page in headless Chromium with the network off and report what happened, through the
DevTools protocol over a WebSocket client written with the standard library.

``open_page(url)`` starts a fresh Chromium (its own throwaway profile), turns the network off
(a host resolver that resolves nothing, a proxy that is not there, and DevTools' offline
emulation), loads ``url``, waits for the load event, and returns a ``PageVisit``: console
errors, uncaught exceptions, log entries of level error (a Content-Security-Policy refusal is
one), failed requests, requests that left ``file:``/``data:``, the value of an expression
evaluated in the page, and a PNG screenshot. ``decode_png`` reads the screenshot's pixels.
Used by tests/cli/test_cli_report_browser.py and scripts/readme_pictures.py.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib
from dataclasses import dataclass, field

import numpy as np

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageVisit:
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    value: object = None
    screenshot: bytes = b""

    def problems(self) -> list[str]:
        return [*self.console_errors, *self.exceptions, *self.log_errors,
                *self.failed_requests, *self.outside_requests]


class _WebSocket:
    """Just enough of RFC 6455 for one DevTools session: text frames, masked from us."""

    def __init__(self, url: str, timeout: float) -> None:
        match = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket"
                           f"\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("DevTools closed the connection during the handshake")
            response += chunk
        head, self.buffer = response.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"no WebSocket upgrade: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        header = bytearray([0x81])
        if len(data) < 126:
            header.append(0x80 | len(data))
        elif len(data) < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(bytes(header) + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the WebSocket")
            if opcode in (0x9, 0xA):  # ping, pong: nothing to do for a short session
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class _Session:
    def __init__(self, socket_url: str, timeout: float) -> None:
        self.ws = _WebSocket(socket_url, timeout)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {timeout} s")
            self.events.append(json.loads(self.ws.receive()))

    def drain(self, seconds: float) -> None:
        """Collect the events that arrive in the next ``seconds``."""
        self.ws.sock.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.ws.receive()))
        except TimeoutError:
            pass


def open_page(url: str, *, width: int = 1280, height: int = 2000, scale: float = 0.5,
              expression: str = "null", timeout: float = 30.0, settle_s: float = 0.0
              ) -> PageVisit:
    """Load ``url`` in a fresh headless Chromium with the network off; see the module text.
    ``settle_s``: how long to keep collecting events after the expression (what it set off:
    a click's navigation, a form's submission)."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium on PATH")
    profile = tempfile.mkdtemp(prefix="graphtool-chromium-")
    process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}",
                                f"--window-size={width},{height}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port = _devtools_port(process, timeout)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list",  # noqa: S310
                                    timeout=timeout) as answer:
            targets = json.load(answer)
        page = next(t for t in targets if t.get("type") == "page")
        session = _Session(page["webSocketDebuggerUrl"], timeout)
        try:
            return _visit(session, url, width, height, scale, expression, timeout, settle_s)
        finally:
            session.ws.close()
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)


def _devtools_port(process: subprocess.Popen, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stderr.readline().decode(errors="replace")
        if not line and process.poll() is not None:
            break
        seen.append(line)
        match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
        if match:
            return int(match.group(1))
    raise RuntimeError("chromium did not start DevTools:\n" + "".join(seen[-20:]))


def _visit(session: _Session, url: str, width: int, height: int, scale: float,
           expression: str, timeout: float, settle_s: float) -> PageVisit:
    for domain in ("Page", "Runtime", "Log", "Network"):
        session.call(f"{domain}.enable")
    session.call("Network.emulateNetworkConditions", offline=True, latency=0,
                 downloadThroughput=-1, uploadThroughput=-1)
    session.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                 deviceScaleFactor=1, mobile=False)
    session.call("Page.navigate", url=url)
    session.wait_for("Page.loadEventFired", timeout)
    session.drain(0.5)
    visit = PageVisit()
    evaluated = session.call("Runtime.evaluate", expression=expression, returnByValue=True)
    visit.value = evaluated.get("result", {}).get("value")
    if settle_s:
        session.drain(settle_s)
    shot = session.call("Page.captureScreenshot", format="png", clip={
        "x": 0, "y": 0, "width": width, "height": height, "scale": scale})
    visit.screenshot = base64.b64decode(shot["data"])
    for event in session.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            visit.console_errors.append(" ".join(str(a.get("value", a.get("description")))
                                                 for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            visit.exceptions.append(details.get("exception", {}).get("description")
                                    or details.get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            visit.log_errors.append(params["entry"].get("text", ""))
        elif method == "Network.loadingFailed":
            visit.failed_requests.append(f"{params.get('errorText')} "
                                         f"({params.get('blockedReason', '')})")
        elif method == "Network.requestWillBeSent":
            requested = params.get("request", {}).get("url", "")
            if not requested.startswith(("file:", "data:", "about:")):
                visit.outside_requests.append(f"request to {requested}")
    return visit


def decode_png(data: bytes) -> np.ndarray:
    """The RGB(A) pixels of an 8-bit, non-interlaced PNG as a (height, width, channels) array."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4, 0: 1, 4: 2}[colour]
    if depth != 8 or interlace:
        raise ValueError("only 8-bit non-interlaced PNGs")
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), np.uint8)
    stride = width * channels
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), np.int32)
    previous = np.zeros(stride, np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            current = line
        elif kind == 2:
            current = (line + previous) & 0xFF
        elif kind == 1:
            current = _sub(line, channels)
        else:
            current = _slow_row(kind, line, previous, channels)
        out[y] = current
        previous = current
    return out.reshape(height, width, channels).astype(np.uint8)


def _sub(line: np.ndarray, channels: int) -> np.ndarray:
    by_pixel = line.reshape(-1, channels)
    return (np.cumsum(by_pixel, axis=0) & 0xFF).reshape(-1)


def _slow_row(kind: int, line: np.ndarray, previous: np.ndarray, channels: int) -> np.ndarray:
    current = [0] * len(line)
    up = previous.tolist()
    for i, value in enumerate(line.tolist()):
        left = current[i - channels] if i >= channels else 0
        upper_left = up[i - channels] if i >= channels else 0
        if kind == 3:
            predicted = (left + up[i]) // 2
        else:  # Paeth
            p = left + up[i] - upper_left
            pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - upper_left)
            predicted = left if pa <= pb and pa <= pc else up[i] if pb <= pc else upper_left
        current[i] = (value + predicted) & 0xFF
    return np.array(current, np.int32)
