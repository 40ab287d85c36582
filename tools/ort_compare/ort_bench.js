#!/usr/bin/env node
// Times a model in ONNX Runtime (onnxruntime-node, CPU execution provider) the way
// `inferctl run` times it in inferd: W warm-up runs, then N timed runs, one at a time, and prints
// the latency percentiles in the same format ("p50 X ms, p90 Y ms, p99 Z ms").
//
// Usage: node ort_bench.js --model MODEL.onnx [--input NAME=FILE.npy]... [--runs N] [--warmup W]
//                          [--threads T] [--profile DIR]
// Inputs are .npy files (little-endian float32, int64 or int32, C order) so that inferd and ORT
// read the very same bytes. ORT is loaded from $ORT_NODE_MODULES. Session options:
// intraOpNumThreads T, interOpNumThreads 1, sequential execution, graph optimizations at ORT's
// default level ('all'). `--profile DIR` also turns on ORT's profiler and prints the median
// native model_run time and the time by operator type (the profile's own overhead included).
'use strict';

const fs = require('fs');
const path = require('path');

const modulesDir = process.env.ORT_NODE_MODULES;
if (!modulesDir) {
  console.error('ort_bench.js: set ORT_NODE_MODULES to the node_modules holding onnxruntime-node');
  process.exit(2);
}
const ort = require(path.join(modulesDir, 'onnxruntime-node'));

// --- .npy reader ---------------------------------------------------------------------------------

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt32BE(0) !== 0x934e554d || buf.toString('latin1', 4, 6) !== 'PY') {
    throw new Error(file + ': not a .npy file');
  }
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(file + ': Fortran order');
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const body = Buffer.from(buf.subarray(start + headerLen));  // copy: aligned ArrayBuffer
  const view = (Ctor) => new Ctor(body.buffer, body.byteOffset, body.length / Ctor.BYTES_PER_ELEMENT);
  const types = {
    '<f4': ['float32', Float32Array],
    '<i8': ['int64', BigInt64Array],
    '<i4': ['int32', Int32Array],
    '|b1': ['bool', Uint8Array],
  };
  if (!types[descr]) throw new Error(`${file}: unsupported dtype ${descr}`);
  const [type, Ctor] = types[descr];
  return new ort.Tensor(type, view(Ctor), dims);
}

// --- timing --------------------------------------------------------------------------------------

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function summarizeProfile(file) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = [];
  const byOp = new Map();
  for (const e of events) {
    if (e.cat === 'Session' && e.name === 'model_run') runs.push(e.dur / 1000);
    if (e.cat === 'Node' && e.name.endsWith('_kernel_time') && e.args && e.args.op_name) {
      byOp.set(e.args.op_name, (byOp.get(e.args.op_name) || 0) + e.dur / 1000);
    }
  }
  return {runs: runs.sort((a, b) => a - b), byOp};
}

async function main() {
  const args = process.argv.slice(2);
  let model = '', runs = 100, warmup = 10, threads = 1, profileDir = '';
  const inputs = [];
  for (let i = 0; i < args.length; i++) {
    const next = () => args[++i];
    if (args[i] === '--model') model = next();
    else if (args[i] === '--input') inputs.push(next());
    else if (args[i] === '--runs') runs = Number(next());
    else if (args[i] === '--warmup') warmup = Number(next());
    else if (args[i] === '--threads') threads = Number(next());
    else if (args[i] === '--profile') profileDir = next();
    else throw new Error('unknown argument ' + args[i]);
  }
  if (!model) throw new Error('--model is required');
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (profileDir) {
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(profileDir, 'ort_profile');
  }
  const session = await ort.InferenceSession.create(model, options);
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  for (const name of session.inputNames) {
    if (!feeds[name]) throw new Error(`no --input for model input '${name}'`);
  }
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(`latency over ${runs} runs (${threads} threads): p50 ${percentile(ms, 50).toFixed(3)} ms, ` +
              `p90 ${percentile(ms, 90).toFixed(3)} ms, p99 ${percentile(ms, 99).toFixed(3)} ms`);
  if (profileDir) {
    let file = session.endProfiling();  // some versions return the file name, some nothing
    if (typeof file !== 'string') {
      const found = fs.readdirSync(profileDir).filter((f) => f.startsWith('ort_profile'))
          .map((f) => path.join(profileDir, f))
          .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
      file = found[0];
    }
    const {runs: native, byOp} = summarizeProfile(file);
    console.log(`ORT profiler: model_run p50 ${percentile(native, 50).toFixed(3)} ms over ` +
                `${native.length} runs (warm-up included); ${file}`);
    const total = [...byOp.values()].reduce((a, b) => a + b, 0);
    for (const [op, t] of [...byOp.entries()].sort((a, b) => b[1] - a[1])) {
      console.log(`  ${op.padEnd(24)} ${(t / native.length).toFixed(4)} ms/run ` +
                  `${((100 * t) / total).toFixed(1)}%`);
    }
  }
  await session.release();
}

main().catch((e) => {
  console.error('ort_bench.js: ' + e.message);
  process.exit(1);
});
