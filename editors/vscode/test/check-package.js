// Checks the extension's manifest, language configuration and client: what
// VS Code reads, without starting VS Code.

"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const read = (file) => JSON.parse(fs.readFileSync(path.join(root, file), "utf8"));
let passed = 0;
let failed = 0;
function check(name, body) {
  try {
    body();
    passed += 1;
  } catch (error) {
    failed += 1;
    console.error(`✗ ${name}\n${error.message}`);
  }
}

const manifest = read("package.json");
const language = manifest.contributes.languages[0];

check("the language is `plan` for .plan files", () => {
  assert.equal(language.id, "plan");
  assert.deepEqual(language.extensions, [".plan"]);
  assert.ok(manifest.activationEvents.includes("onLanguage:plan"));
});

check("the grammar is contributed and parses", () => {
  const grammar = manifest.contributes.grammars[0];
  assert.equal(grammar.language, "plan");
  assert.equal(grammar.scopeName, "source.plan");
  assert.equal(read(grammar.path).scopeName, "source.plan");
});

check("the language configuration has comments, brackets, quotes and folding", () => {
  const config = read(language.configuration);
  assert.equal(config.comments.lineComment, "#");
  assert.deepEqual(config.brackets[0], ["{", "}"]);
  assert.ok(config.autoClosingPairs.some((p) => p.open === '"' && p.close === '"'));
  assert.ok(config.autoClosingPairs.some((p) => p.open === "{" && p.close === "}"));
  assert.ok(config.folding.markers.start && config.folding.markers.end);
});

check("the client starts `planc lsp` by default, and the path is configurable", () => {
  const settings = manifest.contributes.configuration.properties;
  assert.equal(settings["planc.path"].default, "planc");
  assert.deepEqual(settings["planc.args"].default, ["lsp"]);
  const source = fs.readFileSync(path.join(root, manifest.main), "utf8");
  assert.match(source, /require\("vscode-languageclient\/node"\)/);
  assert.match(source, /getConfiguration\("planc"\)/);
  assert.ok(fs.existsSync(path.join(root, "node_modules/vscode-languageclient/node.js")));
});

check("the client sends .plan files and JSON plan documents", () => {
  const source = fs.readFileSync(path.join(root, manifest.main), "utf8");
  assert.match(source, /\{ language: "plan" \}/);
  assert.match(source, /pattern: "\*\*\/\*\.plan\.json"/);
  assert.match(source, /pattern: "\*\*\/\.taskmaster\/tasks\/tasks\.json"/);
  assert.ok(manifest.activationEvents.includes("workspaceContains:**/*.plan.json"));
  assert.ok(manifest.activationEvents.includes("workspaceContains:.taskmaster/tasks/tasks.json"));
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
