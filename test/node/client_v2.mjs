#!/usr/bin/env node
// The TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in package.json) against a
// running hub's Streamable HTTP endpoint, in both protocol eras on the same URL: versionNegotiation
// "auto" (server/discover, then 2026-07-28 stateless requests; it must never send initialize) and
// the default "legacy" (initialize, a session). Each lists, calls, gets a denied call as a normal
// error result and answers an ask (elicitation; an input_required round on 2026-07-28).
//
// Usage: node client_v2.mjs <url> <token>   (the hub denies file_delete and asks for file_write)
// Output: TAP; exit status 1 when any check fails.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token] = process.argv.slice(2);
let n = 0;
let failures = 0;
function report(ok, name, detail) {
  n++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${name}`);
  if (!ok) {
    failures++;
    console.log(`  # ${String(detail ?? '').split('\n').join('\n  # ')}`);
  }
}

async function run(mode) {
  const sent = [];
  const replies = [];
  const recordingFetch = async (input, init) => {
    let method = '';
    if (init?.body) {
      try {
        method = JSON.parse(init.body).method ?? '(response)';
      } catch {}
      sent.push(method);
    }
    const res = await fetch(input, init);
    if (method && method !== 'subscriptions/listen') {
      res.clone().text().then((t) => replies.push(t), () => {});
    }
    return res;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: recordingFetch,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: `ts-sdk-v2-${mode}`, version: '2.4.0' }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode },
  });
  let asked = 0;
  client.setRequestHandler('elicitation/create', async () => {
    asked++;
    return { action: 'accept', content: {} };
  });
  const tag = `ts-sdk v2 (${mode})`;
  try {
    await client.connect(transport);
    const tools = await client.listTools();
    report(tools.tools.length > 0, `${tag}: tools/list`, JSON.stringify(tools).slice(0, 300));
    const ok = await client.callTool({ name: 'lang_detect', arguments: { path: 'main.go' } });
    report(!ok.isError && JSON.stringify(ok.content).includes('go'), `${tag}: tools/call`, JSON.stringify(ok));
    const denied = await client.callTool({ name: 'file_delete', arguments: { path: 'a.txt' } });
    report(denied.isError === true && JSON.stringify(denied.content).includes('denied by'), `${tag}: a denied call is an error result`, JSON.stringify(denied));
    const written = await client.callTool({ name: 'file_write', arguments: { path: `v2-${mode}.txt`, content: 'x' } });
    report(!written.isError && asked === 1, `${tag}: an ask answered (asked ${asked} time(s))`, JSON.stringify(written));
  } catch (e) {
    report(false, `${tag}: no exception`, e?.stack ?? String(e));
  } finally {
    await client.close().catch(() => {});
  }
  await new Promise((r) => setTimeout(r, 100)); // the replies' bodies finish reading
  const modern = mode === 'auto';
  if (modern) {
    report(!sent.includes('initialize') && sent.includes('server/discover'), `${tag}: never sent initialize`, sent.join(' '));
    const bad = replies.filter((r) => r.includes('"result"') && !r.includes('"resultType"'));
    report(bad.length === 0, `${tag}: every result carries resultType`, bad.join('\n'));
    report(replies.some((r) => r.includes('"input_required"')), `${tag}: the ask came as input_required`, replies.join('\n'));
  } else {
    report(sent[0] === 'initialize', `${tag}: initialized a session`, sent.join(' '));
  }
}

await run('auto');
await run('legacy');
console.log(`1..${n}`);
process.exit(failures ? 1 : 0);
