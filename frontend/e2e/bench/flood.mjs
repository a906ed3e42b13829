#!/usr/bin/env node
// Dashboard responsiveness while a process floods output (docs/benchmarks.md, section "flood").
//
//   node frontend/e2e/bench/flood.mjs [--bin PATH] [--seconds 15] [--flood yes|gpl|'shell command']
//                                     [--json out.json] [--profile page.cpuprofile] [--trace trace.json]
//
// A real headless switchboard (the e2e harness's Switchboard, own temporary HOME) and Debian's
// Chromium (playwright-core). The dashboard's Processes view is measured twice in the same run:
// with a quiet process selected (the peer), then with a process selected that writes as fast as it
// can. In each phase, for --seconds: page.evaluate round trips every 100 ms (the renderer's event
// loop), requestAnimationFrame callbacks per second, long tasks, and every 2 s a tab round trip
// (Activity, back to Processes, select the process again) with real mouse clicks. It prints one
// Markdown table, idle and flood side by side with flood/idle.
//
// Not part of the vitest e2e suite: it reuses the suite's TypeScript harness (e2e/stack.ts,
// e2e/settings.ts, e2e/fixtures.ts) through Vite's runnerImport, which transpiles it on the fly.
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { runnerImport } from 'vite';

const e2eDir = fileURLToPath(new URL('..', import.meta.url));
const load = async (name) => (await runnerImport(path.join(e2eDir, name))).module;
const { Switchboard, buildSwitchboard, freePort } = await load('stack.ts');
const { chromiumArgs, chromiumPath, viewport, uiTimeout } = await load('settings.ts');
const { tid, api, startRecording, recording } = await load('fixtures.ts');

const FLOODS = {
  yes: ['yes', ['some line of text, repeated as fast as the pipe takes it']],
  gpl: ['sh', ['-c', 'while :; do cat /usr/share/common-licenses/GPL-3; done']],
};
const QUIET = ['sh', ['-c', 'while :; do date; sleep 1; done']];

const { values: opt } = parseArgs({
  options: {
    bin: { type: 'string', default: process.env.SWITCHBOARD_E2E_BIN ?? '' },
    seconds: { type: 'string', default: '15' },
    flood: { type: 'string', default: 'yes' },
    json: { type: 'string' },
    'tab-every': { type: 'string', default: '2000' },
    profile: { type: 'string' }, // write a V8 CPU profile of the page during the flood phase here
    trace: { type: 'string' }, // write a Chromium trace (devtools.timeline) of the flood phase here
  },
});
const phaseMs = Number(opt.seconds) * 1000;
const tabEveryMs = Number(opt['tab-every']);
const floodCmd = FLOODS[opt.flood] ?? ['sh', ['-c', opt.flood]];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function quantile(xs, q) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
const median = (xs) => quantile(xs, 0.5);
const max = (xs) => (xs.length ? Math.max(...xs) : NaN);

// ---------------------------------------------------------------------------------------------
// CPU time of a process tree from /proc (utime+stime of every descendant still alive).

