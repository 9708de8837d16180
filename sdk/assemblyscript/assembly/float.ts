// Correct decimal <-> f64 conversion for AssemblyScript.
//
// AssemblyScript 0.28's parseFloat misreads large exponents (2.3e+49 gives
// 2.3e+38) and f64.toString sometimes prints a last digit that does not
// round-trip (0.1 + 0.2 prints as 0.30000000000000007). JSON needs both to
// be exact, so the SDK uses these instead:
//
// * parseNumber: Clinger's fast path for short inputs, otherwise an
//   approximation corrected with exact big-integer comparisons against the
//   neighbouring halfway points (round half to even).
// * formatNumber: integers below 2^53 as integers; otherwise the shortest
//   correctly rounded digits of the exact binary value that parse back to
//   the same f64 (at most 17).

// ---- minimal unsigned big integers: little-endian u32 limbs ----

function bigFrom(v: u64): u32[] {
  const a: u32[] = [<u32>v, <u32>(v >> 32)];
  trim(a);
  return a;
}

function trim(a: u32[]): void {
  while (a.length > 0 && a[a.length - 1] == 0) a.pop();
}

function mulSmall(a: u32[], m: u32): void {
  let carry: u64 = 0;
  for (let i = 0; i < a.length; i++) {
    const t = <u64>a[i] * <u64>m + carry;
    a[i] = <u32>t;
    carry = t >> 32;
  }
  if (carry != 0) a.push(<u32>carry);
}

function addSmall(a: u32[], v: u32): void {
  let carry: u64 = v;
  for (let i = 0; i < a.length && carry != 0; i++) {
    const t = <u64>a[i] + carry;
    a[i] = <u32>t;
    carry = t >> 32;
  }
  if (carry != 0) a.push(<u32>carry);
}

function mulPow10(a: u32[], k: i32): void {
  while (k >= 9) { mulSmall(a, 1000000000); k -= 9; }
  let m: u32 = 1;
  while (k-- > 0) m *= 10;
  if (m > 1) mulSmall(a, m);
}

function mulPow5(a: u32[], k: i32): void {
  while (k >= 13) { mulSmall(a, 1220703125); k -= 13; }
  let m: u32 = 1;
  while (k-- > 0) m *= 5;
  if (m > 1) mulSmall(a, m);
}

function shl(a: u32[], n: i32): u32[] {
  const words = n >> 5, bits = n & 31;
  const r = new Array<u32>(words);
  for (let i = 0; i < words; i++) r[i] = 0;
  let carry: u32 = 0;
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    r.push(bits == 0 ? v : (v << bits) | carry);
    carry = bits == 0 ? 0 : v >> (32 - bits);
  }
  if (carry != 0) r.push(carry);
  trim(r);
  return r;
}

function cmp(a: u32[], b: u32[]): i32 {
  if (a.length != b.length) return a.length < b.length ? -1 : 1;
  for (let i = a.length - 1; i >= 0; i--) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/** Divides in place by d; returns the remainder. */
function divSmall(a: u32[], d: u32): u32 {
  let rem: u64 = 0;
  for (let i = a.length - 1; i >= 0; i--) {
    const cur = (rem << 32) | <u64>a[i];
    a[i] = <u32>(cur / <u64>d);
    rem = cur % <u64>d;
  }
  trim(a);
  return <u32>rem;
}

function toDecimal(a: u32[]): string {
  if (a.length == 0) return "0";
  const x = a.slice(0);
  const chunks: string[] = [];
  while (x.length > 0) {
    const r = divSmall(x, 1000000000);
    let s = r.toString();
    if (x.length > 0) while (s.length < 9) s = "0" + s;
    chunks.push(s);
  }
  chunks.reverse();
  return chunks.join("");
}

// ---- parsing ----

const MAX_DIGITS = 800;

/** Exact powers of ten up to 1e22 (each product is exact in f64). */
function pow10exact(k: i32): f64 {
  let v: f64 = 1;
  for (let i = 0; i < k; i++) v *= 10;
  return v;
}

/** Compares M * 10^E with (2^sh) * c where c is an odd-ish multiplier. */
function cmpDecimal(M: u32[], E: i32, c: u64, binExp: i32): i32 {
  let lhs = M.slice(0);
  let rhs = bigFrom(c);
  if (E >= 0) mulPow10(lhs, E); else mulPow10(rhs, -E);
  if (binExp >= 0) rhs = shl(rhs, binExp); else lhs = shl(lhs, -binExp);
  return cmp(lhs, rhs);
}

/**
 * Parses a JSON number (already validated: -?digits[.digits][e[+-]digits]).
 * Correctly rounded; more than 800 significant digits are truncated.
 */
export function parseNumber(s: string): f64 {
  let i = 0;
  const neg = s.charCodeAt(0) == 0x2d;
  if (neg) i++;
  let digits = "";
  let E = 0;
  let seenPoint = false;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 0x2e) { seenPoint = true; continue; }
    if (c < 0x30 || c > 0x39) break;
    if (digits.length == 0 && c == 0x30) { if (seenPoint) E--; continue; }
    if (digits.length < MAX_DIGITS) {
      digits += String.fromCharCode(c);
      if (seenPoint) E--;
    } else if (!seenPoint) E++;
  }
  if (i < s.length && (s.charCodeAt(i) | 0x20) == 0x65) {
    i++;
    let eneg = false;
    if (s.charCodeAt(i) == 0x2b) i++;
    else if (s.charCodeAt(i) == 0x2d) { eneg = true; i++; }
    let ev = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      if (ev < 100000) ev = ev * 10 + (c - 0x30);
    }
    E += eneg ? -ev : ev;
  }
  // strip trailing zeros of the digits
  let n = digits.length;
  while (n > 0 && digits.charCodeAt(n - 1) == 0x30) { n--; E++; }
  digits = digits.substring(0, n);
  let v: f64;
  if (n == 0) v = 0;
  else if (n + E > 310) v = Infinity;
  else if (n + E < -330) v = 0;
  else if (n <= 15 && E >= -22 && E <= 22) {
    v = <f64>U64.parseInt(digits);
    v = E < 0 ? v / pow10exact(-E) : v * pow10exact(E);
  } else v = slowParse(digits, E);
  return neg ? -v : v;
}

