// The host page of scripts/apps-browser.sh: an MCP client (the
// TypeScript SDK over Streamable HTTP, through the same-origin /mcp
// proxy of run.mjs) that declares the MCP Apps extension, calls the
// go-dashboard tool, reads the app from its ui:// resource and renders it
// in a sandboxed iframe (scripts only, opaque origin) with the CSP its
// _meta.ui.csp declares, talking to it through @modelcontextprotocol/
// ext-apps's AppBridge and PostMessageTransport. The bridge forwards the
// app's tools/call to the server. window.hostState tells run.mjs how far
// it got.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AppBridge, PostMessageTransport, getToolUiResourceUri, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";

const state = (window.hostState = { phase: "start", error: null, csp: "", appCalls: [], initialized: false });
const log = (...a) => { document.getElementById("log").textContent += a.join(" ") + "\n"; };

// csp builds the policy of the ext-apps specification from the declared
// domains: nothing beyond them, restrictive defaults when none.
export function csp(c = {}) {
  const list = (l) => (Array.isArray(l) ? l.filter((d) => typeof d === "string" && /^[a-z]+:\/\/[^\s;,'"]+$/i.test(d)) : []);
  const res = list(c.resourceDomains).join(" ");
  const connect = list(c.connectDomains).join(" ") || "'none'";
  const frame = list(c.frameDomains).join(" ") || "'none'";
  const base = list(c.baseUriDomains).join(" ") || "'self'";
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${res}`.trim(),
    `style-src 'self' 'unsafe-inline' ${res}`.trim(),
    `img-src 'self' data: ${res}`.trim(),
    `font-src 'self' ${res}`.trim(),
    `media-src 'self' data: ${res}`.trim(),
    `connect-src ${connect}`,
    `frame-src ${frame}`,
    `base-uri ${base}`,
    "object-src 'none'",
  ].join("; ");
}

// withCSP puts the policy first in the document's head, before any
// script of the app runs.
function withCSP(html, policy) {
  const tag = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const m = /<head[^>]*>/i.exec(html);
  return m ? html.slice(0, m.index + m[0].length) + tag + html.slice(m.index + m[0].length) : tag + html;
}

async function main() {
  const tool = new URLSearchParams(location.search).get("tool") || "service_metrics";
  const client = new Client(
    { name: "wasmcp-apps-browser-host", version: "1.0.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  const ext = client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/ui"];
  if (!ext?.mimeTypes?.includes(RESOURCE_MIME_TYPE)) throw new Error("the server does not offer MCP Apps: " + JSON.stringify(client.getServerCapabilities()));
  state.phase = "connected";

  const { tools } = await client.listTools();
  const t = tools.find((x) => x.name === tool);
  if (!t) throw new Error(`no tool ${tool} in ${tools.map((x) => x.name)}`);
  const uri = getToolUiResourceUri(t);
  if (!uri) throw new Error(`${tool} has no _meta.ui.resourceUri`);
  document.getElementById("toolname").textContent = tool;
  document.getElementById("appuri").textContent = uri;

  const { contents } = await client.readResource({ uri });
  const app = contents.find((c) => c.uri === uri && c.mimeType === RESOURCE_MIME_TYPE);
  if (!app || typeof app.text !== "string") throw new Error("the app resource has no HTML: " + JSON.stringify(contents));
  const declared = app._meta?.ui?.csp ?? {};
  state.declaredCsp = declared;
  state.csp = csp(declared);
  log("app", uri, "csp:", state.csp);

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = "MCP App";
  document.getElementById("slot").appendChild(iframe);

  const bridge = new AppBridge(client, { name: "wasmcp-apps-browser-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, logging: {}, sandbox: { csp: declared } },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } });
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = Math.min(height + 8, 900) + "px"; };
  const args = { page: 1, page_size: 5 };
  bridge.oninitialized = async () => {
    try {
      state.initialized = true;
      await bridge.sendToolInput({ arguments: args });
      const result = await client.callTool({ name: tool, arguments: args });
      await bridge.sendToolResult(result);
      state.phase = "rendered";
    } catch (e) {
      state.error = String(e?.stack || e);
    }
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  // After connect, which installs the bridge's own forwarding to the
  // server: count the app's calls, then forward them the same way.
  const forward = bridge.oncalltool;
  bridge.oncalltool = async (params, extra) => {
    state.appCalls.push(params.name);
    log("app calls", params.name, JSON.stringify(params.arguments));
    return forward ? forward(params, extra) : client.callTool(params);
  };
  iframe.srcdoc = withCSP(app.text, state.csp);
  state.phase = "loading";
}

main().catch((e) => { state.error = String(e?.stack || e); log("error:", state.error); });
