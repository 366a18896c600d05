// Writes testdata/stdlib/reference/: ndarrays described with stdlib's own property
// names (dtype, shape, strides, offset, order, mode, submode, flags.READONLY), as JSON,
// beside the meta data bytes @stdlib/ndarray's serializer writes for them.
//
//   npm install @stdlib/ndarray@0.4.1 && node scripts/reference/stdlib_json.js
'use strict';
var fs = require('fs');
var path = require('path');
var ndarray = require('@stdlib/ndarray/ctor');
var serialize = require('@stdlib/ndarray/base/serialize-meta-data');

var out = path.join(__dirname, '..', '..', 'testdata', 'stdlib', 'reference');
fs.mkdirSync(out, { recursive: true });

var cases = {
  'row_major_2x3': [ 'float64', new Float64Array(6), [ 2, 3 ], [ 3, 1 ], 0, 'row-major', {} ],
  'column_major_readonly': [ 'int16', new Int16Array(12), [ 3, 4 ], [ 1, 3 ], 0, 'column-major', { 'readonly': true } ],
  'negative_stride_offset': [ 'float32', new Float32Array(8), [ 2, 4 ], [ -4, 1 ], 4, 'row-major', { 'mode': 'clamp', 'submode': [ 'wrap', 'throw' ] } ],
  'zero_d': [ 'uint8', new Uint8Array(1), [], [ 0 ], 0, 'row-major', { 'mode': 'wrap' } ],
  'complex128': [ 'complex128', new Float64Array(8), [ 4 ], [ 1 ], 0, 'row-major', {} ]
};
Object.keys(cases).forEach(function (name) {
  var c = cases[name];
  var x = new ndarray(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
  var spec = {
    'dtype': String(x.dtype),
    'shape': x.shape,
    'strides': x.strides,
    'offset': x.offset,
    'order': x.order,
    'mode': x.mode || c[6].mode || 'throw',
    'submode': x.submode || c[6].submode || [ c[6].mode || 'throw' ],
    'flags': { 'READONLY': x.flags.READONLY }
  };
  var view = serialize(x);
  fs.writeFileSync(path.join(out, name + '.json'), JSON.stringify(spec, null, 1) + '\n');
  fs.writeFileSync(path.join(out, name + '.bin'), Buffer.from(view.buffer, view.byteOffset, view.byteLength));
});
console.log('wrote', fs.readdirSync(out).join(' '));
