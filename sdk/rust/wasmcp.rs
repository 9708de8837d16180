//! wasmcp — write wasmcp/1 plugins in Rust, with no dependencies.
//!
//! The SDK is this one file. Include it in a plugin as a module:
//!
//! ```ignore
//! #[path = "../../sdk/rust/wasmcp.rs"]
//! mod wasmcp;
//! use wasmcp::*;
//!
//! static PLUGIN: Plugin = Plugin { name: "demo", tools: &[TOOL], ..Plugin::EMPTY };
//! #[no_mangle]
//! pub extern "C" fn wasmcp_call() -> u32 { run(&PLUGIN) }
//! ```
//!
//! and build with Debian's rustc (no cargo needed):
//!
//! ```text
//! /usr/bin/rustc --edition 2021 --target wasm32-wasi --crate-type cdylib \
//!     -C opt-level=s -C panic=abort -C lto -C strip=symbols -o plugin.wasm lib.rs
//! ```
//!
//! It also compiles as its own crate (`--crate-type rlib --crate-name
//! wasmcp`) for use with `--extern wasmcp=libwasmcp.rlib`.
//!
//! Contents: [`Value`] (a JSON value with a strict parser and a serializer),
//! the plugin model ([`Plugin`], [`Tool`], [`Resource`], [`ResourceTemplate`],
//! [`Prompt`]), results ([`ToolResult`], [`Contents`], [`PromptResult`],
//! [`Completion`], [`InputRequired`], [`RpcError`]), the request
//! ([`Request`]), host calls returning `Result<_, HostError>` (module
//! [`host`]) and the dispatcher [`run`].
#![allow(dead_code)]

use std::fmt;

// ---------------------------------------------------------------------------
// JSON

/// A JSON value. Objects keep their keys in order (duplicates: the last one
/// wins on lookup). Numbers are f64: integers are exact up to 2^53.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

/// The value returned by lookups that find nothing.
pub static NULL: Value = Value::Null;

/// Maximum nesting depth the parser accepts.
pub const MAX_DEPTH: usize = 64;

/// Why a text is not valid JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl Value {
    /// Parses a complete JSON text (RFC 8259).
    pub fn parse(text: &str) -> Result<Value, ParseError> {
        let mut p = Parser { s: text.as_bytes(), pos: 0 };
        let v = p.value(0)?;
        p.ws();
        if p.pos != p.s.len() {
            return Err(p.err("trailing characters"));
        }
        Ok(v)
    }

    /// Parses JSON bytes (which must be UTF-8).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Value, ParseError> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Value::parse(s),
            Err(e) => Err(ParseError { offset: e.valid_up_to(), message: "invalid UTF-8" }),
        }
    }

    /// Builds an object from (key, value) pairs.
    pub fn obj<K: Into<String>, I: IntoIterator<Item = (K, Value)>>(items: I) -> Value {
        Value::Object(items.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// The member `key` of an object, or None.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets (replaces or appends) the member `key` of an object; no-op on
    /// other values.
    pub fn set(&mut self, key: &str, v: Value) {
        if let Value::Object(m) = self {
            if let Some(slot) = m.iter_mut().rev().find(|(k, _)| k == key) {
                slot.1 = v;
            } else {
                m.push((key.to_string(), v));
            }
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    /// The number as an exact integer (no fraction, |n| <= 2^53).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) if n.fract() == 0.0 && n.abs() <= 9007199254740992.0 => Some(*n as i64),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Vec<(String, Value)>> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Serializes to compact JSON. Non-finite numbers become null.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the compact JSON of self to out.
    pub fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => write_number(*n, out),
            Value::String(s) => write_string(s, out),
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_json(out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(k, out);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

impl std::ops::Index<&str> for Value {
    type Output = Value;
    /// `v["key"]` is the member, or null when missing (never panics).
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Value {
    type Output = Value;
    /// `v[i]` is the element, or null when out of range (never panics).
    fn index(&self, i: usize) -> &Value {
        match self {
            Value::Array(a) => a.get(i).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n as f64)
    }
}
impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(n as f64)
    }
}
impl From<u32> for Value {
    fn from(n: u32) -> Value {
        Value::Number(n as f64)
    }
}
impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Number(n as f64)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        match v {
            Some(x) => x.into(),
            None => Value::Null,
        }
    }
}

fn write_number(n: f64, out: &mut String) {
    use std::fmt::Write;
    if !n.is_finite() {
        out.push_str("null");
    } else if n.fract() == 0.0 && n.abs() < 9007199254740992.0 {
        let _ = write!(out, "{}", n as i64);
    } else if n.abs() >= 1e21 || n.abs() < 1e-6 {
        let _ = write!(out, "{:e}", n);
    } else {
        let _ = write!(out, "{}", n);
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[(c as usize) >> 4] as char);
                out.push(HEX[(c as usize) & 15] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError { offset: self.pos, message }
    }

    fn ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.ws();
        match self.peek() {
            None => Err(self.err("unexpected end")),
            Some(b'{') => {
                let mut m = Vec::new();
                self.seq(depth, b'}', |p| {
                    p.ws();
                    if p.peek() != Some(b'"') {
                        return Err(p.err("expected a string key"));
                    }
                    let k = p.string()?;
                    p.ws();
                    if p.peek() != Some(b':') {
                        return Err(p.err("expected ':'"));
                    }
                    p.pos += 1;
                    m.push((k, p.value(depth + 1)?));
                    Ok(())
                })?;
                Ok(Value::Object(m))
            }
            Some(b'[') => {
                let mut a = Vec::new();
                self.seq(depth, b']', |p| {
                    a.push(p.value(depth + 1)?);
                    Ok(())
                })?;
                Ok(Value::Array(a))
            }
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(_) => self.number(),
        }
    }

    /// seq reads an object's members or an array's elements, from its
    /// opening byte past its closing byte end: item reads one of them.
    fn seq(
        &mut self,
        depth: usize,
        end: u8,
        mut item: impl FnMut(&mut Self) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.pos += 1;
        self.ws();
        if self.peek() == Some(end) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == end => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {
                    return Err(self.err(if end == b'}' {
                        "expected ',' or '}'"
                    } else {
                        "expected ',' or ']'"
                    }))
                }
            }
        }
    }

    fn literal(&mut self, lit: &[u8], v: Value) -> Result<Value, ParseError> {
        if self.s[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        // The slice is ASCII digits and signs, so from_utf8 cannot fail.
        let text = std::str::from_utf8(&self.s[start..self.pos]).map_err(|_| self.err("invalid number"))?;
        text.parse::<f64>().map(Value::Number).map_err(|_| self.err("invalid number"))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        if self.pos + 4 > self.s.len() {
            return Err(self.err("short \\u escape"));
        }
        let mut v = 0u32;
        for i in 0..4 {
            let d = (self.s[self.pos + i] as char).to_digit(16).ok_or_else(|| self.err("bad \\u escape"))?;
            v = v << 4 | d;
        }
        self.pos += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            let c = match self.peek() {
                Some(c) => c,
                None => return Err(self.err("unterminated string")),
            };
            match c {
                b'"' => {
                    out.push_str(self.slice(run, self.pos)?);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(self.slice(run, self.pos)?);
                    self.pos += 1;
                    let e = self.peek().ok_or_else(|| self.err("unterminated escape"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.pos..].starts_with(b"\\u") {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    self.pos = save;
                                }
                            }
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.err("invalid escape")),
                    }
                    run = self.pos;
                }
                c if c < 0x20 => return Err(self.err("control character in string")),
                _ => self.pos += 1,
            }
        }
    }

    fn slice(&self, a: usize, b: usize) -> Result<&'a str, ParseError> {
        std::str::from_utf8(&self.s[a..b]).map_err(|_| ParseError { offset: a, message: "invalid UTF-8" })
    }
}

