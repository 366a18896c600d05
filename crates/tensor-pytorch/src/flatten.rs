//! A checkpoint's object as named tensors and metadata: dicts and lists are walked with
//! dotted names (`{"state_dict": {"fc.weight": t}}` gives `state_dict.fc.weight`), and any
//! part that holds no tensor (an epoch, an optimizer's hyperparameters) becomes one metadata
//! value of its name.

use crate::error::{Error, Result};
use crate::pickle::{Storage, Tensor, TorchDtype, Value, sequence};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::rc::Rc;

/// How deeply containers may nest on the way to a tensor.
const MAX_DEPTH: usize = 256;
/// How many values a walk may visit: values shared many times over (a list holding itself
/// twice, nested) would otherwise be visited exponentially often.
const MAX_VISITS: u64 = 50_000_000;

/// A tensor found in the object, by name.
#[derive(Debug)]
pub(crate) struct Found {
    /// Its dotted name.
    pub name: String,
    /// The tensor.
    pub tensor: Rc<Tensor>,
}

/// What a checkpoint's object holds.
#[derive(Debug, Default)]
pub(crate) struct Flat {
    /// Its tensors, in the order the object gives them.
    pub tensors: Vec<Found>,
    /// Its other values, by name, as JSON.
    pub metadata: Map<String, Json>,
    /// Each metadata value's Python type (`int`, `float`, `list`).
    pub types: BTreeMap<String, String>,
    /// NumPy arrays pickled in the object: the storage key their tensor names, their
    /// elements, dtype and byte order.
    pub inline: Vec<(
        String,
        Rc<[u8]>,
        tensor_dtype::Dtype,
        tensor_core::ByteOrder,
    )>,
}

struct Walk {
    out: Flat,
    visits: u64,
    max_tensors: u64,
}

/// Walks `root`; at most `max_tensors` tensors.
pub(crate) fn flatten(root: &Value, max_tensors: u64) -> Result<Flat> {
    let mut w = Walk {
        out: Flat::default(),
        visits: 0,
        max_tensors,
    };
    match root {
        Value::Dict(_) | Value::List(_) | Value::Tuple(..) if w.holds_tensor(root, 0)? => {
            w.walk(root, String::new(), 0)?;
        }
        Value::Tensor(_) | Value::Storage(_) => w.walk(root, "tensor".into(), 0)?,
        Value::Dict(d) => {
            for (k, v) in &d.borrow().items {
                let name = key(k)?;
                let json = w.json(v, 0)?;
                w.out.types.insert(name.clone(), v.kind().into());
                w.out.metadata.insert(name, json);
            }
        }
        other => {
            let json = w.json(other, 0)?;
            w.out.types.insert("value".into(), other.kind().into());
            w.out.metadata.insert("value".into(), json);
        }
    }
    Ok(w.out)
}

fn key(k: &Value) -> Result<String> {
    match k {
        Value::Str(s) => Ok(s.to_string()),
        Value::Int(i) => Ok(i.to_string()),
        Value::Bool(b) => Ok(if *b { "True" } else { "False" }.into()),
        Value::None => Ok("None".into()),
        other => Err(Error::Layout(format!(
            "a dict key that is a {}",
            other.kind()
        ))),
    }
}

fn join(prefix: &str, part: &str) -> String {
    if prefix.is_empty() {
        part.to_owned()
    } else {
        format!("{prefix}.{part}")
    }
}

