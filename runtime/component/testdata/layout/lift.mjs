// Usage: node lift.mjs JCO_TRANSPILE_DIR LAYOUT.wasm > layout.golden.json
// Transpiles the component with jco and prints what each export returns,
// as JSON: a 64-bit integer as a string of digits, a non-finite or
// negative-zero float as a string ("NaN", "Infinity", "-0"), a byte list
// as an array of numbers, an absent option as null; records, flags
// (objects of booleans), variants and results ({tag, val}) as jco gives
// them.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { norm } from '../../../../testdata/components/norm.mjs';
const [dir, input] = process.argv.slice(2);
const { transpileBytes, writeFiles } = await import(dir + '/dist/index.js');
const out = await mkdtemp(join(tmpdir(), 'layout-'));
try {
	const { files } = await transpileBytes(await readFile(input), { name: 'layout' });
	await writeFiles(files, { baseDir: out });
	const mod = await import(join(out, 'layout.js'));

	const result = {};
	for (const name of Object.keys(mod).sort()) {
		if (typeof mod[name] === 'function') result[name] = norm(mod[name]());
	}
	process.stdout.write(JSON.stringify(result, null, 1) + '\n');
} finally {
	await rm(out, { recursive: true, force: true });
}