// ---------------------------------------------------------------------------
// Base64

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard, padded base64.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity((data.len() + 2) / 3 * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(B64[(v >> 18) as usize & 63] as char);
        out.push(B64[(v >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { B64[(v >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { B64[v as usize & 63] as char } else { '=' });
    }
    out
}

/// Decodes standard or URL-safe base64, padding optional; None if invalid.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32;
        acc = (acc << 6 | v) & 0xFFFFFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 && acc & ((1 << bits) - 1) != 0 {
        return None;
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// Raw imports

#[cfg(target_arch = "wasm32")]
mod sys {
    #[link(wasm_import_module = "wasmcp")]
    extern "C" {
        pub fn input_len() -> u32;
        pub fn input_read(ptr: *mut u8, len: u32) -> u32;
        pub fn output_write(ptr: *const u8, len: u32);
        pub fn log(level: i32, ptr: *const u8, len: u32);
        pub fn call(mptr: *const u8, mlen: u32, pptr: *const u8, plen: u32) -> i32;
        pub fn result_read(ptr: *mut u8, len: u32) -> u32;
    }
}

/// Native stand-ins so that the SDK compiles (and its JSON can be unit
/// tested) off wasm; they behave like a host that grants nothing.
#[cfg(not(target_arch = "wasm32"))]
mod sys {
    pub unsafe fn input_len() -> u32 {
        0
    }
    pub unsafe fn input_read(_: *mut u8, _: u32) -> u32 {
        0
    }
    pub unsafe fn output_write(_: *const u8, _: u32) {}
    pub unsafe fn log(_: i32, _: *const u8, _: u32) {}
    pub unsafe fn call(_: *const u8, _: u32, _: *const u8, _: u32) -> i32 {
        -1
    }
    pub unsafe fn result_read(_: *mut u8, _: u32) -> u32 {
        0
    }
}

// ---------------------------------------------------------------------------
// Host calls

/// What went wrong in a host call (ABI section 5).
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// -1: the operator has not granted this.
    Denied,
    /// -2: params not valid for the method.
    BadParams,
    /// -3: cancelled or past the deadline; return at once.
    Canceled,
    /// -4: request or result over the size limit.
    TooBig,
    /// -5: the operation failed; the host's error code and message.
    Failed { code: i64, message: String },
    /// -6: the client or connection cannot do this.
    Unsupported,
    /// -7: the host does not know the method.
    UnknownMethod,
    /// The host's answer was not the JSON the SDK expected.
    Protocol(String),
    /// Any other negative errno.
    Other(i32),
}

/// A failed host call: the method and why.
#[derive(Clone, Debug, PartialEq)]
pub struct HostError {
    pub method: String,
    pub kind: ErrorKind,
}

impl HostError {
    /// The ABI errno of this error (Protocol errors report -2).
    pub fn errno(&self) -> i32 {
        match self.kind {
            ErrorKind::Denied => -1,
            ErrorKind::BadParams | ErrorKind::Protocol(_) => -2,
            ErrorKind::Canceled => -3,
            ErrorKind::TooBig => -4,
            ErrorKind::Failed { .. } => -5,
            ErrorKind::Unsupported => -6,
            ErrorKind::UnknownMethod => -7,
            ErrorKind::Other(n) => n,
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: ", self.method)?;
        match &self.kind {
            ErrorKind::Denied => f.write_str("denied (not granted by the operator)"),
            ErrorKind::BadParams => f.write_str("bad params"),
            ErrorKind::Canceled => f.write_str("canceled or past the deadline"),
            ErrorKind::TooBig => f.write_str("too big"),
            ErrorKind::Failed { code, message } => write!(f, "{} (code {})", message, code),
            ErrorKind::Unsupported => f.write_str("unsupported by this client or connection"),
            ErrorKind::UnknownMethod => f.write_str("unknown method"),
            ErrorKind::Protocol(m) => write!(f, "unexpected answer from the host: {}", m),
            ErrorKind::Other(n) => write!(f, "error {}", n),
        }
    }
}

/// Log levels (MCP order).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Level {
    Debug = 0,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    /// The MCP name of the level.
    pub fn name(self) -> &'static str {
        ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"][self as usize]
    }
}

/// Host calls. Every function returns `Err(HostError)` the plugin can
/// match on (e.g. `ErrorKind::Denied` when the operator did not grant it).
pub mod host {
    use super::*;

    /// Fast log line through the `log` import (always allowed).
    pub fn log(level: Level, msg: &str) {
        unsafe { sys::log(level as i32, msg.as_ptr(), msg.len() as u32) }
    }

    /// The raw `call` import: params is JSON text; the result is JSON text.
    pub fn call_raw(method: &str, params: &str) -> Result<String, HostError> {
        let r = unsafe { sys::call(method.as_ptr(), method.len() as u32, params.as_ptr(), params.len() as u32) };
        let fail = |kind| Err(HostError { method: method.to_string(), kind });
        if r < 0 {
            return match r {
                -1 => fail(ErrorKind::Denied),
                -2 => fail(ErrorKind::BadParams),
                -3 => fail(ErrorKind::Canceled),
                -4 => fail(ErrorKind::TooBig),
                -5 => {
                    // The size of the error JSON is not reported: read up to 4 KiB.
                    let mut buf = vec![0u8; 4096];
                    let n = unsafe { sys::result_read(buf.as_mut_ptr(), buf.len() as u32) } as usize;
                    buf.truncate(n.min(4096));
                    let v = Value::parse_bytes(&buf).unwrap_or(Value::Null);
                    let code = v["code"].as_i64().unwrap_or(0);
                    let message = v["message"].as_str().unwrap_or("host call failed").to_string();
                    fail(ErrorKind::Failed { code, message })
                }
                -6 => fail(ErrorKind::Unsupported),
                -7 => fail(ErrorKind::UnknownMethod),
                n => fail(ErrorKind::Other(n)),
            };
        }
        let mut buf = vec![0u8; r as usize];
        let mut got = 0usize;
        while got < buf.len() {
            let n = unsafe { sys::result_read(buf[got..].as_mut_ptr(), (buf.len() - got) as u32) } as usize;
            if n == 0 {
                break;
            }
            got += n;
        }
        buf.truncate(got);
        String::from_utf8(buf).or_else(|_| fail(ErrorKind::Protocol("result is not UTF-8".into())))
    }

    /// A host call with JSON params and a parsed JSON result.
    pub fn call(method: &str, params: &Value) -> Result<Value, HostError> {
        let text = call_raw(method, &params.to_json())?;
        Value::parse(&text).map_err(|e| HostError { method: method.to_string(), kind: ErrorKind::Protocol(e.to_string()) })
    }

    /// Structured log (`notifications/message` with any JSON data).
    pub fn log_json(level: Level, logger: Option<&str>, data: Value) -> Result<(), HostError> {
        let mut p = Value::obj([("level", Value::from(level.name()))]);
        if let Some(l) = logger {
            p.set("logger", l.into());
        }
        p.set("data", data);
        call("log", &p).map(|_| ())
    }

    /// Progress of the current request (no-op without a progressToken).
    pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) -> Result<(), HostError> {
        let mut p = Value::obj([("progress", Value::from(progress))]);
        if let Some(t) = total {
            p.set("total", t.into());
        }
        if let Some(m) = message {
            p.set("message", m.into());
        }
        call("progress", &p).map(|_| ())
    }

    /// Asks the host to describe the plugin again; kind is "tools",
    /// "resources" or "prompts".
    pub fn notify_list_changed(kind: &str) -> Result<(), HostError> {
        call("notify/list_changed", &Value::obj([("kind", Value::from(kind))])).map(|_| ())
    }

    /// task/start: tells the host that this call, running as a task, is
    /// under way; the client gets its task handle at once instead of after
    /// the first round or 500 ms. Before it an input_required round is
    /// answered with no task; after it input_required makes the task
    /// input_required. Outside a task it does nothing.
    pub fn task_start() -> Result<(), HostError> {
        call_raw("task/start", "{}").map(|_| ())
    }

    pub fn notify_resource_updated(uri: &str) -> Result<(), HostError> {
        call("notify/resource_updated", &Value::obj([("uri", Value::from(uri))])).map(|_| ())
    }

    /// A configuration value granted by the operator. Non-string values
    /// are returned as their JSON text.
    pub fn config_get(key: &str) -> Result<String, HostError> {
        let v = call("config/get", &Value::obj([("key", Value::from(key))]))?;
        match &v["value"] {
            Value::String(s) => Ok(s.clone()),
            Value::Null => Err(HostError { method: "config/get".into(), kind: ErrorKind::Protocol("no value".into()) }),
            other => Ok(other.to_json()),
        }
    }

    /// kv/get: Ok(None) when the key is absent.
    pub fn kv_get(key: &str) -> Result<Option<String>, HostError> {
        let v = call("kv/get", &Value::obj([("key", Value::from(key))]))?;
        match &v["value"] {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            other => Ok(Some(other.to_json())),
        }
    }

    /// kv/set with an optional time to live in seconds.
    pub fn kv_set(key: &str, value: &str, ttl_s: Option<u64>) -> Result<(), HostError> {
        let mut p = Value::obj([("key", Value::from(key)), ("value", Value::from(value))]);
        if let Some(t) = ttl_s {
            p.set("ttl_s", Value::Number(t as f64));
        }
        call("kv/set", &p).map(|_| ())
    }

    pub fn kv_delete(key: &str) -> Result<(), HostError> {
        call("kv/delete", &Value::obj([("key", Value::from(key))])).map(|_| ())
    }

    /// kv/list: the keys under prefix and the cursor of the next page.
    pub fn kv_list(prefix: &str, cursor: Option<&str>) -> Result<(Vec<String>, Option<String>), HostError> {
        let mut p = Value::obj([("prefix", Value::from(prefix))]);
        if let Some(c) = cursor {
            p.set("cursor", c.into());
        }
        let v = call("kv/list", &p)?;
        let keys = v["keys"].as_array().map(|a| a.iter().filter_map(|k| k.as_str().map(String::from)).collect()).unwrap_or_default();
        Ok((keys, v["cursor"].as_str().map(String::from)))
    }

    /// An outgoing HTTP request (only to URLs the operator granted).
    #[derive(Clone, Debug, Default)]
    pub struct HttpRequest {
        pub method: String,
        pub url: String,
        pub headers: Vec<(String, String)>,
        pub body: Option<Vec<u8>>,
        /// Send the body as body_base64 (for binary data).
        pub binary: bool,
        pub timeout_ms: Option<u64>,
    }

    impl HttpRequest {
        pub fn get(url: &str) -> HttpRequest {
            HttpRequest { method: "GET".into(), url: url.into(), ..Default::default() }
        }
    }

    /// The answer to an HttpRequest.
    #[derive(Clone, Debug)]
    pub struct HttpResponse {
        pub status: u16,
        pub headers: Value,
        pub body: Vec<u8>,
    }

    impl HttpResponse {
        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.body).into_owned()
        }
    }

    pub fn http_fetch(req: &HttpRequest) -> Result<HttpResponse, HostError> {
        let method = if req.method.is_empty() { "GET" } else { &req.method };
        let mut p = Value::obj([("method", Value::from(method)), ("url", Value::from(req.url.as_str()))]);
        if !req.headers.is_empty() {
            p.set("headers", Value::Object(req.headers.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect()));
        }
        if let Some(b) = &req.body {
            if req.binary {
                p.set("body_base64", base64_encode(b).into());
            } else {
                p.set("body", String::from_utf8_lossy(b).into_owned().into());
            }
        }
        if let Some(t) = req.timeout_ms {
            p.set("timeout_ms", Value::Number(t as f64));
        }
        let v = call("http/fetch", &p)?;
        let proto = |m: &str| HostError { method: "http/fetch".into(), kind: ErrorKind::Protocol(m.into()) };
        let status = v["status"].as_i64().ok_or_else(|| proto("no status"))? as u16;
        let body = match (&v["body"], &v["body_base64"]) {
            (Value::String(s), _) => s.clone().into_bytes(),
            (_, Value::String(b)) => base64_decode(b).ok_or_else(|| proto("bad body_base64"))?,
            _ => Vec::new(),
        };
        Ok(HttpResponse { status, headers: v["headers"].clone(), body })
    }
}