function slowParse(digits: string, E: i32): f64 {
  const M: u32[] = [];
  for (let i = 0; i < digits.length; i++) {
    mulSmall(M, 10);
    addSmall(M, <u32>(digits.charCodeAt(i) - 0x30));
  }
  trim(M);
  // approximation from the leading 17 digits
  const lead = digits.length > 17 ? digits.substring(0, 17) : digits;
  const k = E + digits.length - lead.length;
  // two factors keep each power of ten in the normal range
  const k1 = k / 2;
  let x = <f64>U64.parseInt(lead) * Math.pow(10, <f64>k1) * Math.pow(10, <f64>(k - k1));
  if (!isFinite(x)) x = f64.MAX_VALUE;
  if (x == 0) x = f64.MIN_VALUE;
  for (let iter = 0; iter < 64; iter++) {
    const bits = reinterpret<u64>(x);
    const be = <i32>((bits >> 52) & 0x7ff);
    const frac = bits & 0xfffffffffffff;
    const mant: u64 = be == 0 ? frac : frac | (<u64>1 << 52);
    const e = be == 0 ? -1074 : be - 1075;
    // above the upper halfway point?
    const cu = cmpDecimal(M, E, 2 * mant + 1, e - 1);
    if (cu > 0 || (cu == 0 && (mant & 1) == 1)) {
      if (bits == 0x7fefffffffffffff) return Infinity;
      x = reinterpret<f64>(bits + 1);
      continue;
    }
    // below the lower halfway point?
    let cl: i32;
    if (frac == 0 && be > 1) cl = cmpDecimal(M, E, 4 * mant - 1, e - 2);
    else cl = cmpDecimal(M, E, 2 * mant - 1, e - 1);
    if (cl < 0 || (cl == 0 && (mant & 1) == 1)) {
      if (bits == 1) return 0; // at or below half the smallest subnormal (ties to even 0)
      x = reinterpret<f64>(bits - 1);
      continue;
    }
    return x;
  }
  return x;
}

// ---- formatting ----

/** Places a decimal point: digits × 10^(point - digits.length). */
function place(digits: string, point: i32): string {
  const n = digits.length;
  if (point > 0 && point <= 21) {
    if (point >= n) return digits + "0".repeat(point - n);
    return digits.substring(0, point) + "." + digits.substring(point);
  }
  if (point <= 0 && point > -6) return "0." + "0".repeat(-point) + digits;
  const exp = point - 1;
  const mant = n == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
  return mant + "e" + (exp < 0 ? "-" + (-exp).toString() : "+" + exp.toString());
}

/** JSON text of a number: the shortest form that parses back to n;
 * non-finite numbers become null (JSON has no NaN). */
export function formatNumber(n: f64): string {
  if (!isFinite(n)) return "null";
  if (n == Math.floor(n) && Math.abs(n) < 9007199254740992.0) return (<i64>n).toString();
  const neg = n < 0;
  const x = Math.abs(n);
  const bits = reinterpret<u64>(x);
  const be = <i32>((bits >> 52) & 0x7ff);
  const frac = bits & 0xfffffffffffff;
  const mant: u64 = be == 0 ? frac : frac | (<u64>1 << 52);
  const e = be == 0 ? -1074 : be - 1075;
  let N = bigFrom(mant);
  let exp10 = 0;
  if (e >= 0) N = shl(N, e);
  else { mulPow5(N, -e); exp10 = e; }
  const exact = toDecimal(N); // x = exact × 10^exp10
  for (let p = 1; p <= 17; p++) {
    let d = exact.substring(0, p);
    let point = exact.length + exp10;
    if (exact.length > p && exact.charCodeAt(p) >= 0x35) {
      // round up the p-digit prefix
      const up = (U64.parseInt(d) + 1).toString();
      if (up.length > p) { d = up.substring(0, p); point++; } else d = up;
    }
    let m = d.length;
    while (m > 1 && d.charCodeAt(m - 1) == 0x30) m--;
    d = d.substring(0, m);
    const cand = place(d, point);
    if (reinterpret<u64>(parseNumber(cand)) == bits) return neg ? "-" + cand : cand;
  }
  return n.toString(); // not reached: 17 digits always round-trip
}
