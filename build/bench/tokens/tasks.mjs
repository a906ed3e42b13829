// Issue 36 (b): a suite of multi-step tasks over a real repository and a real web page, each done
// two ways through a real hub (`switchboard serve --stdio`, the official TypeScript SDK as the
// client), counting in o200k tokens (gpt-tokenizer, pinned in package.json) what passes through
// the model:
//
//   - direct: the full-mode catalogue (tools/list as the client gets it: each tool's name,
//     description and input schema, plus initialize's instructions; as count.mjs counts it) +
//     each call's name and arguments + each call's result text, for the shortest correct
//     sequence of direct calls (hand-written: the calls a model would make);
//   - script: the script-mode catalogue + one script_run call (the script's text) + its result.
//
// Both ways must give the same answer (asserted). The repository is a clone of this checkout's
// HEAD (read-only to the tasks; the patch task writes a scratch copy of three files inside it,
// removed afterwards); the web pages are served on 127.0.0.1 by this script and fetched with the
// hub's web_fetch (the loopback address allow-listed with SWITCHBOARD_FETCH_ALLOW).
//
//   node build/bench/tokens/tasks.mjs [--bin PATH] [--only id,id] [--keep]
//
// Without --bin it builds the binary (CGO_ENABLED=0 go build) into a temporary directory. The
// callers task needs gopls ($(go env GOPATH)/bin/gopls, `make lsp-deps`); without it that task
// is skipped and the report says so. `make bench-tokens` runs it after count.mjs.
import { execFileSync } from 'node:child_process';
import { deepStrictEqual } from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..', '..');
const sdkDir = path.join(repoRoot, 'test', 'node', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const sdkImport = (p) => import(pathToFileURL(path.join(sdkDir, p)).href);

const tok = (s) => encode(s).length;
const goEnv = (k) => execFileSync('go', ['env', k], { encoding: 'utf8' }).trim();

// ---------------------------------------------------------------------------------------------
// The web pages: a table of cities, and an index of releases linking to a page per release.

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}
const REGIONS = ['Africa', 'Americas', 'Asia', 'Europe', 'Oceania'];
function cities() {
  const r = rng(36);
  const syl = ['ka', 'lo', 'ri', 'ma', 'sen', 'tor', 'vil', 'du', 'ne', 'ba', 'gra', 'sto', 'lin', 'pe', 'ur'];
  const out = [];
  for (let i = 0; i < 150; i++) {
    const n = 2 + Math.floor(r() * 2);
    let name = '';
    for (let j = 0; j < n; j++) name += syl[Math.floor(r() * syl.length)];
    name = name[0].toUpperCase() + name.slice(1) + ` ${i}`;
    out.push({ name, country: `Country ${Math.floor(r() * 40)}`, region: REGIONS[Math.floor(r() * 5)],
      population: 50_000 + Math.floor(r() * 9_000_000), area: 20 + Math.floor(r() * 2_000) });
  }
  return out;
}
function releases() {
  const r = rng(7);
  const hex = () => Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');
  const out = [];
  for (let v = 0; v < 8; v++) {
    const arts = [];
    for (const os_ of ['linux', 'darwin', 'windows']) {
      for (const arch of ['amd64', 'arm64']) {
        for (const kind of ['tar.gz', 'zip']) {
          arts.push({ name: `switchboard_1.${v}.0_${os_}_${arch}.${kind}`, size: 8_000_000 + Math.floor(r() * 30_000_000), sha: hex() });
        }
      }
    }
    out.push({ tag: `v1.${v}.0`, date: `2026-0${1 + v}-15`, arts });
  }
  return out;
}
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title>` +
    '<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{padding:2px 6px}</style></head>' +
    `<body><nav><a href="/">Home</a> · <a href="/cities">Cities</a> · <a href="/releases">Releases</a></nav>` +
    `<h1>${esc(title)}</h1>${body}<footer><p>Generated for the Switchboard token benchmark.</p></footer></body></html>`;
}
function table(head, rows) {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('') + '</tbody></table>';
}
function startWeb() {
  const cs = cities();
  const rs = releases();
  const srv = http.createServer((req, res) => {
    const u = req.url;
    let html;
    if (u === '/cities') {
      html = page('Cities of the world', '<p>Population and area of 150 cities.</p>' +
        table(['City', 'Country', 'Region', 'Population', 'Area (km²)'], cs.map((c) => [c.name, c.country, c.region, c.population, c.area])));
    } else if (u === '/releases') {
      html = page('Releases', '<p>Every release, newest last.</p><ul>' +
        rs.map((r) => `<li><a href="/releases/${r.tag}">${r.tag}</a> (${r.date})</li>`).join('') + '</ul>');
    } else if (u.startsWith('/releases/')) {
      const r = rs.find((x) => `/releases/${x.tag}` === u);
      if (r) {
        html = page(`Release ${r.tag}`, `<p>Released ${r.date}. Download the archive for your platform and check its SHA-256.</p>` +
          table(['Artifact', 'Size (bytes)', 'SHA-256'], r.arts.map((a) => [a.name, a.size, a.sha])));
      }
    }
    if (!html) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

// ---------------------------------------------------------------------------------------------
// The tasks. direct(call, ctx) makes the calls a model would make and returns the answer the
// model would give from their results; script is the script_run code that returns that answer.

const tasks = [
  {
    id: 'todos',
    check: (a) => a.todos.length > 0 && a.largest.length === 3 && a.largest.every((f) => f.first),
    what: 'TODO/FIXME count per Go package, and the three largest Go files with their first line',
    async direct(call) {
      const g = await call('file_grep', { pattern: '\\b(TODO|FIXME)\\b', glob: '*.go', max_results: 10000 });
      const per = {};
      for (const m of g.matches) per[path.posix.dirname(m.path)] = (per[path.posix.dirname(m.path)] ?? 0) + 1;
      const m = await call('project_map', { maxDepth: 6 });
      const big = m.entries.filter((e) => e.type === 'file' && e.path.endsWith('.go')).sort((a, b) => b.size - a.size).slice(0, 3);
      const largest = [];
      for (const e of big) {
        const r = await call('file_read', { path: e.path, limit: 1 });
        largest.push({ path: e.path, size: e.size, first: r.content.split('\n')[0] });
      }
      return { todos: Object.entries(per).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)), largest };
    },
    script: `const g = await tools.file_grep({pattern: "\\\\b(TODO|FIXME)\\\\b", glob: "*.go", max_results: 10000});
