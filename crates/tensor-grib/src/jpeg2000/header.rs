//! The codestream's markers (T.800 Annex A): the image and tile sizes, coding style and
//! quantization of the main header, what tile-part headers override, and each tile's
//! packet data.

use super::Refusal;
use super::rect::Rect;

/// Coding style of the component (COD's `SPcod`, or COC's `SPcoc`).
#[derive(Clone, Debug)]
pub(super) struct Style {
    pub levels: u8,
    /// Code-block width and height exponents (2..=10 each, at most 12 together).
    pub block: (u8, u8),
    pub block_coding: u8,
    pub reversible: bool,
    /// Precinct exponents (x, y) per resolution, 15 when the default is used.
    pub precincts: Vec<(u8, u8)>,
}

/// The tile's packet order and marker use (COD's `Scod` and `SGcod`).
#[derive(Clone, Debug)]
pub(super) struct Order {
    pub sop: bool,
    pub eph: bool,
    pub progression: u8,
    pub layers: u16,
}

/// Quantization (QCD or QCC): guard bits and one (exponent, mantissa) per sub-band, or one
/// for the LL band from which the others are derived.
#[derive(Clone, Debug)]
pub(super) struct Quantization {
    pub guard: u8,
    pub derived: bool,
    pub steps: Vec<(u8, u16)>,
}

/// Coding parameters that may be set in the main header and overridden per tile.
#[derive(Clone, Debug, Default)]
pub(super) struct Parameters {
    pub cod: Option<(Order, Style)>,
    pub coc: Option<Style>,
    pub qcd: Option<Quantization>,
    pub qcc: Option<Quantization>,
}

impl Parameters {
    /// The parameters a tile uses: its own markers before the main header's, and the
    /// component-specific marker before the default one at each level.
    pub(super) fn resolve(
        &self,
        main: &Parameters,
    ) -> Result<(Order, Style, Quantization), Refusal> {
        let order = self
            .cod
            .as_ref()
            .or(main.cod.as_ref())
            .map(|(o, _)| o.clone())
            .ok_or_else(|| Refusal::malformed("no COD marker"))?;
        let style = self
            .coc
            .clone()
            .or_else(|| self.cod.as_ref().map(|(_, s)| s.clone()))
            .or_else(|| main.coc.clone())
            .or_else(|| main.cod.as_ref().map(|(_, s)| s.clone()))
            .ok_or_else(|| Refusal::malformed("no COD marker"))?;
        let quant = self
            .qcc
            .clone()
            .or_else(|| self.qcd.clone())
            .or_else(|| main.qcc.clone())
            .or_else(|| main.qcd.clone())
            .ok_or_else(|| Refusal::malformed("no QCD marker"))?;
        Ok((order, style, quant))
    }
}

/// The image and tile grid (SIZ), for one component sampled on every grid point.
#[derive(Clone, Debug)]
pub(super) struct Size {
    /// The image area on the reference grid.
    pub image: Rect,
    /// The tile grid's origin and tile size.
    pub tile_x0: u32,
    pub tile_y0: u32,
    pub tile_w: u32,
    pub tile_h: u32,
    pub depth: u8,
    pub signed: bool,
}

impl Size {
    pub(super) fn tiles_across(&self) -> u32 {
        (self.image.x1 - self.tile_x0).div_ceil(self.tile_w)
    }

    pub(super) fn tiles_down(&self) -> u32 {
        (self.image.y1 - self.tile_y0).div_ceil(self.tile_h)
    }

    /// Tile `t`'s area on the reference grid, clipped to the image.
    pub(super) fn tile_area(&self, t: u32) -> Rect {
        let (p, q) = (t % self.tiles_across(), t / self.tiles_across());
        let image = &self.image;
        let x0 = (u64::from(self.tile_x0) + u64::from(p) * u64::from(self.tile_w))
            .max(u64::from(image.x0));
        let y0 = (u64::from(self.tile_y0) + u64::from(q) * u64::from(self.tile_h))
            .max(u64::from(image.y0));
        let x1 = (u64::from(self.tile_x0) + u64::from(p + 1) * u64::from(self.tile_w))
            .min(u64::from(image.x1));
        let y1 = (u64::from(self.tile_y0) + u64::from(q + 1) * u64::from(self.tile_h))
            .min(u64::from(image.y1));
        // Clipped to the image, whose bounds are u32.
        Rect {
            x0: x0 as u32,
            y0: y0 as u32,
            x1: x1 as u32,
            y1: y1 as u32,
        }
    }
}

/// One tile's parameters and its packet data, in tile-part order.
pub(super) struct TileStream<'a> {
    pub parameters: Parameters,
    pub parts: Vec<&'a [u8]>,
}