// ---------------------------------------------------------------------------
// The request

/// One request as the plugin sees it.
#[derive(Debug)]
pub struct Request {
    /// The envelope method ("tools/call", ...).
    pub method: String,
    /// The MCP params.
    pub params: Value,
    /// The envelope's context (protocolVersion, clientInfo,
    /// clientCapabilities, progressToken, inputResponses, requestState).
    pub context: Value,
    /// Variables of the matched resource template.
    pub vars: Vec<(String, String)>,
}

impl Request {
    /// The value of `{name}` in the matched resource template.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// context.inputResponses[key]: the client's answer to an input request.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.context["inputResponses"].get(key)
    }
    /// context.requestState, as the plugin returned it earlier.
    pub fn request_state(&self) -> Option<&str> {
        self.context["requestState"].as_str()
    }
    /// Whether the client declared a capability ("sampling", "elicitation", "roots").
    pub fn client_has(&self, capability: &str) -> bool {
        matches!(self.context["clientCapabilities"].get(capability), Some(v) if !v.is_null())
    }
    pub fn protocol_version(&self) -> Option<&str> {
        self.context["protocolVersion"].as_str()
    }
}

// ---------------------------------------------------------------------------
// Results and errors

/// A JSON-RPC error (the call returns status 1).
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: &str) -> RpcError {
        RpcError { code, message: message.into(), data: None }
    }
    pub fn invalid_params(message: &str) -> RpcError {
        RpcError::new(-32602, message)
    }
    pub fn internal(message: &str) -> RpcError {
        RpcError::new(-32603, message)
    }
    fn to_value(&self) -> Value {
        let mut v = Value::obj([("code", Value::Number(self.code as f64)), ("message", Value::from(self.message.as_str()))]);
        if let Some(d) = &self.data {
            v.set("data", d.clone());
        }
        v
    }
}