const per = {};
for (const m of g.matches) { const d = m.path.replace(/\\/[^/]*$/, ""); per[d] = (per[d] || 0) + 1; }
const map = await tools.project_map({maxDepth: 6});
const big = map.entries.filter(e => e.type === "file" && e.path.endsWith(".go")).sort((a, b) => b.size - a.size).slice(0, 3);
const largest = [];
for (const e of big) {
  const r = await tools.file_read({path: e.path, limit: 1});
  largest.push({path: e.path, size: e.size, first: r.content.split("\\n")[0]});
}
return {todos: Object.entries(per).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)), largest};`,
  },
  {
    id: 'callers',
    check: (a) => a.length > 2 && a.every((c) => c.signature.startsWith('func ')),
    what: 'every caller of fetch.ParseAllow with the caller\'s signature (gopls)',
    needs: 'gopls',
    async direct(call) {
      const c = await call('code_calls', { symbol: 'fetch.ParseAllow' });
      const out = [];
      for (const k of c.calls) {
        const h = await call('code_hover', { path: k.path, symbol: k.name });
        out.push({ caller: k.name, path: k.path, line: k.line, signature: h.contents.split('\n')[1] });
      }
      return out;
    },
    script: `const c = await tools.code_calls({symbol: "fetch.ParseAllow"});
const out = [];
for (const k of c.calls) {
  const h = await tools.code_hover({path: k.path, symbol: k.name});
  out.push({caller: k.name, path: k.path, line: k.line, signature: h.contents.split("\\n")[1]});
}
return out;`,
  },
  {
    id: 'web-table',
    check: (a) => Object.values(a.regions).reduce((n, g) => n + g.cities, 0) === 150 && a.densest.length === 3,
    what: 'from a page\'s table of 150 cities: count and population per region, the three densest cities of Europe',
    async direct(call, ctx) {
      const p = await call('web_fetch', { url: `${ctx.web}/cities`, format: 'raw' });
      return citiesAnswer(p.content);
    },
    script: (ctx) => `const p = await tools.web_fetch({url: "${ctx.web}/cities", format: "raw"});
