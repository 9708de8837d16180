// Usage: node new.mjs JCO_TRANSPILE_DIR ADAPTER WORLD.wit CORE.wasm OUT.wasm
// Makes a component of a core module, as `jco new` does: embeds the WIT
// world (wasm-tools component embed) and wraps the module with the WASI
// preview 1 reactor adapter (wasm-tools component new). The WIT doc
// comments are then added as a package-docs custom section, in the format
// wit-parser encodes them (what Wassette's wit-docs-inject adds).
import { readFile, writeFile } from 'node:fs/promises';
const [dir, adapter, wit, core, out] = process.argv.slice(2);
const { componentEmbed, componentNew } = await import(dir + '/dist/wasm-tools.js');
const embedded = await componentEmbed({ binary: await readFile(core), witSource: await readFile(wit, 'utf8') });
let component = await componentNew(embedded, [['wasi_snapshot_preview1', await readFile(adapter)]]);

// packageDocs returns the package-docs section wit-parser encodes for the
// doc comments (///) of a WIT file in the style of ./*/world.wit: version
// byte 0, then the JSON of its package metadata (docs of the package, of
// each world and its functions, of each interface, its functions and its
// types with their items). Only items with docs are listed, as wit-parser
// lists them.
function packageDocs(src) {
	const meta = {}, stack = [];
	let pending = [];
	const take = () => { const d = pending.join('\n'); pending = []; return d; };
	const put = (obj, key, name, val) => { if (val) (obj[key] ??= {})[name] = val; };
	for (const raw of src.split('\n')) {
		const line = raw.trim();
		let m;
		if (line.startsWith('///')) { pending.push(line.slice(3).replace(/^ /, '')); continue; }
		const top = stack[stack.length - 1];
		if ((m = line.match(/^package\s.*\{$/))) { take(); stack.push({ kind: 'package', node: {} }); } // a nested package: its docs are its own
		else if ((m = line.match(/^package\s/))) { const d = take(); if (d) meta.docs = d; }
		else if ((m = line.match(/^(interface|world)\s+([\w-]+)\s*\{/))) {
			const node = { docs: take() };
			stack.push({ kind: m[1], name: m[2], node });
		} else if ((m = line.match(/^(record|variant|enum|flags)\s+([\w-]+)\s*\{/))) {
			stack.push({ kind: 'type', name: m[2], node: { docs: take() } });
		} else if (line.startsWith('}')) {
			const done = stack.pop(), parent = stack[stack.length - 1];
			if (done.kind === 'package') continue;
			const n = done.node;
			if (!n.docs) delete n.docs;
			if (done.kind === 'type') { if (Object.keys(n).length) put(parent.node, 'types', done.name, n); }
			else if (Object.keys(n).length) put(meta, done.kind === 'world' ? 'worlds' : 'interfaces', done.name, n);
			take();
		} else if (top && top.kind === 'type' && (m = line.match(/^([\w-]+)\s*[:,(]/))) {
			put(top.node, 'items', m[1], take());
		} else if (top && (m = line.match(/^(?:(?:export|import)\s+)?([\w-]+)\s*:\s*func\b/))) {
			put(top.node, 'funcs', m[1], take());
		} else if (line) take();
	}
	// The section describes the component's own package, which a decoder
	// names root:component with one world, root; the interfaces it exports
	// belong to other packages and keep no docs. (wit-docs-inject keeps
	// the WIT names, which wasm-tools and jco then refuse to decode:
	// "missing world".)
	const worlds = Object.values(meta.worlds ?? {});
	delete meta.interfaces;
	delete meta.worlds;
	if (worlds.length === 1) {
		delete worlds[0].interfaces;
		meta.worlds = { root: worlds[0] };
	}
	return Buffer.concat([Buffer.from([0]), Buffer.from(JSON.stringify(meta))]);
}
const uleb = (n) => { const o = []; do { let c = n & 0x7f; n >>>= 7; if (n) c |= 0x80; o.push(c); } while (n); return o; };
const docs = packageDocs(await readFile(wit, 'utf8'));
const name = new TextEncoder().encode('package-docs');
const body = [...uleb(name.length), ...name, ...docs];
component = Buffer.concat([Buffer.from(component), Buffer.from([0, ...uleb(body.length), ...body])]);
await writeFile(out, component);