/// An input_required result (ABI section 6): the host asks the client,
/// then calls the plugin again with context.inputResponses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputRequired {
    pub requests: Vec<(String, Value)>,
    pub state: Option<String>,
}

impl InputRequired {
    pub fn new() -> InputRequired {
        InputRequired::default()
    }
    /// Any request: method "elicitation/create", "sampling/createMessage" or "roots/list".
    pub fn request(mut self, key: &str, method: &str, params: Value) -> InputRequired {
        self.requests.push((key.into(), Value::obj([("method", Value::from(method)), ("params", params)])));
        self
    }
    /// An elicitation: a message and a JSON Schema of the wanted answer.
    pub fn elicit(self, key: &str, message: &str, requested_schema: Value) -> InputRequired {
        let p = Value::obj([("message", Value::from(message)), ("requestedSchema", requested_schema)]);
        self.request(key, "elicitation/create", p)
    }
    /// A sampling request (MCP CreateMessageRequest params).
    pub fn sample(self, key: &str, params: Value) -> InputRequired {
        self.request(key, "sampling/createMessage", params)
    }
    pub fn roots(self, key: &str) -> InputRequired {
        self.request(key, "roots/list", Value::obj(Vec::<(String, Value)>::new()))
    }
    /// The state the host hands back (integrity-protected) on the next call.
    pub fn state(mut self, s: &str) -> InputRequired {
        self.state = Some(s.into());
        self
    }
    fn to_value(&self) -> Value {
        let mut v = Value::obj([
            ("resultType", Value::from("input_required")),
            ("inputRequests", Value::Object(self.requests.clone())),
        ]);
        if let Some(s) = &self.state {
            v.set("requestState", s.as_str().into());
        }
        v
    }
}

