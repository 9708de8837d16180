// node build.mjs JCO_DIR OUT_DIR makes wasi-all-VERSION.wasm in OUT_DIR
// for WASI 0.2.0, 0.2.3 and 0.2.12: components whose (dummy) core
// module imports every function of wasi:cli/imports (io, clocks, random,
// filesystem, sockets, cli), wasi:http/types and outgoing-handler, and
// wasi:config/store (0.2.0-draft; rc.1 with 0.2.12). The WIT is jco's own
// 0.2.12 (lib/wit/builtin), renamed for 0.2.0 and 0.2.3: the names are
// what a component links by, and the functions added since 0.2.0 are
// there too. Run by ../build.sh.
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

const [jco, outDir] = process.argv.slice(2);
const here = new URL(".", import.meta.url).pathname;
const { componentEmbed, componentNew } = await import(join(jco, "..", "jco-transpile", "dist", "wasm-tools.js"));
const builtin = join(jco, "lib", "wit", "builtin");
const configWit = await readFile(join(here, "config.wit"), "utf8");

// nested turns a WIT file of one package into a nested package block, so
// that all of them go in one source (jco-transpile's embed cannot read a
// directory of dependencies).
const nested = (src) => src.replace(/^package ([^;]+);/m, "package $1 {") + "\n}\n";

for (const [version, from, config] of [["0.2.0", "0.2.12", "0.2.0-draft"], ["0.2.3", "0.2.12", "0.2.0-draft"], ["0.2.12", "0.2.12", "0.2.0-rc.1"]]) {
  let src = `package wasmcp:wasi-all@${version};

world all {
  include wasi:cli/imports@${version};
  import wasi:http/types@${version};
  import wasi:http/outgoing-handler@${version};
  import wasi:config/store@${config};
}
`;
  for (const pkg of (await readdir(join(builtin, from))).sort()) {
    if (pkg.startsWith("wasi-")) {
      src += nested((await readFile(join(builtin, from, pkg, "package.wit"), "utf8")).replaceAll("@" + from, "@" + version));
    }
  }
  src += nested(configWit.replace(/^\/\/.*\n/gm, "").replace("VERSION", config));
  const core = await componentEmbed({ dummy: true, witSource: src, world: "all" });
  await writeFile(join(outDir, `wasi-all-${version}.wasm`), await componentNew(core));
}
