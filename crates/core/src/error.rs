//! The one error of the core: input that can never be accepted as it is
//! (a bad timezone, address, JID, number, instant, …). Its message is one
//! line for the caller. The layers above fold it into their own error as
//! "the caller's fault" (CLI exit 2, HTTP 4xx). A person's own field
//! (zone, locale tag, hour, quiet hours, Matrix ID, email address) refused by
//! its validator also carries a [`Refusal`], which a page says in the
//! person's language (`i18n::refusal`); the line stays English for the CLI
//! and the API.

/// Input that can never be accepted as it is; the message says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}")]
pub struct Invalid {
    line: String,
    refusal: Option<Box<Refusal>>,
}

impl Invalid {
    pub fn new(msg: impl Into<String>) -> Self {
        Invalid {
            line: msg.into(),
            refusal: None,
        }
    }

    /// This error, said on a page as `kind` of `value` (see [`Refusal`]).
    pub(crate) fn because(mut self, kind: RefusalKind, value: &str) -> Self {
        self.refusal = Some(Box::new(Refusal::new(kind, value)));
        self
    }

    /// The one English line: what the CLI and the API say.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The refusal a page can say in the reader's language, when a field's
    /// own check refused.
    pub fn refusal(&self) -> Option<&Refusal> {
        self.refusal.as_deref()
    }
}

/// An `Invalid` reads as its line.
impl std::ops::Deref for Invalid {
    type Target = str;
    fn deref(&self) -> &str {
        &self.line
    }
}

/// A core result: the value, or why the input is refused.
pub type Result<T, E = Invalid> = std::result::Result<T, E>;

/// What was wrong with the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusalKind {
    /// A timezone that is empty, too long or holds a control character.
    TimezoneMalformed,
    /// A timezone chrono-tz does not know, and the one it most likely
    /// meant, when one is close.
    TimezoneUnknown { nearest: Option<&'static str> },
    /// A locale tag that is not `ll` or `ll-RR`-like.
    Locale,
    /// An hour of the day that is not a number from 0 to 23.
    Hour,
    /// Quiet hours longer than `max` bytes.
    QuietTooLong { max: usize },
    /// Quiet hours with a character other than ASCII: its code point,
    /// `U+2013`.
    QuietNotAscii { code: String },
    /// Quiet hours with no `-` between start and end.
    QuietNoDash,
    /// Quiet hours whose start is not `HH:MM`.
    QuietStart { part: String },
    /// Quiet hours whose end is not `HH:MM`.
    QuietEnd { part: String },
    /// Quiet hours that start when they end.
    QuietSame,
    /// An empty Matrix ID.
    MatrixEmpty,
    /// A Matrix ID longer than `max` bytes.
    MatrixTooLong { max: usize },
    /// A Matrix ID with white space in it.
    MatrixSpace,
    /// A Matrix ID with a control or non-ASCII character.
    MatrixChar,
    /// A Matrix ID with no `:server`.
    MatrixNoServer,
    /// A Matrix ID with nothing between its sigil and `:`.
    MatrixNoLocal,
    /// A Matrix ID that starts with neither `@` nor `!`.
    MatrixSigil,
    /// A Matrix ID whose server's port is not 1-65535.
    MatrixPort,
    /// A Matrix ID whose server name is no host name or IP address.
    MatrixServer,
    /// An email address with a control character.
    EmailControl,
    /// An email address with a non-ASCII character.
    EmailNonAscii,
    /// An email address longer than 254 octets.
    EmailTooLong,
    /// An email address without `@`.
    EmailNoAt,
    /// An email address whose part before `@` is empty or over 64 octets.
    EmailLocalLength,
    /// An email address with a `.` at either end of the part before `@`,
    /// or two in a row.
    EmailDots,
    /// An email address with a character before `@` that needs quoting.
    EmailQuoting,
    /// An email address whose domain is not a host name.
    EmailDomain,
    /// An email address whose domain has no dot.
    EmailNoDot,
}

/// A field's refusal of a value, as a kind a page says in the reader's
/// language from the catalogues (`i18n::refusal`): what was wrong and the
/// value as given, at most [`Refusal::SHOWN`] + 1 characters of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    kind: RefusalKind,
    value: String,
}

impl Refusal {
    /// The most characters of a refused value a page shows; a longer one
    /// is cut there and ends with "…".
    pub const SHOWN: usize = 64;

    /// The refusal of `value` for `kind`.
    pub(crate) fn new(kind: RefusalKind, value: &str) -> Refusal {
        Refusal {
            kind,
            value: value.chars().take(Refusal::SHOWN + 1).collect(),
        }
    }

    /// What was wrong.
    pub(crate) fn kind(&self) -> &RefusalKind {
        &self.kind
    }

    /// The value as given (its first [`Refusal::SHOWN`] + 1 characters).
    pub(crate) fn value(&self) -> &str {
        &self.value
    }
}
