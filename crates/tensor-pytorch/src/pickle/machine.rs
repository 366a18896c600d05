//! The pickle machine, restricted: it knows the opcodes of protocols 0 to 5 that plain
//! values need, resolves only the globals state dicts use ([`super::globals`]), and calls
//! only those, on descriptions it builds itself. Anything else is refused where it is met,
//! before anything would have been called.

use super::globals;
use super::value::{Dict, Global, NpArray, NpType, Storage, Tensor, TorchDtype, Value, dismantle};
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// How deeply tuples may nest; checkpoints nest a handful.
const MAX_TUPLE_DEPTH: u32 = 1000;

/// What a persistent id becomes: the caller's storages.
pub type Persistent<'p> = dyn FnMut(&Value, u64) -> Result<Value> + 'p;

/// A pickle's result. What it built (the result and whatever else the memo kept) has its
/// lists and dicts emptied when dropped, without recursion.
#[derive(Debug)]
pub struct Pickled(pub Value, Vec<Value>);

impl Drop for Pickled {
    fn drop(&mut self) {
        let mut all = std::mem::take(&mut self.1);
        all.push(std::mem::replace(&mut self.0, Value::None));
        dismantle(all);
    }
}

struct Machine<'b, 'p, 'q> {
    bytes: &'b [u8],
    at: usize,
    /// Where the opcode being run starts, for errors.
    op_at: u64,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: HashMap<u32, Value>,
    persistent: &'p mut Persistent<'q>,
}

/// Runs the pickle at the start of `bytes` to its `STOP`; returns what it built and how
/// many bytes it took.
pub fn load(bytes: &[u8], persistent: &mut Persistent<'_>) -> Result<(Pickled, usize)> {
    let mut m = Machine {
        bytes,
        at: 0,
        op_at: 0,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        persistent,
    };
    let result = m.run();
    let built: Vec<Value> = m
        .stack
        .drain(..)
        .chain(m.memo.drain().map(|(_, v)| v))
        .collect();
    match result {
        Ok(v) => Ok((Pickled(v, built), m.at)),
        Err(e) => {
            dismantle(built);
            Err(e)
        }
    }
}

impl<'b> Machine<'b, '_, '_> {
    fn err(&self, reason: impl Into<String>) -> Error {
        Error::Pickle {
            offset: self.op_at,
            reason: reason.into(),
        }
    }

    fn refuse(&self, what: impl Into<String>) -> Error {
        Error::Refused {
            offset: self.op_at,
            what: what.into(),
        }
    }