const rows = [...p.content.matchAll(/<tr>(.*?)<\\/tr>/g)].map(m => [...m[1].matchAll(/<td>(.*?)<\\/td>/g)].map(x => x[1])).filter(r => r.length);
const regions = {};
for (const [, , region, pop] of rows) { const g = regions[region] ??= {cities: 0, population: 0}; g.cities++; g.population += +pop; }
const densest = rows.filter(r => r[2] === "Europe").map(r => ({city: r[0], density: Math.round(r[3] / r[4])})).sort((a, b) => b.density - a.density).slice(0, 3);
return {regions: Object.fromEntries(Object.entries(regions).sort()), densest};`,
  },
  {
    id: 'web-releases',
    check: (a) => a.length === 8 && a.every((r) => r.total > r.size),
    what: 'follow a page\'s links to 8 release pages: the largest artifact and total download size of each',
    async direct(call, ctx) {
      const idx = await call('web_fetch', { url: `${ctx.web}/releases` });
      const out = [];
      for (const [, tag, href] of idx.content.matchAll(/\[(v[\d.]+)\]\(([^)]+)\)/g)) {
        const p = await call('web_fetch', { url: href, format: 'raw' });
        out.push({ tag, ...releaseAnswer(p.content) });
      }
      return out;
    },
    script: (ctx) => `const idx = await tools.web_fetch({url: "${ctx.web}/releases"});
const out = [];
for (const [, tag, href] of idx.content.matchAll(/\\[(v[\\d.]+)\\]\\(([^)]+)\\)/g)) {
  const p = await tools.web_fetch({url: href, format: "raw"});
  const rows = [...p.content.matchAll(/<tr>(.*?)<\\/tr>/g)].map(m => [...m[1].matchAll(/<td>(.*?)<\\/td>/g)].map(x => x[1])).filter(r => r.length);
  const big = rows.reduce((a, r) => (+r[1] > +a[1] ? r : a));
  out.push({tag, largest: big[0], size: +big[1], total: rows.reduce((s, r) => s + +r[1], 0)});
}
return out;`,
  },
  {
    id: 'patch',
    check: (a) => a.length === 2 && a.every((f) => f.added > 0 && f.added === f.removed),
    what: 'a grep, two reads and a patch: rename ParseAllow to ParseAllowList in a scratch copy of internal/fetch',
    scratch: true,
    async direct(call) {
      const g = await call('file_grep', { pattern: 'ParseAllow', path: SCRATCH, literal: true });
      const files = [...new Set(g.matches.map((m) => m.path))].filter((p) => !p.endsWith('_test.go'));
      let diff = '';
      for (const f of files) {
        const r = await call('file_read', { path: f });
        diff += renameDiff(f, r.content, 'ParseAllow', 'ParseAllowList');
      }
      const p = await call('file_patch', { patch: diff });
      return p.files.map((f) => ({ path: f.path, added: f.added, removed: f.removed }));
    },
    script: `const g = await tools.file_grep({pattern: "ParseAllow", path: "${'SCRATCH'}", literal: true});
