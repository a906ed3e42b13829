// Counts what a session receives before the user's first word — the tools/list answer and
// initialize's instructions, as written by TestCatalogueFigures (mcp/catalogue_figures_test.go)
// — per tools mode and number of upstream servers, in bytes and in o200k tokens (gpt-tokenizer,
// pinned in package.json), and prints the table docs/benchmarks.md carries.
//
//   node build/bench/tokens/count.mjs DIR
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node count.mjs DIR (the files TestCatalogueFigures wrote)');
  process.exit(2);
}
const rows = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const c = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  // What a client hands the model: each tool's name, description and input schema (some add
  // the output schema; counted apart), and the server's instructions.
  const defs = JSON.stringify(c.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })));
  const outs = JSON.stringify(c.tools.map((t) => t.outputSchema ?? null));
  rows.push({
    mode: c.mode, servers: c.servers, tools: c.tools.length,
    bytes: Buffer.byteLength(defs) + Buffer.byteLength(c.instructions),
    tokens: encode(defs).length + encode(c.instructions).length,
    outTokens: encode(outs).length,
  });
}
const order = { full: 0, search: 1, script: 2 };
rows.sort((a, b) => a.servers - b.servers || order[a.mode] - order[b.mode]);
const full = Object.fromEntries(rows.filter((r) => r.mode === 'full').map((r) => [r.servers, r.tokens]));
console.log('| upstream servers | tools mode | tools listed | bytes | o200k tokens | vs full | + output schemas (tokens) |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.servers} | ${r.mode} | ${r.tools} | ${r.bytes} | ${r.tokens} | ${(r.tokens / full[r.servers]).toFixed(3)}× | ${r.outTokens} |`);
}
