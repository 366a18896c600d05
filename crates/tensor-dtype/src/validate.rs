//! How deep a check of a file goes, and how serious what it finds is: the words every
//! format's validation shares (Tensogram's levelled checks define them; the others read
//! whole at every level).

/// How deep validation goes; each level includes the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Level {
    /// Preamble, frames, order, padding, flags.
    Quick,
    /// Also metadata and descriptors: CBOR, counts, pipelines.
    #[default]
    Default,
    /// Also every stored hash.
    Checksum,
    /// Also decode every object and look for NaN/Inf the masks do not explain.
    Full,
}

impl Level {
    /// Every level, shallowest first.
    pub const ALL: [Level; 4] = [Level::Quick, Level::Default, Level::Checksum, Level::Full];

    /// The level's name: `quick`, `default`, `checksum` or `full`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Default => "default",
            Level::Checksum => "checksum",
            Level::Full => "full",
        }
    }

    /// The level called `name` ([`Level::name`]); `None` for any other name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// What to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ValidateOptions {
    /// How deep to go.
    pub level: Level,
    /// Also report CBOR that is not in canonical form.
    pub canonical: bool,
}

/// How serious an issue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Legal but questionable (non-canonical CBOR, flags that disagree with the frames).
    Warning,
    /// The file is broken.
    Error,
}
