#!/usr/bin/env python3
"""End-to-end test of the web lab in a real browser.

Starts `looplab serve` on a free port with the shipped models as its runs, drives Debian's
Chromium through Debian's chromedriver with Selenium (python3-selenium, chromium-driver: both
installed by scripts/setup, nothing from npm), and checks that every page loads with no console
error and no request outside the server, that moving a slider on each illustration puts the
engine's numbers on the page (readouts and plot data equal to GET /api/explore/NAME for the
slider's new value), and the same for the geometry pages, the runs page's overlay, the sweeps
page and a run's eval.json / analysis.json.

    python3 tests/serve/e2e.py LOOPLAB_BINARY [--screenshots DIR] [--url URL_OF_A_RUNNING_SERVER]

LOOPLAB_CHROMIUM and LOOPLAB_CHROMEDRIVER name other binaries (defaults /usr/bin/chromium,
/usr/bin/chromedriver). Prints "N passed, N failed"; exits 1 on any failure.
"""
import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
args = sys.argv[1:]
binary = os.path.abspath(args[0] if args and not args[0].startswith("--") else os.path.join(ROOT, "build", "looplab"))
shots = os.path.abspath(args[args.index("--screenshots") + 1]) if "--screenshots" in args else None
if shots:
    os.makedirs(shots, exist_ok=True)
url_given = args[args.index("--url") + 1].rstrip("/") if "--url" in args else None

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok    {what}", flush=True)
    else:
        failed += 1
        print(f"FAIL  {what}{': ' + detail if detail else ''}", flush=True)
    return ok


def same(a, b):
    """Deep equality as JavaScript's JSON.stringify(a) === JSON.stringify(b) decides it: 1 and 1.0
    are one number, a non-finite number is null, lists and objects compare element by element."""
    def norm(x):
        if isinstance(x, bool) or x is None or isinstance(x, str):
            return x
        if isinstance(x, (int, float)):
            return float(x) if math.isfinite(x) else None
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        return x
    return norm(a) == norm(b)


def finite(v):
    return None if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) else v


def js_number(text):
    """JavaScript's parseFloat: the longest numeric prefix, NaN when there is none."""
    m = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text or "")
    return float(m.group(0)) if m else float("nan")