/// A parsed codestream: the main header and every tile's packet data.
pub(super) struct Codestream<'a> {
    pub size: Size,
    pub main: Parameters,
    pub tiles: Vec<TileStream<'a>>,
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Refusal> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                Refusal::malformed(format!("{what} at byte {} runs past the end", self.pos))
            })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Refusal> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &str) -> Result<u16, Refusal> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, Refusal> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A marker segment's body: its length field counts itself.
    fn segment(&mut self, marker: u16) -> Result<&'a [u8], Refusal> {
        let at = self.pos;
        let length = self.u16("a marker segment's length")?;
        if length < 2 {
            return Err(Refusal::malformed(format!(
                "marker 0x{marker:04X} at byte {at} has length {length}"
            )));
        }
        self.take(usize::from(length) - 2, "a marker segment")
    }
}

const SOC: u16 = 0xFF4F;
const SIZ: u16 = 0xFF51;
const COD: u16 = 0xFF52;
const COC: u16 = 0xFF53;
const TLM: u16 = 0xFF55;
const PLM: u16 = 0xFF57;
const PLT: u16 = 0xFF58;
const QCD: u16 = 0xFF5C;
const QCC: u16 = 0xFF5D;
const CRG: u16 = 0xFF63;
const COM: u16 = 0xFF64;
const SOT: u16 = 0xFF90;
const SOD: u16 = 0xFF93;
const EOC: u16 = 0xFFD9;

/// Reads the codestream's markers. Anything this decoder does not follow (several
/// components, sub-sampling, progression changes, packed headers, regions of interest,
/// Part 2 and Part 15 capabilities) is refused as unsupported.
/// `samples` is how many samples the image must have; it bounds everything allocated.
pub(super) fn parse(data: &[u8], samples: usize) -> Result<Codestream<'_>, Refusal> {
    // The image is `samples` samples, and every tile could have a tile-part in the bytes
    // there are: the same clearance any decoder gets.
    clearance(data, samples)?;
    let mut c = Cursor { data, pos: 0 };
    if c.u16("SOC")? != SOC {
        return Err(Refusal::malformed("no SOC marker"));
    }
    if c.u16("SIZ")? != SIZ {
        return Err(Refusal::malformed("no SIZ marker after SOC"));
    }
    let size = size(c.segment(SIZ)?)?;
    let mut main = Parameters::default();
    let tile_count = u64::from(size.tiles_across()) * u64::from(size.tiles_down());
    // Every tile has at least one sample: the count is bounded by the image.
    let mut tiles: Vec<TileStream<'_>> = (0..tile_count)
        .map(|_| TileStream {
            parameters: Parameters::default(),
            parts: Vec::new(),
        })
        .collect();
    loop {
        let at = c.pos;
        let marker = c.u16("a main header marker")?;
        if marker == SOT {
            break;
        }
        let body = c.segment(marker)?;
        parameter(&mut main, marker, body, at)?;
    }
    // Tile-parts, each from its SOT to the next.
    let mut sot = c.pos - 2;
    loop {
        let body = c.segment(SOT)?;
        let mut b = Cursor { data: body, pos: 0 };
        let index = b.u16("Isot")?;
        let length = b.u32("Psot")?;
        let end = if length == 0 {
            // The last tile-part runs to the end of the codestream.
            let end = data.len();
            if data.ends_with(&EOC.to_be_bytes()) {
                end - 2
            } else {
                end
            }
        } else {
            sot.checked_add(length as usize)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| {
                    Refusal::malformed(format!(
                        "tile-part at byte {sot} is {length} bytes long, past the codestream's end"
                    ))
                })?
        };
        let tile = tiles.get_mut(usize::from(index)).ok_or_else(|| {
            Refusal::malformed(format!(
                "tile-part at byte {sot} names tile {index} of {tile_count}"
            ))
        })?;
        loop {
            let at = c.pos;
            if at >= end {
                return Err(Refusal::malformed(format!(
                    "tile-part at byte {sot} has no SOD"
                )));
            }
            let marker = c.u16("a tile-part header marker")?;
            if marker == SOD {
                break;
            }
            let body = c.segment(marker)?;
            parameter(&mut tile.parameters, marker, body, at)?;
        }
        if c.pos > end {
            return Err(Refusal::malformed(format!(
                "tile-part at byte {sot} ends inside its header"
            )));
        }
        tile.parts.push(&data[c.pos..end]);
        c.pos = end;
        if c.pos + 2 > data.len() {
            break;
        }
        match c.u16("the marker after a tile-part")? {
            SOT => sot = c.pos - 2,
            EOC => break,
            other => {
                return Err(Refusal::malformed(format!(
                    "marker 0x{other:04X} at byte {} where SOT or EOC belongs",
                    c.pos - 2
                )));
            }
        }
    }
    // Every tile has at least one tile-part (T.800 A.4.2): a tile without one is a
    // codestream whose image and tile sizes (SIZ) are not the ones its packets were coded
    // for, or one cut short.
    if let Some(t) = tiles.iter().position(|t| t.parts.is_empty()) {
        return Err(Refusal::malformed(format!(
            "tile {t} of the {tile_count} its image and tile sizes make has no tile-part"
        )));
    }
    Ok(Codestream { size, main, tiles })
}

