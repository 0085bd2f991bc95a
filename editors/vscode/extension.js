// The planc extension: starts `planc lsp` and connects VS Code to it.
// Plain JavaScript, no build step.

"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function serverOptions() {
  const config = vscode.workspace.getConfiguration("planc");
  const command = config.get("path", "planc");
  const args = config.get("args", ["lsp"]);
  return { command, args };
}

async function start(context) {
  client = new LanguageClient(
    "planc",
    "planc language server",
    serverOptions(),
    {
      // .plan files, and the JSON plan documents the server checks as
      // `planc check` does: planc's own, and task-master's tasks file.
      documentSelector: [
        { language: "plan" },
        { scheme: "file", pattern: "**/*.plan.json" },
        { scheme: "file", pattern: "**/.taskmaster/tasks/tasks.json" },
      ],
    }
  );
  try {
    await client.start();
  } catch (error) {
    const { command } = serverOptions();
    vscode.window.showErrorMessage(
      `planc: cannot start \`${command} lsp\` (${error.message}). ` +
        "Install planc and planc-lsp, or set `planc.path`."
    );
  }
}

async function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("planc.restartServer", async () => {
      if (client) {
        await client.stop();
      }
      await start(context);
    })
  );
  await start(context);
}

async function deactivate() {
  if (client) {
    await client.stop();
  }
}

module.exports = { activate, deactivate };
