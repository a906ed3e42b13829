#!/usr/bin/env node
// Independent-client integration test: drives a real `switchboard` binary with the official
// TypeScript MCP SDK over every transport it offers to clients, so interoperability is checked
// by code we did not write (the Go tests use go-sdk on both sides, which cannot catch a wire
// format both halves of one SDK agree on by mistake).
//
// Usage: node client.mjs <switchboard-binary> [--only stdio,unix-relay,unix,http]
// Output: TAP (https://testanything.org); exit status 1 when any check fails.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { privateEnv, stopChild } from '../../build/bench/lib.mjs';

const REQUEST_TIMEOUT_MS = 15_000;
const STARTUP_TIMEOUT_MS = 20_000;

// The contract's 10 built-in tools: required input keys and output keys (docs: contract.md).
const BUILTINS = {
  file_read: { required: ['path'], output: ['content', 'language', 'path'], readOnly: true },
  file_write: { required: ['content', 'path'], output: ['path', 'success'], readOnly: false },
  file_edit: { required: ['new_string', 'old_string', 'path'], output: ['path', 'replacements', 'success'], readOnly: false },
  file_delete: { required: ['path'], output: ['path', 'success'], readOnly: false },
  file_rename: { required: ['newPath', 'oldPath'], output: ['newPath', 'oldPath', 'success'], readOnly: false },
  file_exists: { required: ['path'], output: ['exists', 'isDir', 'path'], readOnly: true },
  dir_list: { required: ['path'], output: ['entries', 'path'], readOnly: true },
  dir_create: { required: ['path'], output: ['path', 'success'], readOnly: false },
  lang_detect: { required: ['path'], output: ['language', 'path'], readOnly: true },
  lang_list: { required: [], output: ['languages'], readOnly: true },
};

// ---------------------------------------------------------------------------------------------
// TAP reporting

let testNo = 0;
let failures = 0;

function report(ok, name, detail) {
  testNo++;
  console.log(`${ok ? 'ok' : 'not ok'} ${testNo} - ${name}`);
  if (!ok) {
    failures++;
    for (const line of String(detail ?? '').split('\n')) console.log(`  # ${line}`);
  }
}

class CheckError extends Error {}

function check(cond, msg) {
  if (!cond) throw new CheckError(msg);
}

// canonical renders a value as JSON with object keys sorted, so equality ignores key order.
function canonical(v) {
  return JSON.stringify(v, (_, x) => (x && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]))
    : x));
}

function eq(got, want, what) {
  const g = canonical(got);
  const w = canonical(want);
  check(g === w, `${what}: got ${g}, want ${w}`);
}

// step runs one named check; a failure is reported and does not stop the other checks.
async function step(name, fn) {
  try {
    await fn();
    report(true, name);
  } catch (err) {
    report(false, name, err instanceof CheckError ? err.message : err?.stack ?? String(err));
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

const children = new Set();

// startServer spawns the binary and resolves once its stderr contains every `wait` pattern,
// returning the matches (the hub prints its listening addresses there).
async function startServer(bin, args, env, wait) {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  const matches = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} ${args.join(' ')}: not ready after ${STARTUP_TIMEOUT_MS} ms; stderr:\n${stderr}`)), STARTUP_TIMEOUT_MS);
    const onData = (chunk) => {
      stderr += chunk;
      const found = wait.map((re) => stderr.match(re));
      if (found.every(Boolean)) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', onData);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${bin} ${args.join(' ')} exited early (code ${code}, signal ${sig}); stderr:\n${stderr}`));
    });
  });
  child.stderr.resume(); // keep draining so the child never blocks on a full pipe
  return { child, matches, stderr: () => stderr };
}

// ---------------------------------------------------------------------------------------------
// A client transport over a raw Unix socket: newline-delimited JSON-RPC, as the hub speaks it.

class UnixSocketTransport {
  constructor(socketPath) {
    this.socketPath = socketPath;
    this.buffered = '';
    // Error responses with "id": null (JSON-RPC's answer to a line whose id could not be read)
    // go here: the SDK's message schema has no place for them.
    this.onNullIdError = undefined;
  }

  start() {
    return new Promise((resolve, reject) => {
      this.socket = net.connect(this.socketPath);
      this.socket.setEncoding('utf8');
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
      this.socket.on('data', (chunk) => {
        this.buffered += chunk;
        let nl;
        while ((nl = this.buffered.indexOf('\n')) >= 0) {
          const line = this.buffered.slice(0, nl).replace(/\r$/, '');
          this.buffered = this.buffered.slice(nl + 1);
          if (line.trim() === '') continue;
          this.deliver(line);
        }
      });
      this.socket.on('error', (err) => this.onerror?.(err));
      this.socket.on('close', () => this.onclose?.());
    });
  }