    fn take(&mut self, n: u64) -> Result<&'b [u8]> {
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(self.err(format!(
                "an argument of {n} bytes where {left} are left in the pickle"
            )));
        }
        let start = self.at;
        self.at += n as usize;
        Ok(&self.bytes[start..self.at])
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let mut a = [0; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// A protocol 0 argument: the bytes up to a newline, without it.
    fn line(&mut self) -> Result<&'b str> {
        let bytes = self.bytes;
        let rest = &bytes[self.at..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| self.err("a text argument with no newline before the end"))?;
        self.at += n + 1;
        std::str::from_utf8(&rest[..n]).map_err(|_| self.err("a text argument that is not UTF-8"))
    }

    fn text(&mut self, n: u64) -> Result<Value> {
        let b = self.take(n)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(Value::Str(s.into())),
            Err(_) => Err(self.err("a string that is not UTF-8")),
        }
    }

    fn bytes_value(&mut self, n: u64) -> Result<Value> {
        Ok(Value::Bytes(self.take(n)?.into()))
    }

    fn pop(&mut self) -> Result<Value> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("an opcode takes a value from an empty stack"));
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    fn top(&mut self) -> Result<&mut Value> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(self.err("an opcode needs a value on an empty stack"));
        }
        Ok(self.stack.last_mut().expect("checked above"))
    }

    /// The values above the last mark, the mark removed.
    fn pop_mark(&mut self) -> Result<Vec<Value>> {
        let mark = self.marks.pop().ok_or_else(|| {
            self.err("an opcode takes the values since a MARK, and there is none")
        })?;
        Ok(self.stack.split_off(mark))
    }

    fn tuple(&self, items: Vec<Value>) -> Result<Value> {
        let depth = 1 + items.iter().map(Value::tuple_depth).max().unwrap_or(0);
        if depth > MAX_TUPLE_DEPTH {
            return Err(self.err(format!("tuples nested deeper than {MAX_TUPLE_DEPTH}")));
        }
        Ok(Value::Tuple(items.into(), depth))
    }

    fn push(&mut self, v: Value) {
        self.stack.push(v);
    }

    /// A `LONG1`/`LONG4` integer: little-endian two's complement.
    fn int(digits: &[u8]) -> Value {
        if digits.len() > 8 {
            // Kept as its bytes (read from the pickle, so bounded by it): the legacy
            // layout's magic number is one.
            return Value::Long(digits.into());
        }
        let negative = digits.last().is_some_and(|b| b & 0x80 != 0);
        let mut a = [if negative { 0xff } else { 0 }; 8];
        a[..digits.len()].copy_from_slice(digits);
        Value::Int(i64::from_le_bytes(a))
    }

    fn memo_get(&self, key: u32) -> Result<Value> {
        self.memo
            .get(&key)
            .cloned()
            .ok_or_else(|| self.err(format!("memo entry {key} is read before it was written")))
    }

    fn memo_put(&mut self, key: u32) -> Result<()> {
        let v = self.top()?.clone();
        self.memo.insert(key, v);
        Ok(())
    }

    fn run(&mut self) -> Result<Value> {
        loop {
            self.op_at = self.at as u64;
            let Some(&op) = self.bytes.get(self.at) else {
                return Err(self.err("the pickle ends before its STOP"));
            };
            self.at += 1;
            match op {
                b'.' => {
                    let v = self.pop()?;
                    if !self.stack.is_empty() || !self.marks.is_empty() {
                        return Err(self.err("STOP with values or marks left on the stack"));
                    }
                    return Ok(v);
                }
                0x80 => {
                    let p = self.u8()?;
                    if p > 5 {
                        return Err(self.err(format!("pickle protocol {p} (0 to 5 exist)")));
                    }
                }
                0x95 => {
                    self.u64()?;
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop()?;
                }
                b'1' => drop(self.pop_mark()?),
                b'2' => {
                    let v = self.top()?.clone();
                    self.push(v);
                }
                b'N' => self.push(Value::None),
                0x88 => self.push(Value::Bool(true)),
                0x89 => self.push(Value::Bool(false)),
                b'I' => {
                    let v = match self.line()? {
                        "01" => Value::Bool(true),
                        "00" => Value::Bool(false),
                        s => Value::Int(s.parse().map_err(|_| Error::Pickle {
                            offset: self.op_at,
                            reason: format!("INT {s:?} is not a 64-bit integer"),
                        })?),
                    };
                    self.push(v);
                }
                b'L' => {
                    let s = self.line()?;
                    let s = s.strip_suffix('L').unwrap_or(s);
                    let v = s.parse().map_err(|_| {
                        Error::Unsupported(format!(
                            "LONG {s:?} (an integer beyond 64 bits, or none)"
                        ))
                    })?;
                    self.push(Value::Int(v));
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.push(Value::Int(v.into()));
                }
                b'K' => {
                    let v = self.u8()?;
                    self.push(Value::Int(v.into()));
                }
                b'M' => {
                    let v = self.u16()?;
                    self.push(Value::Int(v.into()));
                }
                0x8a => {
                    let n = self.u8()?;
                    let v = Self::int(self.take(n.into())?);
                    self.push(v);
                }
                0x8b => {
                    let n = self.u32()? as i32;
                    let n =
                        u64::try_from(n).map_err(|_| self.err(format!("LONG4 of {n} bytes")))?;
                    let v = Self::int(self.take(n)?);
                    self.push(v);
                }
                b'F' => {
                    let s = self.line()?;
                    let v: f64 = s
                        .parse()
                        .map_err(|_| self.err(format!("FLOAT {s:?} is not a number")))?;
                    self.push(Value::Float(v));
                }
                b'G' => {
                    let mut a = [0; 8];
                    a.copy_from_slice(self.take(8)?);
                    self.push(Value::Float(f64::from_be_bytes(a)));
                }
                b'X' => {
                    let n = self.u32()?;
                    let v = self.text(n.into())?;
                    self.push(v);
                }
                0x8c => {
                    let n = self.u8()?;
                    let v = self.text(n.into())?;
                    self.push(v);
                }
                0x8d => {
                    let n = self.u64()?;
                    let v = self.text(n)?;
                    self.push(v);
                }
                // Python 2 byte strings, which torch's loaders decode as text.
                b'T' => {
                    let n = self.u32()?;
                    let b = self.take(n.into())?;
                    let v = Value::Str(String::from_utf8_lossy(b).into());
                    self.push(v);
                }
                b'U' => {
                    let n = self.u8()?;
                    let b = self.take(n.into())?;
                    let v = Value::Str(String::from_utf8_lossy(b).into());
                    self.push(v);
                }
                b'B' => {
                    let n = self.u32()?;
                    let v = self.bytes_value(n.into())?;
                    self.push(v);
                }
                b'C' => {
                    let n = self.u8()?;
                    let v = self.bytes_value(n.into())?;
                    self.push(v);
                }
                0x8e | 0x96 => {
                    let n = self.u64()?;
                    let v = self.bytes_value(n)?;
                    self.push(v);
                }
                b')' => self.push(Value::Tuple(Rc::from(Vec::new()), 1)),
                b't' => {
                    let items = self.pop_mark()?;
                    let v = self.tuple(items)?;
                    self.push(v);
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    let v = self.tuple(items)?;
                    self.push(v);
                }
                // Sets are kept as lists.
                b']' | 0x8f => self.push(Value::List(Rc::default())),
                b'l' | 0x91 => {
                    let items = self.pop_mark()?;
                    self.push(Value::List(Rc::new(RefCell::new(items))));
                }
                b'a' => {
                    let v = self.pop()?;
                    self.append(vec![v])?;
                }
                b'e' | 0x90 => {
                    let items = self.pop_mark()?;
                    self.append(items)?;
                }
                b'}' => self.push(Value::Dict(Rc::default())),
                b'd' => {
                    let items = self.pop_mark()?;
                    let d = Value::Dict(Rc::default());
                    self.push(d);
                    self.set_items(items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.set_items(vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    self.set_items(items)?;
                }
                b'g' => {
                    let key = self
                        .line()?
                        .parse()
                        .map_err(|_| self.err("GET of a memo key that is not a number"))?;
                    let v = self.memo_get(key)?;
                    self.push(v);
                }
                b'h' => {
                    let key = self.u8()?;
                    let v = self.memo_get(key.into())?;
                    self.push(v);
                }
                b'j' => {
                    let key = self.u32()?;
                    let v = self.memo_get(key)?;
                    self.push(v);
                }
                b'p' => {
                    let key = self
                        .line()?
                        .parse()
                        .map_err(|_| self.err("PUT of a memo key that is not a number"))?;
                    self.memo_put(key)?;
                }
                b'q' => {
                    let key = self.u8()?;
                    self.memo_put(key.into())?;
                }
                b'r' => {
                    let key = self.u32()?;
                    self.memo_put(key)?;
                }
                0x94 => {
                    let key = u32::try_from(self.memo.len())
                        .map_err(|_| self.err("more memo entries than 32 bits count"))?;
                    self.memo_put(key)?;
                }
                b'c' => {
                    let module = self.line()?.to_owned();
                    let name = self.line()?.to_owned();
                    let g = self.global(&module, &name)?;
                    self.push(Value::Global(g));
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Value::Str(module), Value::Str(name)) = (&module, &name) else {
                        return Err(self.err("STACK_GLOBAL of values that are not strings"));
                    };
                    let g = self.global(module, name)?;
                    self.push(Value::Global(g));
                }
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let v = self.reduce(&callable, &args)?;
                    self.push(v);
                }
                b'b' => {
                    let state = self.pop()?;
                    self.build(&state)?;
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let v = (self.persistent)(&pid, self.op_at)?;
                    self.push(v);
                }
                b'P' => {
                    let pid = Value::Str(self.line()?.into());
                    let v = (self.persistent)(&pid, self.op_at)?;
                    self.push(v);
                }
                other => {
                    return Err(match opcode_name(other) {
                        Some(name) => self.refuse(format!("opcode {name}")),
                        None => self.err(format!("byte {other:#04x} is no pickle opcode")),
                    });
                }
            }
        }
    }

    fn append(&mut self, items: Vec<Value>) -> Result<()> {
        let err = self.err("APPEND to something that is not a list");
        match self.top()? {
            Value::List(l) => {
                l.borrow_mut().extend(items);
                Ok(())
            }
            _ => Err(err),
        }
    }

    fn set_items(&mut self, items: Vec<Value>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(self.err("SETITEMS of an odd number of values"));
        }
        let err = self.err("SETITEM on something that is not a dict");
        let Value::Dict(d) = self.top()? else {
            return Err(err);
        };
        let mut d = d.borrow_mut();
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            d.set(k, v);
        }
        Ok(())
    }

    fn global(&self, module: &str, name: &str) -> Result<Global> {
        globals::resolve(module, name).map_err(|e| match e {
            globals::Unknown::Refused(hint) => self.refuse(format!("global {module}.{name}{hint}")),
            globals::Unknown::Unsupported(what) => Error::Unsupported(format!(
                "{what} ({module}.{name}, at pickle byte {})",
                self.op_at
            )),
        })
    }

    fn build(&mut self, state: &Value) -> Result<()> {
        let op = self.op_at;
        let top = self.top()?.clone();
        match top {
            // An OrderedDict's attributes (a module state dict's `_metadata`, its layers'
            // versions), or a tensor's Python attributes: kept by torch, not tensors.
            Value::Dict(_) | Value::Tensor(_) => Ok(()),
            // A dtype's state: (version, byte order, ...).
            Value::NpDtype(t) => {
                if let Some(Value::Str(order)) = sequence(state).and_then(|s| s.get(1).cloned())
                    && let [b] = order.as_bytes()
                {
                    t.borrow_mut().order = *b;
                }
                Ok(())
            }
            Value::NpArray(a) => {
                let array = self.numpy_array(state)?;
                *a.borrow_mut() = Some(array);
                Ok(())
            }
            other => Err(Error::Refused {
                offset: op,
                what: format!(
                    "BUILD of a {} (setting the state of an object)",
                    other.kind()
                ),
            }),
        }
    }

    /// A NumPy array from its pickled state: `(version, shape, dtype, fortran, data)`.
    fn numpy_array(&self, state: &Value) -> Result<NpArray> {
        let mut items =
            sequence(state).ok_or_else(|| self.err("a NumPy array's state that is not a tuple"))?;
        if items.len() == 5 {
            items.remove(0);
        }
        let [shape, dtype, fortran, data] = items.as_slice() else {
            return Err(self.err(format!("a NumPy array's state of {} items", items.len())));
        };
        let shape = self.counts(shape, "NumPy shape")?;
        let Value::NpDtype(t) = dtype else {
            return Err(self.err("a NumPy array whose dtype is not one"));
        };
        let code = t.borrow().code.clone();
        let (dtype, order) = t.borrow().dtype().ok_or_else(|| {
            Error::Unsupported(format!(
                "a NumPy array of type {code:?} (objects, strings or records hold no tensor)"
            ))
        })?;
        let Value::Bytes(data) = data else {
            return Err(Error::Unsupported(
                "a NumPy array whose elements are objects".into(),
            ));
        };
        let want = tensor_dtype::shape::byte_len(dtype, &shape)?;
        if want != data.len() as u64 {
            return Err(self.err(format!(
                "a NumPy array of {} bytes for {want} bytes of {dtype} {shape:?}",
                data.len()
            )));
        }
        Ok(NpArray {
            dtype,
            order,
            shape,
            fortran: matches!(fortran, Value::Bool(true)),
            data: data.clone(),
        })
    }

    fn reduce(&self, callable: &Value, args: &Value) -> Result<Value> {
        let Value::Global(g) = callable else {
            return Err(self.refuse(format!("calling a {}", callable.kind())));
        };
        let Value::Tuple(args, _) = args else {
            return Err(self.err(format!(
                "REDUCE with arguments that are a {}, not a tuple",
                args.kind()
            )));
        };
        self.call(*g, args)
    }

    fn call(&self, g: Global, args: &[Value]) -> Result<Value> {
        let arity = |lo: usize, hi: usize| -> Result<()> {
            if (lo..=hi).contains(&args.len()) {
                Ok(())
            } else {
                Err(self.err(format!("{g:?} called with {} arguments", args.len())))
            }
        };
        match g {
            Global::OrderedDict => {
                arity(0, 1)?;
                let mut d = Dict::default();
                if let Some(items) = args.first() {
                    for pair in sequence(items)
                        .ok_or_else(|| self.err("OrderedDict of something not a list of pairs"))?
                    {
                        let kv = sequence(&pair)
                            .filter(|kv| kv.len() == 2)
                            .ok_or_else(|| self.err("OrderedDict item that is not a pair"))?;
                        d.set(kv[0].clone(), kv[1].clone());
                    }
                }
                Ok(Value::Dict(Rc::new(RefCell::new(d))))
            }
            Global::RebuildTensor | Global::RebuildTensorV2 | Global::RebuildTensorV3 => {
                let (lo, hi) = match g {
                    Global::RebuildTensor => (4, 4),
                    Global::RebuildTensorV2 => (6, 7),
                    _ => (7, 8),
                };
                arity(lo, hi)?;
                if let Some(hooks) = args.get(5) {
                    self.no_hooks(hooks)?;
                }
                let dtype = match args.get(6) {
                    Some(Value::Global(Global::Dtype(d))) if g == Global::RebuildTensorV3 => {
                        Some(*d)
                    }
                    Some(other) if g == Global::RebuildTensorV3 => {
                        return Err(self.err(format!(
                            "_rebuild_tensor_v3 with a dtype that is a {}",
                            other.kind()
                        )));
                    }
                    _ => None,
                };
                self.tensor(&args[0], &args[1], &args[2], &args[3], dtype)
            }
            Global::RebuildParameter | Global::RebuildParameterWithState => {
                arity(3, 4)?;
                self.no_hooks(&args[2])?;
                match &args[0] {
                    t @ Value::Tensor(_) => Ok(t.clone()),
                    other => Err(self.err(format!("a parameter whose data is a {}", other.kind()))),
                }
            }
            Global::RebuildFromType => {
                arity(4, 4)?;
                let (Value::Global(func), Value::Global(Global::TensorClass)) =
                    (&args[0], &args[1])
                else {
                    return Err(self.refuse(format!(
                        "_rebuild_from_type_v2 of a {} into a {} (a tensor subclass)",
                        args[0].kind(),
                        args[1].kind()
                    )));
                };
                let Value::Tuple(inner, _) = &args[2] else {
                    return Err(self.err("_rebuild_from_type_v2 with arguments not a tuple"));
                };
                self.call(*func, inner)
            }
            Global::Size => {
                arity(0, 1)?;
                match args.first() {
                    None => Ok(Value::Tuple(Rc::from(Vec::new()), 1)),
                    Some(v) => {
                        let items = sequence(v)
                            .ok_or_else(|| self.err("torch.Size of something not a sequence"))?;
                        self.tuple(items)
                    }
                }
            }
            Global::Device => match args.first() {
                Some(Value::Str(s)) => Ok(Value::Str(match args.get(1) {
                    Some(Value::Int(i)) => format!("{s}:{i}").into(),
                    _ => s.clone(),
                })),
                _ => Err(self.err("torch.device of something not a string")),
            },
            Global::Encode => {
                arity(1, 2)?;
                let Value::Str(text) = &args[0] else {
                    return Err(self.err("_codecs.encode of something not a string"));
                };
                // Python's default encoding is UTF-8; protocol 2 pickles bytes as latin1.
                let encoding = match args.get(1) {
                    None => "utf-8",
                    Some(Value::Str(e)) => &**e,
                    Some(_) => {
                        return Err(
                            self.err("_codecs.encode with an encoding that is not a string")
                        );
                    }
                };
                match encoding {
                    "latin1" | "latin-1" => text
                        .chars()
                        .map(|c| u8::try_from(u32::from(c)).ok())
                        .collect::<Option<Vec<u8>>>()
                        .map(|b| Value::Bytes(b.into()))
                        .ok_or_else(|| {
                            self.err("_codecs.encode to latin1 of a character beyond it")
                        }),
                    "utf-8" | "utf8" => Ok(Value::Bytes(text.as_bytes().into())),
                    _ => {
                        Err(self.err("_codecs.encode with an encoding other than latin1 and utf-8"))
                    }
                }
            }
            Global::Set => {
                arity(0, 1)?;
                let items = args
                    .first()
                    .map_or(Some(Vec::new()), sequence)
                    .ok_or_else(|| self.err("set of something not a sequence"))?;
                Ok(Value::List(Rc::new(RefCell::new(items))))
            }
            Global::Bytearray => match args.first() {
                None => Ok(Value::Bytes(Rc::from(Vec::new()))),
                Some(b @ Value::Bytes(_)) => Ok(b.clone()),
                Some(other) => Err(self.err(format!("bytearray of a {}", other.kind()))),
            },
            Global::NumpyDtype => match args.first() {
                Some(Value::Str(code)) => Ok(Value::NpDtype(Rc::new(RefCell::new(NpType {
                    code: code.to_string(),
                    order: b'|',
                })))),
                _ => Err(self.err("numpy.dtype of something not a string")),
            },
            Global::NumpyReconstruct => match args.first() {
                Some(Value::Global(Global::NumpyNdarray)) => Ok(Value::NpArray(Rc::default())),
                _ => Err(self.refuse("numpy _reconstruct of a class other than ndarray")),
            },
            Global::NumpyScalar => {
                arity(2, 2)?;
                let (Value::NpDtype(t), Value::Bytes(b)) = (&args[0], &args[1]) else {
                    return Err(self.err("numpy scalar of something not a dtype and bytes"));
                };
                let code = t.borrow().code.clone();
                let (dtype, order) = t.borrow().dtype().ok_or_else(|| {
                    Error::Unsupported(format!("a NumPy scalar of type {code:?}"))
                })?;
                numpy_scalar(dtype, order, b)
                    .ok_or_else(|| self.err(format!("a NumPy {dtype} scalar of {} bytes", b.len())))
            }
            Global::TensorClass
            | Global::StorageType(_)
            | Global::Dtype(_)
            | Global::NumpyNdarray => Err(self.refuse(format!("calling {g:?}"))),
        }
    }

    fn no_hooks(&self, hooks: &Value) -> Result<()> {
        let empty = match hooks {
            Value::None => true,
            Value::Dict(d) => d.borrow().items.is_empty(),
            _ => false,
        };
        if empty {
            Ok(())
        } else {
            Err(self.refuse("a tensor with backward hooks (functions to be called)"))
        }
    }

    fn tensor(
        &self,
        storage: &Value,
        offset: &Value,
        size: &Value,
        stride: &Value,
        dtype: Option<TorchDtype>,
    ) -> Result<Value> {
        let Value::Storage(storage) = storage else {
            return Err(self.err(format!(
                "a tensor rebuilt from a {}, not a storage",
                storage.kind()
            )));
        };
        let dtype = dtype
            .or(storage.dtype)
            .ok_or_else(|| self.err("a tensor of an untyped storage that names no dtype"))?;
        let offset = self.count(offset, "storage offset")?;
        let shape = self.counts(size, "size")?;
        let stride = self.counts(stride, "stride")?;
        if shape.len() != stride.len() {
            return Err(self.err(format!(
                "a tensor of {} dimensions with {} strides",
                shape.len(),
                stride.len()
            )));
        }
        Ok(Value::Tensor(Rc::new(Tensor {
            storage: storage.clone(),
            dtype,
            offset,
            shape,
            stride,
        })))
    }

    fn count(&self, v: &Value, what: &str) -> Result<u64> {
        match v {
            Value::Int(i) if *i >= 0 => Ok(*i as u64),
            other => Err(self.err(format!("a tensor's {what} that is {}", describe(other)))),
        }
    }

    fn counts(&self, v: &Value, what: &str) -> Result<Vec<u64>> {
        let items = sequence(v)
            .ok_or_else(|| self.err(format!("a tensor's {what} that is a {}", v.kind())))?;
        items.iter().map(|i| self.count(i, what)).collect()
    }
}

