//! GRIB as the format contract describes it: a file's fields as tensors, float64 values.

use crate::error::{Error, Result};
use crate::file::Grib;
use std::ops::Range;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Dtype, Format, FormatInfo, TensorContainer, TensorView};

/// GRIB editions 1 and 2, one tensor per field; written as GRIB 2.
#[derive(Clone, Copy, Debug)]
pub struct GribFormat;

impl Format for GribFormat {
    const INFO: FormatInfo = FormatInfo {
        id: "grib",
        name: "GRIB",
        extensions: &["grib2", "grib", "grb2", "grb", "grib1"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[tensor_dtype::WriteChoice::Packing],
        header_read_ahead: Some(crate::headers::HEADER_READ_AHEAD),
        header_reserve: 0,
        holds_attributes: true,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: false,
        any_tensor: false,
    };
    type Error = Error;
    type Reader<'a> = Grib<'a>;

    /// `GRIB`, then edition 1 or 2 at octet 8.
    fn recognise(head: &[u8]) -> bool {
        head.len() >= 8 && &head[..4] == b"GRIB" && matches!(head[7], 1 | 2)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Grib<'a>> {
        Grib::open_with(bytes, options)
    }

    /// Every message's headers, found message by message (there is no index): all but the
    /// GRIB 2 data sections' bodies (see the `headers` module).
    fn header_ranges(held: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
        Ok(crate::headers::header_ranges(held, limits)?)
    }
}

impl<'a> TensorContainer<'a> for Grib<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.fields().len()
    }

    /// By every key of the field's cube (`shortName`, level type and level, step, date and
    /// time, an ensemble member), the message number only where fields share all of them.
    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.names[i])
    }

    fn dtype(&self, _: usize) -> Result<Dtype> {
        Ok(Dtype::Float64)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.shapes[i])
    }

    /// Never: every field's values are packed.
    fn view(&self, _: usize) -> Result<Option<TensorView<'a>>> {
        Ok(None)
    }

    /// Decoded within the limits the file was opened with; missing points are NaN.
    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let field = &self.fields()[i];
        field.check_decode(&self.limits)?;
        if let Ok(values) = bytemuck::try_cast_slice_mut::<u8, f64>(dst) {
            return field.decode_into(self.bytes(), values);
        }
        let values = self.values(i, &self.limits)?;
        if dst.len() != values.len() * 8 {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "a buffer of {} bytes for {} float64 values",
                dst.len(),
                values.len()
            ))
            .into());
        }
        dst.copy_from_slice(bytemuck::cast_slice(&values));
        Ok(())
    }
}