/// Why a handler did not produce its normal result. Use `?` on host calls:
/// a HostError becomes a tool error (isError) for tools and a -32603
/// JSON-RPC error elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// A tool error the model can read (isError: true); -32603 for
    /// resources, prompts and completion.
    Tool(String),
    /// A JSON-RPC error (status 1).
    Rpc(RpcError),
    /// Ask the client for input first.
    InputRequired(InputRequired),
    /// A failed host call.
    Host(HostError),
}

impl From<HostError> for Error {
    fn from(e: HostError) -> Error {
        Error::Host(e)
    }
}
impl From<RpcError> for Error {
    fn from(e: RpcError) -> Error {
        Error::Rpc(e)
    }
}
impl From<InputRequired> for Error {
    fn from(e: InputRequired) -> Error {
        Error::InputRequired(e)
    }
}
impl From<String> for Error {
    fn from(e: String) -> Error {
        Error::Tool(e)
    }
}
impl From<&str> for Error {
    fn from(e: &str) -> Error {
        Error::Tool(e.into())
    }
}

/// A tool error result: `Err(tool_error("..."))`.
pub fn tool_error<S: Into<String>>(msg: S) -> Error {
    Error::Tool(msg.into())
}

/// A CallToolResult.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    pub content: Vec<Value>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl ToolResult {
    /// One text content item.
    pub fn text<S: Into<String>>(s: S) -> ToolResult {
        ToolResult::default().add_text(s)
    }
    /// Structured content; if no content is added, the SDK adds its JSON as text.
    pub fn structured(v: Value) -> ToolResult {
        ToolResult { structured: Some(v), ..Default::default() }
    }
    pub fn add_text<S: Into<String>>(mut self, s: S) -> ToolResult {
        self.content.push(Value::obj([("type", Value::from("text")), ("text", Value::String(s.into()))]));
        self
    }
    pub fn add_image(mut self, data: &[u8], mime_type: &str) -> ToolResult {
        self.content.push(Value::obj([
            ("type", Value::from("image")),
            ("data", Value::String(base64_encode(data))),
            ("mimeType", Value::from(mime_type)),
        ]));
        self
    }
    /// Any MCP content item.
    pub fn add_content(mut self, item: Value) -> ToolResult {
        self.content.push(item);
        self
    }
    pub fn with_structured(mut self, v: Value) -> ToolResult {
        self.structured = Some(v);
        self
    }
    fn to_value(&self) -> Value {
        let mut content = self.content.clone();
        if content.is_empty() {
            if let Some(s) = &self.structured {
                content.push(Value::obj([("type", Value::from("text")), ("text", Value::String(s.to_json()))]));
            }
        }
        let mut v = Value::obj([("content", Value::Array(content))]);
        if let Some(s) = &self.structured {
            v.set("structuredContent", s.clone());
        }
        if self.is_error {
            v.set("isError", true.into());
        }
        v
    }
}

/// One entry of a ReadResourceResult.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    pub uri: String,
    pub mime_type: Option<String>,
    pub text: Option<String>,
    pub blob: Option<Vec<u8>>,
}

impl Contents {
    pub fn text(uri: &str, mime_type: &str, text: &str) -> Contents {
        Contents { uri: uri.into(), mime_type: Some(mime_type.into()), text: Some(text.into()), blob: None }
    }
    pub fn blob(uri: &str, mime_type: &str, data: &[u8]) -> Contents {
        Contents { uri: uri.into(), mime_type: Some(mime_type.into()), text: None, blob: Some(data.to_vec()) }
    }
    fn to_value(&self) -> Value {
        let mut v = Value::obj([("uri", Value::from(self.uri.as_str()))]);
        if let Some(m) = &self.mime_type {
            v.set("mimeType", m.as_str().into());
        }
        if let Some(t) = &self.text {
            v.set("text", t.as_str().into());
        }
        if let Some(b) = &self.blob {
            v.set("blob", base64_encode(b).into());
        }
        v
    }
}

/// A GetPromptResult.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptResult {
    pub description: Option<String>,
    pub messages: Vec<Value>,
}

impl PromptResult {
    pub fn new() -> PromptResult {
        PromptResult::default()
    }
    pub fn description(mut self, d: &str) -> PromptResult {
        self.description = Some(d.into());
        self
    }
    /// A text message; role is "user" or "assistant".
    pub fn message(mut self, role: &str, text: &str) -> PromptResult {
        self.messages.push(Value::obj([
            ("role", Value::from(role)),
            ("content", Value::obj([("type", Value::from("text")), ("text", Value::from(text))])),
        ]));
        self
    }
    fn to_value(&self) -> Value {
        let mut v = Value::obj(Vec::<(String, Value)>::new());
        if let Some(d) = &self.description {
            v.set("description", d.as_str().into());
        }
        v.set("messages", Value::Array(self.messages.clone()));
        v
    }
}

/// A CompleteResult.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: Option<u64>,
    pub has_more: bool,
}

impl Completion {
    pub fn of<S: Into<String>, I: IntoIterator<Item = S>>(values: I) -> Completion {
        Completion { values: values.into_iter().map(Into::into).collect(), ..Default::default() }
    }
    fn to_value(&self) -> Value {
        let mut c = Value::obj([("values", Value::Array(self.values.iter().map(|s| Value::from(s.as_str())).collect()))]);
        if let Some(t) = self.total {
            c.set("total", Value::Number(t as f64));
        }
        if self.has_more {
            c.set("hasMore", true.into());
        }
        Value::obj([("completion", c)])
    }
}

// ---------------------------------------------------------------------------
// The plugin model

/// A tool. Schemas and annotations are JSON text (validated when the
/// manifest is written).
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments; "" means {"type":"object"}.
    pub input_schema: &'static str,
    /// JSON Schema of structuredContent; "" means none.
    pub output_schema: &'static str,
    /// Tool annotations JSON; "" means none.
    pub annotations: &'static str,
    pub handler: fn(&Request, &Value) -> Result<ToolResult, Error>,
}