/// One NumPy scalar's value: integers, floats and booleans.
fn numpy_scalar(
    dtype: tensor_dtype::Dtype,
    order: tensor_core::ByteOrder,
    bytes: &[u8],
) -> Option<Value> {
    use tensor_dtype::Dtype;
    let width = dtype.byte_width();
    if bytes.len() != width {
        return None;
    }
    let mut le = [0u8; 8];
    le[..width].copy_from_slice(bytes);
    if order == tensor_core::ByteOrder::Big {
        le[..width].reverse();
    }
    let signed = |bits: u32| {
        let v = u64::from_le_bytes(le);
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    };
    Some(match dtype {
        Dtype::Bool => Value::Bool(le[0] != 0),
        Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64 => {
            Value::Int(signed(8 * width as u32))
        }
        Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 => Value::Int(u64::from_le_bytes(le) as i64),
        Dtype::Uint64 => match i64::try_from(u64::from_le_bytes(le)) {
            Ok(v) => Value::Int(v),
            Err(_) => Value::Float(u64::from_le_bytes(le) as f64),
        },
        Dtype::Float16 => Value::Float(f64::from(half::f16::from_le_bytes([le[0], le[1]]))),
        Dtype::Float32 => Value::Float(f64::from(f32::from_le_bytes([le[0], le[1], le[2], le[3]]))),
        Dtype::Float64 => Value::Float(f64::from_le_bytes(le)),
        _ => return None,
    })
}