  deliver(line) {
    let raw;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      this.onerror?.(new Error(`server sent a line that is not JSON: ${line}`));
      return;
    }
    if (raw && raw.error && raw.id === null && this.onNullIdError) {
      this.onNullIdError(raw);
      return;
    }
    try {
      this.onmessage?.(deserializeMessage(line));
    } catch (err) {
      this.onerror?.(new Error(`server sent an invalid JSON-RPC message (${err.message}): ${line}`));
    }
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

// ---------------------------------------------------------------------------------------------
// The checks every transport must pass.

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function callOK(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
  check(!res.isError, `${name}(${JSON.stringify(args)}) returned a tool error: ${textOf(res)}`);
  check(res.structuredContent && typeof res.structuredContent === 'object',
    `${name}: no structuredContent in ${JSON.stringify(res)}`);
  return res.structuredContent;
}

async function callErr(client, name, args) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
  check(res.isError === true, `${name}(${JSON.stringify(args)}): want isError, got ${JSON.stringify(res)}`);
  const text = textOf(res);
  check(text.length > 0, `${name}: tool error without a text message`);
  return text;
}

// runSuite exercises one connected client. prefix keeps transports that share a workspace apart.
async function runSuite(label, client, workspace, prefix) {
  const t = (name, fn) => step(`${label}: ${name}`, fn);

  await t('initialize: server identifies as switchboard with tools capability', async () => {
    const info = client.getServerVersion();
    eq(info?.name, 'switchboard', 'serverInfo.name');
    check(typeof info?.version === 'string' && info.version.length > 0, `serverInfo.version empty: ${JSON.stringify(info)}`);
    check(client.getServerCapabilities()?.tools, `capabilities.tools missing: ${JSON.stringify(client.getServerCapabilities())}`);
  });

  await t('tools/list: the 10 built-ins with their required keys, output keys and annotations', async () => {
    const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const [name, want] of Object.entries(BUILTINS)) {
      const tool = byName.get(name);
      check(tool, `tool ${name} missing; listed: ${[...byName.keys()].join(', ')}`);
      check(tool.description, `${name}: no description`);
      eq(tool.inputSchema?.type, 'object', `${name} inputSchema.type`);
      eq([...(tool.inputSchema.required ?? [])].sort(), want.required, `${name} inputSchema.required`);
      for (const [key, prop] of Object.entries(tool.inputSchema.properties ?? {})) {
        check(prop.description, `${name}: input key ${key} has no description`);
      }
      const outKeys = Object.keys(tool.outputSchema?.properties ?? {});
      for (const key of want.output) check(outKeys.includes(key), `${name}: outputSchema lacks ${key} (has ${outKeys})`);
      eq(Boolean(tool.annotations?.readOnlyHint), want.readOnly, `${name} annotations.readOnlyHint`);
    }
  });

  const dir = `${prefix}/sub`;
  const file = `${dir}/hello.go`;
  const content = 'package main\n\nfunc main() { println("hello") }\n// hello again\n';

  await t('file_write creates the file and its parents', async () => {
    eq(await callOK(client, 'file_write', { path: file, content }), { success: true, path: file }, 'file_write result');
    eq(fs.readFileSync(path.join(workspace, file), 'utf8'), content, 'file on disk');
  });

  await t('file_read returns content, language and path', async () => {
    const out = await callOK(client, 'file_read', { path: file });
    eq(out.content, content, 'content');
    eq(out.language, 'go', 'language');
    eq(out.path, file, 'path');
  });

  await t('file_read with offset/limit returns a window of lines', async () => {
    const out = await callOK(client, 'file_read', { path: file, offset: 2, limit: 1 });
    eq(out.content.replace(/\n$/, ''), 'func main() { println("hello") }', 'window content');
    eq(out.totalLines, 4, 'totalLines');
    eq(out.truncated, true, 'truncated');
  });

  await t('file_edit replaces the first occurrence, then all', async () => {
    eq(await callOK(client, 'file_edit', { path: file, old_string: 'hello', new_string: 'bye' }),
      { path: file, success: true, replacements: 1 }, 'first edit');
    const once1 = fs.readFileSync(path.join(workspace, file), 'utf8');
    eq(once1, content.replace('hello', 'bye'), 'file after one replacement');
    eq(await callOK(client, 'file_edit', { path: file, old_string: 'e', new_string: 'E', replace_all: true }),
      { path: file, success: true, replacements: once1.split('e').length - 1 }, 'replace_all edit');
    eq(fs.readFileSync(path.join(workspace, file), 'utf8'), once1.replaceAll('e', 'E'), 'file after replace_all');
  });

  await t('dir_list lists immediate children with name, path, isDir and size', async () => {
    await callOK(client, 'dir_create', { path: `${dir}/nested/deeper` });
    const out = await callOK(client, 'dir_list', { path: dir });
    eq(out.path, dir, 'path');
    const size = fs.statSync(path.join(workspace, file)).size;
    eq(out.entries.map((e) => ({ name: e.name, path: e.path, isDir: e.isDir, size: e.isDir ? 0 : e.size })),
      [{ name: 'hello.go', path: file, isDir: false, size }, { name: 'nested', path: `${dir}/nested`, isDir: true, size: 0 }],
      'entries');
  });

  await t('file_exists tells files, directories and missing paths apart', async () => {
    eq(await callOK(client, 'file_exists', { path: file }), { exists: true, isDir: false, path: file }, 'file');
    eq(await callOK(client, 'file_exists', { path: dir }), { exists: true, isDir: true, path: dir }, 'directory');
    eq(await callOK(client, 'file_exists', { path: `${dir}/nope.txt` }), { exists: false, isDir: false, path: `${dir}/nope.txt` }, 'missing');
  });

  await t('lang_detect detects by extension and by name', async () => {
    const cases = [['x/main.go', 'go'], ['a.py', 'python'], ['Dockerfile', 'dockerfile'], ['notes.unknownext', 'plaintext'], ['web/app.ts', 'typescript']];
    for (const [p, want] of cases) eq(await callOK(client, 'lang_detect', { path: p }), { language: want, path: p }, `lang_detect ${p}`);
  });

  await t('lang_list includes go with its extension', async () => {
    const out = await callOK(client, 'lang_list', {});
    const go = out.languages.find((l) => l.id === 'go');
    check(go, `no go entry in ${JSON.stringify(out.languages.map((l) => l.id))}`);
    check(go.name && go.extensions.includes('.go'), `go entry: ${JSON.stringify(go)}`);
    check(out.languages.length >= 15, `only ${out.languages.length} languages`);
  });

  await t('file_rename and file_delete', async () => {
    const moved = `${prefix}/moved/hello.go`;
    eq(await callOK(client, 'file_rename', { oldPath: file, newPath: moved }), { success: true, oldPath: file, newPath: moved }, 'rename');
    check(!fs.existsSync(path.join(workspace, file)) && fs.existsSync(path.join(workspace, moved)), 'rename not visible on disk');
    eq(await callOK(client, 'file_delete', { path: moved }), { success: true, path: moved }, 'delete');
    check(!fs.existsSync(path.join(workspace, moved)), 'deleted file still on disk');
  });

  await t('a tool error (isError) names the field and how to fix it', async () => {
    const text = await callErr(client, 'file_read', { path: '' });
    check(/\bpath\b/.test(text), `error does not name the field "path": ${text}`);
    const missing = await callErr(client, 'file_read', { path: `${prefix}/does-not-exist.txt` });
    check(missing.includes('does-not-exist.txt'), `not-found error does not name the path: ${missing}`);
    await callOK(client, 'file_write', { path: `${prefix}/edit-me.txt`, content: 'abc' });
    const edit = await callErr(client, 'file_edit', { path: `${prefix}/edit-me.txt`, old_string: '', new_string: 'x' });
    check(/\bold_string\b/.test(edit), `file_edit with an empty old_string: error does not name old_string: ${edit}`);
    const notFound = await callErr(client, 'file_edit', { path: `${prefix}/edit-me.txt`, old_string: 'zzz', new_string: 'x' });
    check(/old_string|not found/.test(notFound), `file_edit with an absent old_string: unhelpful error: ${notFound}`);
  });

  await t('paths that escape the workspace are refused', async () => {
    const outside = path.join(path.dirname(workspace), `escape-${prefix}.txt`);
    const escapes = [
      ['file_write', { path: `../escape-${prefix}.txt`, content: 'x' }],
      ['file_write', { path: outside, content: 'x' }],
      ['file_read', { path: '../x' }],
      ['file_read', { path: '/etc/passwd' }],
      ['file_read', { path: `${prefix}/../../x` }],
      ['dir_list', { path: '..' }],
      ['file_rename', { oldPath: 'nothing', newPath: '../moved-out' }],
    ];
    for (const [name, args] of escapes) await callErr(client, name, args);
    check(!fs.existsSync(outside), `${outside} was created outside the workspace`);
  });

  await t('an unknown tool is an error, not a crash', async () => {
    let text;
    try {
      const res = await client.callTool({ name: 'no_such_tool', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT_MS });
      check(res.isError, `want an error, got ${JSON.stringify(res)}`);
      text = textOf(res);
    } catch (err) {
      if (err instanceof CheckError) throw err;
      text = err.message;
    }
    check(/no_such_tool/.test(text), `error does not name the tool: ${text}`);
    await client.ping({ timeout: REQUEST_TIMEOUT_MS }); // the session survived
  });
}

