// node build.mjs COMPONENTIZE_JS_DIR OUT componentizes app.js for world.wit
// into OUT (run by ../build.sh).
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const [, here, dir, out] = [process.argv[1], new URL(".", import.meta.url).pathname, process.argv[2], process.argv[3]];
const { componentize } = await import(join(dir, "src", "componentize.js"));
const source = await readFile(join(here, "app.js"), "utf8");
const { component } = await componentize(source, {
  sourceName: "app.js",
  witPath: join(here, "world.wit"),
  worldName: "js-wasi",
  disableFeatures: ["fetch-event"],
});
await writeFile(out, component);
