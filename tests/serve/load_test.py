#!/usr/bin/env python3
"""The server under load and hostile clients (issue 19), on loopback only, bounded in number and
time: `looplab serve` on a free port, then at once
  - SLOW clients that trickle a request one byte every 1.5 s, and IDLE connections that send nothing;
  - oversized request lines, headers and bodies, each answered with a 4xx;
  - CLIENTS concurrent well-behaved clients asking the API for ROUNDS requests each;
checking that every well-behaved request is answered (latencies printed), that a cheap probe
request every 50 ms is answered within LATENCY_S throughout, that the server's resident memory stays under MEMORY_MIB, and that it still
reads nothing outside its folders.
Usage: load_test.py LOOPLAB [CLIENTS ROUNDS SLOW IDLE]"""
import http.client, os, re, socket, statistics, subprocess, sys, tempfile, threading, time

binary = sys.argv[1]
CLIENTS, ROUNDS, SLOW, IDLE = (int(a) for a in (sys.argv[2:6] + ["16", "20", "24", "24"][len(sys.argv[2:6]):]))
LATENCY_S, MEMORY_MIB = 1.0, 512
root = tempfile.mkdtemp()
os.makedirs(f"{root}/runs/alpha"); os.makedirs(f"{root}/secret")
open(f"{root}/runs/alpha/config.json", "w").write('{"task": "prefix-sums"}\n')
open(f"{root}/secret/config.json", "w").write('{"secret": true}\n')
web = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "web")
server = subprocess.Popen([binary, "serve", "--port", "0", "--runs", f"{root}/runs", "--sweeps", f"{root}/none", "--web", web],
                          stdout=subprocess.PIPE, text=True)
port = int(re.search(r"127\.0\.0\.1:(\d+)/", server.stdout.readline()).group(1))
failures = []

def rss_mib():
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def raw(data, wait=3.0):
    """Sends bytes, returns the status line's code (0: no answer)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    try:
        s.sendall(data)
        head = s.recv(64).decode("latin-1")
        return int(head.split()[1]) if head.startswith("HTTP/") else 0
    except (OSError, ValueError, IndexError):
        return 0
    finally:
        s.close()

held = []
stop = threading.Event()
def trickle():
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    held.append(s)
    for b in b"GET /api/explore HTTP/1.1\r\nHost: x\r\n" * 10:
        if stop.wait(1.5): break
        try: s.send(bytes([b]))
        except OSError: break
slow = [threading.Thread(target=trickle) for _ in range(SLOW)]
for t in slow: t.start()
for _ in range(IDLE): held.append(socket.create_connection(("127.0.0.1", port)))

# Limits: 4xx, not a hang or a crash.
limits = {
    "request line of 20 KiB": raw(b"GET /api/" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    "header of 20 KiB": raw(b"GET /api/explore HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n"),
    "body of 1 MiB": raw(b"GET /api/explore HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" + b"c" * 1048576),
    "10,000 headers": raw(b"GET /api/explore HTTP/1.1\r\n" + b"H: v\r\n" * 10000 + b"\r\n"),
}
for what, code in limits.items():
    print(f"{what}: HTTP {code}")
    if not 400 <= code < 500: failures.append(f"{what}: answered {code}, wanted a 4xx")

latencies, slowest, peak = [], [], [rss_mib()]
paths = ["/api/explore", "/api/runs", "/api/runs/alpha", "/api/explore/memory-decay?a=0.5", "/api/runs/..%2fsecret",
         "/api/regions?n=51", "/index.html"]
def client(i):
    for r in range(ROUNDS):
        path = paths[(i + r) % len(paths)]
        start = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path)
            resp = c.getresponse(); body = resp.read(); c.close()
            latencies.append(time.perf_counter() - start)
            slowest.append((latencies[-1], path))
            if resp.status >= 500: failures.append(f"{path}: {resp.status}")
            if b'"secret"' in body: failures.append(f"{path}: read outside the runs folder")
        except OSError as e:
            failures.append(f"{path}: no answer ({e})")
# A probe: a cheap request (GET /api/runs) every 50 ms while the load runs; its latency is the
# server's responsiveness (the clients' own latencies include the work of what they ask for).
probe = []
def probing():
    while any(t.is_alive() for t in clients):
        start = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", "/api/runs"); c.getresponse().read(); c.close()
            probe.append(time.perf_counter() - start)
        except OSError as e:
            failures.append(f"probe: no answer ({e})")
        time.sleep(0.05)
start = time.time()
clients = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
for t in clients: t.start()
prober = threading.Thread(target=probing); prober.start()
while any(t.is_alive() for t in clients):
    peak.append(rss_mib()); time.sleep(0.1)
elapsed = time.time() - start
prober.join()
stop.set()
for t in slow: t.join()
for s in held: s.close()
peak.append(rss_mib())
if server.poll() is not None: failures.append(f"the server exited with {server.returncode}")
server.terminate(); server.wait()
n = len(latencies)
print(f"{CLIENTS} clients x {ROUNDS} requests beside {SLOW} trickling and {IDLE} idle connections: {n} answered in {elapsed:.1f} s, "
      f"latency median {1e3 * statistics.median(latencies):.1f} ms, max {1e3 * max(latencies):.0f} ms; peak RSS {max(peak):.0f} MiB")
if n != CLIENTS * ROUNDS: failures.append(f"{CLIENTS * ROUNDS - n} requests unanswered")
if not probe or max(probe) > LATENCY_S: failures.append(f"the probe took {max(probe or [0]):.2f} s (> {LATENCY_S} s)")
if max(peak) > MEMORY_MIB: failures.append(f"peak RSS {max(peak):.0f} MiB (> {MEMORY_MIB})")
print(f"probe GET /api/runs during the load: {len(probe)} answered, median {1e3 * statistics.median(probe):.1f} ms, max {1e3 * max(probe):.0f} ms (bound {1e3 * LATENCY_S:.0f} ms)")
print("slowest:", ", ".join(f"{p} {1e3 * t:.0f} ms" for t, p in sorted(slowest, reverse=True)[:3]))
for f in failures[:10]: print("FAIL:", f)
print(f"load: {'0 failed' if not failures else f'{len(failures)} failed'}")
sys.exit(1 if failures else 0)