// runProtocolChecks: progress, cancellation and logging as the TypeScript SDK does them (Claude
// Desktop and other TS-SDK clients cut calls at ~60 s unless progress resets their timeout).
//
// Every transport drops the reply to a cancelled request, as the spec says: the line transports
// (stdio, Unix socket, TCP) in lineConn, Streamable HTTP in front of go-sdk (mcp/httpcancel.go).
// A reply that still came would reach the client as an "unknown message ID" error.
async function runProtocolChecks(label, client, workspace, prefix) {
  const t = (name, fn) => step(`${label}: ${name}`, fn);

  await t('exec with a progress token sends progress at least every 2 s (a 2 s timeout reset by progress survives a 4 s command)', async () => {
    const got = [];
    const res = await client.callTool({ name: 'exec', arguments: { command: 'sleep', args: ['4'] } }, undefined, {
      timeout: 2000, resetTimeoutOnProgress: true, onprogress: (p) => got.push(p),
    });
    check(!res.isError, `exec: ${textOf(res)}`);
    check(got.length >= 2, `only ${got.length} progress notifications in 4 s`);
    for (let i = 1; i < got.length; i++) check(got[i].progress > got[i - 1].progress, `progress not increasing: ${JSON.stringify(got)}`);
  });

  await t('cancelling exec (notifications/cancelled) kills the command, no reply follows, the session goes on', async () => {
    const pidFile = path.join(workspace, `${prefix}-cancel.pid`);
    const unknownReplies = [];
    const prevOnError = client.onerror;
    client.onerror = (err) => {
      if (/unknown message ID/i.test(err?.message ?? '')) unknownReplies.push(err.message);
      prevOnError?.(err);
    };
    try {
      const ac = new AbortController();
      const call = client.callTool({ name: 'exec', arguments: { command: 'sh', args: ['-c', `echo $$ > ${prefix}-cancel.pid; exec sleep 60`], timeout: 120 } },
        undefined, { signal: ac.signal, timeout: 60_000 });
      const deadline = Date.now() + 10_000;
      while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8').trim() === '') {
        check(Date.now() < deadline, 'the command never wrote its pid');
        await sleep(20);
      }
      const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
      ac.abort('user cancelled');
      let rejected = false;
      try { await call; } catch { rejected = true; }
      check(rejected, 'the aborted call resolved');
      const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
      const killDeadline = Date.now() + 10_000;
      while (alive()) {
        check(Date.now() < killDeadline, `pid ${pid} still alive 10 s after the cancel`);
        await sleep(50);
      }
      await sleep(500); // room for a (wrong) reply to arrive
      await client.ping({ timeout: REQUEST_TIMEOUT_MS });
      eq(unknownReplies, [], 'replies to the cancelled request');
    } finally {
      client.onerror = prevOnError;
    }
  });

  await t('logging: after logging/setLevel the client that started a process is told when it dies', async () => {
    const msgs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { msgs.push(n.params); });
    check(client.getServerCapabilities()?.logging, `capabilities.logging missing: ${JSON.stringify(client.getServerCapabilities())}`);
    await client.setLoggingLevel('warning');
    const started = await callOK(client, 'process_start', { command: 'sh', args: ['-c', 'sleep 0.3; exit 7'] });
    const deadline = Date.now() + 10_000;
    let hit;
    while (!(hit = msgs.find((m) => String(m.data).includes(started.id)))) {
      check(Date.now() < deadline, `no notifications/message about ${started.id}; got ${JSON.stringify(msgs)}`);
      await sleep(50);
    }
    eq(hit.level, 'warning', 'level');
    check(String(hit.data).includes('exit code 7'), `message does not give the exit code: ${hit.data}`);
  });
}