const files = [...new Set(g.matches.map(m => m.path))].filter(p => !p.endsWith("_test.go"));
let diff = "";
for (const f of files) {
  const lines = (await tools.file_read({path: f})).content.split("\\n");
  diff += \`--- a/\${f}\\n+++ b/\${f}\\n\`;
  lines.forEach((l, i) => { if (l.includes("ParseAllow")) diff += \`@@ -\${i + 1},1 +\${i + 1},1 @@\\n-\${l}\\n+\${l.replaceAll("ParseAllow", "ParseAllowList")}\\n\`; });
}
const p = await tools.file_patch({patch: diff});
return p.files.map(f => ({path: f.path, added: f.added, removed: f.removed}));`,
  },
  {
    id: 'git-churn',
    check: (a) => a.length === 10,
    what: 'the last 10 commits: files changed and lines added/removed by each',
    async direct(call) {
      const l = await call('git_log', { max_count: 10 });
      const out = [];
      for (const c of l.commits) {
        const s = await call('git_show', { ref: c.hash });
        out.push(churn(c, s.files));
      }
      return out;
    },
    script: `const l = await tools.git_log({max_count: 10});
const out = [];
for (const c of l.commits) {
  const s = await tools.git_show({ref: c.hash});
  out.push({commit: c.hash.slice(0, 7), subject: c.subject, files: s.files.length,
    added: s.files.reduce((n, f) => n + f.added, 0), removed: s.files.reduce((n, f) => n + f.removed, 0)});
}
return out;`,
  },
  {
    id: 'tests-per-pkg',
    check: (a) => a.total > 100 && a.top.length === 10,
    what: 'the ten Go packages with the most test functions, and the total',
    async direct(call) {
      const g = await call('file_grep', { pattern: '^func (Test|Benchmark|Fuzz)', glob: '*_test.go', max_results: 10000 });
      return topPackages(g.matches);
    },
    script: `const g = await tools.file_grep({pattern: "^func (Test|Benchmark|Fuzz)", glob: "*_test.go", max_results: 10000});
const per = {};
for (const m of g.matches) { const d = m.path.replace(/\\/[^/]*$/, ""); per[d] = (per[d] || 0) + 1; }
return {total: g.matches.length, top: Object.entries(per).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10)};`,
  },
  {
    id: 'snapshots',
    check: (a) => a.documented > 50 && a.snapshots > 50,
    what: 'tools in docs/tools.md\'s table without a schema snapshot in mcp/__toolsnaps__, and snapshots of no documented tool',
    async direct(call) {
      const d = await call('dir_list', { path: 'mcp/__toolsnaps__' });
      const t = await call('file_read', { path: 'docs/tools.md' });
      return snapshotsAnswer(d.entries.map((e) => e.name), t.content);
    },
    script: `const d = await tools.dir_list({path: "mcp/__toolsnaps__"});
const t = await tools.file_read({path: "docs/tools.md"});
const snaps = new Set(d.entries.map(e => e.name).filter(n => n.endsWith(".json")).map(n => n.slice(0, -5)));
const documented = new Set([...t.content.matchAll(/^\\| \\[\`([a-z_]+)\`\\]/gm)].map(m => m[1]));
return {documented: documented.size, snapshots: snaps.size, undocumented: [...snaps].filter(n => !documented.has(n)).sort(), unsnapshotted: [...documented].filter(n => !snaps.has(n)).sort()};`,
  },
  {
    id: 'make-targets',
    check: (a) => a.mentioned > 5,
    what: '`make` targets docs/development.md mentions that the Makefile does not define',
    async direct(call) {
      const m = await call('file_read', { path: 'Makefile' });
      const d = await call('file_read', { path: 'docs/development.md' });
      return makeAnswer(m.content, d.content);
    },
    script: `const m = (await tools.file_read({path: "Makefile"})).content;
const d = (await tools.file_read({path: "docs/development.md"})).content;
const defined = new Set([...m.matchAll(/^([A-Za-z][\\w.-]*(?: [A-Za-z][\\w.-]*)*):(?!=)/gm)].flatMap(x => x[1].split(" ")));
const mentioned = new Set([...d.matchAll(/\`make ([a-z][\\w-]*)/g)].map(x => x[1]));
return {mentioned: mentioned.size, missing: [...mentioned].filter(t => !defined.has(t)).sort()};`,
  },
  {
    id: 'deps-usage',
    check: (a) => a.length > 10 && a[0][1] > 0,
    what: 'each direct requirement in go.mod and how many Go files import it',
    async direct(call) {
      const m = await call('file_read', { path: 'go.mod' });
      const mods = directRequires(m.content);
      const g = await call('file_grep', { pattern: `"(${mods.map((x) => x.replace(/[.]/g, '\\.')).join('|')})[/"]`, glob: '*.go', max_results: 10000 });
      return depsAnswer(mods, g.matches);
    },
    script: `const gomod = (await tools.file_read({path: "go.mod"})).content;
const block = gomod.match(/^require \\(\\n([\\s\\S]*?)^\\)/m)[1];
const mods = block.split("\\n").filter(l => l.trim() && !l.includes("// indirect")).map(l => l.trim().split(/\\s+/)[0]);
const g = await tools.file_grep({pattern: \`"(\${mods.map(x => x.replace(/[.]/g, "\\\\.")).join("|")})[/"]\`, glob: "*.go", max_results: 10000});
const files = Object.fromEntries(mods.map(x => [x, new Set()]));
for (const h of g.matches) for (const x of mods) if (h.text.includes('"' + x + '"') || h.text.includes('"' + x + '/')) files[x].add(h.path);
return mods.map(x => [x, files[x].size]).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));`,
  },
  {
    id: 'undocumented',
    check: (a) => a.exported > 10,
    what: 'exported functions in internal/fetch and internal/patch: how many, and those without a doc comment',
    async direct(call) {
      const out = { exported: 0, undocumented: [] };
      for (const dir of ['internal/fetch', 'internal/patch']) {
        const gl = await call('file_glob', { pattern: '*.go', path: dir });
        for (const f of gl.paths.filter((p) => !p.endsWith('_test.go'))) {
          const r = await call('file_read', { path: f });
          const u = undocumented(f, r.content);
          out.exported += u.exported;
          out.undocumented.push(...u.undocumented);
        }
      }
      return out;
    },
    script: `const out = {exported: 0, undocumented: []};
for (const dir of ["internal/fetch", "internal/patch"]) {
  const gl = await tools.file_glob({pattern: "*.go", path: dir});
  for (const f of gl.paths.filter(p => !p.endsWith("_test.go"))) {
    const lines = (await tools.file_read({path: f})).content.split("\\n");
    lines.forEach((l, i) => {
      const m = l.match(/^func (?:\\([^)]*\\) )?([A-Z]\\w*)/);
      if (m) { out.exported++; if (!(lines[i - 1] || "").startsWith("//")) out.undocumented.push(f + ":" + (i + 1) + " " + m[1]); }
    });
  }
}
return out;`,
  },
  {
    id: 'bench-sections',
    check: (a) => a.length > 5 && a.some((x) => x.rows > 0),
    what: 'docs/benchmarks.md\'s sections with the number of table rows and the date each was measured',
    async direct(call) {
      const r = await call('file_read', { path: 'docs/benchmarks.md' });
      return sectionsAnswer(r.content);
    },
    script: `const c = (await tools.file_read({path: "docs/benchmarks.md"})).content;
const out = [];
let cur = null;
for (const l of c.split("\\n")) {
  if (l.startsWith("## ")) out.push(cur = {section: l.slice(3), rows: 0, date: null});
  else if (cur && /^\\|(?!-)/.test(l) && !/^\\|\\s*-/.test(l)) cur.rows++;
  if (cur && !cur.date) { const d = l.match(/\\b(20\\d\\d-\\d\\d-\\d\\d)\\b/); if (d) cur.date = d[1]; }
}
return out;`,
  },
];
const SCRATCH = 'bench-scratch';

