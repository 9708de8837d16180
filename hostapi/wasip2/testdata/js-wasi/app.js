// The JavaScript of js-wasi.wasm (see world.wit and build.sh).
export function greet(name) {
  const text = `Hello, ${name}!`;
  console.log(text);
  console.error(`greeted ${name.length} characters`);
  return text;
}

export function nowMs() {
  return Date.now();
}

export function monotonic() {
  const a = performance.now();
  const b = performance.now();
  return [a, b];
}

export function randoms(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(Math.random());
  return out;
}

export function randomBytes(n) {
  const b = new Uint8Array(n);
  crypto.getRandomValues(b);
  return b;
}

export function flood(n, width) {
  const pad = "x".repeat(width);
  for (let i = 0; i < n; i++) console.log(`${i} ${pad}`);
  return n;
}

// fetchText: an async export; componentize-js runs the event loop (the
// wasi:http future's pollable) until the promise settles. A thrown value
// is the err of the result.
export async function fetchText(url) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw `fetch failed: ${e.message ?? e}`;
  }
  return `${res.status} ${await res.text()}`;
}
