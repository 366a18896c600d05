//! [`Classic`]: a classic file opened over its bytes, each variable a zero-copy big-endian
//! view (a record variable's records a stride apart).

use super::header::{self, Header};
use super::layout::Layout;
use super::version::Version;
use crate::error::{Error, Result};
use crate::model::Definition;
use tensor_core::{ByteOrder, ReadOptions};
use tensor_dtype::{Dtype, TensorContainer, TensorView};

/// A classic NetCDF file, borrowing its bytes.
#[derive(Clone, Debug)]
pub struct Classic<'a> {
    bytes: &'a [u8],
    header: Header,
    definition: Definition,
    layout: Layout,
    numrecs: u64,
    shapes: Vec<Vec<u64>>,
    dtypes: Vec<Dtype>,
}

impl<'a> Classic<'a> {
    /// Opens the classic file `bytes` with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens the classic file `bytes`: parses its header within `options.limits`, counts
    /// its records, and checks that every variable's data lies after the header and inside
    /// the file. With `options.strict`, also that every `vsize` is the one its shape gives.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let file_len = bytes.len() as u64;
        let header = header::parse(bytes, file_len, &options.limits)?;
        let layout = Layout::of(&header.definition)?;
        let first_record = (0..header.begin.len())
            .filter(|&i| layout.record[i])
            .map(|i| header.begin[i])
            .min();
        let numrecs = match (header.numrecs, first_record) {
            (Some(n), _) => n,
            (None, Some(start)) if layout.recsize > 0 => {
                file_len.saturating_sub(start) / layout.recsize
            }
            (None, _) => 0,
        };
        let mut definition = header.definition.clone();
        if let Some(d) = definition.dimensions.iter_mut().find(|d| d.unlimited) {
            d.len = numrecs;
        }
        let def = &definition;
        let mut shapes = Vec::with_capacity(def.variables.len());
        let mut dtypes = Vec::with_capacity(def.variables.len());
        for (i, v) in def.variables.iter().enumerate() {
            let begin = header.begin[i];
            if begin < header.len {
                return Err(Error::malformed(
                    format!("variable {:?}", v.name),
                    begin,
                    format!("its data begins inside the header ({} bytes)", header.len),
                ));
            }
            let extent = layout
                .extent(i, numrecs)
                .ok_or(tensor_core::Error::Overflow {
                    what: "NetCDF record offset",
                })?;
            if extent > 0 && begin.checked_add(extent).is_none_or(|end| end > file_len) {
                return Err(Error::DataPastEnd {
                    name: v.name.clone(),
                    offset: begin,
                    len: extent,
                    file_len,
                });
            }
            if options.strict {
                check_vsize(&header, &layout, i)?;
            }
            let shape = def.shape(i);
            tensor_dtype::shape::element_count(&shape)?;
            shapes.push(shape);
            dtypes.push(v.nc_type.dtype().unwrap_or(Dtype::Uint8));
        }
        let mut file = Classic {
            bytes,
            header,
            definition,
            layout,
            numrecs,
            shapes,
            dtypes,
        };
        // Booleans as xarray writes them: read as `bool` when every byte is 0 or 1.
        for i in 0..file.dtypes.len() {
            if crate::model::marked_bool(&file.definition.variables[i])
                && file.view_of(i)?.to_le_bytes().iter().all(|&b| b <= 1)
            {
                file.dtypes[i] = Dtype::Bool;
            }
        }
        Ok(file)
    }

    /// The version.
    #[must_use]
    pub fn version(&self) -> Version {
        self.header.version
    }

    /// Dimensions (the unlimited one's length the record count), attributes, variables.
    #[must_use]
    pub fn definition(&self) -> &Definition {
        &self.definition
    }

    /// The header as parsed (the unlimited dimension's length 0, as stored).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The layout of the data.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The number of records (stated, or counted from the file's length for a file written
    /// as a stream).
    #[must_use]
    pub fn numrecs(&self) -> u64 {
        self.numrecs
    }

    /// The byte range of variable `i`'s data in the file: all of it for a fixed-size
    /// variable, from its first record to the end of its last for a record variable.
    #[must_use]
    pub fn data_range(&self, i: usize) -> std::ops::Range<u64> {
        let begin = self.header.begin[i];
        // Checked when the file was opened: it lies in the file.
        let extent = self.layout.extent(i, self.numrecs).unwrap_or_default();
        begin..begin + extent
    }

    fn view_of(&self, i: usize) -> Result<TensorView<'a>> {
        let range = self.data_range(i);
        // Checked against the file's length when opened (a variable of no elements may begin
        // past the end of a file of no records).
        let data = if range.is_empty() {
            &[]
        } else {
            &self.bytes[range.start as usize..range.end as usize]
        };
        self.view_over(i, data)
    }

    /// Whether variable `i`'s elements lie contiguous in its [`data_range`](Self::data_range)
    /// (all but a record variable whose records others' slabs separate).
    #[must_use]
    pub fn is_contiguous(&self, i: usize) -> bool {
        !self.layout.record[i] || self.numrecs <= 1 || self.layout.recsize == self.layout.slab[i]
    }

    /// Variable `i` viewed over `data`, the bytes of its [`data_range`](Self::data_range)
    /// (fetched from a remote file, say): big-endian, a record variable's records a record
    /// apart.
    pub fn view_over<'b>(&self, i: usize, data: &'b [u8]) -> Result<TensorView<'b>> {
        let dtype = self.dtypes[i];
        let shape = &self.shapes[i];
        if !self.layout.record[i] || self.numrecs <= 1 {
            return Ok(TensorView::new(data, dtype, shape, ByteOrder::Big)?);
        }
        let mut strides =
            tensor_dtype::shape::byte_strides(shape, dtype.byte_width(), tensor_dtype::Order::C)?;
        strides[0] =
            i64::try_from(self.layout.recsize).map_err(|_| tensor_core::Error::Overflow {
                what: "NetCDF record size",
            })?;
        Ok(TensorView::strided(
            data,
            dtype,
            shape,
            &strides,
            0,
            ByteOrder::Big,
        )?)
    }
}

/// With `strict`: variable `i`'s stored `vsize` is its padded slab, or (CDF-1 and CDF-2)
/// the `2^32 - 1` a variable of 4 GiB or more is given.
fn check_vsize(header: &Header, layout: &Layout, i: usize) -> Result<()> {
    let stored = header.vsize[i];
    let want = layout.padded[i];
    let too_big = header.version != Version::Cdf5 && want > u64::from(u32::MAX) - 3;
    if stored == want || too_big && stored == u64::from(u32::MAX) {
        return Ok(());
    }
    Err(Error::malformed(
        format!("variable {:?}", header.definition.variables[i].name),
        0,
        format!("vsize {stored} where its shape gives {want}"),
    ))
}

impl<'a> TensorContainer<'a> for Classic<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.definition.variables.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.definition.variables[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.dtypes[i])
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.shapes[i])
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        self.view_of(i).map(Some)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        Ok(tensor_dtype::container::copy_native(
            &self.view_of(i)?,
            dst,
        )?)
    }
}