// A script-mode model that does not know a tool's arguments yet looks it up first: one
// tools_search per distinct tool the script calls, in words (not the tool's name), limit 3. The
// "with searches" columns add these calls and their results to the script's side.
const TOOL_QUERY = {
  file_grep: 'search file contents for a regular expression',
  project_map: 'tree of the project with file sizes',
  file_read: 'read a file',
  code_calls: 'who calls a function',
  code_hover: 'signature and documentation of a symbol',
  web_fetch: 'fetch a web page by URL',
  file_patch: 'apply a unified diff patch',
  git_log: 'list recent git commits',
  git_show: 'show one git commit with its changed files',
  dir_list: 'list a directory',
  file_glob: 'find files matching a glob pattern',
};
tasks.find((t) => t.id === 'patch').script = tasks.find((t) => t.id === 'patch').script.replace('SCRATCH', SCRATCH);

// The model's reading of direct results (what it would answer), kept apart from the scripts'
// code so that the two ways are checked against each other.
// web_fetch's Markdown drops tables' structure (cells run together), so the table tasks fetch
// the raw HTML and read its rows.
function htmlRows(html) {
  return [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1].matchAll(/<td>(.*?)<\/td>/g)].map((x) => x[1])).filter((r) => r.length);
}
function citiesAnswer(md) {
  const rows = htmlRows(md);
  const regions = {};
  for (const r of rows) {
    regions[r[2]] ??= { cities: 0, population: 0 };
    regions[r[2]].cities++;
    regions[r[2]].population += Number(r[3]);
  }
  const densest = rows.filter((r) => r[2] === 'Europe').map((r) => ({ city: r[0], density: Math.round(r[3] / r[4]) }))
    .sort((a, b) => b.density - a.density).slice(0, 3);
  return { regions: Object.fromEntries(Object.entries(regions).sort()), densest };
}
function releaseAnswer(md) {
  const rows = htmlRows(md);
  let big = rows[0];
  for (const r of rows) if (Number(r[1]) > Number(big[1])) big = r;
  return { largest: big[0], size: Number(big[1]), total: rows.reduce((s, r) => s + Number(r[1]), 0) };
}
function renameDiff(f, content, from, to) {
  let d = `--- a/${f}\n+++ b/${f}\n`;
  content.split('\n').forEach((l, i) => {
    if (l.includes(from)) d += `@@ -${i + 1},1 +${i + 1},1 @@\n-${l}\n+${l.replaceAll(from, to)}\n`;
  });
  return d;
}
function churn(c, files) {
  return { commit: c.hash.slice(0, 7), subject: c.subject, files: files.length,
    added: files.reduce((n, f) => n + f.added, 0), removed: files.reduce((n, f) => n + f.removed, 0) };
}
function topPackages(matches) {
  const per = {};
  for (const m of matches) per[path.posix.dirname(m.path)] = (per[path.posix.dirname(m.path)] ?? 0) + 1;
  return { total: matches.length, top: Object.entries(per).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10) };
}
function snapshotsAnswer(names, md) {
  const snaps = new Set(names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)));
  const documented = new Set([...md.matchAll(/^\| \[`([a-z_]+)`\]/gm)].map((m) => m[1]));
  return { documented: documented.size, snapshots: snaps.size,
    undocumented: [...snaps].filter((n) => !documented.has(n)).sort(), unsnapshotted: [...documented].filter((n) => !snaps.has(n)).sort() };
}
function makeAnswer(makefile, doc) {
  const defined = new Set();
  for (const l of makefile.split('\n')) {
    const m = l.match(/^([A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*)*):(?!=)/);
    if (m) for (const t of m[1].split(' ')) defined.add(t);
  }
  const mentioned = new Set([...doc.matchAll(/`make ([a-z][\w-]*)/g)].map((x) => x[1]));
  return { mentioned: mentioned.size, missing: [...mentioned].filter((t) => !defined.has(t)).sort() };
}
function directRequires(gomod) {
  const block = gomod.match(/^require \(\n([\s\S]*?)^\)/m)[1];
  return block.split('\n').filter((l) => l.trim() && !l.includes('// indirect')).map((l) => l.trim().split(/\s+/)[0]);
}
function depsAnswer(mods, matches) {
  const files = Object.fromEntries(mods.map((x) => [x, new Set()]));
  for (const h of matches) for (const x of mods) if (h.text.includes(`"${x}"`) || h.text.includes(`"${x}/`)) files[x].add(h.path);
  return mods.map((x) => [x, files[x].size]).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}
function undocumented(f, content) {
  const lines = content.split('\n');
  const out = { exported: 0, undocumented: [] };
  lines.forEach((l, i) => {
    const m = l.match(/^func (?:\([^)]*\) )?([A-Z]\w*)/);
    if (!m) return;
    out.exported++;
    if (!(lines[i - 1] ?? '').startsWith('//')) out.undocumented.push(`${f}:${i + 1} ${m[1]}`);
  });
  return out;
}
function sectionsAnswer(md) {
  const out = [];
  let cur = null;
  for (const l of md.split('\n')) {
    if (l.startsWith('## ')) out.push(cur = { section: l.slice(3), rows: 0, date: null });
    else if (cur && /^\|(?!-)/.test(l) && !/^\|\s*-/.test(l)) cur.rows++;
    if (cur && !cur.date) {
      const d = l.match(/\b(20\d\d-\d\d-\d\d)\b/);
      if (d) cur.date = d[1];
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The hub and the counting.

function parseArgs(argv) {
  const o = { only: null, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--bin') o.bin = path.resolve(argv[++i]);
    else if (a === '--only') o.only = new Set(argv[++i].split(','));
    else if (a === '--keep') o.keep = true;
    else throw new Error(`unknown argument ${a}; see the header of tasks.mjs`);
  }
  return o;
}

async function connect(ctx, mode) {
  const { Client } = await sdkImport('client/index.js');
  const { StdioClientTransport } = await sdkImport('client/stdio.js');
  const transport = new StdioClientTransport({
    command: ctx.bin, args: ['serve', '--stdio', '--workspace', ctx.workspace, '--tools-mode', mode], env: ctx.env, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c) => { stderr += c; });
  const client = new Client({ name: 'switchboard-token-bench', version: '1.0.0' });
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const r = await client.listTools(cursor ? { cursor } : {});
    tools.push(...r.tools);
    cursor = r.nextCursor;
  } while (cursor);
  const defs = JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })));
  const instructions = client.getInstructions() ?? '';
  return { client, stderr: () => stderr, tools: tools.length, catalogue: tok(defs) + tok(instructions) };
}

