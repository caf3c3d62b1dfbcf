//! The BPE encodings the library counts with. Its own module so that both the pretokenizer and
//! the counter can name an encoding without importing each other.

/// A BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// GPT-4o / o-series encoding. The default.
    #[default]
    O200kBase,
    /// GPT-4 / GPT-3.5 encoding.
    Cl100kBase,
}

impl Encoding {
    pub fn parse(name: &str) -> Option<Encoding> {
        match name {
            "o200k_base" => Some(Encoding::O200kBase),
            "cl100k_base" => Some(Encoding::Cl100kBase),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}
