// Usage: node jco-call.mjs NPM_DIR COMPONENT.wasm RESULTS.json < CALLS.json
// The reference host of cmd/wasmcp's differential test: transpiles the
// component with jco (NPM_DIR holds hostapi/wasip2/testdata/npm's pinned
// packages: @bytecodealliance/jco-transpile, and the
// @bytecodealliance/preview2-shim the transpiled code imports for WASI)
// and makes each call of CALLS.json, an array of
// {"export": NAME, "func": NAME or "", "args": [...]}: a world function
// when func is "", else func of the exported interface. The arguments are
// in jco's form (records with camelCase fields, variants {tag, val},
// flags an object of booleans, an absent option null). It writes one
// entry per call into RESULTS.json (stdout is the component's):
// {"value": V} for what the function returned, or {"threw": P} for the
// err of a top-level result, which jco throws (as the value itself, or as
// a ComponentError's payload; the ok is returned as it is). Values are
// printed as norm.mjs prints them: a
// 64-bit integer as a string of digits, a non-finite or negative-zero
// float as a string, a typed array (list<u8>, list<f64>) as an array, an
// absent option as null.
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { norm } from './norm.mjs';
const [npm, input, output] = process.argv.slice(2);
const { transpileBytes, writeFiles } = await import(join(npm, 'node_modules/@bytecodealliance/jco-transpile/dist/index.js'));
const calls = JSON.parse(await readFile('/dev/stdin', 'utf8'));
// Under NPM_DIR, so that the transpiled code's imports of
// @bytecodealliance/preview2-shim resolve to the pinned one.
const out = await mkdtemp(join(npm, 'jco-call-'));
const camel = (s) => s.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
try {
	const { files } = await transpileBytes(await readFile(input), { name: 'component' });
	await writeFiles(files, { baseDir: out });
	await writeFile(join(out, 'package.json'), '{"type":"module"}\n');
	const mod = await import(join(out, 'component.js'));
	const results = [];
	for (const c of calls) {
		const target = c.func === '' ? mod : (mod[c.export] ?? mod[camel(c.export.replace(/^.*\/|@.*$/g, ''))]);
		const fn = target?.[camel(c.func === '' ? c.export : c.func)];
		if (typeof fn !== 'function') throw new Error(`no function ${c.export} ${c.func}; exports ${Object.keys(mod)}`);
		try {
			results.push({ value: norm(await fn(...c.args)) });
		} catch (e) {
			if (e instanceof Error && !('payload' in e)) throw e; // a trap
			results.push({ threw: norm(e instanceof Error ? e.payload : e) });
		}
	}
	await writeFile(output, JSON.stringify(results) + '\n');
} finally {
	await rm(out, { recursive: true, force: true });
}