const CLK_TCK = 100;
function procTable() {
  const t = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      t.set(Number(d), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // exited meanwhile
    }
  }
  return t;
}
function treeTicks(table, root) {
  let sum = 0;
  const stack = [root];
  const seen = new Set();
  while (stack.length) {
    const pid = stack.pop();
    if (seen.has(pid)) continue;
    seen.add(pid);
    const e = table.get(pid);
    if (!e) continue;
    sum += e.ticks;
    for (const [p, v] of table) if (v.ppid === pid) stack.push(p);
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// In-page probes: rAF counter, long tasks, Event Timing (input → next paint).

function installProbes() {
  const b = {
    frames: 0,
    lastFrame: 0,
    maxGap: 0,
    longTaskMs: 0,
    longTasks: 0,
    events: [],
    chars: 0,
    t0: performance.now(),
    reset() {
      this.chars = 0;
      this.frames = 0;
      this.maxGap = 0;
      this.longTaskMs = 0;
      this.longTasks = 0;
      this.events = [];
      this.t0 = performance.now();
      this.lastFrame = this.t0;
    },
    read() {
      return {
        elapsedMs: performance.now() - this.t0,
        frames: this.frames,
        maxGapMs: this.maxGap,
        longTaskMs: this.longTaskMs,
        longTasks: this.longTasks,
        events: this.events,
        chars: this.chars,
      };
    },
  };
  const tick = (t) => {
    b.frames++;
    if (b.lastFrame) b.maxGap = Math.max(b.maxGap, t - b.lastFrame);
    b.lastFrame = t;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      b.longTasks++;
      b.longTaskMs += e.duration;
    }
  }).observe({ type: 'longtask' });
  // Event Timing: duration = from the input's hardware timestamp to the next paint after its
  // handlers ran. Only entries of at least 16 ms are reported; none means every click was faster.
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'click' || e.name === 'pointerdown') b.events.push({ name: e.name, duration: e.duration });
  }).observe({ type: 'event', durationThreshold: 16 });
  // Characters handed to the terminal (its data-chars), summed across terminal remounts: a tab
  // switch destroys the terminal and selecting the process again starts a new one from 0.
  const seen = new WeakMap();
  new MutationObserver((records) => {
    for (const r of records) {
      const cur = Number(r.target.getAttribute('data-chars')) || 0;
      const prev = seen.get(r.target) ?? 0;
      b.chars += cur >= prev ? cur - prev : cur;
      seen.set(r.target, cur);
    }
  }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-chars'] });
  window.__flood = b;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sb-flood-'));
  let bin = opt.bin;
  if (!bin) {
    const t0 = Date.now();
    bin = await buildSwitchboard(tmp);
    console.error(`flood: go build took ${Date.now() - t0} ms`);
  }
  const sb = new Switchboard(bin, 'flood-switchboard');
  let browserServer = null;
  const started = [];
  try {
    // No agentic backend: the IDE bridge points at a port nothing listens on (it retries quietly).
    const server = await sb.start(`ws://127.0.0.1:${await freePort()}/ws`);
    const sbPid = sb.child.proc.pid; // Switchboard keeps its Child private in TypeScript only
    browserServer = await chromium.launchServer({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
    const browserPid = browserServer.process().pid;
    const browser = await chromium.connect(browserServer.wsEndpoint());
    const context = await browser.newContext({ viewport });
    context.setDefaultTimeout(uiTimeout * 4);
    const page = await context.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    // The hub connection as the page sees it: every WebSocket it opens, and the process:<id>
    // output events it receives (byte offsets give the process's own output rate).
    const wire = { sockets: 0, closes: 0, frames: new Map() };
    page.on('websocket', (ws) => {
      if (!ws.url().includes('/ws')) return;
      wire.sockets++;
      ws.on('close', () => wire.closes++);
      ws.on('framereceived', ({ payload }) => {
        if (typeof payload !== 'string' || !payload.includes('"kind":"output"')) return;
        let m;
        try {
          m = JSON.parse(payload);
        } catch {
          return;
        }
        const id = String(m.channel ?? '').replace(/^process:/, '');
        const d = m.data ?? {};
        const end = Number(d.offset) + Buffer.byteLength(String(d.data ?? ''), 'utf8');
        let w = wire.frames.get(id);
        if (!w) wire.frames.set(id, (w = { events: 0, bytes: 0, firstEnd: null, lastEnd: 0, firstAt: 0, lastAt: 0 }));
        w.events++;
        w.bytes += payload.length;
        const now = Date.now();
        if (w.firstEnd === null) {
          w.firstEnd = end;
          w.firstAt = now;
        }
        w.lastEnd = Math.max(w.lastEnd, end);
        w.lastAt = now;
      });
    });

    await page.goto(`${server.dashboardUrl}#processes`);
    await page.locator(tid('hub-status', { status: 'open' })).waitFor();
    await page.evaluate(installProbes);
    await startRecording(page, 'hub', tid('hub-status'), false);

    const startProcess = async ([command, args]) => {
      const info = await api(server, 'POST', '/api/processes', { command, args });
      started.push(info.id);
      return info;
    };
    const center = async (sel) => {
      const box = await page.locator(sel).first().boundingBox();
      if (!box) throw new Error(`${sel} has no box`);
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    };
    const terminal = (id) => tid('process-output', { 'process-id': id });
    /** Clicks a process row and waits until its terminal has been written to. */
    const selectProcess = async (id) => {
      const at = await center(tid('process-row', { 'process-id': id }));
      const t0 = performance.now();
      await page.mouse.click(at.x, at.y);
      await page.waitForFunction((sel) => Number(document.querySelector(sel)?.getAttribute('data-chars')) > 0, terminal(id));
      return performance.now() - t0;
    };

    /** One phase: the process is selected; sample for phaseMs. */
    const measure = async (label, info) => {
      const id = info.id;
      await page.locator(tid('process-row', { 'process-id': id })).waitFor();
      await selectProcess(id);
      await sleep(1000); // let the stream settle before counting
      const res = { label, evaluate: [], toActivity: [], toProcesses: [], select: [] };
      const wireBefore = structuredClone(wire.frames.get(id) ?? null);
      const hubBefore = { sockets: wire.sockets, closes: wire.closes, slow: slowDrops() };
      const cpu0 = { t: performance.now(), table: procTable(), self: process.cpuUsage() };
      await page.evaluate(() => window.__flood.reset());
      const cdp = opt.profile && label === 'flood' ? await page.context().newCDPSession(page) : null;
      const tracing = opt.trace && label === 'flood';
      if (tracing) await page.context().browser().startTracing(page, { path: opt.trace, categories: ['devtools.timeline', 'blink', 'v8', 'toplevel'] });
      if (cdp) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
        await cdp.send('Profiler.start');
      }
      const end = performance.now() + phaseMs;

      const sampler = (async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          await page.evaluate(() => 0);
          const dt = performance.now() - t0;
          res.evaluate.push(dt);
          await sleep(Math.max(0, 100 - dt));
        }
      })();
      const tabs = (async () => {
        await sleep(tabEveryMs / 2);
        while (performance.now() + tabEveryMs / 2 < end) {
          const next = performance.now() + tabEveryMs;
          let at = await center(tid('tab-activity'));
          let t0 = performance.now();
          await page.mouse.click(at.x, at.y);
          await page.locator(tid('activity')).waitFor({ state: 'visible' });
          res.toActivity.push(performance.now() - t0);
          at = await center(tid('tab-processes'));
          t0 = performance.now();
          await page.mouse.click(at.x, at.y);
          await page.locator(tid('processes')).waitFor({ state: 'visible' });
          res.toProcesses.push(performance.now() - t0);
          // Coming back to the tab selects nothing: pick the process again, as a user would.
          res.select.push(await selectProcess(id));
          await sleep(Math.max(0, next - performance.now()));
        }
      })();
      await Promise.all([sampler, tabs]);
      if (tracing) await page.context().browser().stopTracing();
      if (cdp) {
        const { profile } = await cdp.send('Profiler.stop');
        writeFileSync(opt.profile, JSON.stringify(profile));
        await cdp.detach();
      }

      const page1 = await page.evaluate(() => window.__flood.read());
      const cpu1 = { t: performance.now(), table: procTable() };
      const wall = (cpu1.t - cpu0.t) / 1000;
      const pct = (pid) => (pid ? ((treeTicks(cpu1.table, pid) - treeTicks(cpu0.table, pid)) / CLK_TCK / wall) * 100 : NaN);
      const wireAfter = wire.frames.get(id) ?? null;
      // Rates from the output events received during the phase (byte offsets: the process's own
      // output, including what the hub's coalescer left out).
      const wireRate = (() => {
        if (!wireAfter) return { events: 0, bytes: 0, outBytes: 0 };
        const from = wireBefore ?? { events: 0, bytes: 0, lastEnd: wireAfter.firstEnd, lastAt: wireAfter.firstAt };
        const secs = (wireAfter.lastAt - from.lastAt) / 1000;
        return {
          events: (wireAfter.events - from.events) / wall,
          bytes: (wireAfter.bytes - from.bytes) / wall,
          outBytes: secs > 0 ? (wireAfter.lastEnd - from.lastEnd) / secs : 0,
        };
      })();
      Object.assign(res, {
        wallS: wall,
        fps: page1.frames / (page1.elapsedMs / 1000),
        maxFrameGapMs: page1.maxGapMs,
        longTaskPct: (page1.longTaskMs / page1.elapsedMs) * 100,
        longTasks: page1.longTasks,
        clickPaint: page1.events.map((e) => e.duration),
        charsPerS: page1.chars / (page1.elapsedMs / 1000),
        wire: wireRate,
        sockets: wire.sockets - hubBefore.sockets,
        closes: wire.closes - hubBefore.closes,
        slow: slowDrops() - hubBefore.slow,
        cpu: {
          chromium: pct(browserPid),
          switchboard: cpuOwn(cpu0.table, cpu1.table, sbPid, info.pid, wall),
          process: pct(info.pid),
          harness: (((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpu0.self)) / wall) * 100,
        },
      });
      return res;
    };
    // The switchboard's own CPU, without the process it runs (its child).
    const cpuOwn = (a, b, sbPid, childPid, wall) =>
      ((treeTicks(b, sbPid) - treeTicks(b, childPid) - (treeTicks(a, sbPid) - treeTicks(a, childPid))) / CLK_TCK / wall) * 100;
    const slowDrops = () => (sb.output.match(/client too slow/g) ?? []).length;

    const quiet = await startProcess(QUIET);
    const idle = await measure('idle', quiet);
    const flooder = await startProcess(floodCmd);
    const flood = await measure('flood', flooder);
    const hubStates = (await recording(page, 'hub')).map((items) => items[0]?.status);
    const finalStatus = await page.locator(tid('hub-status')).getAttribute('data-status');

    for (const id of started) await api(server, 'POST', `/api/processes/${id}/kill`).catch(() => {});
    await context.close();
    await browser.close();

    const report = { when: new Date().toISOString(), load: os.loadavg(), command: floodCmd, seconds: phaseMs / 1000, idle, flood, hubStates, finalStatus, pageErrors };
    if (opt.json) writeFileSync(opt.json, JSON.stringify(report, null, 2));
    console.log(table(report));
    if (pageErrors.length) console.log(`\nuncaught errors in the page:\n${pageErrors.join('\n')}`);
  } finally {
    await browserServer?.close().catch(() => {});
    await sb.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------

const ms = (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(1) : Math.round(x)} ms` : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(a / b < 10 ? 2 : 0)}×` : '—');
const mib = (x) => (x >= 1 << 20 ? `${(x / (1 << 20)).toFixed(1)} MiB/s` : x >= 1024 ? `${(x / 1024).toFixed(1)} KiB/s` : `${Math.round(x)} B/s`);

