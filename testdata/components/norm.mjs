// norm turns what jco returns into JSON the Go tests compare: a 64-bit
// integer as a string of digits, a non-finite or negative-zero float as
// a string ("NaN", "Infinity", "-0"), a typed array (list<u8>,
// list<f64>, ...) as an array, an absent option as null; records, flags
// (objects of booleans), variants and results ({tag, val}) as jco gives
// them. Used by jco-call.mjs and runtime/component's
// testdata/layout/lift.mjs.
export const norm = (v) => {
	if (typeof v === 'bigint') return v.toString();
	if (typeof v === 'number') {
		if (Number.isNaN(v)) return 'NaN';
		if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
		if (Object.is(v, -0)) return '-0';
		return v;
	}
	if (v === undefined) return null;
	if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v).map(norm);
	if (Array.isArray(v)) return v.map(norm);
	if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
	return v;
};