/// The items of a tuple or list.
#[must_use]
pub fn sequence(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::Tuple(t, _) => Some(t.to_vec()),
        Value::List(l) => Some(l.borrow().clone()),
        _ => None,
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        other => format!("a {}", other.kind()),
    }
}

/// The names of opcodes this machine refuses: those that build objects of any class, or
/// need what a checkpoint never holds.
fn opcode_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'i' => "INST (it builds an object of any class)",
        b'o' => "OBJ (it builds an object of any class)",
        0x81 => "NEWOBJ (it builds an object of any class)",
        0x92 => "NEWOBJ_EX (it builds an object of any class)",
        0x82..=0x84 => "EXT (the copyreg extension registry)",
        0x97 => "NEXT_BUFFER (out-of-band buffers)",
        0x98 => "READONLY_BUFFER (out-of-band buffers)",
        b'S' => "STRING (protocol 0 quoted strings)",
        b'V' => "UNICODE (protocol 0 escaped strings)",
        _ => return None,
    })
}

/// A storage as a persistent id describes it: `('storage', type, key, location, numel[,
/// view_metadata])`.
pub fn storage_of(pid: &Value, offset: u64) -> Result<Storage> {
    let err = |reason: String| Error::Pickle { offset, reason };
    let items =
        sequence(pid).ok_or_else(|| err(format!("a persistent id that is a {}", pid.kind())))?;
    match items.first() {
        Some(Value::Str(s)) if &**s == "storage" => {}
        _ => return Err(err("a persistent id that is not a storage's".into())),
    }
    if !(5..=6).contains(&items.len()) {
        return Err(err(format!(
            "a storage's persistent id of {} items",
            items.len()
        )));
    }
    let dtype = match &items[1] {
        Value::Global(Global::StorageType(d)) => *d,
        Value::Global(Global::Dtype(d)) => Some(*d),
        other => return Err(err(format!("a storage whose type is a {}", other.kind()))),
    };
    let key = match &items[2] {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        other => return Err(err(format!("a storage whose key is a {}", other.kind()))),
    };
    let location = match &items[3] {
        Value::Str(s) => s.to_string(),
        _ => String::new(),
    };
    let numel = match &items[4] {
        Value::Int(i) if *i >= 0 => *i as u64,
        other => {
            return Err(err(format!(
                "a storage whose length is {}",
                describe(other)
            )));
        }
    };
    let view_of = match items.get(5) {
        None | Some(Value::None) => None,
        Some(v) => {
            let parts = sequence(v)
                .filter(|p| p.len() == 3)
                .ok_or_else(|| err("a storage view that is not (key, offset, size)".into()))?;
            match (&parts[0], &parts[1], &parts[2]) {
                (Value::Str(k), Value::Int(o), Value::Int(n)) if *o >= 0 && *n >= 0 => {
                    Some((k.to_string(), *o as u64, *n as u64))
                }
                _ => return Err(err("a storage view that is not (key, offset, size)".into())),
            }
        }
    };
    Ok(Storage {
        key,
        dtype,
        numel,
        location,
        view_of,
    })
}
