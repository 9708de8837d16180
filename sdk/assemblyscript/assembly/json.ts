// A small JSON value type with a strict parser and a serializer, for
// wasmcp plugins in AssemblyScript. AssemblyScript has no exceptions, so
// parse errors are reported through JSONValue.parse's result (kind
// JSON_MISSING plus JSONValue.lastError).

import { parseNumber, formatNumber } from "./float";
export { parseNumber, formatNumber } from "./float";

export const JSON_MISSING: i32 = 0;
export const JSON_NULL: i32 = 1;
export const JSON_BOOL: i32 = 2;
export const JSON_NUMBER: i32 = 3;
export const JSON_STRING: i32 = 4;
export const JSON_ARRAY: i32 = 5;
export const JSON_OBJECT: i32 = 6;

/** Maximum nesting depth the parser accepts. */
export const JSON_MAX_DEPTH: i32 = 64;

/**
 * A JSON value. One class with a kind tag: lookups never fail, they return
 * a "missing" value, so `v.get("a").get("b").str` is always safe. Objects
 * keep key order; for repeated keys the last one wins.
 */
export class JSONValue {
  kind: i32 = JSON_MISSING;
  b: bool = false;
  n: f64 = 0;
  s: string = "";
  items: Array<JSONValue> = [];
  keys: Array<string> = [];

  /** The last parse error message ("" after a successful parse). */
  static lastError: string = "";

  static missing(): JSONValue { return new JSONValue(); }

  /** Parses a complete JSON text; on error returns a missing value and sets lastError. */
  static parse(text: string): JSONValue {
    const p = new Parser(text);
    JSONValue.lastError = "";
    const v = p.value(0);
    if (p.failed) {
      JSONValue.lastError = p.error;
      return JSONValue.missing();
    }
    p.ws();
    if (p.pos != text.length) {
      JSONValue.lastError = "trailing characters at " + p.pos.toString();
      return JSONValue.missing();
    }
    return v;
  }

  get isMissing(): bool { return this.kind == JSON_MISSING; }
  get isNull(): bool { return this.kind == JSON_NULL; }
  get isString(): bool { return this.kind == JSON_STRING; }
  get isNumber(): bool { return this.kind == JSON_NUMBER; }
  get isBool(): bool { return this.kind == JSON_BOOL; }
  get isArray(): bool { return this.kind == JSON_ARRAY; }
  get isObject(): bool { return this.kind == JSON_OBJECT; }
  /** Number of array elements or object members. */
  get length(): i32 { return this.items.length; }

  /** Object member, or missing. */
  get(key: string): JSONValue {
    if (this.kind != JSON_OBJECT) return JSONValue.missing();
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) return this.items[i];
    }
    return JSONValue.missing();
  }

  /** Array element, or missing. */
  at(i: i32): JSONValue {
    if (this.kind != JSON_ARRAY || i < 0 || i >= this.items.length) return JSONValue.missing();
    return this.items[i];
  }

  /** Sets an object member (replacing an existing one); returns this. */
  set(key: string, v: JSONValue): JSONValue {
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (this.keys[i] == key) { this.items[i] = v; return this; }
    }
    this.keys.push(key);
    this.items.push(v);
    return this;
  }

  /** Appends to an array; returns this. */
  push(v: JSONValue): JSONValue {
    this.items.push(v);
    return this;
  }

  /** The string, or "" when not a string (check isString). */
  get str(): string { return this.kind == JSON_STRING ? this.s : ""; }
  /** The number, or NaN when not a number. */
  get num(): f64 { return this.kind == JSON_NUMBER ? this.n : NaN; }
  /** True only for JSON true. */
  get truthy(): bool { return this.kind == JSON_BOOL && this.b; }

  /** Compact JSON; non-finite numbers become null; missing becomes null. */
  toJSON(): string {
    const parts = new Array<string>();
    this.write(parts);
    return parts.join("");
  }

  write(out: Array<string>): void {
    switch (this.kind) {
      case JSON_BOOL: out.push(this.b ? "true" : "false"); break;
      case JSON_NUMBER: out.push(formatNumber(this.n)); break;
      case JSON_STRING: out.push(quote(this.s)); break;
      case JSON_ARRAY: {
        out.push("[");
        for (let i = 0; i < this.items.length; i++) {
          if (i > 0) out.push(",");
          this.items[i].write(out);
        }
        out.push("]");
        break;
      }
      case JSON_OBJECT: {
        out.push("{");
        for (let i = 0; i < this.items.length; i++) {
          if (i > 0) out.push(",");
          out.push(quote(this.keys[i]));
          out.push(":");
          this.items[i].write(out);
        }
        out.push("}");
        break;
      }
      default: out.push("null");
    }
  }
}