/// A fixed resource.
pub struct Resource {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    pub handler: fn(&Request, &str) -> Result<Vec<Contents>, Error>,
}

/// A resource template: "{var}" matches one or more characters other than
/// '/', "{+var}" one or more of any; read the values with Request::var.
pub struct ResourceTemplate {
    pub uri_template: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    pub handler: fn(&Request, &str) -> Result<Vec<Contents>, Error>,
}

/// A prompt; arguments is a JSON array of {name, description?, required?}.
pub struct Prompt {
    pub name: &'static str,
    pub description: &'static str,
    pub arguments: &'static str,
    pub handler: fn(&Request, &Value) -> Result<PromptResult, Error>,
}

/// A tool's execution.taskSupport (docs/tasks.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task (the default of a tool not in Plugin::task_tools).
    Forbidden,
    /// A task if the client asks for one.
    Optional,
    /// Only as a task.
    Required,
}

/// A tool that may run as a task: the host runs a call from a client that
/// asks for a task in the background, under [limits] task_timeout;
/// host::task_start hands the client its task at once.
pub struct TaskTool {
    /// The name of a tool in Plugin::tools.
    pub tool: &'static str,
    pub support: TaskSupport,
}

/// The MIME type of an MCP App resource (docs/apps-and-skills.md).
pub const APP_MIME: &str = "text/html;profile=mcp-app";

/// The `_meta` object of a tool (by name) or a resource (by URI), as JSON
/// text (validated when the manifest is written). An app is a Resource
/// with a `ui://` URI and mime_type APP_MIME whose meta is
/// `{"ui":{"csp":{...},"prefersBorder":true}}`; its handler returns
/// `Contents::text(uri, APP_MIME, html)` and the SDK repeats the meta on
/// it. A tool points at the app with `ui_meta!("ui://x/view")`, or
/// `ui_meta!("ui://x/view", app_only)` for a tool only the app calls; it
/// still returns text for clients without the extension.
pub struct Meta {
    pub target: &'static str,
    pub meta: &'static str,
}

