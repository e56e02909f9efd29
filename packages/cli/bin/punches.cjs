#!/usr/bin/env node
// Runs the TypeScript sources directly (the workspace ships no build step): tsx's CommonJS hook, then main.
require('tsx/cjs/api').register();
const { main } = require('../src/main.ts');
main(process.argv).then((code) => {
  process.exitCode = code;
});
