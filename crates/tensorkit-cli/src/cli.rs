//! Command-line arguments.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Read, check and convert tensor files: safetensors today, every tensorkit format as they land.
#[derive(Debug, Parser)]
#[command(name = "tensorkit", version, about, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Largest number of bytes one tensor may decode to, e.g. `8GiB`, `500MB` or `1000000`
    /// (default: half of this machine's physical memory). Raise it for files that
    /// legitimately need more; the limit protects against files that only claim to.
    #[arg(long, global = true, value_name = "BYTES", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Largest ratio of decoded to stored bytes accepted for any tensor. By default 32768
    /// (zstd's own ceiling) beyond the first 64 MiB, which any tensor may decode to whatever
    /// its size (a constant field stores no values); given, it applies from the first byte.
    /// It bounds the time and memory a small file can ask for.
    #[arg(long, global = true, value_name = "RATIO")]
    pub max_ratio: Option<u64>,
    /// Threads that decode, encode, compress and copy in parallel (default: one per core).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Report on standard error what reading URLs cost: requests made and bytes received.
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// Sync every file written to disk before renaming it into place (fsync), so that it
    /// survives a power failure once the command returns. Without it, a file still appears
    /// under its name only when complete, and the kernel writes it back in its own time,
    /// as after `cp`.
    #[arg(long, global = true)]
    pub fsync: bool,
    /// The longest one operation on a URL may take, in seconds, every request and retry in
    /// it together: opening and listing the object, or one read of tensor bytes (default
    /// 60). Whatever it is, a request that receives nothing for 20 s fails and is retried,
    /// at most 3 times.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
}

/// A positive number of seconds (`30`, `2.5`).
///
/// # Errors
/// When `text` is not a positive, finite number of seconds.
pub fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{text:?} is not a positive number of seconds"))
}

impl Cli {
    /// The options URLs are read with: the library's, with `--timeout` as the deadline of
    /// each operation.
    #[must_use]
    pub fn remote_options(&self) -> tensorkit::remote::RemoteOptions {
        let mut o = tensorkit::remote::RemoteOptions::default();
        if let Some(t) = self.timeout {
            o.deadline = t;
        }
        o
    }

    /// The limits every file is read with: the defaults, raised or lowered by
    /// `--max-memory` and `--max-ratio`.
    #[must_use]
    pub fn limits(&self) -> tensor_core::Limits {
        let mut l = tensor_core::Limits::default();
        if let Some(m) = self.max_memory {
            l = l.with_max_total_bytes(m);
        }
        if let Some(r) = self.max_ratio {
            l = l
                .with_max_decompression_ratio(r)
                .with_expansion_allowance(0);
        }
        l
    }

    /// What a written file's commit waits for: the disk with `--fsync`, nothing more
    /// otherwise.
    #[must_use]
    pub fn durability(&self) -> tensorkit::Durability {
        tensorkit::Durability::synced_if(self.fsync)
    }
}

