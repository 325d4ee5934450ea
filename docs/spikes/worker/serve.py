"""Two localhost origins for the worker spike.

PAGE (default 8801): serves ./pages/ ; the response CSP comes from the `csp` query parameter
  (URL-encoded), so one page file can be tried under several policies.
BACKEND (default 8802): serves the built SDK assets under /sdk/<build>/ (the SDK_DIR of
  backend/mao_embed/assets.py), the loader sources under /loader/, with
  `Access-Control-Allow-Origin: *`; the same files under /nocors/... without any CORS header.
Run (from this folder, the checkout's venv): ../../../.venv/bin/python serve.py [page_port backend_port]
"""
import sys, os, mimetypes, threading
from http.server import ThreadingHTTPServer, SimpleHTTPRequestHandler
from urllib.parse import urlsplit, parse_qs

HERE = os.path.dirname(os.path.abspath(__file__))
# A copy of build 0cf527aff572fa6e (from the checkout's backend/mao_embed/_sdk, the SDK_DIR of
# backend/mao_embed/assets.py, at commit ca0ae6d) and of that commit's loader_js/runtime-image.js,
# so the spike does not change under a rebuild.
SDK_DIR = os.path.join(HERE, "sdk")
LOADER_DIR = os.path.join(HERE, "sdk")
TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".html": "text/html; charset=utf-8", ".so": "application/wasm"}


class Base(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def resolve(self, path):
        raise NotImplementedError

    def extra_headers(self, query):
        return {}

    def do_OPTIONS(self):
        self.send_response(204)
        for k, v in self.extra_headers({}).items():
            self.send_header(k, v)
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        file = self.resolve(parts.path)
        if not file or not os.path.isfile(file):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            for k, v in self.extra_headers(query).items():
                self.send_header(k, v)
            self.end_headers()
            return
        with open(file, "rb") as f:
            body = f.read()
        self.send_response(200)
        ext = os.path.splitext(file)[1]
        self.send_header("Content-Type", TYPES.get(ext) or mimetypes.guess_type(file)[0] or "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        for k, v in self.extra_headers(query).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


class Page(Base):
    def resolve(self, path):
        if path == "/runtime-image.js":  # the loader carries MaoImage itself; same-origin here
            return os.path.join(LOADER_DIR, "runtime-image.js")
        return os.path.join(HERE, "pages", path.lstrip("/") or "index.html")

    def extra_headers(self, query):
        headers = {}
        csp = query.get("csp", [None])[0]
        if csp:
            headers["Content-Security-Policy"] = csp
        if query.get("coi"):  # cross-origin isolated: performance.now() at 5 us instead of 100 us
            headers["Cross-Origin-Opener-Policy"] = "same-origin"
            headers["Cross-Origin-Embedder-Policy"] = "require-corp"
        return headers


class Backend(Base):
    def resolve(self, path):
        self._cors = True
        self._echo = False
        origin = self.headers.get("Origin")
        with open(os.path.join(HERE, "results", "backend-origins.log"), "a") as log:
            log.write(f"{path}\t{origin}\n")
        if path.startswith("/echo/"):  # like backend/mao_embed/sdk_files.py: ACAO = the request's Origin
            self._echo = True
            path = path[len("/echo"):]
        if path.startswith("/nocors/"):
            self._cors = False
            path = path[len("/nocors"):]
        if path.startswith("/sdk/"):
            return os.path.join(SDK_DIR, path[len("/sdk/"):])
        if path.startswith("/loader/"):
            return os.path.join(LOADER_DIR, path[len("/loader/"):])
        return None

    def extra_headers(self, query):
        if not getattr(self, "_cors", True):
            return {}
        if getattr(self, "_echo", False):
            origin = self.headers.get("Origin")
            return {"Vary": "Origin", "Cross-Origin-Resource-Policy": "cross-origin",
                    **({"Access-Control-Allow-Origin": origin} if origin else {})}
        return {"Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin"}


def main():
    page_port = int(sys.argv[1]) if len(sys.argv) > 1 else 8801
    backend_port = int(sys.argv[2]) if len(sys.argv) > 2 else 8802
    servers = [ThreadingHTTPServer(("127.0.0.1", page_port), Page),
               ThreadingHTTPServer(("127.0.0.1", backend_port), Backend)]
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(f"page http://127.0.0.1:{page_port}/  backend http://127.0.0.1:{backend_port}/", flush=True)
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
