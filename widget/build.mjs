// Bundle widget/src/rag-agent.js with markdown-it and DOMPurify into the file the server sends.
// `make widget` runs it; the output is committed, so nothing here is needed to run or test the agent.
// The banner records a hash of the source and the lockfile: tests/unit/test_widget_bundle.py fails when
// either changed without a rebuild.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const here = new URL(".", import.meta.url).pathname;
const hash = createHash("sha256");
for (const name of ["src/rag-agent.js", "package-lock.json"]) hash.update(readFileSync(here + name));

await build({
  entryPoints: [here + "src/rag-agent.js"],
  outfile: here + "../rag_agent/server/web/static/rag-agent.js",
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  banner: { js: `/* rag-agent chat widget, built by widget/build.mjs from widget/src (source sha256 ${hash.digest("hex")}). `
                + "Bundles markdown-it (MIT) and DOMPurify (Apache-2.0 or MPL-2.0). */" },
});
