// Builds the console into dist/ (or the directory given as the first
// argument): one JavaScript bundle, one stylesheet and the images they use,
// each named with a hash of its content, an index.html naming them, and the
// third-party licence notices. The output depends only on the sources and
// the pinned packages, so `go test ./web` can rebuild into a temporary
// directory and compare it with the committed dist/.
import * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] || join(root, "dist"));

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: "src/main.js" },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  outdir: out,
  entryNames: "assets/[name]-[hash]",
  assetNames: "assets/[name]-[hash]",
  loader: { ".png": "file", ".svg": "file" },
  // milsymbol's package entry adds every standard it knows; the console
  // needs only MIL-STD-2525C letter codes, imported from its sources.
  alias: {
    "milsymbol-core": "./node_modules/milsymbol/src/milsymbol.js",
    "milsymbol-letters": "./node_modules/milsymbol/src/lettersidc.js",
  },
  legalComments: "none", // the notices go to assets/LICENSES.txt
  metafile: true,
  logLevel: "warning",
});

let js = "";
let css = "";
for (const [file, info] of Object.entries(result.metafile.outputs)) {
  if (info.entryPoint && file.endsWith(".js")) js = basename(file);
  if (file.endsWith(".css")) css = basename(file);
}
if (!js || !css) throw new Error("build: bundle or stylesheet missing from the output");

// The favicon, named by content like the rest.
const icon = readFileSync(join(root, "src", "icon.svg"));
const iconName = `icon-${createHash("sha256").update(icon).digest("hex").slice(0, 8)}.svg`;
writeFileSync(join(out, "assets", iconName), icon);

const html = readFileSync(join(root, "src", "index.html"), "utf8")
  .replaceAll("{{js}}", `assets/${js}`)
  .replaceAll("{{css}}", `assets/${css}`)
  .replaceAll("{{icon}}", `assets/${iconName}`);
writeFileSync(join(out, "index.html"), html);

// Licence notices of everything bundled.
const notices = [
  ["Leaflet", "leaflet/LICENSE"],
  ["milsymbol", "milsymbol/LICENSE"],
  ["topojson-client", "topojson-client/LICENSE"],
  ["world-atlas (Natural Earth land, 1:110m; the data is in the public domain)", "world-atlas/LICENSE"],
];
let text = "Outpost console: third-party software included in this bundle\n\n";
for (const [name, file] of notices) {
  const pkg = JSON.parse(readFileSync(join(root, "node_modules", dirname(file), "package.json"), "utf8"));
  text += `== ${name} ${pkg.version}\n\n${readFileSync(join(root, "node_modules", file), "utf8").trim()}\n\n`;
}
writeFileSync(join(out, "assets", "LICENSES.txt"), text);
