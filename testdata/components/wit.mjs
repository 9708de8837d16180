// Usage: node wit.mjs JCO_TRANSPILE_DIR COMPONENT.wasm
// Prints the WIT of a component, as wasm-tools component wit does.
import { readFile } from 'node:fs/promises';
const [dir, input] = process.argv.slice(2);
const { componentWit } = await import(dir + '/dist/wasm-tools.js');
process.stdout.write(await componentWit(await readFile(input)));
