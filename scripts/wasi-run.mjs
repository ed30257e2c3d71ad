// Runs a WASI command module (scripts/bench-wasm) in Node's V8:
//   node wasi-run.mjs MODULE.wasm DIR ARGS...
// DIR is the only directory the module sees, as the same path and as the
// current directory (for relative paths).
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

const [module, dir, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['sojourn', ...args], preopens: { [dir]: dir, '.': dir } });
const compiled = await WebAssembly.compile(await readFile(module));
const instance = await WebAssembly.instantiate(compiled, wasi.getImportObject());
process.exitCode = wasi.start(instance);