/// The SIZ segment's fields up to the component count, as written.
struct SizFields {
    capabilities: u16,
    x1: u32,
    y1: u32,
    x0: u32,
    y0: u32,
    tile_w: u32,
    tile_h: u32,
    left: u32,
    top: u32,
    components: u16,
}

impl SizFields {
    /// Reads them from the start of the segment's body; `b` is left at the first
    /// component's Ssiz.
    fn read(b: &mut Cursor<'_>) -> Result<Self, Refusal> {
        Ok(SizFields {
            capabilities: b.u16("Rsiz")?,
            x1: b.u32("Xsiz")?,
            y1: b.u32("Ysiz")?,
            x0: b.u32("XOsiz")?,
            y0: b.u32("YOsiz")?,
            tile_w: b.u32("XTsiz")?,
            tile_h: b.u32("YTsiz")?,
            left: b.u32("XTOsiz")?,
            top: b.u32("YTOsiz")?,
            components: b.u16("Csiz")?,
        })
    }
}

/// What any decoder may be handed: a codestream that starts with SOC and SIZ, whose image
/// is exactly `samples` samples, and whose tiles could each have a tile-part in the bytes
/// there are — so that no decoder, ours ([`parse`] starts here) or another, sizes its work
/// by a header the data cannot back.
pub(super) fn clearance(data: &[u8], samples: usize) -> Result<(), Refusal> {
    let mut c = Cursor { data, pos: 0 };
    if c.u16("SOC")? != SOC || c.u16("SIZ")? != SIZ {
        return Err(Refusal::malformed("no SOC and SIZ markers"));
    }
    let mut b = Cursor {
        data: c.segment(SIZ)?,
        pos: 0,
    };
    let f = SizFields::read(&mut b)?;
    let (x0, y0, x1, y1, left, top) = (f.x0, f.y0, f.x1, f.y1, f.left, f.top);
    let (tile_w, tile_h, components) = (f.tile_w, f.tile_h, u64::from(f.components));
    if x0 >= x1 || y0 >= y1 || tile_w == 0 || tile_h == 0 || left > x0 || top > y0 {
        return Err(Refusal::malformed(
            "an empty image or a tile grid that does not cover it",
        ));
    }
    let (width, height) = (u64::from(x1 - x0), u64::from(y1 - y0));
    if width * height != samples as u64 {
        return Err(Refusal::malformed(format!(
            "the image is {width}×{height} samples, {samples} values are packed"
        )));
    }
    let across = (u64::from(x1) - u64::from(left)).div_ceil(u64::from(tile_w));
    let down = (u64::from(y1) - u64::from(top)).div_ceil(u64::from(tile_h));
    // Each tile needs a tile-part of at least an SOT segment and an SOD marker.
    let tiles = across * down;
    if tiles.saturating_mul(components.max(1)) > (data.len() / 14) as u64 {
        return Err(Refusal::malformed(format!(
            "{tiles} tiles of {components} components in a codestream of {} bytes",
            data.len()
        )));
    }
    Ok(())
}

fn size(body: &[u8]) -> Result<Size, Refusal> {
    let mut b = Cursor { data: body, pos: 0 };
    let SizFields {
        capabilities,
        x1,
        y1,
        x0,
        y0,
        tile_w,
        tile_h,
        left,
        top,
        components,
    } = SizFields::read(&mut b)?;
    if capabilities & 0x4000 != 0 || capabilities & 0x8000 != 0 {
        return Err(Refusal::unsupported("Part 2 or Part 15 capabilities"));
    }
    if components != 1 {
        return Err(Refusal::unsupported(format!("{components} components")));
    }
    let (ssiz, xr, yr) = (b.u8("Ssiz")?, b.u8("XRsiz")?, b.u8("YRsiz")?);
    if xr != 1 || yr != 1 {
        return Err(Refusal::unsupported("a sub-sampled component"));
    }
    let depth = (ssiz & 0x7F) + 1;
    if x0 >= x1 || y0 >= y1 {
        return Err(Refusal::malformed(format!(
            "an empty image ({x0}..{x1} × {y0}..{y1})"
        )));
    }
    if tile_w == 0 || tile_h == 0 || left > x0 || top > y0 {
        return Err(Refusal::malformed(
            "a tile grid that does not cover the image",
        ));
    }
    if u64::from(left) + u64::from(tile_w) <= u64::from(x0)
        || u64::from(top) + u64::from(tile_h) <= u64::from(y0)
    {
        return Err(Refusal::malformed("a first tile outside the image"));
    }
    if depth > 30 {
        return Err(Refusal::unsupported(format!("samples of {depth} bits")));
    }
    Ok(Size {
        image: Rect { x0, y0, x1, y1 },
        tile_x0: left,
        tile_y0: top,
        tile_w,
        tile_h,
        depth,
        signed: ssiz & 0x80 != 0,
    })
}