async function withClient(label, transport, fn) {
  const client = new Client({ name: 'switchboard-node-it', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    report(false, `${label}: connect`, err?.stack ?? String(err));
    return;
  }
  try {
    await fn(client);
  } finally {
    await client.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const argv = process.argv.slice(2);
  const bin = argv[0];
  if (!bin || !fs.existsSync(bin)) {
    console.error('usage: node client.mjs <switchboard-binary> [--only stdio,unix-relay,unix,http]');
    process.exit(2);
  }
  const onlyIdx = argv.indexOf('--only');
  const only = new Set(onlyIdx > 0 ? argv[onlyIdx + 1].split(',') : ['stdio', 'unix-relay', 'unix', 'http']);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-node-it-'));
  const workspace = path.join(tmp, 'workspace');
  fs.mkdirSync(workspace);
  // A private home so neither the user's config nor their running hub is touched.
  const env = privateEnv(tmp);

  console.log('TAP version 14');
  try {
    if (only.has('stdio')) {
      const transport = new StdioClientTransport({
        command: bin, args: ['serve', '--stdio', '--workspace', workspace], env, stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (c) => { stderr += c; });
      await withClient('stdio', transport, async (client) => {
        await runSuite('stdio', client, workspace, 'stdio');
        await runProtocolChecks('stdio', client, workspace, 'stdio');
      });
      await step('stdio: nothing on stderr (clients show it as errors)', async () => eq(stderr, '', 'stderr of serve --stdio'));
      if (failures) console.log(`# stdio server stderr (last 40 lines):\n${stderr.split('\n').slice(-40).join('\n').replace(/^/gm, '#   ')}`);
    }

    if (only.has('unix-relay') || only.has('unix') || only.has('http')) {
      // Not the default socket path, and a random HTTP port, so the test notices if a flag's
      // value is ignored.
      const sock = path.join(tmp, 'hub', 'mcp.sock');
      const token = `it-${process.pid}-${Date.now()}`;
      const hub = await startServer(bin,
        ['serve', `--unix=${sock}`, '--http=127.0.0.1:0', '--token', token, '--workspace', workspace], env,
        [/unix listening on (\S+)/, /http listening on (\S+)/]);
      const url = new URL(hub.matches[1][1]);
      await step('hub: listens where --unix and --http say', async () => {
        eq(hub.matches[0][1], `unix://${sock}`, 'unix URL');
        check(url.hostname === '127.0.0.1' && url.port !== '9101' && url.pathname === '/mcp', `http URL ${url} is not 127.0.0.1:<random port>/mcp`);
      });

      await step('hub: Unix socket is private (mode 0600)', async () => {
        eq((fs.statSync(sock).mode & 0o777).toString(8), '600', 'socket mode');
      });

      if (only.has('unix-relay')) {
        // The client starts the relay in its project, as editors do: the relay's directory is
        // the session's workspace (here the hub's own, so both suites see the same files).
        const transport = new StdioClientTransport({ command: bin, args: ['connect', '--socket', sock], env, stderr: 'pipe', cwd: workspace });
        await withClient('unix-relay', transport, async (client) => {
          await runSuite('unix (via switchboard connect)', client, workspace, 'relay');
          await runProtocolChecks('unix (via switchboard connect)', client, workspace, 'relay');
        });
        // The same hub, a client connected in the search tools mode (clients connect
        // --tools-mode search writes this relay): a few tools listed, the rest found with
        // tools_search and called with tools_call, large results as handles.
        const searchRelay = new StdioClientTransport({ command: bin, args: ['connect', '--socket', sock, '--tools-mode', 'search'], env, stderr: 'pipe', cwd: workspace });
        await withClient('unix-relay-search', searchRelay, async (client) => {
          const t = (name, fn) => step(`unix (connect --tools-mode search): ${name}`, fn);
          await t('tools/list: the core and the catalogue tools, not the whole catalogue', async () => {
            const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
            const names = tools.map((tool) => tool.name);
            for (const want of ['tools_search', 'tools_call', 'result_read', 'result_search', 'file_read']) check(names.includes(want), `${want} not listed: ${names}`);
            check(!names.includes('dir_list') && names.length < 12, `search mode lists ${names.length} tools: ${names}`);
          });
          await t('tools_search finds an unlisted tool; tools_call runs it', async () => {
            const found = await callOK(client, 'tools_search', { query: 'list the entries of a directory', limit: 3 });
            check(found.tools.some((f) => f.name === 'dir_list'), `dir_list not found: ${JSON.stringify(found.tools.map((f) => f.name))}`);
            fs.writeFileSync(path.join(workspace, 'modes-big.txt'), 'needle in line one\n' + 'x'.repeat(60).concat('\n').repeat(1000));
            const listed = await callOK(client, 'tools_call', { name: 'dir_list', arguments: { path: '.' } });
            check(JSON.stringify(listed).includes('modes-big.txt'), `tools_call dir_list: ${JSON.stringify(listed).slice(0, 300)}`);
          });
          await t('a large result comes back as a handle that result_read reads', async () => {
            const kept = await callOK(client, 'tools_call', { name: 'file_read', arguments: { path: 'modes-big.txt' } });
            check(typeof kept.handle === 'string' && kept.bytes > 16384, `no handle: ${JSON.stringify(kept).slice(0, 300)}`);
            const w = await callOK(client, 'result_search', { handle: kept.handle, query: 'needle' });
            check(w.matches.length > 0 && w.matches[0].text.includes('needle in line one'), `result_search: ${JSON.stringify(w).slice(0, 300)}`);
          });
        });
      }
      if (only.has('unix')) {
        const transport = new UnixSocketTransport(sock);
        await withClient('unix', transport, async (client) => {
          await runSuite('unix (raw socket)', client, workspace, 'unix');
          await runProtocolChecks('unix (raw socket)', client, workspace, 'unix');
          await step('unix (raw socket): a malformed line gets a JSON-RPC parse error and the session survives', async () => {
            const sdkOnMessage = transport.onmessage;
            const errors = [];
            // The first broken line still shows its id ("bad-7", a string the client never
            // uses, so the SDK would drop the reply); the second has none, and JSON-RPC 2.0 §5
            // then requires "id": null, not an absent id.
            transport.onmessage = (msg, extra) => {
              if (msg.error && msg.id === 'bad-7') errors.push({ id: msg.id, code: msg.error.code });
              else sdkOnMessage?.(msg, extra);
            };
            transport.onNullIdError = (msg) => errors.push({ id: msg.id, code: msg.error.code });
            const sdkOnError = transport.onerror;
            const transportErrors = [];
            transport.onerror = (err) => transportErrors.push(err.message);
            try {
              transport.socket.write('{"jsonrpc":"2.0","id":"bad-7","method":\n');
              transport.socket.write('this is not json\n');
              await client.ping({ timeout: REQUEST_TIMEOUT_MS });
              await callOK(client, 'file_exists', { path: 'unix' });
            } finally {
              transport.onmessage = sdkOnMessage;
              transport.onNullIdError = undefined;
              transport.onerror = sdkOnError;
            }
            eq(transportErrors, [], 'messages the client could not read');
            // The first error carries the id the server could still read from the broken line.
            eq(errors, [{ id: 'bad-7', code: -32700 }, { id: null, code: -32700 }], 'errors for the two malformed lines');
          });
        });
      }
      if (only.has('http')) {
        await step('http: requests without the bearer token get 401', async () => {
          const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
          const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
          const none = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
          eq(none.status, 401, 'status without token');
          check(/bearer/i.test(none.headers.get('www-authenticate') ?? ''), 'no WWW-Authenticate: Bearer header');
          const wrong = await fetch(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer wrong' }, body: JSON.stringify(init) });
          eq(wrong.status, 401, 'status with a wrong token');
          const evil = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}`, origin: 'http://evil.example' }, body: JSON.stringify(init) });
          eq(evil.status, 403, 'status with a foreign Origin');
        });
        const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
        await withClient('http', transport, async (client) => {
          await runSuite('http', client, workspace, 'http');
          await runProtocolChecks('http', client, workspace, 'http');
        });
      }
      await stopChild(hub.child);
      await step('hub: socket file removed on shutdown', async () => check(!fs.existsSync(sock), `${sock} still exists`));
    }
  } catch (err) {
    report(false, 'harness', err?.stack ?? String(err));
  } finally {
    await Promise.all([...children].map(stopChild));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`1..${testNo}`);
  console.log(`# pass ${testNo - failures}`);
  console.log(`# fail ${failures}`);
  process.exitCode = failures ? 1 : 0;
}

await main();
