#!/usr/bin/env node
// The Vercel AI SDK's MCP client (@ai-sdk/mcp, with `ai`) against a running hub over Streamable
// HTTP, with the client's DEFAULT options: createMCPClient({ transport: { type: 'http', url,
// headers } }) and nothing else. It lists the tools, turns them into AI SDK tools (tools()) and
// runs file_write, file_read and lang_list through those tools' execute functions, as
// generateText would. Driven by clients_test.go (TestAISDKClient); needs Node >= 22.
//
// Usage: node aisdk.mjs <http-url> <token> <nonce>
// Prints one line per step ("ok - …" / "not ok - …: error") and exits 1 when a step failed.

import { createMCPClient } from '@ai-sdk/mcp';
import { jsonSchema } from 'ai';

const [url, token, nonce] = process.argv.slice(2);
if (!url || !token || !nonce) {
  console.error('usage: node aisdk.mjs <http-url> <token> <nonce>');
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
    const data = err?.data ? ` data=${JSON.stringify(err.data)}` : '';
    const code = err?.code != null ? ` code=${err.code}` : '';
    console.log(`not ok - ${name}: ${err?.stack ?? err}${code}${data}`);
    return false;
  }
}

function textOf(result) {
  return JSON.stringify(result);
}

let client;
const connected = await step('connect (createMCPClient, transport type http, default options)', async () => {
  client = await createMCPClient({
    transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
  });
  const v = client.initializeResult?.protocolVersion;
  return `server ${client.serverInfo?.name} ${client.serverInfo?.version}, protocol ${v}`;
});

if (connected) {
  let tools;
  await step('tools/list through tools()', async () => {
    tools = await client.tools();
    for (const n of ['file_write', 'file_read', 'lang_list']) {
      if (!tools[n]) throw new Error(`no ${n} among ${Object.keys(tools).length} tools`);
    }
    // The AI SDK hands these schemas to the model provider: they must be plain JSON schemas.
    jsonSchema(tools.file_write.inputSchema.jsonSchema ?? {});
    return `${Object.keys(tools).length} tools`;
  });
  const opts = { toolCallId: 'call-1', messages: [] };
  if (tools?.file_write) {
    await step('file_write through the AI SDK tool', async () => {
      const r = await tools.file_write.execute({ path: 'hello.txt', content: nonce }, opts);
      if (r?.isError) throw new Error(`tool error: ${textOf(r)}`);
      if (!/"success"\s*:\s*true/.test(textOf(r))) throw new Error(`no success: ${textOf(r)}`);
    });
    await step('file_read through the AI SDK tool', async () => {
      const r = await tools.file_read.execute({ path: 'hello.txt' }, opts);
      if (r?.isError) throw new Error(`tool error: ${textOf(r)}`);
      if (!textOf(r).includes(nonce)) throw new Error(`nonce missing: ${textOf(r)}`);
    });
    await step('lang_list (no arguments) through the AI SDK tool', async () => {
      const r = await tools.lang_list.execute({}, opts);
      if (r?.isError) throw new Error(`tool error: ${textOf(r)}`);
      if (!textOf(r).includes('languages')) throw new Error(`no languages: ${textOf(r)}`);
    });
  }
  await step('close', async () => { await client.close(); });
}

console.log(`# ${failed === 0 ? 'all steps passed' : `${failed} step(s) failed`}`);
process.exit(failed === 0 ? 0 : 1);
