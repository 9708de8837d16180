// node build.mjs COMPONENTIZE_JS_DIR OUT componentizes app.js for
// world.wit into OUT (run by build.sh).
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const [dir, out] = process.argv.slice(2);
const { componentize } = await import(join(dir, "src", "componentize.js"));
const { component } = await componentize(await readFile(join(here, "app.js"), "utf8"), {
  sourceName: "app.js",
  witPath: join(here, "world.wit"),
  worldName: "js-time",
  // Date needs only the clocks: no HTTP, no incoming-handler.
  disableFeatures: ["http", "fetch-event"],
});
await writeFile(out, component);