impl Walk {
    fn visit(&mut self, depth: usize) -> Result<()> {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return Err(Error::Layout(format!(
                "its values refer to one another more than {MAX_VISITS} times over"
            )));
        }
        if depth > MAX_DEPTH {
            return Err(Error::Layout(format!(
                "containers nested deeper than {MAX_DEPTH}"
            )));
        }
        Ok(())
    }

    fn holds_tensor(&mut self, v: &Value, depth: usize) -> Result<bool> {
        self.visit(depth)?;
        Ok(match v {
            Value::Tensor(_) | Value::Storage(_) => true,
            Value::NpArray(a) => a.borrow().is_some(),
            Value::Dict(d) => {
                let items: Vec<Value> = d.borrow().items.iter().map(|(_, v)| v.clone()).collect();
                self.any_holds(&items, depth)?
            }
            Value::List(_) | Value::Tuple(..) => {
                let items = sequence(v).unwrap_or_default();
                self.any_holds(&items, depth)?
            }
            _ => false,
        })
    }

    fn any_holds(&mut self, items: &[Value], depth: usize) -> Result<bool> {
        for i in items {
            if self.holds_tensor(i, depth + 1)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn walk(&mut self, v: &Value, name: String, depth: usize) -> Result<()> {
        self.visit(depth)?;
        match v {
            Value::Tensor(t) => self.push(name, t.clone()),
            Value::NpArray(a) if a.borrow().is_some() => {
                let array = a.borrow().clone().expect("checked above");
                self.push_array(name, &array)
            }
            Value::Storage(s) => {
                // A storage saved on its own: its elements as one dimension.
                let dtype = s
                    .dtype
                    .unwrap_or(TorchDtype::Known(tensor_dtype::Dtype::Uint8));
                let t = Tensor {
                    storage: s.clone(),
                    dtype,
                    offset: 0,
                    shape: vec![s.numel],
                    stride: vec![1],
                };
                self.push(name, Rc::new(t))
            }
            Value::Dict(_) | Value::List(_) | Value::Tuple(..)
                if self.holds_tensor(v, depth)? =>
            {
                let items: Vec<(String, Value)> = match v {
                    Value::Dict(d) => d
                        .borrow()
                        .items
                        .iter()
                        .map(|(k, v)| Ok((key(k)?, v.clone())))
                        .collect::<Result<_>>()?,
                    _ => sequence(v)
                        .unwrap_or_default()
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| (i.to_string(), v))
                        .collect(),
                };
                for (k, item) in items {
                    self.walk(&item, join(&name, &k), depth + 1)?;
                }
                Ok(())
            }
            other => {
                let json = self.json(other, depth)?;
                self.out.types.insert(name.clone(), other.kind().into());
                self.out.metadata.insert(name, json);
                Ok(())
            }
        }
    }

    fn push(&mut self, name: String, tensor: Rc<Tensor>) -> Result<()> {
        if self.out.tensors.len() as u64 >= self.max_tensors {
            return Err(Error::Core(tensor_core::Error::LimitExceeded {
                what: "tensor count",
                requested: self.out.tensors.len() as u64 + 1,
                limit: self.max_tensors,
            }));
        }
        self.out.tensors.push(Found { name, tensor });
        Ok(())
    }

    /// A NumPy array as a tensor over a storage of its own (its elements in the pickle).
    fn push_array(&mut self, name: String, a: &crate::pickle::NpArray) -> Result<()> {
        let key = format!("numpy:{}", self.out.inline.len());
        let numel = tensor_dtype::shape::element_count(&a.shape)?;
        let mut stride = vec![1u64; a.shape.len()];
        let dims: Vec<usize> = if a.fortran {
            (0..a.shape.len()).collect()
        } else {
            (0..a.shape.len()).rev().collect()
        };
        let mut step = 1u64;
        for d in dims {
            stride[d] = step;
            step = step.saturating_mul(a.shape[d].max(1));
        }
        let storage = Rc::new(Storage {
            key: key.clone(),
            dtype: Some(TorchDtype::Known(a.dtype)),
            numel,
            location: "numpy".into(),
            view_of: None,
        });
        self.out
            .inline
            .push((key, a.data.clone(), a.dtype, a.order));
        let tensor = Tensor {
            storage,
            dtype: TorchDtype::Known(a.dtype),
            offset: 0,
            shape: a.shape.clone(),
            stride,
        };
        self.push(name, Rc::new(tensor))
    }

    fn json(&mut self, v: &Value, depth: usize) -> Result<Json> {
        self.visit(depth)?;
        Ok(match v {
            Value::None => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::from(*i),
            Value::Long(b) => Json::String(format!("0x{}", hex_be(b))),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| Json::String(f.to_string()), Json::Number),
            Value::Str(s) => Json::String(s.to_string()),
            Value::Bytes(b) => Json::String(tensor_core::hex::encode(b)),
            Value::Tuple(..) | Value::List(_) => {
                let items = sequence(v).unwrap_or_default();
                Json::Array(
                    items
                        .iter()
                        .map(|i| self.json(i, depth + 1))
                        .collect::<Result<_>>()?,
                )
            }
            Value::Dict(d) => {
                let items: Vec<(Value, Value)> = d.borrow().items.clone();
                let mut m = Map::new();
                for (k, v) in &items {
                    m.insert(key(k)?, self.json(v, depth + 1)?);
                }
                Json::Object(m)
            }
            Value::Global(g) => Json::String(format!("{g:?}")),
            Value::Storage(s) => Json::String(describe_storage(s)),
            Value::Tensor(_) | Value::NpArray(_) => Json::String("tensor".into()),
            Value::NpDtype(t) => Json::String(t.borrow().code.clone()),
        })
    }
}

fn hex_be(b: &[u8]) -> String {
    let mut be = b.to_vec();
    be.reverse();
    tensor_core::hex::encode(&be)
}

fn describe_storage(s: &Storage) -> String {
    format!("storage {}", s.key)
}