/// A byte count as `--max-memory` and `--max-size` take it ([`tensor_core::size::parse`]).
pub fn parse_size(text: &str) -> Result<u64, String> {
    tensorkit::bytes::size::parse(text).map_err(|e| match e {
        tensorkit::bytes::Error::InvalidArgument(why) => why,
        other => other.to_string(),
    })
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show a file's format, metadata and tensors (format detected from the content).
    Inspect {
        /// The file to read.
        file: PathBuf,
        /// Print one JSON object instead of a table: format, metadata, and per tensor the
        /// name, dtype, shape, SHA-256 of the little-endian elements and the first values.
        #[arg(long)]
        json: bool,
    },
    /// One line per tensor: name, dtype, shape, bytes, and where it sits (Tensogram's message
    /// and object), tab-separated; or, with `-p`, the values of chosen metadata keys.
    Ls {
        /// The file to read.
        file: PathBuf,
        /// Only tensors whose metadata matches: `KEY=V1/V2` (any of the values) or
        /// `KEY!=V1/V2` (none of them); a dotted key walks into maps (`mars.param=2t`). The
        /// tensor's own attributes are looked in first, then the file's metadata.
        /// Repeatable: every clause must hold.
        #[arg(short = 'w', long = "where", value_name = "KEY=VALUE")]
        clauses: Vec<String>,
        /// Print these keys' values (comma-separated), one column each, under a header line.
        #[arg(
            short = 'p',
            long = "print",
            value_name = "KEYS",
            value_delimiter = ','
        )]
        keys: Vec<String>,
        /// One JSON array instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Print one tensor's values (a row of the last dimension per line), or write it to a
    /// NumPy `.npy` file with `-o`.
    Get {
        /// The file to read.
        file: PathBuf,
        /// The tensor: its name, `tensor_<i>` for unnamed ones, or `#<i>` for the i-th. May
        /// be left out when `-w` picks exactly one tensor.
        #[arg(required_unless_present = "clauses")]
        name: Option<String>,
        /// Pick the tensor by its metadata, as `ls -w` does (exactly one may match).
        #[arg(short = 'w', long = "where", value_name = "KEY=VALUE")]
        clauses: Vec<String>,
        /// Write a `.npy` file here instead of printing.
        #[arg(short, long, value_name = "OUT.npy")]
        output: Option<PathBuf>,
        /// A GGUF quantized tensor's stored blocks (`uint8`, the last dimension in bytes)
        /// rather than its values dequantized to float32.
        #[arg(long)]
        raw: bool,
    },
    /// Rewrite a Tensogram file of wire version 2 (tensogram 0.14 to 0.16, which tensogram
    /// 0.19 and later refuse) as version 3: payloads, descriptors and metadata kept as they
    /// are, every version 2 hash checked first.
    Migrate {
        /// The version 2 file.
        input: PathBuf,
        /// The version 3 file to write.
        output: PathBuf,
    },
    /// What this build is and can do: version and target, the formats it reads and writes,
    /// every Tensogram codec and whether it was compiled in, remote reads and threads; then
    /// a self-test that encodes and decodes through every codec it has. Exit 1 when a
    /// self-test round trip fails.
    Doctor {
        /// One JSON object instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum and hash the file carries; exit 2 on a mismatch.
    Verify {
        /// The file to check.
        file: PathBuf,
    },
    /// Compare two files tensor by tensor (across formats), by name. Exit 0 when every
    /// tensor matches, 1 when something differs.
    Diff {
        /// The first file.
        a: PathBuf,
        /// The second file.
        b: PathBuf,
        /// Largest absolute difference still counted as equal (for lossy pipelines).
        #[arg(long, default_value_t = 0.0)]
        tolerance: f64,
    },
    /// Copy the tensors whose metadata matches `-w` into OUTPUT, or split them into files
    /// named by their keys: `'out_[mars.param]_[mars.step].tgm'`. Tensogram into Tensogram
    /// copies whole messages byte for byte (a message goes when one of its objects matches);
    /// another output format converts. Each output is written whole, then renamed into place.
    Copy {
        /// The file to read.
        input: PathBuf,
        /// The file to write, or a template: `[KEY]` is each tensor's (message's) value for
        /// KEY, made safe as one path component (`unknown` where there is none).
        output: String,
        /// Only what matches: `KEY=V1/V2` or `KEY!=V1/V2`, as for `ls`. Repeatable.
        #[arg(short = 'w', long = "where", value_name = "KEY=VALUE")]
        clauses: Vec<String>,
        /// The output format and Tensogram pipeline.
        #[command(flatten)]
        target: Target,
    },
    /// Write a Tensogram file's messages again with their index and metadata up front (a
    /// streamed message becomes one a reader lists from its first bytes), optionally
    /// regrouped and reordered by metadata keys. Nothing is decoded: each object is framed
    /// as it is, its stored hash checked first.
    Reshuffle {
        /// The Tensogram file to read.
        input: PathBuf,
        /// The file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Put objects with the same values for these keys (comma-separated) into one
        /// message, in the order each group first appears; `_extra_` keys the grouped
        /// messages disagree on move into their objects' `base` entries.
        #[arg(long, value_name = "KEYS", value_delimiter = ',')]
        group_by: Vec<String>,
        /// Order the messages by these keys' values (comma-separated): numbers by value, the
        /// rest as text, a missing value last; ties keep file order.
        #[arg(long, value_name = "KEYS", value_delimiter = ',')]
        sort_by: Vec<String>,
    },
    /// Put every tensor of several files into one (names must not repeat; unnamed Tensogram
    /// objects stay unnamed).
    Merge {
        /// The files to read (a directory `split` wrote stands for its parts, in order).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// A file metadata key the inputs give different values: `error` refuses, naming
        /// it; `first` keeps the first input's value (tensogram's `merge` default); `last`
        /// the last one's.
        #[arg(short = 's', long, value_enum, default_value_t = MergeStrategy::Error)]
        strategy: MergeStrategy,
        /// The output format and Tensogram pipeline.
        #[command(flatten)]
        target: Target,
        /// No progress bar (it is shown only on a terminal, for more than 64 MiB of tensors).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Write every tensor of a file to a file of its own in a directory, with a Hugging Face
    /// index of them (`DIR/<stem>.<ext>.index.json`) that opens as the whole file; or, with
    /// `--max-tensors` or `--max-size`, a GGUF file as a split set of shards, as llama.cpp's
    /// `gguf-split` cuts and names them (`DIR/<stem>-00001-of-0000N.gguf`, the metadata in
    /// the first).
    Split {
        /// The file to read.
        input: PathBuf,
        /// The directory to write into (created if missing).
        #[arg(short, long, value_name = "DIR")]
        out_dir: PathBuf,
        /// GGUF shards of at most this many tensors (gguf-split's default is 128).
        #[arg(long, value_name = "N", conflicts_with = "max_size")]
        max_tensors: Option<usize>,
        /// GGUF shards of at most this much tensor data (`2G`, `500M`).
        #[arg(long, value_name = "BYTES", value_parser = parse_size)]
        max_size: Option<u64>,
        /// The output format and Tensogram pipeline.
        #[command(flatten)]
        target: Target,
    },
    /// Convert a tensor file to another format, keeping names, dtypes, shapes, values and
    /// metadata; anything the target cannot hold is an error that names it.
    Convert {
        /// The file to read (any supported format, detected from its content).
        input: PathBuf,
        /// The file to write.
        output: PathBuf,
        /// The output format and Tensogram pipeline.
        #[command(flatten)]
        target: Target,
        /// Write a shard set instead of one file: shards of at most this much tensor data
        /// (e.g. `5GB`) named `<stem>-00001-of-0000N.<ext>` beside OUTPUT, and
        /// `OUTPUT.index.json`, in the Hugging Face layout.
        #[arg(long, value_name = "BYTES", value_parser = parse_size)]
        max_shard_size: Option<u64>,
        /// No progress bar (it is shown only on a terminal, for more than 64 MiB of tensors).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Change a file's metadata, tensor names or tensor attributes without rewriting its
    /// tensors: in place when the new header fits where the old one was (safetensors,
    /// GGUF), otherwise as a copy renamed into place, the tensors' bytes copied by the
    /// kernel. The file is read back before the command returns; a killed edit leaves the
    /// old file or the new one, never a mix.
    Edit {
        /// The file to edit.
        file: PathBuf,
        /// Set a metadata key: `KEY=VALUE` sets a string (or, for a GGUF key that exists,
        /// a value of its type); `KEY:TYPE=VALUE` sets a typed value, TYPE being `str`,
        /// `int`, `float`, `bool`, `json` (VALUE is JSON), or a GGUF type (`UINT32`,
        /// `FLOAT32`, `ARRAY[STRING]`..., VALUE as JSON); a suffix that names no type is
        /// part of the key. Repeatable.
        #[arg(long = "set", value_name = "KEY[:TYPE]=VALUE")]
        set: Vec<String>,
        /// Remove a metadata key. Repeatable.
        #[arg(long, value_name = "KEY")]
        delete: Vec<String>,
        /// Rename a tensor. Repeatable.
        #[arg(long, value_name = "OLD=NEW")]
        rename: Vec<String>,
        /// Set a tensor attribute (zTensor, Tensogram), typed as `--set` is:
        /// `TENSOR:KEY=VALUE` or `TENSOR:KEY:TYPE=VALUE`. Repeatable.
        #[arg(long = "attr", value_name = "TENSOR:KEY[:TYPE]=VALUE")]
        attr: Vec<String>,
        /// Edits from a JSON file: `{"metadata": {...}, "types": {...}, "delete": [...],
        /// "rename": {...}, "attributes": {"TENSOR": {...}}}`, applied before the options.
        #[arg(long, value_name = "EDITS.json")]
        from_json: Option<PathBuf>,
        /// Print what would change and whether it fits in place; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Check a file: its structure, metadata and every stored hash or checksum. Exits 0
    /// when the file is sound, 2 with the list of problems otherwise.
    Validate {
        /// The file to check.
        file: PathBuf,
        /// How deep to go (Tensogram): quick (structure), default (and metadata), checksum
        /// (and every hash), full (and decode every object).
        #[arg(long, value_enum, default_value_t = ValidateLevel::Full)]
        level: ValidateLevel,
        /// Also report CBOR that is not in canonical form (Tensogram).
        #[arg(long)]
        canonical: bool,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read or write stdlib-js ndarray meta data (the record `@stdlib/ndarray` serializes).
    #[command(subcommand)]
    StdlibMeta(StdlibMetaCommand),
    /// Write an embedded data set in every supported format, read it back, compare, and print
    /// sizes and throughput.
    Demo {
        /// Keep the files in this directory instead of a temporary one.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Use tiny tensors (a 10° grid): the data set behind the golden files.
        #[arg(long)]
        small: bool,
    },
}

/// What to write (`convert`, `merge`, `split`).
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The output format, as `inspect --json` names it (safetensors, bintensors,
    /// bintensors-legacy, ztensor-0.1, ztensor-2, tensogram). By default it follows the
    /// output's extension (`.zt`: zTensor 2, the generation current ztensor reads; `split`:
    /// the input's format).
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
    /// Tensogram output: the stages applied to every tensor, e.g.
    /// `simple_packing:16,szip`, `shuffle,zstd:3`, `shuffle,blosc2:lz4:5` or
    /// `zfp:accuracy:1e-4` or `sz3:abs:1e-4` (stages that do not fit a tensor's dtype are
    /// skipped for it). By default (`keep`) packed GRIB fields keep their packing and
    /// everything else is stored as it is; `none` stores every tensor as it is. GRIB output:
    /// the packing every field is packed with — `simple`, `simple:BITS`, `ccsds`,
    /// `ccsds:BITS`, `ieee`, `ieee64` — every other section kept as it is (by default each
    /// field read from GRIB keeps its own packing). NetCDF output: the format and its
    /// filters — `classic`, `64bit-offset`, `cdf5`, `netcdf4`, `netcdf4-classic`, and for
    /// NetCDF-4 `shuffle`, `deflate[:LEVEL]`, `fletcher32` (e.g. `netcdf4,shuffle,deflate:4`;
    /// by default a file read from NetCDF keeps its format, anything else is NetCDF-3).
    #[arg(long, value_name = "STAGES")]
    pub pipeline: Option<String>,
    /// Tensogram output: how tensors are grouped into messages, as tensogram's
    /// `convert-netcdf --split-by` groups them — `file` (all in one message, the default),
    /// `variable` (one message per tensor) or `record` (one per record of a NetCDF file's
    /// unlimited dimension: each record variable's record, with the variables that have no
    /// record dimension).
    #[arg(long, value_name = "MODE", default_value = "file")]
    pub split_by: String,
    /// What to do with tensors that share a name (e.g. a Tensogram file holding the same
    /// message twice): refuse the conversion naming them (`error`), or keep them apart by
    /// suffixing every repeat with `~m<message>` (Tensogram) or `~<n>`, the n-th repeat
    /// (`suffix`).
    #[arg(long, value_enum, default_value_t = Duplicates::Error)]
    pub duplicates: Duplicates,
    /// Tensogram output only: also write what only tensorkit reads — simple packing of
    /// float32, szip after packing to widths other than 8/16/24/32 bits — and keep NaN and
    /// ±Inf bit for bit in lossless objects (NaN payloads included), which tensogram decodes
    /// but its full validation flags (`nan_detected`). Without it, every file opens in
    /// tensogram and passes its validation: the stages it cannot read are left out (and
    /// listed), and NaN and ±Inf are stored in tensogram's masks.
    #[arg(long)]
    pub allow_extensions: bool,
    /// Tensogram output only: store every NaN as tensogram's masks give it back, the
    /// canonical quiet NaN. Without it, a NaN with its sign bit set or another payload is an
    /// error that names its tensor and element, since the masks would change its bits.
    #[arg(long, conflicts_with = "allow_extensions")]
    pub canonical_nan: bool,
    /// zTensor 2 output only: start every tensor's data at a multiple of this many bytes
    /// (a power of two of at least 4096, e.g. `2MiB` for huge-page-aligned mappings;
    /// default 64 KiB). Other formats fix their layout and refuse it.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub alignment: Option<u64>,
    /// safetensors and GGUF output: leave room for this many more bytes of header (e.g.
    /// `64KiB`), so that later `tensorkit edit`s of the metadata fit in place instead of
    /// copying the file. safetensors pads its JSON header with spaces, GGUF keeps the room
    /// in a `tensorkit.padding` string; every reader accepts both. By default 4KiB in
    /// safetensors (spaces every reader skips) and none in GGUF (its room is a key readers
    /// list); `0` writes the bytes the reference writers write.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub header_reserve: Option<u64>,
    /// GGUF output only: quantize the weight matrices (floating-point tensors of two or more
    /// dimensions whose rows are whole blocks) to this ggml type — `Q8_0`, `Q5_1`, `Q5_0`,
    /// `Q4_1` or `Q4_0` byte for byte as gguf-py quantizes, `Q6_K` or `Q4_K` as ggml's
    /// reference quantizers do (llama-quantize without an importance matrix, built without
    /// fused multiply-adds); the other tensors are kept as
    /// they are.
    #[arg(long, value_name = "TYPE")]
    pub quantize: Option<String>,
    /// What a GGUF quantized tensor becomes: `float32` (gguf-py's values, the default),
    /// `float16` or `bfloat16` (those values rounded), or `raw` — its blocks as `uint8`, the
    /// last dimension in bytes, each tensor's ggml type and shape recorded in the metadata
    /// under `gguf.raw_blocks` (converted back to GGUF, they are those blocks again).
    #[arg(long, value_name = "AS", value_parser = ["float32", "float16", "bfloat16", "raw"])]
    pub dequantize: Option<String>,
    /// Unpack CF's packed variables (NetCDF input, or files converted from NetCDF):
    /// `scale_factor` and `add_offset` applied, values equal to `_FillValue` or
    /// `missing_value` or outside the valid range as NaN, those attributes dropped. The
    /// floats are float32 where the scale and offset are and the integers have at most 16
    /// bits, float64 otherwise. Without it, packed integers are kept as they are, losslessly.
    #[arg(long)]
    pub unpack: bool,
}

impl Target {
    /// The library's options for writing `target` as these arguments ask, committed with
    /// `durability` (no shard set, no progress: the commands that have them add them).
    pub fn write_options(
        &self,
        target: tensorkit::Format,
        durability: tensorkit::Durability,
    ) -> crate::error::Result<tensorkit::WriteOptions> {
        let quantize = match &self.quantize {
            None => None,
            Some(name) => Some(tensorkit::gguf::GgmlType::from_name(name).ok_or_else(|| {
                tensorkit::Error::UnknownTarget {
                    what: format!("--quantize {name}: not a ggml type (Q8_0, Q4_0, ...)"),
                }
            })?),
        };
        let split_by: tensorkit::SplitBy = self.split_by.parse()?;
        // GRIB names its packing, NetCDF its format and filters, with the same option;
        // Tensogram's stages mean nothing there.
        if target
            .offers(tensorkit::dtype::WriteChoice::Packing)
            .is_ok()
        {
            return Ok(tensorkit::WriteOptions {
                format: Some(target),
                packing: self.pipeline.clone(),
                durability,
                rename_duplicates: self.duplicates == Duplicates::Suffix,
                unpack: self.unpack,
                split_by,
                ..tensorkit::WriteOptions::default()
            });
        }
        Ok(tensorkit::WriteOptions {
            format: Some(target),
            pipeline: self.pipeline()?,
            alignment: self.alignment,
            header_reserve: self.header_reserve,
            durability,
            quantize,
            dequantize: self
                .dequantize
                .as_deref()
                .and_then(tensorkit::Dequantize::from_name),
            rename_duplicates: self.duplicates == Duplicates::Suffix,
            unpack: self.unpack,
            split_by,
            ..tensorkit::WriteOptions::default()
        })
    }
}

/// `merge --strategy`: what to do with a metadata key the inputs disagree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MergeStrategy {
    /// Refuse, naming the key and both values.
    Error,
    /// Keep the first input's value.
    First,
    /// Keep the last input's value.
    Last,
}

/// `--duplicates`: what to do with tensors that share a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Duplicates {
    /// Refuse, naming the tensor.
    Error,
    /// Rename every repeat with a suffix.
    Suffix,
}

impl Target {
    /// The parsed `--pipeline` (`keep` when it is absent).
    pub fn pipeline(&self) -> crate::error::Result<crate::pipeline_spec::PipelineSpec> {
        let spec = self.pipeline.as_deref().map_or_else(
            || Ok(crate::pipeline_spec::PipelineSpec::default()),
            crate::pipeline_spec::PipelineSpec::parse,
        )?;
        Ok(spec
            .with_extensions(self.allow_extensions)
            .with_canonical_nan(self.canonical_nan))
    }
}

/// How deep `validate` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidateLevel {
    /// Structure only.
    Quick,
    /// Structure and metadata.
    Default,
    /// And every hash.
    Checksum,
    /// And decode everything.
    Full,
}

impl From<ValidateLevel> for tensorkit::Level {
    fn from(level: ValidateLevel) -> Self {
        match level {
            ValidateLevel::Quick => Self::Quick,
            ValidateLevel::Default => Self::Default,
            ValidateLevel::Checksum => Self::Checksum,
            ValidateLevel::Full => Self::Full,
        }
    }
}

/// `tensorkit stdlib-meta ...`
#[derive(Debug, Subcommand)]
pub enum StdlibMetaCommand {
    /// Decode and strictly validate a meta data buffer, and print its fields.
    Decode {
        /// The buffer to read.
        file: PathBuf,
        /// Print JSON with the conformance fixtures' keys instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write a meta data buffer from a JSON specification (the keys `decode --json` prints;
    /// only `dtype` and `shape` are required).
    Encode {
        /// The JSON specification.
        #[arg(long = "from-json", value_name = "SPEC")]
        from_json: PathBuf,
        /// Where to write the buffer.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
}
