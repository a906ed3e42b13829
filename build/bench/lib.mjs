// Shared pieces of the benchmark scripts: a raw newline-delimited JSON-RPC client (no SDK, so
// the client costs the same for every server) and child-process handling.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';

export const PROTOCOL_VERSION = '2025-06-18';

// ---------------------------------------------------------------------------------------------
// Raw JSON-RPC client over a byte stream

export class LineClient {
  constructor(readable, writable, label) {
    this.readable = readable;
    this.writable = writable;
    this.label = label;
    this.nextId = 1;
    this.pending = new Map();
    this.buf = '';
    readable.setEncoding('utf8');
    readable.on('data', (chunk) => this.onData(chunk));
    const fail = (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    readable.on('end', () => fail(new Error(`${label}: stream ended`)));
    readable.on('error', fail);
  }

  onData(chunk) {
    this.buf += chunk;
    let nl;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (!line.trim()) continue;
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        continue; // a peer's stray log line on stdout; not ours to judge here
      }
      if (msg.id === undefined || msg.method) continue; // notifications and server requests
      const p = this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${this.label}: ${p.method}: ${JSON.stringify(msg.error)}`));
      else p.resolve(msg.result);
    }
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.writable.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method, params) {
    this.writable.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  async initialize() {
    const res = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'switchboard-bench', version: '1.0.0' },
    });
    this.notify('notifications/initialized', {});
    return res;
  }

  async callTool(name, args) {
    const res = await this.request('tools/call', { name, arguments: args });
    if (res.isError) throw new Error(`${this.label}: ${name} returned a tool error: ${JSON.stringify(res.content)}`);
    return res;
  }
}

// ---------------------------------------------------------------------------------------------
// Servers

export const children = new Set();

export function spawnServer(cmd, args, env, label) {
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  // Keep only the last chunks of stderr (for error messages): servers that log every call must
  // not make the client work harder than for servers that do not.
  const tail = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (c) => {
    tail.push(c);
    if (tail.length > 64) tail.shift();
  });
  child.stdin.on('error', () => {}); // EPIPE when the server dies; the pending request reports it
  return { child, stderr: () => tail.join(''), label };
}

export async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.stdin?.end();
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}


// privateEnv is a clean environment under tmp: its own HOME and XDG dirs, so neither the user's
// config nor a hub they are running is read or touched.
export function privateEnv(tmp) {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmp,
    SHELL: '/bin/sh',
    XDG_CONFIG_HOME: path.join(tmp, 'config'),
    XDG_DATA_HOME: path.join(tmp, 'data'),
    XDG_STATE_HOME: path.join(tmp, 'state'),
    XDG_CACHE_HOME: path.join(tmp, 'cache'),
    XDG_RUNTIME_DIR: path.join(tmp, 'run'),
  };
  fs.mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
  return env;
}

// prepareEnv is privateEnv plus, for Desktop Commander, a config with telemetry and onboarding
// off and the workspace as its only allowed directory, so every server runs alike.
export function prepareEnv(tmp, workspace) {
  const env = privateEnv(tmp);
  const dcDir = path.join(tmp, '.claude-server-commander');
  fs.mkdirSync(dcDir);
  fs.writeFileSync(path.join(dcDir, 'config.json'), JSON.stringify({
    blockedCommands: [], defaultShell: '/bin/sh', allowedDirectories: [workspace], telemetryEnabled: false,
    fileWriteLineLimit: 50, fileReadLineLimit: 1000, pendingWelcomeOnboarding: false, welcomeOnboardingEligible: false,
  }, null, 2));
  return env;
}

/**
 * runMain runs a benchmark's main(): Ctrl-C and a failure both stop every child this library
 * spawned, so no server outlives the script.
 */
export async function runMain(main) {
  process.on('SIGINT', async () => {
    await Promise.all([...children].map(stopChild));
    process.exit(130);
  });
  try {
    await main();
  } catch (err) {
    console.error(`bench: ${err?.stack ?? err}`);
    await Promise.all([...children].map((c) => stopChild(c).catch(() => {})));
    process.exitCode = 1;
  }
}