/** JSON null. */
export function jnull(): JSONValue { const v = new JSONValue(); v.kind = JSON_NULL; return v; }
/** A JSON boolean. */
export function jbool(b: bool): JSONValue { const v = new JSONValue(); v.kind = JSON_BOOL; v.b = b; return v; }
/** A JSON number. */
export function jnum(n: f64): JSONValue { const v = new JSONValue(); v.kind = JSON_NUMBER; v.n = n; return v; }
/** A JSON string. */
export function jstr(s: string): JSONValue { const v = new JSONValue(); v.kind = JSON_STRING; v.s = s; return v; }
/** An empty JSON array (add with push). */
export function jarr(): JSONValue { const v = new JSONValue(); v.kind = JSON_ARRAY; return v; }
/** An empty JSON object (add with set). */
export function jobj(): JSONValue { const v = new JSONValue(); v.kind = JSON_OBJECT; return v; }

const HEX = "0123456789abcdef";

/** A JSON string literal of s. Lone surrogates become U+FFFD. */
export function quote(s: string): string {
  let out = "\"";
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc = "";
    if (c == 0x22) esc = "\\\"";
    else if (c == 0x5c) esc = "\\\\";
    else if (c == 0x0a) esc = "\\n";
    else if (c == 0x0d) esc = "\\r";
    else if (c == 0x09) esc = "\\t";
    else if (c < 0x20) esc = "\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15);
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) { i++; continue; }
      esc = "\\ufffd";
    } else if (c >= 0xdc00 && c <= 0xdfff) esc = "\\ufffd";
    else continue;
    out += s.substring(run, i) + esc;
    run = i + 1;
  }
  return out + s.substring(run) + "\"";
}

class Parser {
  s: string;
  pos: i32 = 0;
  failed: bool = false;
  error: string = "";

  constructor(s: string) { this.s = s; }

  fail(msg: string): JSONValue {
    if (!this.failed) {
      this.failed = true;
      this.error = msg + " at " + this.pos.toString();
    }
    return JSONValue.missing();
  }

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  peek(): i32 { return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1; }

