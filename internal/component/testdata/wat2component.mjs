// Usage: node wat2component.mjs JCO_TRANSPILE_DIR IN.wat OUT.wasm
// Parses component text with jco-transpile's wasm-tools (parse).
import { readFile, writeFile } from 'node:fs/promises';
const [dir, input, output] = process.argv.slice(2);
const { parse } = await import(dir + '/dist/wasm-tools.js');
await writeFile(output, await parse(await readFile(input, 'utf8')));
