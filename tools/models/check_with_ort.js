#!/usr/bin/env node
// Runs a generated model with ONNX Runtime (onnxruntime-node) and compares its outputs with the
// reference outputs in test_data_set_0 (|got - want| <= atol + rtol * |want|).
//
// Usage: node tools/models/check_with_ort.js [--rtol 1e-3] [--atol 1e-4] MODEL_DIR...
// ORT is loaded from $ORT_NODE_MODULES (default /tmp/ortnode/node_modules), e.g. installed with
//   mkdir -p /tmp/ortnode && cd /tmp/ortnode &&
//   ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node
// $ORT_OPT_LEVEL sets graphOptimizationLevel (disabled | basic | extended | all; default all).
// The .pb files are onnx.TensorProto; the few fields needed are parsed here by hand.
'use strict';

const fs = require('fs');
const path = require('path');

const modulesDir = process.env.ORT_NODE_MODULES || '/tmp/ortnode/node_modules';
const ort = require(path.join(modulesDir, 'onnxruntime-node'));

// onnx.TensorProto.DataType values we handle.
const FLOAT = 1, INT32 = 6, INT64 = 7, DOUBLE = 11;

// --- minimal protobuf reader --------------------------------------------------------------------

function readVarint(buf, pos) {  // returns [BigInt value, new pos]
  let result = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

// Parses the TensorProto fields dims (1), data_type (2), float_data (4), int32_data (5),
// int64_data (7), name (8), raw_data (9), double_data (10); packed or not.
function parseTensorProto(buf) {
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], ints: [], doubles: []};
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) t.dataType = Number(v);
      else if (field === 5) t.ints.push(BigInt.asIntN(32, v));
      else if (field === 7) t.ints.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      const body = buf.subarray(pos, end);
      if (field === 8) {
        t.name = body.toString('utf8');
      } else if (field === 9) {
        t.raw = body;
      } else if (field === 4) {  // packed floats
        for (let p = 0; p < body.length; p += 4) t.floats.push(body.readFloatLE(p));
      } else if (field === 10) {  // packed doubles
        for (let p = 0; p < body.length; p += 8) t.doubles.push(body.readDoubleLE(p));
      } else if (field === 1 || field === 5 || field === 7) {  // packed varints
        let p = 0;
        while (p < body.length) {
          let v;
          [v, p] = readVarint(body, p);
          if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
          else t.ints.push(BigInt.asIntN(field === 5 ? 32 : 64, v));
        }
      }
      pos = end;
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(pos));
      pos += 4;
    } else if (wire === 1) {
      if (field === 10) t.doubles.push(buf.readDoubleLE(pos));
      pos += 8;
    } else {
      throw new Error('unsupported protobuf wire type ' + wire);
    }
  }
  return t;
}

// Returns {name, type, data (typed array), dims}.
function loadTensor(file) {
  const t = parseTensorProto(fs.readFileSync(file));
  const count = t.dims.reduce((a, b) => a * b, 1);
  const raw = t.raw ? Buffer.from(t.raw) : null;  // copy: aligned, own ArrayBuffer
  const view = (Ctor) => new Ctor(raw.buffer, raw.byteOffset, raw.length / Ctor.BYTES_PER_ELEMENT);
  let type, data;
  if (t.dataType === FLOAT) {
    type = 'float32';
    data = raw ? view(Float32Array) : Float32Array.from(t.floats);
  } else if (t.dataType === INT64) {
    type = 'int64';
    data = raw ? view(BigInt64Array) : BigInt64Array.from(t.ints);
  } else if (t.dataType === INT32) {
    type = 'int32';
    data = raw ? view(Int32Array) : Int32Array.from(t.ints, Number);
  } else if (t.dataType === DOUBLE) {
    type = 'float64';
    data = raw ? view(Float64Array) : Float64Array.from(t.doubles);
  } else {
    throw new Error(file + ': unsupported data_type ' + t.dataType);
  }
  if (data.length !== count) {
    throw new Error(`${file}: ${data.length} elements, dims [${t.dims}] need ${count}`);
  }
  return {name: t.name, type, data, dims: t.dims};
}

function listPb(dir, kind) {
  const files = [];
  for (let i = 0; fs.existsSync(path.join(dir, `${kind}_${i}.pb`)); i++) {
    files.push(path.join(dir, `${kind}_${i}.pb`));
  }
  return files;
}

// --- comparison ---------------------------------------------------------------------------------

async function checkModel(dir, rtol, atol) {
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    executionProviders: ['cpu'],
    graphOptimizationLevel: process.env.ORT_OPT_LEVEL || 'all',
  });
  const data = path.join(dir, 'test_data_set_0');
  const feeds = {};
  listPb(data, 'input').forEach((f, i) => {
    const t = loadTensor(f);
    feeds[t.name || session.inputNames[i]] = new ort.Tensor(t.type, t.data, t.dims);
  });
  const results = await session.run(feeds);
  let maxAbs = 0, ok = true;
  const lines = [];
  listPb(data, 'output').forEach((f, i) => {
    const want = loadTensor(f);
    const name = want.name || session.outputNames[i];
    const got = results[name];
    if (!got) {
      ok = false;
      lines.push(`  ${name}: missing from ORT outputs`);
      return;
    }
    if (got.dims.join(',') !== want.dims.join(',')) {
      ok = false;
      lines.push(`  ${name}: shape [${got.dims}] want [${want.dims}]`);
      return;
    }
    let outAbs = 0, bad = 0;
    for (let k = 0; k < want.data.length; k++) {
      const w = Number(want.data[k]), g = Number(got.data[k]);
      const d = Math.abs(g - w);
      if (!(d <= atol + rtol * Math.abs(w))) bad++;  // also catches NaN
      if (!(d <= outAbs)) outAbs = d;
    }
    maxAbs = Math.max(maxAbs, outAbs);
    if (bad) ok = false;
    lines.push(`  ${name} [${want.dims}]: max_abs_diff=${outAbs.toExponential(3)}` +
               (bad ? ` MISMATCH (${bad} of ${want.data.length} elements)` : ''));
  });
  return {ok, maxAbs, lines};
}

async function main() {
  const args = process.argv.slice(2);
  let rtol = 1e-3, atol = 1e-4;
  const dirs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--rtol') rtol = Number(args[++i]);
    else if (args[i] === '--atol') atol = Number(args[++i]);
    else dirs.push(args[i]);
  }
  if (dirs.length === 0) {
    console.error('usage: check_with_ort.js [--rtol R] [--atol A] MODEL_DIR...');
    process.exit(2);
  }
  let failed = false;
  for (const dir of dirs) {
    try {
      const r = await checkModel(dir, rtol, atol);
      console.log(`${r.ok ? 'PASS' : 'FAIL'} ${dir} max_abs_diff=${r.maxAbs.toExponential(3)}`);
      r.lines.forEach((l) => console.log(l));
      failed = failed || !r.ok;
    } catch (e) {
      console.log(`FAIL ${dir}: ${e.message}`);
      failed = true;
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
