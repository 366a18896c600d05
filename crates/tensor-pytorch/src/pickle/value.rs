//! What a pickle builds here: Python's plain values, the few globals checkpoints name, and
//! storages and tensors as descriptions (never objects of torch's).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tensor_dtype::Dtype;

/// One value on the pickle machine's stack.
#[derive(Clone, Debug)]
pub enum Value {
    /// `None`.
    None,
    /// `True`, `False`.
    Bool(bool),
    /// An `int` that fits 64 bits.
    Int(i64),
    /// An `int` beyond 64 bits: its little-endian two's complement bytes.
    Long(Rc<[u8]>),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(Rc<str>),
    /// `bytes` or a `bytearray`.
    Bytes(Rc<[u8]>),
    /// A `tuple`, with how deeply tuples nest in it.
    Tuple(Rc<[Value]>, u32),
    /// A `list` (or a `set`, kept in order).
    List(Rc<RefCell<Vec<Value>>>),
    /// A `dict` or `collections.OrderedDict`, in insertion order.
    Dict(Rc<RefCell<Dict>>),
    /// A global the reader knows, by what it stands for.
    Global(Global),
    /// A storage, as its persistent id describes it.
    Storage(Rc<Storage>),
    /// A tensor: a view of a storage.
    Tensor(Rc<Tensor>),
    /// A `numpy.dtype`, its byte order set by its state.
    NpDtype(Rc<RefCell<NpType>>),
    /// A `numpy.ndarray`, its contents set by its state (`None` until then).
    NpArray(Rc<RefCell<Option<NpArray>>>),
}

/// A `numpy.dtype` as a pickle builds it: its type code (`f4`, `<i8`, `b1`) and byte order.
#[derive(Clone, Debug)]
pub struct NpType {
    /// The code it was made from.
    pub code: String,
    /// `<`, `>`, `|` or `=`.
    pub order: u8,
}

/// A `numpy.ndarray` pickled inside a checkpoint: its elements, in the pickle.
#[derive(Clone, Debug)]
pub struct NpArray {
    /// The element type.
    pub dtype: Dtype,
    /// The elements' byte order.
    pub order: tensor_core::ByteOrder,
    /// The shape.
    pub shape: Vec<u64>,
    /// Whether the elements are in Fortran order.
    pub fortran: bool,
    /// The elements.
    pub data: Rc<[u8]>,
}

impl NpType {
    /// The dtype and byte order the code names: NumPy's kinds of numbers and booleans.
    #[must_use]
    pub fn dtype(&self) -> Option<(Dtype, tensor_core::ByteOrder)> {
        let (order, code) = match self.code.as_bytes().first() {
            Some(&c @ (b'<' | b'>' | b'|' | b'=')) => (c, &self.code[1..]),
            _ => (self.order, self.code.as_str()),
        };
        let kind = code.chars().next()?;
        let size: u32 = code.get(1..)?.parse().ok()?;
        let dtype = match (kind, size) {
            ('b', 1) => Dtype::Bool,
            ('i', 1) => Dtype::Int8,
            ('i', 2) => Dtype::Int16,
            ('i', 4) => Dtype::Int32,
            ('i', 8) => Dtype::Int64,
            ('u', 1) => Dtype::Uint8,
            ('u', 2) => Dtype::Uint16,
            ('u', 4) => Dtype::Uint32,
            ('u', 8) => Dtype::Uint64,
            ('f', 2) => Dtype::Float16,
            ('f', 4) => Dtype::Float32,
            ('f', 8) => Dtype::Float64,
            ('c', 8) => Dtype::Complex64,
            ('c', 16) => Dtype::Complex128,
            _ => return None,
        };
        let order = if order == b'>' {
            tensor_core::ByteOrder::Big
        } else {
            tensor_core::ByteOrder::Little
        };
        Some((dtype, order))
    }
}

/// A dict: its items in insertion order, indexed by their hashable keys.
#[derive(Debug, Default)]
pub struct Dict {
    /// The items.
    pub items: Vec<(Value, Value)>,
    index: HashMap<Key, usize>,
}

/// A key Python would hash alike.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Str(Rc<str>),
    Int(i64),
    None,
}

impl Dict {
    /// Sets `key` to `value`, replacing the value of an equal key as Python does.
    pub fn set(&mut self, key: Value, value: Value) {
        let hashed = match &key {
            Value::Str(s) => Some(Key::Str(s.clone())),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Bool(b) => Some(Key::Int(i64::from(*b))),
            Value::None => Some(Key::None),
            _ => None,
        };
        if let Some(k) = hashed {
            if let Some(&i) = self.index.get(&k) {
                self.items[i].1 = value;
                return;
            }
            self.index.insert(k, self.items.len());
        }
        self.items.push((key, value));
    }
}