/// `_meta` JSON text linking a tool to the app at a ui:// URI (a string
/// literal): `ui_meta!("ui://x/view")`, or `ui_meta!("ui://x/view",
/// app_only)` for visibility `["app"]`.
#[macro_export]
macro_rules! ui_meta {
    ($uri:literal) => {
        concat!(r#"{"ui":{"resourceUri":""#, $uri, r#""}}"#)
    };
    ($uri:literal, app_only) => {
        concat!(r#"{"ui":{"resourceUri":""#, $uri, r#"","visibility":["app"]}}"#)
    };
}

/// An Agent Skill embedded in the plugin: its files as (path inside the
/// skill, UTF-8 content), SKILL.md among them with YAML front matter
/// naming it. The host serves it as skill:// resources; it is data, never
/// run.
pub struct Skill {
    pub files: &'static [(&'static str, &'static str)],
}

/// A plugin: everything it provides. Start from `Plugin::EMPTY`.
pub struct Plugin {
    pub name: &'static str,
    pub version: &'static str,
    pub description: &'static str,
    pub tools: &'static [Tool],
    /// The tools that may run as tasks; the others are TaskSupport::Forbidden.
    pub task_tools: &'static [TaskTool],
    pub resources: &'static [Resource],
    pub templates: &'static [ResourceTemplate],
    pub prompts: &'static [Prompt],
    /// completion/complete handler; it gets the whole request (params.ref,
    /// params.argument, params.context).
    pub complete: Option<fn(&Request) -> Result<Completion, Error>>,
    /// The capabilities the plugin asks for, as JSON text ("" = none).
    pub capabilities: &'static str,
    /// The `_meta` objects of tools and resources.
    pub metas: &'static [Meta],
    /// Agent Skills embedded in the plugin.
    pub skills: &'static [Skill],
}

impl Plugin {
    pub const EMPTY: Plugin = Plugin {
        name: "",
        version: "",
        description: "",
        tools: &[],
        task_tools: &[],
        resources: &[],
        templates: &[],
        prompts: &[],
        complete: None,
        capabilities: "",
        metas: &[],
        skills: &[],
    };

    /// The `_meta` JSON text Plugin::metas gives target, if any.
    fn meta_of(&self, target: &str) -> Option<&'static str> {
        self.metas.iter().find(|m| m.target == target).map(|m| m.meta)
    }

    /// The manifest (the result of wasmcp/describe).
    pub fn manifest(&self) -> Result<Value, String> {
        fn json(what: &str, s: &str) -> Result<Value, String> {
            Value::parse(s).map_err(|e| format!("plugin manifest: {}: {}", what, e))
        }
        let mut tools = Vec::new();
        for t in self.tools {
            let mut v = Value::obj([("name", Value::from(t.name))]);
            if !t.description.is_empty() {
                v.set("description", t.description.into());
            }
            let schema = if t.input_schema.is_empty() { r#"{"type":"object"}"# } else { t.input_schema };
            v.set("inputSchema", json(t.name, schema)?);
            if !t.output_schema.is_empty() {
                v.set("outputSchema", json(t.name, t.output_schema)?);
            }
            if !t.annotations.is_empty() {
                v.set("annotations", json(t.name, t.annotations)?);
            }
            if let Some(m) = self.meta_of(t.name) {
                v.set("_meta", json(t.name, m)?);
            }
            let support = match self.task_tools.iter().find(|tt| tt.tool == t.name).map(|tt| tt.support) {
                Some(TaskSupport::Optional) => "optional",
                Some(TaskSupport::Required) => "required",
                Some(TaskSupport::Forbidden) | None => "",
            };
            if !support.is_empty() {
                v.set("execution", Value::obj([("taskSupport", Value::from(support))]));
            }
            tools.push(v);
        }
        if let Some(tt) = self.task_tools.iter().find(|tt| !self.tools.iter().any(|t| t.name == tt.tool)) {
            return Err(format!("plugin manifest: task_tools: no tool named {:?}", tt.tool));
        }
        let item = |key: &str, val: &str, name: &str, desc: &str, mime: &str| {
            let mut v = Value::obj([(key, Value::from(val)), ("name", Value::from(name))]);
            if !desc.is_empty() {
                v.set("description", desc.into());
            }
            if !mime.is_empty() {
                v.set("mimeType", mime.into());
            }
            v
        };
        let mut resources = Vec::new();
        for r in self.resources {
            let mut v = item("uri", r.uri, r.name, r.description, r.mime_type);
            if let Some(m) = self.meta_of(r.uri) {
                v.set("_meta", json(r.uri, m)?);
            }
            resources.push(v);
        }
        let templates =
            self.templates.iter().map(|r| item("uriTemplate", r.uri_template, r.name, r.description, r.mime_type)).collect();
        let mut prompts = Vec::new();
        for p in self.prompts {
            let mut v = Value::obj([("name", Value::from(p.name))]);
            if !p.description.is_empty() {
                v.set("description", p.description.into());
            }
            if !p.arguments.is_empty() {
                v.set("arguments", json(p.name, p.arguments)?);
            }
            prompts.push(v);
        }
        let mut m = Value::obj([("abi", Value::from(1)), ("name", Value::from(self.name))]);
        if !self.version.is_empty() {
            m.set("version", self.version.into());
        }
        if !self.description.is_empty() {
            m.set("description", self.description.into());
        }
        m.set("tools", Value::Array(tools));
        m.set("resources", Value::Array(resources));
        m.set("resourceTemplates", Value::Array(templates));
        m.set("prompts", Value::Array(prompts));
        m.set("completions", self.complete.is_some().into());
        if !self.capabilities.is_empty() {
            m.set("capabilities", json("capabilities", self.capabilities)?);
        }
        if !self.skills.is_empty() {
            let skills = self
                .skills
                .iter()
                .map(|sk| {
                    let files = sk.files.iter().map(|(p, c)| (*p, Value::from(*c)));
                    Value::obj([("files", Value::obj(files))])
                })
                .collect();
            m.set("skills", Value::Array(skills));
        }
        Ok(m)
    }
}

/// Matches uri against a template; returns the variables.
pub fn match_template(tmpl: &str, uri: &str) -> Option<Vec<(String, String)>> {
    let (t, u) = (tmpl.as_bytes(), uri.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut vars = Vec::new();
    while i < t.len() {
        if t[i] != b'{' {
            if j >= u.len() || t[i] != u[j] {
                return None;
            }
            i += 1;
            j += 1;
            continue;
        }
        let close = i + tmpl[i..].find('}')?;
        let reserved = t.get(i + 1) == Some(&b'+');
        let name = &tmpl[i + 1 + reserved as usize..close];
        i = close + 1;
        let stop = t.get(i).copied().filter(|&c| c != b'{');
        let start = j;
        while j < u.len() && Some(u[j]) != stop && (reserved || u[j] != b'/') {
            j += 1;
        }
        if j == start {
            return None;
        }
        vars.push((name.to_string(), uri.get(start..j)?.to_string()));
    }
    if j == u.len() {
        Some(vars)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Dispatch

static mut OUTPUT_LIMIT: usize = 0;

/// The host traps the plugin on the first byte over its output cap (an
/// operator setting the plugin cannot read). With a soft limit set here,
/// the SDK answers a result over it with a clean error instead (isError for
/// tools, -32603 otherwise). 0 (the default) = no soft limit.
pub fn set_output_limit(max_bytes: usize) {
    unsafe { OUTPUT_LIMIT = max_bytes }
}

fn read_input() -> Vec<u8> {
    let n = unsafe { sys::input_len() } as usize;
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        let r = unsafe { sys::input_read(buf[got..].as_mut_ptr(), (n - got) as u32) } as usize;
        if r == 0 {
            break;
        }
        got += r;
    }
    buf.truncate(got);
    buf
}

/// Handles one request envelope (JSON) and returns (status, response JSON).
/// `run` calls it with the host's input; tests may call it directly.
pub fn handle(plugin: &Plugin, input: &[u8]) -> (u32, String) {
    let env = match Value::parse_bytes(input) {
        Ok(v) => v,
        Err(_) => return (1, RpcError::new(-32600, "invalid request envelope").to_value().to_json()),
    };
    let method = match env["method"].as_str() {
        Some(m) => m.to_string(),
        None => return (1, RpcError::new(-32600, "invalid request envelope").to_value().to_json()),
    };
    let mut req = Request { method, params: env["params"].clone(), context: env["context"].clone(), vars: Vec::new() };
    let is_tool = req.method == "tools/call";
    let out: Result<Value, Error> = match req.method.as_str() {
        "wasmcp/describe" => plugin.manifest().map_err(|m| Error::Rpc(RpcError::internal(&m))),
        "tools/call" => {
            let name = req.params["name"].as_str().unwrap_or("");
            match plugin.tools.iter().find(|t| t.name == name) {
                Some(t) => (t.handler)(&req, &req.params["arguments"]).map(|r| r.to_value()),
                None => Err(Error::Rpc(RpcError::invalid_params("unknown tool"))),
            }
        }
        "resources/read" => {
            let uri = req.params["uri"].as_str().unwrap_or("").to_string();
            let contents = |r: Result<Vec<Contents>, Error>| {
                r.map(|c| Value::obj([("contents", Value::Array(c.iter().map(|x| x.to_value()).collect()))]))
            };
            if let Some(r) = plugin.resources.iter().find(|r| r.uri == uri) {
                // An app's contents repeat its _meta (valid: describe
                // checked it).
                let meta = plugin.meta_of(r.uri).and_then(|m| Value::parse(m).ok());
                (r.handler)(&req, &uri).map(|c| {
                    let items = c.iter().map(|x| {
                        let mut v = x.to_value();
                        if let (Some(m), Some(APP_MIME)) = (&meta, x.mime_type.as_deref()) {
                            v.set("_meta", m.clone());
                        }
                        v
                    });
                    Value::obj([("contents", Value::Array(items.collect()))])
                })
            } else {
                let mut found = None;
                for t in plugin.templates {
                    if let Some(vars) = match_template(t.uri_template, &uri) {
                        req.vars = vars;
                        found = Some(t);
                        break;
                    }
                }
                match found {
                    Some(t) => contents((t.handler)(&req, &uri)),
                    None => Err(Error::Rpc(RpcError {
                        code: -32002,
                        message: "Resource not found".into(),
                        data: Some(Value::obj([("uri", Value::from(uri.as_str()))])),
                    })),
                }
            }
        }
        "prompts/get" => {
            let name = req.params["name"].as_str().unwrap_or("");
            match plugin.prompts.iter().find(|p| p.name == name) {
                Some(p) => (p.handler)(&req, &req.params["arguments"]).map(|r| r.to_value()),
                None => Err(Error::Rpc(RpcError::invalid_params("unknown prompt"))),
            }
        }
        "completion/complete" => match plugin.complete {
            Some(f) => f(&req).map(|c| c.to_value()),
            None => Ok(Completion::default().to_value()),
        },
        _ => Err(Error::Rpc(RpcError::new(-32601, "Method not found"))),
    };
    let (status, text) = match out {
        Ok(v) => (0, v.to_json()),
        Err(Error::InputRequired(ir)) => (0, ir.to_value().to_json()),
        Err(Error::Rpc(e)) => (1, e.to_value().to_json()),
        Err(Error::Tool(m)) if is_tool => (0, ToolResult { is_error: true, ..ToolResult::text(m) }.to_value().to_json()),
        Err(Error::Host(e)) if is_tool => {
            (0, ToolResult { is_error: true, ..ToolResult::text(e.to_string()) }.to_value().to_json())
        }
        Err(Error::Tool(m)) => (1, RpcError::internal(&m).to_value().to_json()),
        Err(Error::Host(e)) => (1, RpcError::internal(&e.to_string()).to_value().to_json()),
    };
    let limit = unsafe { OUTPUT_LIMIT };
    if limit > 0 && text.len() > limit {
        let msg = format!("result too large: {} bytes over the plugin's limit of {}", text.len(), limit);
        if is_tool && status == 0 {
            return (0, ToolResult { is_error: true, ..ToolResult::text(msg) }.to_value().to_json());
        }
        return (1, RpcError::internal(&msg).to_value().to_json());
    }
    (status, text)
}

/// Reads the request, dispatches it to the plugin, writes the response and
/// returns the status. Call it from the `wasmcp_call` export.
pub fn run(plugin: &Plugin) -> u32 {
    let input = read_input();
    let (status, out) = handle(plugin, &input);
    if !out.is_empty() {
        unsafe { sys::output_write(out.as_ptr(), out.len() as u32) };
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip() {
        let src = r#"{"a":[1,2.5,-3e-7,true,false,null],"b":"x\"\\\n\u00e9\ud83d\ude00","c":{}}"#;
        let v = Value::parse(src).unwrap();
        assert_eq!(v["b"].as_str(), Some("x\"\\\né😀"));
        assert_eq!(v["a"][1].as_f64(), Some(2.5));
        assert_eq!(Value::parse(&v.to_json()).unwrap(), v);
        assert_eq!(Value::parse("1e400").unwrap().to_json(), "null");
    }

    #[test]
    fn json_rejects() {
        for bad in ["", "01", "[1,]", "{\"a\"}", "\"\u{1}\"", "tru", "1.", "[", "\"\\x\"", "{} {}"] {
            assert!(Value::parse(bad).is_err(), "{:?}", bad);
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(Value::parse(&deep).is_err());
    }

    #[test]
    fn base64() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            assert_eq!(base64_decode(&base64_encode(s.as_bytes())).unwrap(), s.as_bytes());
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert!(base64_decode("Zm9=v").is_none());
    }

    #[test]
    fn templates() {
        assert_eq!(match_template("a://{x}/b", "a://1/b"), Some(vec![("x".into(), "1".into())]));
        assert_eq!(match_template("a://{x}", "a://1/b"), None);
        assert_eq!(match_template("a://{+x}", "a://1/b"), Some(vec![("x".into(), "1/b".into())]));
        assert_eq!(match_template("a://{x}", "a://"), None);
    }

    #[test]
    fn task_support() {
        fn h(_: &Request, _: &Value) -> Result<ToolResult, Error> {
            Ok(ToolResult::text(""))
        }
        static TOOLS: [Tool; 3] = [
            Tool { name: "a", description: "", input_schema: "", output_schema: "", annotations: "", handler: h },
            Tool { name: "b", description: "", input_schema: "", output_schema: "", annotations: "", handler: h },
            Tool { name: "c", description: "", input_schema: "", output_schema: "", annotations: "", handler: h },
        ];
        static TASKS: [TaskTool; 3] = [
            TaskTool { tool: "a", support: TaskSupport::Optional },
            TaskTool { tool: "b", support: TaskSupport::Required },
            TaskTool { tool: "c", support: TaskSupport::Forbidden },
        ];
        let p = Plugin { name: "p", tools: &TOOLS, task_tools: &TASKS, ..Plugin::EMPTY };
        let m = p.manifest().unwrap();
        assert_eq!(m["tools"][0]["execution"].to_json(), r#"{"taskSupport":"optional"}"#);
        assert_eq!(m["tools"][1]["execution"].to_json(), r#"{"taskSupport":"required"}"#);
        assert!(m["tools"][2].get("execution").is_none());
        static BAD: [TaskTool; 1] = [TaskTool { tool: "nope", support: TaskSupport::Optional }];
        let p = Plugin { name: "p", tools: &TOOLS, task_tools: &BAD, ..Plugin::EMPTY };
        assert_eq!(p.manifest().unwrap_err(), r#"plugin manifest: task_tools: no tool named "nope""#);
    }
}
