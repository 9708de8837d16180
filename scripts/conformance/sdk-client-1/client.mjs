// A client of the HTTP+SSE transport (2024-11-05) written with the
// TypeScript SDK's v1 line: it connects to the URL given (the server's
// SSE endpoint), lists the tools, calls the one named like argv[3] with
// no arguments and wants argv[4] in its text. Run by scripts/sse-client.sh.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [url, toolSuffix, want] = process.argv.slice(2);
const client = new Client({ name: "wasmcp-sse-client", version: "1.0.0" });
const transport = new SSEClientTransport(new URL(url));
try {
  await client.connect(transport);
  const version = transport._protocolVersion ?? "(negotiated)";
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name.endsWith(toolSuffix));
  if (!tool) throw new Error(`no tool named *${toolSuffix} among ${tools.map((t) => t.name).join(", ")}`);
  const res = await client.callTool({ name: tool.name, arguments: {} });
  const text = (res.content ?? []).map((c) => c.text ?? "").join("");
  if (res.isError || !text.includes(want)) throw new Error(`${tool.name} answered ${JSON.stringify(res)}`);
  // A second call while the first session is open, and an unknown tool.
  const again = await client.callTool({ name: tool.name, arguments: {} });
  if (!JSON.stringify(again).includes(want)) throw new Error(`second call answered ${JSON.stringify(again)}`);
  let refused = false;
  try {
    const r = await client.callTool({ name: "no_such_tool", arguments: {} });
    refused = r.isError === true;
  } catch (e) {
    refused = true;
  }
  if (!refused) throw new Error("an unknown tool was not refused");
  await client.ping();
  console.log(`sse-client: ${tools.length} tools listed, ${tool.name} answered ${JSON.stringify(text)} over HTTP+SSE ${version}`);
  await client.close();
} catch (e) {
  console.error(`sse-client: ${e?.stack ?? e}`);
  process.exit(1);
}