/// A global a checkpoint's pickle may name, resolved to what this reader does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Global {
    /// `collections.OrderedDict` (and `collections.Counter`): called, a dict.
    OrderedDict,
    /// `torch._utils._rebuild_tensor` (storage, offset, size, stride).
    RebuildTensor,
    /// `torch._utils._rebuild_tensor_v2` (…, `requires_grad`, `backward_hooks`[, `metadata`]).
    RebuildTensorV2,
    /// `torch._utils._rebuild_tensor_v3` (…, `backward_hooks`, `dtype`[, `metadata`]).
    RebuildTensorV3,
    /// `torch._utils._rebuild_parameter` (`data`, `requires_grad`, `backward_hooks`).
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state` (…, `backward_hooks`, `state`).
    RebuildParameterWithState,
    /// `torch._tensor._rebuild_from_type_v2` (`func`, `new_type`, `args`, `state`).
    RebuildFromType,
    /// `torch.Tensor` or `torch.nn.parameter.Parameter`, as a `new_type`.
    TensorClass,
    /// `torch.Size`: called, a tuple.
    Size,
    /// `torch.device`: called, its name.
    Device,
    /// `_codecs.encode` (str, "latin1"): how protocol 2 pickles bytes.
    Encode,
    /// `builtins.set`, `frozenset`: called, a list.
    Set,
    /// `builtins.bytearray`: called, bytes.
    Bytearray,
    /// A storage class: `torch.FloatStorage` (its dtype), `torch.UntypedStorage` (`None`).
    StorageType(Option<TorchDtype>),
    /// A dtype: `torch.float32`.
    Dtype(TorchDtype),
    /// `numpy.core.multiarray._reconstruct` (`ndarray`, `(0,)`, `b"b"`): an empty array,
    /// filled by `BUILD`.
    NumpyReconstruct,
    /// `numpy.ndarray`, as `_reconstruct`'s first argument.
    NumpyNdarray,
    /// `numpy.dtype` (code, align, copy): a type, its byte order set by `BUILD`.
    NumpyDtype,
    /// `numpy.core.multiarray.scalar` (dtype, bytes): one number.
    NumpyScalar,
}

/// A dtype torch saves, by what tensorkit makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TorchDtype {
    /// One tensorkit holds.
    Known(Dtype),
    /// One it does not (quantized, `complex32`, bit types, packed 4-bit pairs), by torch's
    /// name.
    Other(&'static str),
}

impl TorchDtype {
    /// Bytes per element (1 for the types tensorkit does not hold but knows the width of).
    #[must_use]
    pub fn width(self) -> u64 {
        match self {
            TorchDtype::Known(d) => d.byte_width() as u64,
            TorchDtype::Other(name) => match name {
                "complex32" | "qint32" => 4,
                "bits16" => 2,
                _ => 1,
            },
        }
    }
}

/// A storage, as a persistent id describes it.
#[derive(Debug)]
pub struct Storage {
    /// Its key: the zip entry `data/<key>`, or the legacy layout's key.
    pub key: String,
    /// Its element type; `None` for an untyped storage (bytes), whose tensor names the dtype.
    pub dtype: Option<TorchDtype>,
    /// Its length in elements (in bytes when untyped).
    pub numel: u64,
    /// Where it lived: `cpu`, `cuda:0`.
    pub location: String,
    /// The legacy layout's view of another storage: its key, offset and length in elements.
    pub view_of: Option<(String, u64, u64)>,
}

/// A tensor: `shape` elements of `dtype` laid out by `stride` (in elements) from `offset`
/// elements into `storage`.
#[derive(Debug)]
pub struct Tensor {
    /// The storage it views.
    pub storage: Rc<Storage>,
    /// Its element type.
    pub dtype: TorchDtype,
    /// Where it starts in the storage, in elements.
    pub offset: u64,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its strides, in elements.
    pub stride: Vec<u64>,
}

impl Value {
    /// The value's kind as Python names it, for messages.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::Long(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::Tuple(..) => "tuple",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
            Value::Global(_) => "global",
            Value::Storage(_) => "storage",
            Value::Tensor(_) | Value::NpArray(_) => "tensor",
            Value::NpDtype(_) => "numpy dtype",
        }
    }

    /// How deeply tuples nest in this value (0 for anything else).
    #[must_use]
    pub fn tuple_depth(&self) -> u32 {
        match self {
            Value::Tuple(_, d) => *d,
            _ => 0,
        }
    }
}

/// Empties every list and dict reachable from `roots` without recursion, so that dropping
/// them recurses no deeper than tuples nest (which is bounded as they are built), and cycles
/// a pickle made (a list holding itself) are broken.
pub(super) fn dismantle(roots: Vec<Value>) {
    let mut work = roots;
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = work.pop() {
        match v {
            Value::List(l) => {
                let items = std::mem::take(&mut *l.borrow_mut());
                work.extend(items);
            }
            Value::Dict(d) => {
                let items = std::mem::take(&mut d.borrow_mut().items);
                d.borrow_mut().index.clear();
                for (k, v) in items {
                    work.push(k);
                    work.push(v);
                }
            }
            Value::Tuple(t, _) if seen.insert(Rc::as_ptr(&t).cast::<()>()) => {
                // Only the lists and dicts in it need emptying; the tuple itself drops as
                // deep as tuples nest.
                work.extend(
                    t.iter()
                        .filter(|v| matches!(v, Value::List(_) | Value::Dict(_) | Value::Tuple(..)))
                        .cloned(),
                );
            }
            _ => {}
        }
    }
}