function table(r) {
  const { idle: i, flood: f } = r;
  const rows = [];
  const row = (name, fi, ff, vi, vf, showRatio = true) => rows.push(`| ${name} | ${fi} | ${ff} | ${showRatio ? ratio(vf, vi) : '—'} |`);
  for (const [q, name] of [
    [0.5, 'p50'],
    [0.99, 'p99'],
  ]) {
    const a = quantile(i.evaluate, q);
    const b = quantile(f.evaluate, q);
    row(`\`page.evaluate\` round trip, ${name} (every 100 ms)`, ms(a), ms(b), a, b);
  }
  row('`page.evaluate` round trip, max', ms(max(i.evaluate)), ms(max(f.evaluate)), max(i.evaluate), max(f.evaluate));
  row('frames per second (`requestAnimationFrame`)', i.fps.toFixed(1), f.fps.toFixed(1), i.fps, f.fps);
  row('longest gap between frames', ms(i.maxFrameGapMs), ms(f.maxFrameGapMs), i.maxFrameGapMs, f.maxFrameGapMs);
  row('main thread in long tasks (> 50 ms)', `${i.longTaskPct.toFixed(1)} % (${i.longTasks})`, `${f.longTaskPct.toFixed(1)} % (${f.longTasks})`, i.longTaskPct, f.longTaskPct, false);
  for (const [k, name] of [
    ['toActivity', 'click tab Activity → Activity view visible'],
    ['toProcesses', 'click tab Processes → process list visible'],
    ['select', 'click the process row → its terminal written'],
  ]) {
    row(`${name}, median / max (n=${i[k].length}/${f[k].length})`, `${ms(median(i[k]))} / ${ms(max(i[k]))}`, `${ms(median(f[k]))} / ${ms(max(f[k]))}`, median(i[k]), median(f[k]));
  }
  const cp = (x) => (x.length ? `max ${ms(max(x))} (${x.length} ≥ 16 ms)` : 'all < 16 ms');
  row('click → next paint (Event Timing)', cp(i.clickPaint), cp(f.clickPaint), max(i.clickPaint), max(f.clickPaint), i.clickPaint.length > 0);
  row('process output rate (byte offsets)', mib(i.wire.outBytes), mib(f.wire.outBytes), 0, 0, false);
  row('hub → page: output events/s, bytes/s', `${i.wire.events.toFixed(1)}, ${mib(i.wire.bytes)}`, `${f.wire.events.toFixed(1)}, ${mib(f.wire.bytes)}`, 0, 0, false);
  row('characters written to the terminal', `${Math.round(i.charsPerS)}/s`, `${Math.round(f.charsPerS)}/s`, 0, 0, false);
  row('hub connection: new sockets / closes / slow-client drops', `${i.sockets} / ${i.closes} / ${i.slow}`, `${f.sockets} / ${f.closes} / ${f.slow}`, 0, 0, false);
  row('CPU, % of one core: Chromium / switchboard / the process / this script', cpu(i.cpu), cpu(f.cpu), 0, 0, false);
  const head = [
    `| figure | idle (quiet process selected) | flood (\`${[r.command[0], ...r.command[1]].join(' ')}\` selected) | flood/idle |`,
    '|---|---:|---:|---:|',
  ];
  const foot = `\n${r.seconds} s per phase, ${r.when}, load average ${r.load.map((x) => x.toFixed(2)).join(' ')} at the end; hub-status states seen: ${[...new Set(r.hubStates)].join(' → ')}, final \`${r.finalStatus}\`.`;
  return [...head, ...rows].join('\n') + '\n' + foot;
}
const cpu = (c) => [c.chromium, c.switchboard, c.process, c.harness].map((x) => (Number.isFinite(x) ? Math.round(x) : '—')).join(' / ');

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
