// run.mjs MCP_URL OUT.png: serves host.html and host.bundle.js on a
// loopback port, with /mcp proxied to the wasmcp server at MCP_URL (so
// the page and the MCP endpoint share an origin), drives headless
// Chromium (CHROMIUM, default /usr/bin/chromium) with puppeteer-core
// through the go-dashboard app, and writes a screenshot to OUT.png.
// Exit status 0 when every check passed; each failure is printed.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const [mcpURL, out] = process.argv.slice(2);
if (!mcpURL || !out) {
  console.error("usage: node run.mjs MCP_URL OUT.png");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const files = { "/": ["host.html", "text/html"], "/host.bundle.js": ["host.bundle.js", "text/javascript"] };
const upstream = new URL(mcpURL);

const server = http.createServer((req, res) => {
  const u = new URL(req.url, "http://x");
  if (u.pathname === "/mcp") {
    const headers = { ...req.headers, host: upstream.host };
    const p = http.request({ hostname: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    p.on("error", (e) => { res.writeHead(502); res.end(String(e)); });
    req.pipe(p);
    return;
  }
  const f = files[u.pathname];
  if (!f) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { "content-type": f[1], "cache-control": "no-store" });
  fs.createReadStream(path.join(here, f[0])).pipe(res);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;

const failures = [];
const check = (ok, what) => { console.log(`${ok ? "ok  " : "FAIL"} ${what}`); if (!ok) failures.push(what); };
const deadline = (ms, what) => new Promise((_, rej) => setTimeout(() => rej(new Error("timeout: " + what)), ms));

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
});
let code = 1;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 820, height: 560, deviceScaleFactor: 1 });
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`pageerror: ${e.message}`));
  await page.goto(origin + "/?tool=service_metrics", { waitUntil: "load" });

  // The host connected, read the app and the app rendered the result.
  try {
    await page.waitForFunction(() => window.hostState && (window.hostState.phase === "rendered" || window.hostState.error), { timeout: 30000 });
  } catch (e) {
    failures.push("the host never rendered the app");
  }
  const state = await page.evaluate(() => window.hostState);
  check(!state.error, `host: no error (${state.error ?? ""})`);
  check(state.initialized, "the app sent ui/initialize and ui/notifications/initialized through the AppBridge");
  check(/connect-src https:\/\/api\.example\.com(;|$)/.test(state.csp) && !state.csp.includes("metrics.example.org"),
    `the app's CSP keeps the granted origin and not the ungranted one: ${state.csp}`);

  const el = await page.waitForSelector("iframe", { timeout: 5000 });
  const frame = await el.contentFrame();
  check(await el.evaluate((f) => f.getAttribute("sandbox")) === "allow-scripts", "the app runs in an iframe sandboxed to scripts only");
  const rows = async () => frame.$$eval("#metrics tbody tr", (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  await frame.waitForFunction(() => document.querySelectorAll("#metrics tbody tr").length > 0, { timeout: 10000 }).catch(() => {});
  let r = await rows();
  check(r.length === 5 && r[0][0] === "api-gateway", `page 1 shows 5 services from api-gateway: ${JSON.stringify(r.map((x) => x[0]))}`);
  check(await frame.$$eval("#chart rect", (rs) => rs.length) === 5, "the chart has one bar per service");
  check((await frame.$eval("#pageinfo", (e) => e.textContent)).startsWith("page 1 of 3"), "the page info says page 1 of 3");

  // The app calls the app-only tool back: Next, then Refresh.
  await frame.click("#next");
  await frame.waitForFunction(() => document.body.dataset.page === "2", { timeout: 10000 }).catch(() => {});
  r = await rows();
  check(r.length === 5 && r[0][0] === "email", `Next: page 2 from email: ${JSON.stringify(r.map((x) => x[0]))}`);
  const before = JSON.stringify(r);
  await frame.click("#refresh");
  await frame.waitForFunction(() => document.body.dataset.seed === "2", { timeout: 10000 }).catch(() => {});
  r = await rows();
  check(JSON.stringify(r) !== before && r[0][0] === "email", "Refresh: another sample of page 2");
  const calls = (await page.evaluate(() => window.hostState.appCalls)).join(",");
  check(calls === "metrics_page,metrics_page", `the app called the app-only tool through the host: ${calls}`);

  // Sorting is the app's own: click the p95 column twice.
  await frame.click('th[data-key="p95_ms"]');
  await frame.click('th[data-key="p95_ms"]');
  r = await rows();
  const p95 = r.map((x) => Number(x[3]));
  check(p95.every((v, i) => i === 0 || p95[i - 1] >= v), `sorting by p95 descending: ${p95}`);

  // The CSP: a fetch to the ungranted origin is blocked by the policy (a
  // securitypolicyviolation), one to the granted origin is not.
  const probe = async (url) => frame.evaluate(async (u) => {
    const seen = [];
    const on = (e) => seen.push(e.blockedURI);
    document.addEventListener("securitypolicyviolation", on);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 3000);
    try { await fetch(u, { signal: ctl.signal, mode: "no-cors" }); } catch (e) { /* network errors are fine here */ }
    await new Promise((r) => setTimeout(r, 100));
    document.removeEventListener("securitypolicyviolation", on);
    return seen;
  }, url);
  const blocked = await Promise.race([probe("https://metrics.example.org/v1/series"), deadline(10000, "probe")]);
  check(blocked.some((u) => u.startsWith("https://metrics.example.org")), `a fetch to the ungranted https://metrics.example.org is blocked by the CSP: ${JSON.stringify(blocked)}`);
  const allowed = await Promise.race([probe("https://api.example.com/v1/health"), deadline(10000, "probe")]);
  check(allowed.length === 0, `a fetch to the granted https://api.example.com is not blocked by the CSP: ${JSON.stringify(allowed)}`);

  // Back to a clean first page for the screenshot.
  await frame.click("#prev");
  await frame.waitForFunction(() => document.body.dataset.page === "1", { timeout: 10000 }).catch(() => {});
  await page.screenshot({ path: out });
  console.log(`screenshot: ${out}`);
  if (failures.length) {
    console.log("browser console:\n  " + consoleLines.slice(-40).join("\n  "));
  }
  code = failures.length ? 1 : 0;
} catch (e) {
  console.error("FAIL", e?.stack || e);
} finally {
  await browser.close();
  server.close();
}
if (failures.length) console.error(`${failures.length} check(s) failed`);
process.exit(code);
