#!/usr/bin/env node
// The Vercel AI SDK's MCP client (@ai-sdk/mcp, default options) against a hub in search mode:
// lists the tools (the search-mode catalogue: tools_search and tools_call, not the tools behind
// them), finds file_grep (not listed) with tools_search, calls it with tools_call, and calls file_delete —
// which the hub's policy denies — with tools_call, which must come back as an error result, not
// a thrown protocol error. Driven by modes_test.go (TestSearchModeAISDK); needs Node >= 22.
//
// Usage: node aisdk_search.mjs <http-url?tools_mode=search> <token> <nonce>
// hello.txt in the hub's workspace holds the nonce.
// Prints one line per step ("ok - …" / "not ok - …: error") and exits 1 when a step failed.

import { createMCPClient } from '@ai-sdk/mcp';

const [url, token, nonce] = process.argv.slice(2);
if (!url || !token || !nonce) {
  console.error('usage: node aisdk_search.mjs <http-url> <token> <nonce>');
  process.exit(2);
}

let failed = 0;
async function step(name, fn) {
  try {
    const detail = await fn();
    console.log(`ok - ${name}${detail ? `: ${detail}` : ''}`);
    return true;
  } catch (err) {
    failed++;
    console.log(`not ok - ${name}: ${err?.stack ?? err}`);
    return false;
  }
}

const text = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

let client;
const connected = await step('connect (createMCPClient, transport type http, default options)', async () => {
  client = await createMCPClient({
    transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
  });
  return `protocol ${client.initializeResult?.protocolVersion}`;
});

if (connected) {
  let tools = {};
  await step('tools/list through tools(): the search-mode catalogue', async () => {
    tools = await client.tools();
    const names = Object.keys(tools);
    for (const n of ['tools_search', 'tools_call']) {
      if (!tools[n]) throw new Error(`no ${n} among ${names.join(' ')}`);
    }
    for (const n of ['file_grep', 'file_delete', 'file_write', 'script_run']) {
      if (tools[n]) throw new Error(`${n} listed in search mode: ${names.join(' ')}`);
    }
    return names.join(' ');
  });
  const opts = { toolCallId: 'call-1', messages: [] };
  let found;
  await step('tools_search finds file_grep', async () => {
    const r = await tools.tools_search.execute({ query: 'search the contents of files for a pattern', limit: 5 }, opts);
    if (r?.isError) throw new Error(`tool error: ${text(r)}`);
    const out = r.structuredContent ?? JSON.parse(text(r));
    found = out.tools.find((t) => t.name === 'file_grep');
    if (!found) throw new Error(`file_grep not among ${out.tools.map((t) => t.name).join(' ')}`);
    if (!JSON.parse(found.input_schema).properties?.pattern) throw new Error(`no pattern in its schema: ${found.input_schema}`);
    return `${out.tools.map((t) => t.name).join(' ')} of ${out.total}`;
  });
  await step('tools_call file_grep (the tool tools_search found)', async () => {
    const r = await tools.tools_call.execute({ name: found?.name, arguments: { pattern: nonce } }, opts);
    if (r?.isError) throw new Error(`tool error: ${text(r)}`);
    if (!JSON.stringify(r).includes('hello.txt')) throw new Error(`hello.txt (which holds the nonce) not found: ${JSON.stringify(r)}`);
  });
  await step('tools_call file_delete (denied by the policy) is an error result', async () => {
    const r = await tools.tools_call.execute({ name: 'file_delete', arguments: { path: 'hello.txt' } }, opts);
    if (!r?.isError) throw new Error(`not an error result: ${JSON.stringify(r)}`);
    if (!/denied/i.test(text(r))) throw new Error(`does not say denied: ${text(r)}`);
    return text(r).split('\n')[0];
  });
  await step('close', async () => { await client.close(); });
}

console.log(`# ${failed === 0 ? 'all steps passed' : `${failed} step(s) failed`}`);
process.exit(failed === 0 ? 0 : 1);