def start_server(*extra):
    """`looplab serve --port 0 ...`; returns (process, base URL) once it prints its address."""
    proc = subprocess.Popen([binary, "serve", "--port", "0", "--web", os.path.join(ROOT, "web"), *extra],
                            stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    text = ""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        text += line
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", text)
        if m:
            return proc, f"http://127.0.0.1:{m.group(1)}"
    proc.kill()
    raise RuntimeError(f"looplab serve printed no address (exit {proc.poll()}): {text}")


def run_cli(*a):
    subprocess.run([binary, *a], check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


# ---- the server (or --url URL: one already running, with --runs models) ---------------------
# A toy sweep (2 recalls x 2 seeds, pre norm, tiny width) run and reported by the command line,
# so that the sweeps page has a report.json whose numbers it must show.
sweeps = tempfile.mkdtemp(prefix="looplab-e2e-sweeps-")
server = None
if url_given is None:
    with open(os.path.join(sweeps, "toy.toml"), "w") as f:
        f.write("\n".join(['[base]', 'norm = "pre"', 'width = 16', 'heads = 2', 'epochs = 2', 'train-count = 300',
                           'val-count = 40', 'hard-count = 10', 'train-bits = 4', 'hard-bits = 8', 'batch = 50',
                           'max-iters = 4', '[axes]', 'recall = ["none", "external"]', 'seed = [0, 1]', '[eval]',
                           'iters = 12', '[analyze]', 'count = 4', 'detail = 1', 'iters = 12', '']))
    for c in ("run", "report"):
        run_cli("sweep", c, os.path.join(sweeps, "toy.toml"))
    server, base = start_server("--runs", os.path.join(ROOT, "models"), "--sweeps", sweeps)
else:
    base = url_given
print(f"server at {base}", flush=True)


def get_json(url_base, path):
    with urllib.request.urlopen(url_base + path, timeout=30) as r:
        return json.loads(r.read())


def api(path):
    return get_json(base, path)


# ---- the browser ----------------------------------------------------------------------------
options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("LOOPLAB_CHROMIUM", "/usr/bin/chromium")
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--disable-background-networking", "--window-size=1280,900",
          # Nothing may leave 127.0.0.1: any other host fails to resolve, so a request outside
          # the server is a failed request (a console error) as well as a logged request below.
          "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
    options.add_argument(a)
options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
driver = webdriver.Chrome(service=Service(os.environ.get("LOOPLAB_CHROMEDRIVER", "/usr/bin/chromedriver")),
                          options=options)
driver.set_script_timeout(30)


def js(script, *a):
    return driver.execute_script(script, *a)


def problems():
    """Console errors and warnings (page errors, failed requests and HTTP 4xx/5xx responses are
    logged there by Chromium), HTTP errors seen by the network log, and any request outside the
    server, since the last call."""
    out = []
    for e in driver.get_log("browser"):
        if e.get("level") in ("SEVERE", "WARNING"):
            out.append(f"console {e['level'].lower()}: {e['message']}")
    for e in driver.get_log("performance"):
        msg = json.loads(e["message"])["message"]
        params = msg.get("params", {})
        if msg.get("method") == "Network.requestWillBeSent":
            u = params.get("request", {}).get("url", "")
            if not (u.startswith("http://127.0.0.1:") or u.startswith("data:") or u.startswith("blob:")):
                check(False, "no request outside the server", u)
        elif msg.get("method") == "Network.responseReceived":
            r = params.get("response", {})
            if r.get("status", 0) >= 400:
                out.append(f"HTTP {r['status']}: {r.get('url')}")
        elif msg.get("method") == "Network.loadingFailed" and not params.get("canceled"):
            out.append(f"request failed: {params.get('errorText')}")
    return out


def updates():
    return int(js("return Number(document.body.dataset.updates || 0)"))


def wait_for(condition, what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


def network_idle(quiet=0.5, timeout=20):
    """Playwright's 'networkidle', approximately: the page is loaded and no new resource entry has
    appeared for `quiet` seconds."""
    deadline = time.time() + timeout
    last, since = -1, time.time()
    while time.time() < deadline:
        n = js("return document.readyState === 'complete' ? performance.getEntriesByType('resource').length : -1")
        if n != last:
            last, since = n, time.time()
        elif n >= 0 and time.time() - since >= quiet:
            return
        time.sleep(0.05)


def open_page(path, url_base=None):
    """Opens a page and waits for its first render; the problems logged so far are dropped."""
    problems()
    driver.get((url_base or base) + path)
    wait_for(lambda: updates() >= 1, f"the first render of {path}")
    return path


def clean(what):
    network_idle()
    shown = js("const e = document.getElementById('error'); return e && !e.hidden ? e.textContent : ''")
    p = problems()
    return check(not p and not shown, f"{what}: loads with no console error", "; ".join(p + ([shown] if shown else [])))


def move(name, value=None):
    """Moves a slider (or sets a field) and waits for the page to draw the answer. With a value,
    the input is set to it and gets the events a user's change fires; without one, the slider is
    clicked with the mouse at 30% of its track, as a user would. Returns the input's new value."""
    before = updates()
    el = driver.find_element(By.CSS_SELECTOR, f'[name="{name}"]')
    if value is None:
        w = el.size["width"]
        # Selenium 4 offsets are from the element's centre: 30% of the track is 20% left of it.
        ActionChains(driver).move_to_element_with_offset(el, int(round(-0.2 * w)), 0).click().perform()
    else:
        js("""const el = arguments[0]; el.value = String(arguments[1]);
              el.dispatchEvent(new Event('input', {bubbles: true}));
              el.dispatchEvent(new Event('change', {bubbles: true}));""", el, value)
    wait_for(lambda: updates() > before, f"a render after moving {name}")
    network_idle()
    return el.get_attribute("value")


def eventually(test):
    """Polls `test` (returns (ok, detail)) for up to 5 s: renders may still be landing."""
    r = (False, "")
    for _ in range(50):
        r = test()
        if r[0]:
            return r
        time.sleep(0.1)
    return r


def plot_data():
    return js("return window.lab.plots.map(p => p.data())")


def readouts():
    return js("return Object.fromEntries([...document.querySelectorAll('[data-readout]')]"
              ".map(e => [e.dataset.readout, e.textContent]))")


def screenshot(name, element=None):
    """A full-page PNG through the DevTools protocol (Selenium's own is the viewport only); with a
    CSS selector, the PNG of that element only."""
    if not shots:
        return
    if element:
        x, y, w, h = js("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                        " return [r.left + scrollX, r.top + scrollY, r.width, r.height].map(Math.ceil)", element)
        clip = {"x": max(0, x - 10), "y": max(0, y - 10), "width": w + 20, "height": h + 20, "scale": 1}
    else:
        clip = {"x": 0, "y": 0, "width": 1280, "height": js("return Math.ceil(document.documentElement.scrollHeight)"), "scale": 1}
    png = driver.execute_cdp_cmd("Page.captureScreenshot", {"captureBeyondViewport": True, "clip": clip})
    with open(os.path.join(shots, name), "wb") as f:
        f.write(base64.b64decode(png["data"]))


# ---- mazes: what the runs page draws from an eval_trace.json ---------------------------------
# The test's own reading of the file: a cell's 6 input features are [east, south, west, north
# passage open, start, goal]; the answer after iteration t is the last change at or before t.
EAST, SOUTH, WEST, NORTH, START, GOAL = range(6)


def trace_answer(example, t):
    out = None
    for a in example["answers"]:
        if a["iteration"] <= t:
            out = a["answer"]
    return out


def trace_label(example, t):
    a = trace_answer(example, t)
    k = sum(x == y for x, y in zip(a, example["target"]))
    p = len(example["target"])
    return f"iteration {t}: {k} of {p} cells right" + (", exact" if k == p else ""), k


def cell_kinds(example, answer):
    """Each cell's colour as the legend names it: on the path and predicted 'right', predicted but
    not on it 'wrong', on it but missed 'missed', else 'open'; answer None: the true path alone."""
    out = []
    for i, t in enumerate(example["target"]):
        path = t == "1"
        said = path if answer is None else answer[i] == "1"
        out.append("right" if said and path else "wrong" if said else "missed" if path else "open")
    return out


def maze_pixels(canvas, points):
    """The colours of a maze canvas at CSS pixel positions, each the name of the nearest legend
    colour (white 'open'), or 'other' when none is near."""
    legend = js("return Object.fromEntries([...document.querySelectorAll('section.mazes .swatch[data-class]')]"
                ".map(e => [e.dataset.class, getComputedStyle(e).backgroundColor]))")
    colours = {k: [int(v) for v in re.findall(r"\d+", c)[:3]] for k, c in legend.items()}
    colours["open"] = [255, 255, 255]
    # Read through a copy made for reading (a canvas read back several times without
    # willReadFrequently is a console warning).
    rgb = js("""const c = arguments[0], r = Number(c.dataset.ratio), copy = document.createElement('canvas');
                copy.width = c.width; copy.height = c.height;
                const x = copy.getContext('2d', { willReadFrequently: true });
                x.drawImage(c, 0, 0);
                const d = x.getImageData(0, 0, c.width, c.height).data;
                return arguments[1].map(([x, y]) => { const i = (Math.floor((y + 0.5) * r) * c.width + Math.floor((x + 0.5) * r)) * 4;
                                                      return [d[i], d[i + 1], d[i + 2]]; });""", canvas, points)
    out = []
    for p in rgb:
        name, dist = min(((k, sum((a - b) ** 2 for a, b in zip(p, c)) ** 0.5) for k, c in colours.items()), key=lambda x: x[1])
        out.append(name if dist < 40 else "other")
    return out


def maze_drawing(canvas, trace, example, answer):
    """What a maze canvas shows against what the file says: (ok, detail). At the middle of each
    side of each cell a wall exactly where that side's passage is closed; at each cell's centre the
    start (green) on the start cell only, the goal (red) on the goal cell only; near each cell's
    corner the cell's colour for `answer` (None: the true path). The canvas's data attributes give
    its cell size, wall width and padding in CSS pixels, and the rings of blocked cells left out
    (a --border run's): drawn cell (r, c) is the file's (r + ring, c + ring)."""
    ch = trace["channels"]
    s, w, pad, ring = js("const d = arguments[0].dataset; return [Number(d.cellSize), Number(d.wall), Number(d.pad), Number(d.ring)]", canvas)
    rows, cols = trace["grid"][0] - 2 * ring, trace["grid"][1] - 2 * ring
    at = [(r + ring) * trace["grid"][1] + c + ring for r in range(rows) for c in range(cols)]
    sides, want_walls, centres, want_centres, corners = [], [], [], [], []
    for r in range(rows):
        for c in range(cols):
            f = at[r * cols + c] * ch
            x, y, m = pad + c * s, pad + r * s, s // 2
            # east, south, west, north: the pixel on the line between the cell and its neighbour
            sides += [(x + s, y + m), (x + m, y + s), (x, y + m), (x + m, y)]
            want_walls += [example["input"][f + k] == 0 for k in (EAST, SOUTH, WEST, NORTH)]
            centres.append((x + m, y + m))
            want_centres.append("start" if example["input"][f + START] else "goal" if example["input"][f + GOAL] else None)
            corners.append((x + w, y + w))
    got = maze_pixels(canvas, sides)
    names = ("east", "south", "west", "north")
    bad = [f"cell {i // 4} {names[i % 4]}: {'wall' if want else 'open'} in the file, {g} drawn"
           for i, (g, want) in enumerate(zip(got, want_walls)) if (g == "wall") != want]
    got = maze_pixels(canvas, centres)
    bad += [f"cell {i} centre: {g} drawn, {want or 'neither start nor goal'} in the file"
            for i, (g, want) in enumerate(zip(got, want_centres)) if (g in ("start", "goal") or want) and g != want]
    got = maze_pixels(canvas, corners)
    kinds = cell_kinds(example, answer)
    want = [kinds[i] for i in at]
    bad += [f"cell {i}: {g} drawn, {k} in the file" for i, (g, k) in enumerate(zip(got, want)) if g != k]
    return not bad, f"{len(bad)} differences: " + "; ".join(bad[:6])


def maze_view():
    """The slider's view: its label, and its data attributes (iteration, cells right, answer)."""
    return js("const f = document.querySelector('section.mazes figure.maze.view');"
              " return [f.querySelector('figcaption').textContent, Number(f.dataset.iteration), Number(f.dataset.right), f.dataset.answer]")


def maze_at(trace, example, t, what):
    """Moves the maze's slider to t and checks the label, the answer and the drawing."""
    move("iteration", t)
    label, k = trace_label(example, t)
    answer = trace_answer(example, t)
    got = maze_view()
    ok, detail = maze_drawing(driver.find_element(By.CSS_SELECTOR, "section.mazes figure.maze.view canvas"), trace, example, answer)
    check(got[:3] == [label, t, k] and got[3] == answer and ok,
          f"{what}: the slider at {t} shows '{label}' and draws the answer after iteration {t}",
          f"page '{got[0]}' (iteration {got[1]}, {got[2]} right); {detail}")


try:
    # ---- index -------------------------------------------------------------------------------
    catalogue = api("/api/explore")
    open_page("/")
    clean("index")
    links = js("return document.querySelectorAll('#illustrations a').length")
    check(links == len(catalogue) and len(catalogue) == 8, "index links the eight illustrations", f"{links} links")

    # ---- each illustration: move one slider, read the engine's values back -------------------
    for ill in catalogue:
        name = ill["name"]
        open_page(f"/explore.html?name={name}")
        clean(f"explore {name}")
        p = next(q for q in ill["parameters"] if q["kind"] != "choice")
        value = move(p["name"])
        params = js("return Object.fromEntries([...document.querySelectorAll('.controls [name]')].map(i => [i.name, i.value]))")
        engine = api(f"/api/explore/{name}?{urllib.parse.urlencode(params)}")
        defaults = api(f"/api/explore/{name}")

        def readouts_match():
            texts = readouts()
            bad = [f"{r['key']}: page '{texts.get(r['key'])}' engine '{r['text']}'"
                   for r in engine["readouts"] if texts.get(r["key"]) != r["text"]]
            return not bad, "; ".join(bad)
        ok, detail = eventually(readouts_match)
        check(ok, f"explore {name}: {p['name']} = {value}: every readout is the engine's", detail)
        want = [[[[finite(v) for v in s["x"]], [finite(v) for v in s["y"]]] for s in pl["series"]] for pl in engine["plots"]]
        check(same(plot_data(), want), f"explore {name}: both plots draw the engine's data")
        calc = js("return document.querySelector('.calculation p').textContent")
        check(calc == engine["calculation"], f"explore {name}: the calculation is the engine's, with the current numbers")
        changed = not same(engine["readouts"], defaults["readouts"]) and not same(engine["plots"], defaults["plots"])
        check(changed, f"explore {name}: moving {p['name']} changed a readout and a plot")
        katex = js("return document.querySelectorAll('.equations .katex').length")
        check(katex >= len(engine["equations"]), f"explore {name}: {len(engine['equations'])} equations typeset")
        driver.find_element(By.CSS_SELECTOR, '[data-reveal="predict"]').click()
        driver.find_element(By.CSS_SELECTOR, '[data-reveal="check"]').click()
        answers = js("return [...document.querySelectorAll('[data-answer]')].map(e => !e.hidden && e.textContent)")
        check(answers[0] == engine["predict_first"]["answer"] and str(answers[1]).startswith(engine["check"]["answer"]),
              f"explore {name}: predict-first and check answers revealed")
        if name == "memory-decay":
            screenshot("illustration.png")

    # The address carries the values: a shared link opens on them.
    open_page("/explore.html?name=memory-decay&a=0.5")
    clean("explore memory-decay?a=0.5")
    engine = api("/api/explore/memory-decay?a=0.5")
    shown = js("return [document.querySelector('[name=\"a\"]').value,"
               " document.querySelector('[data-readout=\"weight_lag3\"]').textContent]")
    want = next(r["text"] for r in engine["readouts"] if r["key"] == "weight_lag3")
    check(shown[0] == "0.5" and shown[1] == want, "explore: a link with a = 0.5 opens on a = 0.5", json.dumps(shown))

    # ---- geometry ------------------------------------------------------------------------------
    open_page("/regions.html")
    clean("regions")
    move("n", 101)
    move("xmin", -5)
    g = api("/api/regions?xmin=-5&xmax=10&ymin=-6&ymax=6&n=101")

    def regions_match():
        t = readouts()
        def near(text, v):
            return abs(js_number(text) - 100 * v) <= 1e-3 * max(1, 100 * v)
        return (t.get("n") == "101 × 101" and near(t.get("internal_fraction"), g["internal_fraction"])
                and near(t.get("external_fraction"), g["external_fraction"])
                and near(t.get("both_fraction"), g["both_fraction"])), json.dumps(t, ensure_ascii=False)
    ok, detail = eventually(regions_match)
    check(ok, "regions: n = 101, xmin = -5: the shares are the engine's", detail)
    move("xmin", -10)
    move("n", 201)
    screenshot("regions.png")

    open_page("/phase.html")
    clean("phase")
    move("lx", 1.2)
    ph = api("/api/phase?lx=1.2&ly=1.5&steps=30&starts=16&radius=1")

    def phase_match():
        fixed = js("return document.querySelector('[data-readout=\"fixed_point\"]').textContent")
        want = [[[q[0] for q in t["points"]], [q[1] for q in t["points"]]] for t in ph["trajectories"]]
        return fixed == ph["fixed_point"] and fixed == "repelling" and same(plot_data()[0], want), fixed
    ok, detail = eventually(phase_match)
    check(ok, "phase: lx = 1.2: the fixed point and every trajectory are the engine's", detail)

    open_page("/anisotropy.html")
    clean("anisotropy")
    move("n", 500)
    an = api("/api/anisotropy?n=500&sigma=0.5%2C1%2C2%2C4&seed=0")

    def anisotropy_match():
        cells = [js_number(t) for t in js("return [...document.querySelectorAll('[data-readout=\"log_range_mean\"]')]"
                                          ".map(e => e.textContent)")]
        want = [r["log_range"]["mean"] for r in an["rows"]]
        return (len(cells) == len(want) and all(abs(c - w) <= 1e-3 * abs(w) for c, w in zip(cells, want)),
                json.dumps(cells))
    ok, detail = eventually(anisotropy_match)
    check(ok, "anisotropy: n = 500: every mean log-range is the engine's", detail)

    # ---- runs: the two shipped prefix-sums models overlaid ------------------------------------
    names = ["prefix-sums-external-post", "prefix-sums-none-post"]
    open_page(f"/runs.html?runs={','.join(names)}")
    clean("runs")
    listed = js("return document.querySelectorAll('table.runs tbody tr').length")
    runs = api("/api/runs")
    check(listed == len(runs["runs"]) and all(any(r["name"] == n for r in runs["runs"]) for n in names),
          f"runs: lists the {len(runs['runs'])} runs of models/")
    loss = [[m["loss"] for m in api(f"/api/runs/{n}")["metrics"]] for n in names]
    drawn = plot_data()
    check(len(drawn[0]) == 2 and same([s[1] for s in drawn[0]], loss),
          "runs: the loss curves of both prefix-sums runs are overlaid, equal to metrics.jsonl")
    screenshot("runs.png")
    before = updates()
    box = driver.find_element(By.CSS_SELECTOR, 'input[type=checkbox][name="sudoku-external-post"]')
    if not box.is_selected():
        box.click()
    wait_for(lambda: updates() > before, "a render after ticking the sudoku run")
    more = plot_data()
    check(len(more[0]) == 3 and len(more[4]) >= 2, "runs: ticking the sudoku run adds its training curve and its eval.json curves")
    clean("runs after overlaying three")

    # ---- runs: the paper's prefix-sums seeds, their evaluation files and the paper's values -----
    # scripts/paper-prefix-sums keeps one evaluation per split (eval-val.json, eval-hard.json):
    # the page must show their numbers, read here from the files, beside the paper's.
    seeds = sorted(n for n in os.listdir(os.path.join(ROOT, "models")) if n.startswith("prefix-sums-paper-seed-")
                   and os.path.isfile(os.path.join(ROOT, "models", n, "eval-val.json")))
    with open(os.path.join(ROOT, "sweeps", "paper_tables.json")) as f:
        tables = json.load(f)
    open_page(f"/runs.html?runs={','.join(seeds)}")
    clean("runs: the paper's seeds")

    def pct_text(v):
        # lab.js's `${fmt(100 * v)}%`: four significant digits, trailing zeros dropped.
        if v == 0:
            return "0%"
        t = repr(float(f"{100 * v:.4g}"))
        return (t[:-2] if t.endswith(".0") else t) + "%"

    def row_cells(name):
        return js("const tr = document.querySelector(`table.runs tr[data-run=\"${arguments[0]}\"]`);"
                  " return tr ? Object.fromEntries([...tr.querySelectorAll('[data-cell]')].map(c => [c.dataset.cell, c.textContent])) : null", name)
    paper_val = f"{tables['table4_val']['prefix-sums/post/external/3e-4']:.2f}"
    paper_hard = f"{tables['table5_hard']['prefix-sums/post/external/3e-4']:.2f}"
    want_curves, bad = [], []
    for n in seeds:
        folder = os.path.join(ROOT, "models", n)
        with open(os.path.join(folder, "metrics.jsonl")) as f:
            metrics = [json.loads(line) for line in f if line.strip()]
        final = metrics[-1]["val_exact"]
        best = max(metrics, key=lambda m: m["val_exact"])
        # Its files, each a download: the evaluations first (eval.json, then eval-NAME.json).
        present = set(os.listdir(folder))
        files = sorted(f for f in present if f == "eval.json" or (f.startswith("eval-") and f.endswith(".json")))
        files += [f for f in ("config.json", "training.json", "metrics.jsonl", "analysis.json", "train.log",
                              "eval_halt.json", "eval_scaling.json") if f in present]
        want = {"final": f"{pct_text(final)} (best {pct_text(best['val_exact'])} at epoch {best['epoch']})",
                "paper-val": paper_val, "paper-hard": paper_hard, "files": ", ".join(files)}
        for split in ("hard", "val"):  # eval-hard.json sorts before eval-val.json
            path = os.path.join(folder, f"eval-{split}.json")
            if not os.path.isfile(path):
                want[split] = "–"
                continue
            with open(path) as f:
                ev = json.load(f)
            s = ev["splits"][split]
            want[split] = f"{pct_text(s['exact'][-1])} at {s['iterations'][-1]}"
            want_curves.append([s["iterations"], s["exact"]])
        got = row_cells(n)
        if got != want:
            bad.append(f"{n}: page {json.dumps(got, ensure_ascii=False)}, files {json.dumps(want, ensure_ascii=False)}")
    check(len(seeds) >= 3 and not bad,
          f"runs: the {len(seeds)} paper seeds show their final val (best beside it), eval-val.json's and eval-hard.json's "
          "exact accuracy at iteration 500 and the paper's values", "; ".join(bad))
    drawn = plot_data()
    check(same(drawn[4], want_curves), "runs: the seeds' exact accuracy against iterations is drawn from eval-hard.json and eval-val.json",
          json.dumps([drawn[4], want_curves])[:400])
    val_curves = []
    for n in seeds:
        with open(os.path.join(ROOT, "models", n, "metrics.jsonl")) as f:
            val_curves.append([m["val_exact"] for m in (json.loads(line) for line in f if line.strip())])
    check(same([s[1] for s in drawn[1]][:len(seeds)], val_curves), "runs: the seeds' val curves are their metrics.jsonl's")
    named = js("return [...document.querySelectorAll('table.evaluations tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))")
    check(len(named) >= 2 * 3 and all(r[3] == "model.safetensors" for r in named) and {r[1] for r in named} >= {"eval-val.json", "eval-hard.json"},
          "runs: the evaluation table names each file and the weights it used", json.dumps(named[:3]))
    screenshot("runs-seeds.png")

    # ---- runs: a maze run's eval_trace.json drawn ---------------------------------------------
    # models/mazes-external-post keeps the answer after every iteration of one size-59 maze
    # (looplab eval DIR --trace 1 --split hard --iters 1000): the page must draw the file's walls,
    # start, goal and path, and the answer after the slider's iteration with its score, as
    # computed here from the file.
    mdir = os.path.join(ROOT, "models", "mazes-external-post")
    with open(os.path.join(mdir, "eval_trace.json")) as f:
        mtrace = json.load(f)
    with open(os.path.join(mdir, "training.json")) as f:
        mazes_t = json.load(f)["train"]["training_iters"]
    mex = mtrace["examples"][0]
    open_page("/runs.html?runs=mazes-external-post")
    clean("runs: the maze run")
    meta = js("const p = document.querySelector('section.mazes p.meta'); return p ? p.textContent : ''")
    check(js("return document.querySelectorAll('section.mazes figure.maze.view canvas').length") == 1
          and f"example {mex['index']} of the hard split, 30 × 30 cells" in meta,
          "runs: the maze section appears for mazes-external-post (its eval_trace.json's example, 30 x 30 cells)", meta)
    ok, detail = maze_drawing(driver.find_element(By.CSS_SELECTOR, "section.mazes figure.maze.truth canvas"), mtrace, mex, None)
    path = mex["target"].count("1")
    caption = js("return document.querySelector('section.mazes figure.maze.truth figcaption').textContent")
    check(ok and caption == f"the true path: {path} cells",
          "runs maze: the true path drawn: walls where the file's passages are closed, start and goal on their cells, "
          "the target's path cells", f"'{caption}'; {detail}")
    for t in (1, 30, 500, 1000):
        maze_at(mtrace, mex, t, "runs maze")
    figs = js("return [...document.querySelectorAll('section.mazes figure.maze.multiple')]"
              ".map(f => [Number(f.dataset.iteration), f.querySelector('figcaption').textContent])")
    iters = [t for t, _ in figs]
    bad = [f"{t}: page '{text}', file '{trace_label(mex, t)[0]}'" for t, text in figs if text != trace_label(mex, t)[0]]
    for i, (t, _) in enumerate(figs):
        ok, detail = maze_drawing(driver.find_elements(By.CSS_SELECTOR, "section.mazes figure.maze.multiple canvas")[i],
                                  mtrace, mex, trace_answer(mex, t))
        if not ok:
            bad.append(f"{t}: {detail}")
    check(iters == sorted(set(iters)) and {1, mazes_t, mtrace["max_iters"]} <= set(iters) and not bad,
          f"runs maze: the small multiples at iterations {iters} (1, T = {mazes_t}, ..., {mtrace['max_iters']}) are labelled "
          "and drawn as the file's answers", "; ".join(bad)[:600])
    # Play from iteration 1: the slider advances and the view follows it.
    move("iteration", 1)
    driver.find_element(By.CSS_SELECTOR, 'button[name="maze-play"]').click()
    wait_for(lambda: int(driver.find_element(By.CSS_SELECTOR, '[name="iteration"]').get_attribute("value")) >= 100,
             "the maze's play button to reach iteration 100")
    driver.find_element(By.CSS_SELECTOR, 'button[name="maze-play"]').click()
    time.sleep(0.2)
    shown = int(driver.find_element(By.CSS_SELECTOR, '[name="iteration"]').get_attribute("value"))
    got = maze_view()
    time.sleep(0.3)
    still = int(driver.find_element(By.CSS_SELECTOR, '[name="iteration"]').get_attribute("value"))
    check(100 <= shown < mtrace["max_iters"] and still == shown and got[0] == trace_label(mex, shown)[0]
          and got[3] == trace_answer(mex, shown),
          "runs maze: play advances the slider, pause stops it, the view shows the slider's iteration",
          f"slider {shown} then {still}; page '{got[0]}'")
    move("iteration", 1000)
    clean("runs maze after moving the slider and playing")
    screenshot("runs-maze.png", "section.mazes")

    # ---- sweeps: the toy sweep's report.json as written ---------------------------------------
    if server:
        open_page("/sweeps.html")
        clean("sweeps")
        with open(os.path.join(sweeps, "toy", "report.json")) as f:
            report = json.load(f)
        cells = js("return [...document.querySelectorAll('table.paper.val tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))")

        def cell_text(s):
            return f"{s['mean']:.2f}" if s["n"] == 1 else f"{s['mean']:.2f} ± {s['standard_error']:.2f}"
        want = [["pre", gr["recall"], cell_text(gr["val"]), f"{gr['paper_val']:.2f}"] for gr in report["groups"]]
        check(same(cells, want), "sweeps: table 4 shows report.json's means, standard errors and the paper's values",
              json.dumps([cells, want], ensure_ascii=False))
        drawn = plot_data()
        c = report["figure3"][0]
        check(same(drawn[0], [[list(range(1, len(c["val"]) + 1)), c["val"]], [list(range(1, len(c["hard"]) + 1)), c["hard"]]]),
              "sweeps: figure 3 is the autonomous group's mean curve of report.json")
        check(same([s[1] for s in drawn[1]], [[p["rho"]["mean"]] for p in report["figure6"]]),
              "sweeps: figure 6 is report.json's rho(Wx) per recall")
        # The fixed points: report.json's settle, radius, radius < 1 and sensitivity per group.
        rows = js("return [...document.querySelectorAll('table.fixed-points tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))")

        def stat_text(s, f):
            return f(s["mean"]) if s["n"] == 1 else f"{f(s['mean'])} ± {f(s['standard_error'])}"

        def pct(v):
            return f"{v:.1f}"

        def sig(v):  # lab.js's fmt(v, 4) for 1e-3 <= |v| < 1e5 (its exponent form is not needed here)
            if v == 0:
                return "0"
            if not 1e-3 <= abs(v) < 1e5:
                return "(exponent form: not compared)"
            t = repr(float(f"{v:.4g}"))
            return t[:-2] if t.endswith(".0") else t
        want = [[gr["group"], str(gr["settle"]["n"]), stat_text(gr["settle"], pct), stat_text(gr["radius"], sig),
                 stat_text(gr["radius_below_1"], pct), cell_text(gr["hard"])]
                for gr in report["groups"] if gr["settle"]["n"]]
        got = [[r[0], r[1], r[2], r[3], r[4], r[6]] for r in rows]
        for g, w in zip(got, want):
            if "not compared" in w[3]:
                g[3] = w[3]
        check(len(want) == 2 and same(got, want),
              "sweeps: the fixed-points table shows report.json's settle, rho(df/dx) and rho < 1 per group",
              json.dumps([got, want], ensure_ascii=False))
        screenshot("sweeps-toy.png")

    # ---- runs: eval.json and analysis.json drawn as written ------------------------------------
    # A tiny untrained model gets an eval.json and an analysis.json from the command line; a
    # second server shows it, and the page must draw exactly their numbers.
    if server:
        tmp = tempfile.mkdtemp(prefix="looplab-e2e-")
        d = os.path.join(tmp, "tiny")
        second = None
        try:
            run_cli("init", "--task", "prefix-sums", "--recall", "external", "--norm", "post", "--width", "16",
                    "--heads", "2", "--seed", "1", "--out", d)
            run_cli("eval", d, "--split", "val", "--iters", "1:12", "--count", "6")
            run_cli("analyze", d, "--split", "val", "--count", "6", "--iters", "12", "--detail", "2")
            run_cli("eval", d, "--scaling", "--count", "2", "--iters", "6")
            # A prefix-sums trace: the runs page draws mazes only, and says so.
            run_cli("eval", d, "--trace", "1", "--split", "val", "--iters", "12", "--count", "1")
            # An untrained model runs every example to the end under every rule: distinct numbers
            # written over the command line's file make the check below able to tell them apart.
            scaling_file = os.path.join(d, "eval_scaling.json")
            with open(scaling_file) as f:
                sc = json.load(f)
            for i, lv in enumerate(sc["levels"]):
                lv["result"]["exact_at_max"] = 0.9 - 0.1 * i
                for k, rule in enumerate(lv["result"]["rules"]):
                    rule["mean_iters"], rule["exact"] = 1.5 + i + 0.25 * k, 0.05 * i + 0.01 * k
            with open(scaling_file, "w") as f:
                json.dump(sc, f)
            # A version-1 run folder (tests/serve/fixtures) beside a current one.
            for name, src, files in (("old", os.path.join(ROOT, "tests", "serve", "fixtures", "prefix-sums-version-1"),
                                      ("config.json", "training.json", "metrics.jsonl")),
                                     ("current", os.path.join(ROOT, "models", "prefix-sums-external-post"),
                                      ("config.json", "training.json", "metrics.jsonl"))):
                os.makedirs(os.path.join(tmp, name))
                for f in files:
                    shutil.copy(os.path.join(src, f), os.path.join(tmp, name, f))
            # A maze trace whose answers change at a few iterations only (1, 7, 100, 640 of
            # models/mazes-external-post's), with a second example: the same maze transposed (rows
            # for columns: east for south, west for north), changing at 1, 3 and 900.
            sparse = os.path.join(tmp, "maze-sparse")
            os.makedirs(sparse)
            for f in ("config.json", "training.json"):
                shutil.copy(os.path.join(mdir, f), os.path.join(sparse, f))
            n = mtrace["grid"][0]

            def transposed(text):
                return "".join(text[c * n + r] for r in range(n) for c in range(n))
            swap = (SOUTH, EAST, NORTH, WEST, START, GOAL)
            tex = {"index": 1, "target": transposed(mex["target"]),
                   "input": [mex["input"][(c * n + r) * 6 + swap[k]] for r in range(n) for c in range(n) for k in range(6)],
                   "answers": [{"iteration": t, "answer": transposed(trace_answer(mex, t))} for t in (1, 3, 900)]}
            sparse_trace = dict(mtrace, examples=[
                dict(mex, answers=[{"iteration": t, "answer": trace_answer(mex, t)} for t in (1, 7, 100, 640)]), tex])
            with open(os.path.join(sparse, "eval_trace.json"), "w") as f:
                json.dump(sparse_trace, f)
            # The same maze inside one ring of blocked cells (a --border 1 run's trace: every feature 0
            # and off the path on the ring), its answer marking two ring cells from iteration 7.
            ringed = os.path.join(tmp, "maze-ring")
            os.makedirs(ringed)
            for f in ("config.json", "training.json"):
                shutil.copy(os.path.join(mdir, f), os.path.join(ringed, f))
            rn = n + 2

            def padded(text, marks=()):
                cells = ["0"] * (rn * rn)
                for r in range(n):
                    for c in range(n):
                        cells[(r + 1) * rn + c + 1] = text[r * n + c]
                for i in marks:
                    cells[i] = "1"
                return "".join(cells)
            rin = [0] * (rn * rn * 6)
            for r in range(n):
                for c in range(n):
                    rin[((r + 1) * rn + c + 1) * 6:((r + 1) * rn + c + 2) * 6] = mex["input"][(r * n + c) * 6:(r * n + c + 1) * 6]
            ring_marks = (0, rn * rn - 1)  # the first and the last cell: both on the ring
            rex = {"index": 0, "target": padded(mex["target"]), "input": rin,
                   "answers": [{"iteration": 1, "answer": padded(trace_answer(mex, 1))},
                               {"iteration": 7, "answer": padded(trace_answer(mex, 7), ring_marks)}]}
            ring_trace = dict(mtrace, grid=[rn, rn], examples=[rex])
            with open(os.path.join(ringed, "eval_trace.json"), "w") as f:
                json.dump(ring_trace, f)
            second, url = start_server("--runs", tmp)
            open_page("/runs.html?runs=maze-ring", url)
            clean("runs: a maze trace with a ring of blocked cells")
            meta = js("const p = document.querySelector('section.mazes p.meta'); return p ? p.textContent : ''")
            geometry = js("const d = document.querySelector('section.mazes figure.maze.truth canvas').dataset;"
                          " return [Number(d.rows), Number(d.cols), Number(d.ring)]")
            ok, detail = maze_drawing(driver.find_element(By.CSS_SELECTOR, "section.mazes figure.maze.truth canvas"), ring_trace, rex, None)
            check(ok and geometry == [n, n, 1] and f"{n} × {n} cells" in meta and "inside 1 ring of blocked cells" in meta,
                  f"runs maze, --border 1: the ring left out, the {n} x {n} maze drawn as the unbordered one", f"{geometry}; {meta}; {detail}")
            for t in (6, 7):
                move("iteration", t)
                label, k = trace_label(rex, t)
                if t >= 7:
                    label += f"; {len(ring_marks)} marked on the blocked ring"
                got = maze_view()
                ok, detail = maze_drawing(driver.find_element(By.CSS_SELECTOR, "section.mazes figure.maze.view canvas"), ring_trace, rex, trace_answer(rex, t))
                check(got[0] == label and ok, f"runs maze, --border 1: at {t} the label '{label}' and the answer drawn inside the ring",
                      f"{got[0]!r}; {detail}")
            clean("runs maze with a ring")
            open_page("/runs.html?runs=maze-sparse", url)
            clean("runs: a maze trace with a few changes")
            sx = sparse_trace["examples"][0]
            for t in (6, 7, 99, 639, 640, 1000):
                maze_at(sparse_trace, sx, t, "runs maze, a few changes")
            before = updates()
            js("const s = document.querySelector('[name=\"maze-example\"]'); s.value = '1'; s.dispatchEvent(new Event('input'));")
            try:
                wait_for(lambda: updates() > before, "a render after choosing example 1", timeout=5)
            except TimeoutError:
                pass  # the checks below say what is drawn instead
            ok, detail = maze_drawing(driver.find_element(By.CSS_SELECTOR, "section.mazes figure.maze.truth canvas"), sparse_trace, tex, None)
            check(ok, "runs maze: the example chooser draws the second example's maze (the first transposed)", detail)
            maze_at(sparse_trace, tex, 899, "runs maze, the second example")
            maze_at(sparse_trace, tex, 900, "runs maze, the second example")
            clean("runs maze after choosing an example")
            open_page("/runs.html?runs=current,old", url)
            network_idle()
            before = updates()
            driver.find_element(By.CSS_SELECTOR, 'input[name="show-all"]').click()
            wait_for(lambda: updates() > before, "a render after showing every setting")
            rows = js("return [...document.querySelectorAll('table.config tbody tr')].map(tr => [tr.dataset.setting, ...[...tr.cells].slice(1).map(c => c.textContent)])")
            half = [r for r in rows if "–" in r[1:]]
            by_key = {r[0]: r[1:] for r in rows}
            api_old = get_json(url, "/api/runs/old")
            check(len(rows) > 30 and not half and by_key.get("train.training_iters") == ["30", "30"]
                  and by_key.get("model.attention") == ["neighbourhood", "neighbourhood"]
                  and by_key.get("config.json schema version") == ["2", "1"]
                  and by_key.get("train.lr") == [str(api_old["settings"]["train"]["lr"])] * 2,
                  "runs: a version-1 folder beside a current one: each of their settings is one row, filled in both",
                  f"{len(rows)} rows; half empty: {json.dumps(half)[:300]}; " + json.dumps(
                      {k: by_key.get(k) for k in ("train.training_iters", "model.attention", "config.json schema version", "train.lr")}))
            # The files stay downloadable as written: the version-1 config.json link gives its bytes.
            href = js("return document.querySelector('tr[data-run=\"old\"] td[data-cell=\"files\"] a').href")
            with urllib.request.urlopen(href, timeout=30) as r:
                served = r.read()
            with open(os.path.join(tmp, "old", "config.json"), "rb") as f:
                written = f.read()
            check(href.endswith("/api/runs/old/config.json") and served == written and b'"version"' in served,
                  "runs: each file of a run links to it as written (the version-1 config.json, its old keys and all)", href)
            p = problems()
            check(not p, "runs with a version-1 folder: loads with no console error", "; ".join(p))
            screenshot("runs-versions.png")
            open_page("/runs.html?runs=tiny", url)
            network_idle()
            p = problems()
            check(not p, "runs with eval.json and analysis.json: loads with no console error", "; ".join(p))
            note = js("return document.querySelector('section.mazes').textContent")
            check("of task prefix-sums; only mazes are drawn" in note and not js("return document.querySelectorAll('section.mazes canvas').length"),
                  "runs: a prefix-sums eval_trace.json draws no maze, with a one-line note", note)
            with open(os.path.join(d, "eval.json")) as f:
                ev = json.load(f)
            with open(os.path.join(d, "analysis.json")) as f:
                an = json.load(f)
            drawn = plot_data()
            v, a = ev["splits"]["val"], an["splits"]["val"]
            check(same(drawn[4], [[v["iterations"], v["exact"]]]) and same(drawn[5], [[v["iterations"], v["per_position"]]])
                  and same(drawn[7], [[v["iterations"], v["unchanged"]]]),
                  "runs: accuracy and settled predictions against iterations are eval.json's")
            check(same(drawn[8], [[a["accuracy"]["iterations"], a["accuracy"]["exact"]]]),
                  "runs: the analysis plot is analysis.json's accuracy against iterations")
            xs = [math.log2(lv["size"]) for lv in sc["levels"]]
            rules = range(len(sc["levels"][0]["result"]["rules"]))
            check(same(drawn[9], [[xs, [lv["result"]["rules"][i]["mean_iters"] for lv in sc["levels"]]] for i in rules])
                  and same(drawn[10], [[xs, [lv["result"]["exact_at_max"] for lv in sc["levels"]]]] +
                           [[xs, [lv["result"]["rules"][i]["exact"] for lv in sc["levels"]]] for i in rules]),
                  "runs: the scaling plots are eval_scaling.json's iterations and accuracy per rule against log2 size")
            row = js("return [...document.querySelector('table.analysis tbody tr').cells].map(c => c.textContent)")

            def pct(x):
                # JavaScript's `${Number((100 * x).toPrecision(3))}%`: three significant digits,
                # trailing zeros dropped.
                return f"{float(f'{100 * x:.3g}'):g}%"
            check(row[1] == "val" and row[3] == pct(a["convergence"]["settle"]) and row[6] == pct(a["convergence"]["wander"]),
                  "runs: the analysis table shows analysis.json's convergence classes", json.dumps(row))
            screenshot("runs-analysis.png")
        finally:
            if second:
                second.terminate()
                second.wait()
            shutil.rmtree(tmp, ignore_errors=True)
except Exception as e:  # noqa: BLE001 -- any failure is one failed check with its cause
    import traceback
    check(False, "end-to-end run", "".join(traceback.format_exception(e)))
finally:
    driver.quit()
    if server:
        server.terminate()
        server.wait()
    shutil.rmtree(sweeps, ignore_errors=True)

print(f"\n{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