// counter wraps a client: each call's name and arguments and its result text are counted.
function counter(client) {
  const c = { calls: 0, args: 0, results: 0, names: new Set() };
  c.call = async (name, args, opts) => {
    c.calls++;
    c.names.add(name);
    c.args += tok(JSON.stringify({ name, arguments: args }));
    const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000, ...opts });
    const text = (r.content ?? []).filter((x) => x.type === 'text').map((x) => x.text).join('\n');
    c.results += tok(text);
    if (r.isError) throw new Error(`${name}: ${text}`);
    return { r, text };
  };
  return c;
}

function resetScratch(ws) {
  const dir = path.join(ws, SCRATCH);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  for (const f of ['fetch.go', 'ssrf.go', 'fetch_test.go']) fs.copyFileSync(path.join(ws, 'internal', 'fetch', f), path.join(dir, f));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const id of o.only ?? []) if (!tasks.some((t) => t.id === id)) throw new Error(`--only: no task ${id}; tasks: ${tasks.map((t) => t.id).join(', ')}`);
  if (!fs.existsSync(sdkDir)) throw new Error(`${sdkDir}: missing; run make node-deps`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-tokens-'));
  let web;
  let full;
  let script;
  try {
    await runSuite(o, tmp, (w) => { web = w; }, (f, s) => { full = f; script = s; });
  } finally {
    await full?.client.close();
    await script?.client.close();
    web?.close();
    for (const [mode, h] of [['full', full], ['script', script]]) {
      if (h?.stderr().trim()) console.error(`the ${mode}-mode hub's stderr:\n${h.stderr()}`);
    }
    if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function runSuite(o, tmp, setWeb, setHubs) {
  let bin = o.bin;
  if (!bin) {
    bin = path.join(tmp, 'switchboard');
    execFileSync('go', ['build', '-o', bin, '.'], { cwd: repoRoot, env: { ...process.env, CGO_ENABLED: '0' }, stdio: 'inherit' });
  }
  const workspace = path.join(tmp, 'repo');
  execFileSync('git', ['clone', '--quiet', repoRoot, workspace]);
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: workspace, encoding: 'utf8' }).trim();
  const home = path.join(tmp, 'home');
  fs.mkdirSync(path.join(home, 'run'), { recursive: true, mode: 0o700 });
  const GOPATH = goEnv('GOPATH');
  const gopls = [path.join(GOPATH, 'bin'), ...(process.env.PATH ?? '').split(':')].some((d) => d && fs.existsSync(path.join(d, 'gopls')));
  const env = {
    PATH: `${path.join(GOPATH, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: home, SHELL: '/bin/sh',
    XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data'), XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CACHE_HOME: path.join(home, 'cache'), XDG_RUNTIME_DIR: path.join(home, 'run'),
    GOPATH, GOMODCACHE: goEnv('GOMODCACHE'), GOCACHE: goEnv('GOCACHE'), GOPROXY: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod',
    SWITCHBOARD_FETCH_ALLOW: '127.0.0.1',
  };
  // Calls that take long (project_map over the whole tree, gopls's first load) stay calls: no
  // task handle after the default 45 s.
  fs.mkdirSync(path.join(env.XDG_CONFIG_HOME, 'switchboard'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(env.XDG_CONFIG_HOME, 'switchboard', 'config.toml'), 'task_after = "10m"\n', { mode: 0o600 });
  const web = await startWeb();
  setWeb(web);
  const ctx = { bin, workspace, env, web: `http://127.0.0.1:${web.address().port}` };
  const run = tasks.filter((t) => !o.only || o.only.has(t.id));
  const skipped = [];
  const full = await connect(ctx, 'full');
  const script = await connect(ctx, 'script').catch(async (err) => { await full.client.close(); throw err; });
  setHubs(full, script);
  const rows = [];
  for (const t of run) {
    if (t.needs === 'gopls' && !gopls) {
      skipped.push(`${t.id}: gopls is not installed (make lsp-deps)`);
      continue;
    }
    if (t.scratch) resetScratch(workspace);
    const d = counter(full.client);
    const directAnswer = await t.direct(async (name, args) => {
      const { r, text } = await d.call(name, args);
      return r.structuredContent ?? JSON.parse(text);
    }, ctx);
    if (t.scratch) resetScratch(workspace);
    const s = counter(script.client);
    const code = typeof t.script === 'function' ? t.script(ctx) : t.script;
    const { r } = await s.call('script_run', { code, timeout: 300 });
    const scriptAnswer = r.structuredContent?.result;
    try {
      deepStrictEqual(JSON.parse(JSON.stringify(scriptAnswer)), JSON.parse(JSON.stringify(directAnswer)));
    } catch (err) {
      throw new Error(`task ${t.id}: the script's answer differs from the direct calls':\n${err.message}`);
    }
    if (!t.check(directAnswer)) throw new Error(`task ${t.id}: implausible answer ${JSON.stringify(directAnswer).slice(0, 500)}`);
    if (t.scratch) fs.rmSync(path.join(workspace, SCRATCH), { recursive: true, force: true });
    const q = counter(script.client);
    const found = [];
    for (const name of d.names) {
      const { r: sr } = await q.call('tools_search', { query: TOOL_QUERY[name], limit: 3 });
      if ((sr.structuredContent?.tools ?? []).some((x) => x.name === name)) found.push(name);
    }
    rows.push({ t, d, s, q, found });
    console.error(`task ${t.id}: direct ${d.calls} calls, ${d.args + d.results} tokens; script ${s.args + s.results} tokens`);
  }
  report(rows, full, script, skipped, head);
}

function report(rows, full, script, skipped, head) {
  const ratio = (a, b) => `${(a / b).toFixed(3)}×`;
  console.log(`Repository: a clone of ${head}; catalogue: full ${full.catalogue} tokens (${full.tools} tools), script ${script.catalogue} tokens (${script.tools} tools).`);
  console.log('');
  console.log('| task | direct calls | direct: args + results | direct total (+ catalogue) | script: code + result | script total (+ catalogue) | total ratio | ratio without catalogues | tools_search calls (tool found) + tokens | ratio with searches |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const sum = { dw: 0, sw: 0, dt: 0, st: 0, calls: 0, qw: 0, qn: 0, qf: 0 };
  for (const { t, d, s, q, found } of rows) {
    const dw = d.args + d.results;
    const sw = s.args + s.results;
    const qw = q.args + q.results;
    const dt = full.catalogue + dw;
    const st = script.catalogue + sw;
    Object.assign(sum, { dw: sum.dw + dw, sw: sum.sw + sw, dt: sum.dt + dt, st: sum.st + st, calls: sum.calls + d.calls, qw: sum.qw + qw, qn: sum.qn + q.calls, qf: sum.qf + found.length });
    console.log(`| ${t.id}: ${t.what} | ${d.calls} | ${d.args} + ${d.results} | ${dt} | ${s.args} + ${s.results} | ${st} | ${ratio(st, dt)} | ${ratio(sw, dw)} | ${q.calls} (${found.length}) + ${qw} | ${ratio(st + qw, dt)} |`);
  }
  console.log(`| **all ${rows.length} tasks** | ${sum.calls} | ${sum.dw} | ${sum.dt} | ${sum.sw} | ${sum.st} | **${ratio(sum.st, sum.dt)}** | ${ratio(sum.sw, sum.dw)} | ${sum.qn} (${sum.qf}) + ${sum.qw} | ${ratio(sum.st + sum.qw, sum.dt)} |`);
  const dOne = full.catalogue + sum.dw;
  const sOne = script.catalogue + sum.sw;
  console.log(`\nAll ${rows.length} tasks in one session (the catalogue once): direct ${dOne}, script ${sOne} tokens, ${ratio(sOne, dOne)}; with the searches ${sOne + sum.qw}, ${ratio(sOne + sum.qw, dOne)}.`);
  if (skipped.length) console.log(`\nSkipped: ${skipped.join('; ')}`);
}

try {
  await main();
} catch (err) {
  console.error(`tasks.mjs: ${err?.stack ?? err}`);
  process.exitCode = 1;
}