  value(depth: i32): JSONValue {
    this.ws();
    const c = this.peek();
    if (c < 0) return this.fail("unexpected end");
    if (c == 0x7b /* { */ || c == 0x5b /* [ */) {
      // An object's members and an array's elements are read alike, but
      // for the key and ':' before each member.
      const obj = c == 0x7b;
      const end = obj ? 0x7d : 0x5d;
      if (depth >= JSON_MAX_DEPTH) return this.fail("nested too deeply");
      this.pos++;
      const o = obj ? jobj() : jarr();
      this.ws();
      if (this.peek() == end) { this.pos++; return o; }
      while (true) {
        let key = "";
        if (obj) {
          this.ws();
          if (this.peek() != 0x22) return this.fail("expected a string key");
          const k = this.string();
          if (this.failed) return k;
          this.ws();
          if (this.peek() != 0x3a) return this.fail("expected ':'");
          this.pos++;
          key = k.s;
        }
        const v = this.value(depth + 1);
        if (this.failed) return v;
        if (obj) o.keys.push(key);
        o.items.push(v);
        this.ws();
        const d = this.peek();
        if (d == 0x2c) { this.pos++; continue; }
        if (d == end) { this.pos++; return o; }
        return this.fail(obj ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    if (c == 0x22) return this.string();
    if (c == 0x74) return this.literal("true", jbool(true));
    if (c == 0x66) return this.literal("false", jbool(false));
    if (c == 0x6e) return this.literal("null", jnull());
    return this.number();
  }

  literal(lit: string, v: JSONValue): JSONValue {
    if (this.s.substr(this.pos, lit.length) != lit) return this.fail("invalid literal");
    this.pos += lit.length;
    return v;
  }

  digits(): i32 {
    const start = this.pos;
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos - start;
  }

  number(): JSONValue {
    const start = this.pos;
    if (this.peek() == 0x2d) this.pos++;
    const c = this.peek();
    if (c == 0x30) this.pos++;
    else if (c >= 0x31 && c <= 0x39) this.digits();
    else return this.fail("invalid value");
    if (this.peek() == 0x2e) {
      this.pos++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    if (this.peek() == 0x65 || this.peek() == 0x45) {
      this.pos++;
      if (this.peek() == 0x2b || this.peek() == 0x2d) this.pos++;
      if (this.digits() == 0) return this.fail("invalid number");
    }
    return jnum(parseNumber(this.s.substring(start, this.pos)));
  }

  hex4(): i32 {
    if (this.pos + 4 > this.s.length) { this.fail("short \\u escape"); return 0; }
    let v = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.s.charCodeAt(this.pos + i);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) { this.fail("bad \\u escape"); return 0; }
      v = (v << 4) | d;
    }
    this.pos += 4;
    return v;
  }

  string(): JSONValue {
    this.pos++; // opening quote
    let out = "";
    let run = this.pos;
    while (true) {
      const c = this.peek();
      if (c < 0) return this.fail("unterminated string");
      if (c == 0x22) {
        out += this.s.substring(run, this.pos);
        this.pos++;
        return jstr(out);
      }
      if (c < 0x20) return this.fail("control character in string");
      if (c != 0x5c) { this.pos++; continue; }
      out += this.s.substring(run, this.pos);
      this.pos++;
      const e = this.peek();
      this.pos++;
      if (e == 0x22) out += "\"";
      else if (e == 0x5c) out += "\\";
      else if (e == 0x2f) out += "/";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x6e) out += "\n";
      else if (e == 0x72) out += "\r";
      else if (e == 0x74) out += "\t";
      else if (e == 0x75) {
        const u = this.hex4();
        if (this.failed) return JSONValue.missing();
        out += String.fromCharCode(u);
      } else return this.fail("invalid escape");
      run = this.pos;
    }
  }
}

// ---- base64 ----

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard, padded base64 of bytes. */
export function base64Encode(data: Uint8Array): string {
  const parts = new Array<string>();
  for (let i = 0; i < data.length; i += 3) {
    const n = data.length - i;
    const v = (<u32>data[i] << 16) | (n > 1 ? <u32>data[i + 1] << 8 : 0) | (n > 2 ? <u32>data[i + 2] : 0);
    parts.push(B64.charAt((v >> 18) & 63) + B64.charAt((v >> 12) & 63) +
      (n > 1 ? B64.charAt((v >> 6) & 63) : "=") + (n > 2 ? B64.charAt(v & 63) : "="));
  }
  return parts.join("");
}

/** Decodes standard or URL-safe base64 (padding optional); null if invalid. */
export function base64Decode(s: string): Uint8Array | null {
  let n = s.length;
  while (n > 0 && s.charCodeAt(n - 1) == 0x3d) n--;
  if (n % 4 == 1) return null;
  const out = new Uint8Array((n * 3) >> 2);
  let acc: u32 = 0, bits = 0, j = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    let v = -1;
    if (c >= 0x41 && c <= 0x5a) v = c - 0x41;
    else if (c >= 0x61 && c <= 0x7a) v = c - 0x61 + 26;
    else if (c >= 0x30 && c <= 0x39) v = c - 0x30 + 52;
    else if (c == 0x2b || c == 0x2d) v = 62;
    else if (c == 0x2f || c == 0x5f) v = 63;
    if (v < 0) return null;
    acc = ((acc << 6) | <u32>v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = <u8>(acc >> bits);
    }
  }
  if (bits > 0 && (acc & ((1 << bits) - 1)) != 0) return null;
  return out;
}
