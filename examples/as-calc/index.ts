// as-calc: a calculator for wasmcp, written in AssemblyScript against
// sdk/assemblyscript. Tools: calc (evaluate an expression), calc_store and
// calc_vars (named variables kept in the host's kv store, if granted).

import {
  Plugin, Request, ToolResult, JSONValue, HostResult, Errno,
  jobj, jstr, jnum, kvGet, kvSet, kvList, formatNumber, parseNumber,
} from "../../sdk/assemblyscript/assembly";

// ---- the evaluator ----

const KV_PREFIX = "var:";

/** A recursive-descent evaluator over one expression; no exceptions, so
 * the first error is recorded and every later step returns NaN. */
class Calc {
  s: string;
  pos: i32 = 0;
  err: string = "";
  vars: JSONValue;
  /** Set when a kv lookup failed for a reason other than "absent". */
  hostErr: HostResult | null = null;
  useKV: bool = true;

  constructor(s: string, vars: JSONValue) {
    this.s = s;
    this.vars = vars;
  }

  fail(msg: string): f64 {
    if (this.err.length == 0) this.err = msg + " at position " + (this.pos + 1).toString();
    return NaN;
  }

  get failed(): bool { return this.err.length > 0; }

  ws(): void {
    while (this.pos < this.s.length) {
      const c = this.s.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  peek(): i32 {
    this.ws();
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }

  run(): f64 {
    if (this.peek() < 0) return this.fail("empty expression");
    const v = this.expr();
    if (this.failed) return NaN;
    if (this.peek() >= 0) return this.fail("unexpected '" + this.s.charAt(this.pos) + "'");
    return v;
  }

  // expr := term (('+' | '-') term)*
  expr(): f64 {
    let v = this.term();
    while (!this.failed) {
      const c = this.peek();
      if (c == 0x2b) { this.pos++; v += this.term(); }
      else if (c == 0x2d || c == 0x2212) { this.pos++; v -= this.term(); }
      else break;
    }
    return v;
  }

  // term := unary (('*' | '/' | '%') unary)*
  term(): f64 {
    let v = this.unary();
    while (!this.failed) {
      const c = this.peek();
      if (c == 0x2a || c == 0xd7) { this.pos++; v *= this.unary(); }
      else if (c == 0x2f || c == 0xf7) {
        const at = this.pos;
        this.pos++;
        const d = this.unary();
        if (d == 0 && !this.failed) { this.pos = at; return this.fail("division by zero"); }
        v /= d;
      } else if (c == 0x25) {
        const at = this.pos;
        this.pos++;
        const d = this.unary();
        if (d == 0 && !this.failed) { this.pos = at; return this.fail("modulo by zero"); }
        v = v % d;
      } else break;
    }
    return v;
  }

  // unary := ('-' | '+') unary | power
  unary(): f64 {
    const c = this.peek();
    if (c == 0x2d || c == 0x2212) { this.pos++; return -this.unary(); }
    if (c == 0x2b) { this.pos++; return this.unary(); }
    return this.power();
  }

  // power := postfix ('^' unary)?     (right-associative; -2^2 = -4)
  power(): f64 {
    const base = this.postfix();
    if (this.peek() == 0x5e) {
      this.pos++;
      const e = this.unary();
      return Math.pow(base, e);
    }
    if (this.peek() == 0x2a && this.pos + 1 < this.s.length && this.s.charCodeAt(this.pos + 1) == 0x2a) {
      this.pos += 2;
      return Math.pow(base, this.unary());
    }
    return base;
  }

  // postfix := primary '!'*
  postfix(): f64 {
    let v = this.primary();
    while (!this.failed && this.peek() == 0x21) {
      if (v < 0 || v != Math.floor(v)) return this.fail("factorial needs a non-negative integer");
      if (v > 170) return this.fail("factorial too large");
      let f: f64 = 1;
      for (let i = 2; i <= <i32>v; i++) f *= i;
      v = f;
      this.pos++;
    }
    return v;
  }

  primary(): f64 {
    const c = this.peek();
    if (c < 0) return this.fail("unexpected end of expression");
    if (c == 0x28) {
      this.pos++;
      const v = this.expr();
      if (this.failed) return NaN;
      if (this.peek() != 0x29) return this.fail("missing ')'");
      this.pos++;
      return v;
    }
    if ((c >= 0x30 && c <= 0x39) || c == 0x2e) return this.number();
    if (isIdentStart(c)) return this.identifier();
    return this.fail("unexpected '" + this.s.charAt(this.pos) + "'");
  }

  number(): f64 {
    const start = this.pos;
    const s = this.s;
    if (s.charCodeAt(start) == 0x30 && start + 1 < s.length && (s.charCodeAt(start + 1) | 0x20) == 0x78) {
      this.pos += 2;
      let v: f64 = 0;
      let n = 0;
      while (this.pos < s.length) {
        const d = hexDigit(s.charCodeAt(this.pos));
        if (d < 0) break;
        v = v * 16 + d;
        this.pos++;
        n++;
      }
      if (n == 0) return this.fail("invalid hex number");
      return v;
    }
    let digits = 0;
    while (this.pos < s.length && isDigit(s.charCodeAt(this.pos))) { this.pos++; digits++; }
    if (this.pos < s.length && s.charCodeAt(this.pos) == 0x2e) {
      this.pos++;
      while (this.pos < s.length && isDigit(s.charCodeAt(this.pos))) { this.pos++; digits++; }
    }
    if (digits == 0) { this.pos = start; return this.fail("invalid number"); }
    if (this.pos < s.length && (s.charCodeAt(this.pos) | 0x20) == 0x65) {
      const save = this.pos;
      this.pos++;
      if (this.pos < s.length && (s.charCodeAt(this.pos) == 0x2b || s.charCodeAt(this.pos) == 0x2d)) this.pos++;
      let ed = 0;
      while (this.pos < s.length && isDigit(s.charCodeAt(this.pos))) { this.pos++; ed++; }
      if (ed == 0) this.pos = save; // "2e" is 2 times e? no: leave 'e' to the caller
    }
    return parseNumber(s.substring(start, this.pos));
  }

  identifier(): f64 {
    const start = this.pos;
    while (this.pos < this.s.length && isIdentPart(this.s.charCodeAt(this.pos))) this.pos++;
    const name = this.s.substring(start, this.pos);
    if (this.peek() == 0x28) {
      this.pos++;
      const args: f64[] = [];
      if (this.peek() != 0x29) {
        while (true) {
          args.push(this.expr());
          if (this.failed) return NaN;
          const c = this.peek();
          if (c == 0x2c) { this.pos++; continue; }
          if (c == 0x29) break;
          return this.fail("expected ',' or ')' in call to " + name);
        }
      }
      this.pos++;
      const at = this.pos;
      const v = this.call(name, args);
      if (this.failed && this.err.indexOf(" at position ") < 0) {
        this.pos = start;
        const e = this.err;
        this.err = "";
        return this.fail(e);
      }
      this.pos = at;
      return v;
    }
    // variables first, then constants, then the kv store
    const v = this.vars.get(name);
    if (v.isNumber) return v.num;
    if (name == "pi" || name == "PI" || name == "π") return Math.PI;
    if (name == "e" || name == "E") return Math.E;
    if (name == "tau") return 2 * Math.PI;
    if (name == "phi") return (1 + Math.sqrt(5)) / 2;
    if (name == "inf") return Infinity;
    if (this.useKV) {
      const r = kvGet(KV_PREFIX + name);
      if (r.ok && r.value.isString) {
        const n = parseNumber(r.value.str);
        if (isFinite(n)) return n;
      }
      if (!r.ok && r.errno != Errno.DENIED) this.hostErr = r;
    }
    this.pos = start;
    return this.fail("unknown variable '" + name + "'");
  }

  call(name: string, a: f64[]): f64 {
    const n = a.length;
    if (name == "min" || name == "max" || name == "hypot" || name == "sum" || name == "avg") {
      if (n == 0) return this.err1(name + " needs at least one argument");
      let v = name == "hypot" || name == "sum" || name == "avg" ? 0 : a[0];
      for (let i = 0; i < n; i++) {
        if (name == "min") v = Math.min(v, a[i]);
        else if (name == "max") v = Math.max(v, a[i]);
        else if (name == "hypot") v += a[i] * a[i];
        else v += a[i];
      }
      if (name == "hypot") return Math.sqrt(v);
      if (name == "avg") return v / n;
      return v;
    }
    if (name == "atan2" || name == "pow" || name == "gcd" || name == "lcm" || name == "root") {
      if (n != 2) return this.err1(name + " takes 2 arguments, got " + n.toString());
      if (name == "atan2") return Math.atan2(a[0], a[1]);
      if (name == "pow") return Math.pow(a[0], a[1]);
      if (name == "root") {
        if (a[1] == 0) return this.err1("root of degree 0");
        if (a[0] < 0 && Math.abs(a[1] % 2) == 1) return -Math.pow(-a[0], 1 / a[1]);
        return Math.pow(a[0], 1 / a[1]);
      }
      if (a[0] != Math.floor(a[0]) || a[1] != Math.floor(a[1])) return this.err1(name + " needs integers");
      let x = Math.abs(a[0]), y = Math.abs(a[1]);
      while (y != 0) { const t = x % y; x = y; y = t; }
      if (name == "gcd") return x;
      return x == 0 ? 0 : Math.abs(a[0] * a[1]) / x;
    }
    if (name == "log" && n == 2) {
      if (a[0] <= 0 || a[1] <= 0 || a[1] == 1) return this.err1("log needs a positive number and a positive base other than 1");
      return Math.log(a[0]) / Math.log(a[1]);
    }
    if (n != 1) {
      if (isUnary(name)) return this.err1(name + " takes 1 argument, got " + n.toString());
      return this.err1("unknown function '" + name + "'");
    }
    const x = a[0];
    if (name == "sqrt") return x < 0 ? this.err1("sqrt of a negative number") : Math.sqrt(x);
    if (name == "cbrt") return Math.cbrt(x);
    if (name == "abs") return Math.abs(x);
    if (name == "sign") return Math.sign(x);
    if (name == "floor") return Math.floor(x);
    if (name == "ceil") return Math.ceil(x);
    if (name == "round") return Math.round(x);
    if (name == "trunc") return Math.trunc(x);
    if (name == "exp") return Math.exp(x);
    if (name == "ln") return x <= 0 ? this.err1("ln needs a positive number") : Math.log(x);
    if (name == "log" || name == "log10") return x <= 0 ? this.err1(name + " needs a positive number") : Math.log10(x);
    if (name == "log2") return x <= 0 ? this.err1("log2 needs a positive number") : Math.log2(x);
    if (name == "sin") return Math.sin(x);
    if (name == "cos") return Math.cos(x);
    if (name == "tan") return Math.tan(x);
    if (name == "asin") return x < -1 || x > 1 ? this.err1("asin needs -1..1") : Math.asin(x);
    if (name == "acos") return x < -1 || x > 1 ? this.err1("acos needs -1..1") : Math.acos(x);
    if (name == "atan") return Math.atan(x);
    if (name == "sinh") return Math.sinh(x);
    if (name == "cosh") return Math.cosh(x);
    if (name == "tanh") return Math.tanh(x);
    if (name == "deg") return x * 180 / Math.PI;
    if (name == "rad") return x * Math.PI / 180;
    return this.err1("unknown function '" + name + "'");
  }

  /** An error located at the function name (the caller fixes the position). */
  err1(msg: string): f64 {
    if (this.err.length == 0) this.err = msg;
    return NaN;
  }
}

function isUnary(name: string): bool {
  return ["sqrt", "cbrt", "abs", "sign", "floor", "ceil", "round", "trunc", "exp", "ln", "log", "log10", "log2",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "deg", "rad"].includes(name);
}

function isDigit(c: i32): bool { return c >= 0x30 && c <= 0x39; }
function isIdentStart(c: i32): bool { return (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a || c == 0x5f || c == 0x3c0; }
function isIdentPart(c: i32): bool { return isIdentStart(c) || isDigit(c); }
function hexDigit(c: i32): i32 {
  if (isDigit(c)) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** Rounds to `digits` significant digits (1..17) for display. */
function display(v: f64, digits: i32): string {
  if (v == 0) return "0";
  const mag = <i32>Math.ceil(Math.log10(Math.abs(v)));
  const k = digits - mag;
  if (k > 300 || k < -300) return formatNumber(v);
  const f = Math.pow(10, <f64>k);
  const r = Math.round(v * f) / f;
  return formatNumber(isFinite(r) ? r : v);
}

/** Evaluates; returns a tool error result, or null and sets *out. */
function evaluate(expression: string, vars: JSONValue, out: f64[]): ToolResult | null {
  const c = new Calc(expression, vars);
  const v = c.run();
  const he = c.hostErr;
  if (c.failed) {
    if (he !== null) return ToolResult.error(c.err + " (" + he.toString() + ")");
    return ToolResult.error(c.err);
  }
  if (!isFinite(v)) return ToolResult.error("the result is not a finite number (" + v.toString() + ")");
  out.push(v);
  return null;
}

// ---- tools ----

function calc(req: Request, args: JSONValue): ToolResult {
  const e = args.get("expression");
  if (!e.isString) return ToolResult.error("\"expression\" (a string) is required");
  const vars = args.get("variables");
  if (!vars.isMissing && !vars.isObject) return ToolResult.error("\"variables\" must be an object of name: number");
  let digits = 15;
  const p = args.get("precision");
  if (p.isNumber) {
    digits = <i32>p.num;
    if (digits < 1 || digits > 17) return ToolResult.error("\"precision\" must be 1..17 significant digits");
  }
  const out: f64[] = [];
  const err = evaluate(e.str, vars, out);
  if (err !== null) return err;
  const text = display(out[0], digits);
  return ToolResult.text(text).withStructured(jobj().set("result", jnum(out[0])).set("text", jstr(text)));
}

function isName(s: string): bool {
  if (s.length == 0 || s.length > 64 || !isIdentStart(s.charCodeAt(0))) return false;
  for (let i = 1; i < s.length; i++) if (!isIdentPart(s.charCodeAt(i))) return false;
  return !isUnary(s) && s != "pi" && s != "e" && s != "tau" && s != "phi" && s != "inf";
}

function calcStore(req: Request, args: JSONValue): ToolResult {
  const name = args.get("name").str;
  if (!isName(name)) return ToolResult.error("\"name\" must be an identifier (letters, digits, _) that is not a function or constant");
  const e = args.get("expression");
  if (!e.isString) return ToolResult.error("\"expression\" (a string) is required");
  const out: f64[] = [];
  const err = evaluate(e.str, args.get("variables"), out);
  if (err !== null) return err;
  const r = kvSet(KV_PREFIX + name, formatNumber(out[0]));
  if (!r.ok) {
    if (r.errno == Errno.DENIED) {
      return ToolResult.error(name + " = " + display(out[0], 15) +
        ", but it was not saved: the operator has not granted this plugin the kv store");
    }
    return ToolResult.hostError(r);
  }
  return ToolResult.text(name + " = " + display(out[0], 15) + " (saved)")
    .withStructured(jobj().set("name", jstr(name)).set("value", jnum(out[0])));
}

function calcVars(req: Request, args: JSONValue): ToolResult {
  const r = kvList(KV_PREFIX);
  if (!r.ok) return ToolResult.hostError(r);
  const keys = r.value.get("keys");
  const vars = jobj();
  const lines: string[] = [];
  for (let i = 0; i < keys.length; i++) {
    const k = keys.at(i).str;
    const name = k.substring(KV_PREFIX.length);
    const g = kvGet(k);
    if (!g.ok) return ToolResult.hostError(g);
    if (!g.value.isString) continue;
    const v = parseNumber(g.value.str);
    vars.set(name, jnum(v));
    lines.push(name + " = " + display(v, 15));
  }
  return ToolResult.text(lines.length > 0 ? lines.join("\n") : "(no stored variables)")
    .withStructured(jobj().set("variables", vars));
}

const plugin = new Plugin("as-calc", "1.0.0", "Calculator: arithmetic expressions with functions, constants and stored variables");
plugin.tool("calc",
  "Evaluate an arithmetic expression. Operators + - * / % ^ (or **) and postfix !, parentheses, " +
  "constants pi e tau phi, functions sqrt cbrt abs sign floor ceil round trunc exp ln log log10 log2 " +
  "sin cos tan asin acos atan atan2 sinh cosh tanh deg rad min max sum avg hypot pow root gcd lcm; log(x, base). " +
  "Angles are in radians. Unknown names are looked up in variables, then in values saved with calc_store.",
  "{\"type\":\"object\",\"properties\":{" +
  "\"expression\":{\"type\":\"string\",\"examples\":[\"2^10 - sqrt(16)\",\"sin(pi/6) * r^2\"]}," +
  "\"variables\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}}," +
  "\"precision\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":17,\"description\":\"significant digits of the text result (default 15)\"}}," +
  "\"required\":[\"expression\"]}",
  calc,
  "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"number\"},\"text\":{\"type\":\"string\"}},\"required\":[\"result\",\"text\"]}",
  "{\"readOnlyHint\":true}");
plugin.tool("calc_store",
  "Evaluate an expression and save the result under a name for later calc calls (needs the kv grant)",
  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"expression\":{\"type\":\"string\"}," +
  "\"variables\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}}},\"required\":[\"name\",\"expression\"]}",
  calcStore);
plugin.tool("calc_vars", "List the variables saved with calc_store", "{\"type\":\"object\"}", calcVars, "", "{\"readOnlyHint\":true}");
plugin.requestCapabilities("{\"kv\":true}");

export function wasmcp_call(): u32 {
  return plugin.run();
}
