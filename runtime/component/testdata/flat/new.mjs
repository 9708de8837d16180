// Usage: node new.mjs JCO_TRANSPILE_DIR WORLD.wit CORE.wasm OUT.wasm
// Embeds the world in the core module and makes a component of it
// (wasm-tools component embed + new), which checks every core signature.
import { readFile, writeFile } from 'node:fs/promises';
const [dir, wit, core, out] = process.argv.slice(2);
const { componentEmbed, componentNew } = await import(dir + '/dist/wasm-tools.js');
const embedded = await componentEmbed({ binary: await readFile(core), witSource: await readFile(wit, 'utf8') });
await writeFile(out, await componentNew(embedded));