/// Applies one main or tile-part header marker segment to `p`.
fn parameter(p: &mut Parameters, marker: u16, body: &[u8], at: usize) -> Result<(), Refusal> {
    let mut b = Cursor { data: body, pos: 0 };
    match marker {
        COD => {
            let scod = b.u8("Scod")?;
            let order = Order {
                sop: scod & 0x02 != 0,
                eph: scod & 0x04 != 0,
                progression: b.u8("the progression order")?,
                layers: b.u16("the number of layers")?,
            };
            let _mct = b.u8("the multiple component transform")?;
            if order.progression > 4 {
                return Err(Refusal::malformed(format!(
                    "progression order {}",
                    order.progression
                )));
            }
            if order.layers == 0 {
                return Err(Refusal::malformed("zero quality layers"));
            }
            let style = style(&mut b, scod & 0x01 != 0)?;
            p.cod = Some((order, style));
        }
        COC => {
            let _component = b.u8("Ccoc")?;
            let scoc = b.u8("Scoc")?;
            p.coc = Some(style(&mut b, scoc & 0x01 != 0)?);
        }
        QCD => p.qcd = Some(quantization(&mut b)?),
        QCC => {
            let _component = b.u8("Cqcc")?;
            p.qcc = Some(quantization(&mut b)?);
        }
        TLM | PLM | PLT | CRG | COM => {}
        other => {
            return Err(Refusal::unsupported(format!(
                "marker 0x{other:04X} at byte {at}"
            )));
        }
    }
    Ok(())
}

fn style(b: &mut Cursor<'_>, custom_precincts: bool) -> Result<Style, Refusal> {
    let levels = b.u8("the number of decomposition levels")?;
    let (xcb, ycb) = (
        b.u8("the code-block width")?,
        b.u8("the code-block height")?,
    );
    let block_style = b.u8("the code-block style")?;
    let transform = b.u8("the wavelet transform")?;
    if levels > 32 {
        return Err(Refusal::malformed(format!("{levels} decomposition levels")));
    }
    if xcb > 8 || ycb > 8 || xcb + ycb > 8 {
        return Err(Refusal::malformed(format!(
            "code-blocks of 2^{} × 2^{}",
            u32::from(xcb) + 2,
            u32::from(ycb) + 2
        )));
    }
    if block_style & super::block::UNSUPPORTED_STYLES != 0 {
        return Err(Refusal::unsupported(format!(
            "code-block style 0x{block_style:02X}"
        )));
    }
    if transform > 1 {
        return Err(Refusal::unsupported(format!(
            "wavelet transform {transform}"
        )));
    }
    let precincts = (0..=levels)
        .map(|r| {
            if custom_precincts {
                let v = b.u8("a precinct size")?;
                let (x, y) = (v & 0x0F, v >> 4);
                if r > 0 && (x == 0 || y == 0) {
                    return Err(Refusal::malformed(
                        "a precinct of width or height 1 above resolution 0",
                    ));
                }
                Ok((x, y))
            } else {
                Ok((15, 15))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Style {
        levels,
        block: (xcb + 2, ycb + 2),
        block_coding: block_style,
        reversible: transform == 1,
        precincts,
    })
}

fn quantization(b: &mut Cursor<'_>) -> Result<Quantization, Refusal> {
    let s = b.u8("Sqcd")?;
    let guard = s >> 5;
    let mut steps = Vec::new();
    match s & 0x1F {
        0 => {
            while b.pos < b.data.len() {
                steps.push((b.u8("an exponent")? >> 3, 0));
            }
        }
        1 | 2 => {
            while b.pos + 1 < b.data.len() {
                let v = b.u16("a step size")?;
                steps.push(((v >> 11) as u8, v & 0x7FF));
            }
        }
        other => return Err(Refusal::malformed(format!("quantization style {other}"))),
    }
    if steps.is_empty() {
        return Err(Refusal::malformed(
            "a quantization marker without step sizes",
        ));
    }
    Ok(Quantization {
        guard,
        derived: s & 0x1F == 1,
        steps,
    })
}
