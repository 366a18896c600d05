//! The `.npy` header: a Python dict literal, `{'descr': '<f4', 'fortran_order': False,
//! 'shape': (2, 3), }`, read by a parser that knows only what NumPy writes in it.

use crate::error::{Error, Result};

/// What a header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The type string.
    pub descr: String,
    /// Whether the elements are in Fortran order.
    pub fortran_order: bool,
    /// The shape.
    pub shape: Vec<u64>,
}

struct Parser<'t> {
    text: &'t [u8],
    at: usize,
}

impl Parser<'_> {
    fn err(&self, reason: impl std::fmt::Display) -> Error {
        Error::Header {
            at: String::new(),
            reason: format!("{reason} (at character {})", self.at),
        }
    }

    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        if self.text.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected {:?}", c as char)))
        }
    }

    fn string(&mut self) -> Result<String> {
        self.skip_space();
        let Some(&quote @ (b'\'' | b'"')) = self.text.get(self.at) else {
            return Err(self.err("expected a string"));
        };
        let start = self.at + 1;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == quote)
            .ok_or_else(|| self.err("a string with no closing quote"))?;
        let s = &self.text[start..start + len];
        if s.contains(&b'\\') {
            return Err(self.err("an escape in a string"));
        }
        self.at = start + len + 1;
        String::from_utf8(s.to_vec()).map_err(|_| self.err("a string that is not UTF-8"))
    }

    fn word(&mut self) -> &[u8] {
        self.skip_space();
        let start = self.at;
        while self
            .text
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            self.at += 1;
        }
        &self.text[start..self.at]
    }

    fn shape(&mut self) -> Result<Vec<u64>> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            let w = self.word();
            let digits = w.strip_suffix(b"L").unwrap_or(w);
            let n = std::str::from_utf8(digits)
                .ok()
                .and_then(|d| d.parse::<u64>().ok())
                .ok_or_else(|| self.err("a dimension that is not a non-negative integer"))?;
            dims.push(n);
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

/// Parses a header's text.
pub fn parse(text: &[u8]) -> Result<Header> {
    let mut p = Parser { text, at: 0 };
    p.expect(b'{')?;
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        match key.as_str() {
            "descr" => {
                p.skip_space();
                if p.text.get(p.at) == Some(&b'[') {
                    return Err(Error::Unsupported(
                        "a structured array (fields of several types) is not a tensor".into(),
                    ));
                }
                descr = Some(p.string()?);
            }
            "fortran_order" => {
                fortran_order = Some(match p.word() {
                    b"True" => true,
                    b"False" => false,
                    _ => return Err(p.err("fortran_order is neither True nor False")),
                });
            }
            "shape" => shape = Some(p.shape()?),
            other => return Err(p.err(format!("an unknown key {other:?}"))),
        }
        if !p.eat(b',') {
            p.expect(b'}')?;
            break;
        }
    }
    match (descr, fortran_order, shape) {
        (Some(descr), Some(fortran_order), Some(shape)) => Ok(Header {
            descr,
            fortran_order,
            shape,
        }),
        _ => Err(p.err("the header lacks one of descr, fortran_order and shape")),
    }
}

/// The header's text as NumPy writes it, dict and padding: spaces and a newline so that the
/// data starts at a multiple of 64 bytes, counting `prefix` bytes before the text.
#[must_use]
pub fn text(descr: &str, fortran_order: bool, shape: &[u64], prefix: usize) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let order = if fortran_order { "True" } else { "False" };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    let unpadded = prefix + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    dict
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numpy_headers_parse() {
        let h =
            parse(b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n").unwrap();
        assert_eq!(
            h,
            Header {
                descr: "<f4".into(),
                fortran_order: false,
                shape: vec![2, 3]
            }
        );
        assert_eq!(
            parse(b"{'descr':'|b1','fortran_order':True,'shape':(4,)}")
                .unwrap()
                .shape,
            [4]
        );
        assert_eq!(
            parse(b"{\"shape\": (), \"fortran_order\": False, \"descr\": \">i8\"}")
                .unwrap()
                .shape,
            [] as [u64; 0]
        );
        assert_eq!(
            parse(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L), }")
                .unwrap()
                .shape,
            [3, 2]
        );
        for bad in [
            &b"{'descr': '<f4'}"[..],
            b"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}",
            b"{'descr': '<f4', 'fortran_order': 1, 'shape': ()}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
            b"{",
            b"",
            b"{'x': 1}",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    proptest! {
        #[test]
        fn written_headers_parse_back(shape in proptest::collection::vec(0u64..1 << 40, 0..6), fortran in any::<bool>()) {
            let t = text("<f8", fortran, &shape, 10);
            prop_assert_eq!((10 + t.len()) % 64, 0);
            let h = parse(t.as_bytes()).unwrap();
            prop_assert_eq!(h, Header { descr: "<f8".into(), fortran_order: fortran, shape });
        }

        #[test]
        fn any_text_parses_or_is_refused(text in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&text);
        }
    }
}
