#!/usr/bin/env python3
"""bench-otel-callgrind: instructions per allowed MCP call through `portcullis serve` with traces
off, on at `sample: 0.0` and on at `sample: 1.0` (issue 28.6; docs/BENCHMARKS.md, "OpenTelemetry
cost").

usage: bench-otel-callgrind.py BINARY PEERS_DIR N
       e.g. scripts/bench-otel-callgrind.py target/release/portcullis tests/peers 300

The proxy runs under `valgrind --tool=callgrind`; the upstream is the Python SDK server
(`py_server.py --era legacy`, another process, not counted); the OTLP receiver is a Python HTTP
server on loopback answering 200. After 20 warm-up calls the counters are zeroed
(`callgrind_control -z`), N `tools/call echo` calls are sent on one keep-alive connection, the
proxy idles 6 s (the batch exporter's 5 s schedule lands inside the window) and the counters are
dumped; a window with no call is subtracted. Per call = (window - idle window) / N.
"""
import http.client, http.server, json, os, re, subprocess, sys, tempfile, threading, time, glob

BIN, PEERS, N = sys.argv[1], sys.argv[2], int(sys.argv[3])

class Rx(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    count = 0
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        Rx.count += 1
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass

rx = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Rx)
threading.Thread(target=rx.serve_forever, daemon=True).start()

peer = subprocess.Popen(["python3", f"{PEERS}/py_server.py", "--era", "legacy"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
port = int(peer.stdout.readline().split()[1])

def run(label, telemetry):
    d = tempfile.mkdtemp()
    cfg = os.path.join(d, "p.yaml")
    with open(cfg, "w") as f:
        f.write(f'listen: 127.0.0.1:0\nadmin: {{ listen: 127.0.0.1:0 }}\nupstreams:\n  py: {{ url: "http://127.0.0.1:{port}/mcp" }}\n'
                'permissions: { allow: ["mcp__*"] }\n' + telemetry)
    out = os.path.join(d, "cg.out")
    env = dict(os.environ, PORTCULLIS_LOG="warn")
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=yes",
                          BIN, "serve", "--config", cfg], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    addr = None
    for line in p.stderr:
        m = re.match(r"portcullis listening on http://(\S+)", line)
        if m:
            addr = m.group(1); break
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    host, prt = addr.rsplit(":", 1)
    conn = [http.client.HTTPConnection(host, int(prt), timeout=120)]
    def post(body, session=None):
        try:
            return post1(body, session)
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            conn[0] = http.client.HTTPConnection(host, int(prt), timeout=120)
            return post1(body, session)
    def post1(body, session=None):
        c = conn[0]
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if session:
            h["mcp-session-id"] = session; h["mcp-protocol-version"] = "2025-06-18"
        c.request("POST", "/mcp/py", json.dumps(body), h)
        r = c.getresponse(); data = r.read()
        return r, data
    r, _ = post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})
    s = r.getheader("mcp-session-id")
    post({"jsonrpc":"2.0","method":"notifications/initialized"}, s)
    call = lambda i: post({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}, s)
    for i in range(20):
        r, data = call(i); assert r.status == 200 and b"hello" in data, data
    time.sleep(1.0)
    def window(calls, start):
        subprocess.run(["callgrind_control", "-z", str(p.pid)], check=True, capture_output=True)
        t0 = time.time()
        for i in range(calls):
            r, data = call(start + i); assert r.status == 200, data
        wall = time.time() - t0
        time.sleep(6.0)  # the exporter's scheduled batch (every 5 s) lands inside the window
        before = set(glob.glob(out + "*"))
        subprocess.run(["callgrind_control", "-d", str(p.pid)], check=True, capture_output=True)
        time.sleep(2.0)
        total = 0
        for f in sorted(set(glob.glob(out + "*")) - before):
            for line in open(f):
                if line.startswith("summary:") or line.startswith("totals:"):
                    total = max(total, int(line.split()[1]))
        return total, wall
    idle, _ = window(0, 0)
    total, wall = window(N, 1000)
    p.terminate(); p.wait()
    per = (total - idle) / N
    print(f"{label:14} Ir/call={per:>12,.0f}  (N={N}, idle window {idle:,} Ir, exports received={Rx.count}, valgrind wall {wall/N*1000:.1f} ms/call)", flush=True)
    return per

endpoint = f"http://127.0.0.1:{rx.server_address[1]}"
res = {}
res["off"] = run("off", "")
res["on_sample_0"] = run("on sample 0", f'telemetry: {{ otlp: {{ endpoint: "{endpoint}", sample: 0.0 }} }}\n')
Rx.count = 0
res["on_sample_1"] = run("on sample 1.0", f'telemetry: {{ otlp: {{ endpoint: "{endpoint}", sample: 1.0 }} }}\n')
print(json.dumps(res))
peer.terminate()
