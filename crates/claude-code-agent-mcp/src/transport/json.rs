//! Reading JSON as the peers write it: lone surrogate escapes decode, and
//! the envelope of a message that does not decode is still read.
//!
//! # Lone surrogates
//!
//! JavaScript and Python strings are sequences of UTF-16 code units, and
//! cutting one in the middle of an emoji (`"ab😀".slice(0, 3)`, a
//! truncated tool output) leaves half of a surrogate pair. Their encoders
//! write it as an escape (`JSON.stringify` gives `"ab\ud83d"`, and so does
//! Python's `json.dumps`), and their parsers accept it, so a peer on
//! either considers such text valid JSON. `serde_json` refuses it: a Rust
//! `String` cannot hold half a character.
//!
//! Here every lone surrogate escape decodes to U+FFFD REPLACEMENT CHARACTER
//! (`"ab\u{FFFD}"`): what JavaScript itself makes of such a string the
//! moment it leaves as UTF-8 (`TextEncoder`, `Buffer.from`, Node's streams
//! and `String.prototype.toWellFormed` all replace a lone surrogate with
//! U+FFFD), what Rust's `String::from_utf16_lossy` does, and the Unicode
//! standard's substitution for an ill-formed sequence. The tool sees the
//! text up to the cut and one visible mark where the half character was;
//! the rest of the message is untouched. Failing the message instead would
//! refuse what the peer considers valid, and dropping the half character
//! silently would hide that anything was cut.
//!
//! The fast path is `serde_json` alone. Only text it refuses with a syntax
//! error is scanned for lone surrogate escapes ([`repair_lone_surrogates`]);
//! when there are any, they are replaced in a copy (an escape for an
//! escape: `\uD83D` becomes `\uFFFD`, so positions in an error message
//! still point into the original) and the copy is parsed.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::error::Category;

/// Parses `text` as `T`, with lone surrogate escapes decoded to U+FFFD
/// (see the [module docs](self)). The error, if any, is the one the
/// text gives once repaired.
pub fn from_slice<T: DeserializeOwned>(text: &[u8]) -> serde_json::Result<T> {
    match serde_json::from_slice(text) {
        Err(e) if e.classify() == Category::Syntax => match repair_lone_surrogates(text) {
            Some(repaired) => serde_json::from_slice(&repaired),
            None => Err(e),
        },
        parsed => parsed,
    }
}

/// [`from_slice`] for text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_slice(text.as_bytes())
}

/// `text` with every lone surrogate escape (a `\uD800`–`\uDBFF` not
/// followed by a `\uDC00`–`\uDFFF`, or a `\uDC00`–`\uDFFF` not preceded by
/// one) replaced by `\uFFFD`; `None` when there is none. Escaped
/// backslashes are skipped as the escapes they are: in `\\ud83d` the
/// `ud83d` is plain text. Only text inside strings can hold escapes, so
/// nothing outside them changes meaning (a backslash there is an error
/// either way). The result has the length of `text`.
pub fn repair_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    let mut repaired: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(found) = text.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let at = i + found;
        if text.get(at + 1) != Some(&b'u') {
            // A two-character escape (`\\`, `\"`, `\n`, …) or the end.
            i = at + 2;
            continue;
        }
        i = at + 2;
        let Some(unit) = hex4(text, at + 2) else {
            continue;
        };
        i = at + 6;
        let lone = match unit {
            0xD800..=0xDBFF => {
                let trail = (text.get(at + 6..at + 8) == Some(b"\\u"))
                    .then(|| hex4(text, at + 8))
                    .flatten();
                if trail.is_some_and(|t| (0xDC00..=0xDFFF).contains(&t)) {
                    i = at + 12;
                    false
                } else {
                    true
                }
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let out = repaired.get_or_insert_with(|| text.to_vec());
            out[at + 2..at + 6].copy_from_slice(b"FFFD");
        }
    }
    repaired
}

/// The value of the four hex digits at `at`, if there are four.
fn hex4(text: &[u8], at: usize) -> Option<u16> {
    let digits = text.get(at..at + 4)?;
    let digits = std::str::from_utf8(digits).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

/// What could be read of a JSON-RPC message's envelope from text that
/// does not decode (or was too long to keep): its top-level `id`, and
/// whether it has a top-level `method`, `result` or `error` before the
/// point the text is broken or cut at ([`envelope`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Envelope {
    /// The top-level `id`, when it is a number or a string, complete in
    /// the text.
    pub id: Option<Value>,
    /// A top-level `method` key was seen.
    pub method: bool,
    /// A top-level `result` or `error` key was seen.
    pub answer: bool,
}

impl Envelope {
    /// The id to answer a message that could not be decoded with: its
    /// `id`, unless it is known to be a response (an answer to a request
    /// of ours, whose id is ours, not the peer's).
    pub fn request_id(&self) -> Option<&Value> {
        self.id.as_ref().filter(|_| self.method || !self.answer)
    }

    /// The id of a response that could not be decoded: its `id`, unless
    /// it is known to be a request or a notification (a `method`).
    pub fn response_id(&self) -> Option<&Value> {
        self.id.as_ref().filter(|_| !self.method)
    }
}

/// Reads the top-level keys of a JSON object from the start of `text`, as
/// far as the text can be read: values are skipped by their brackets and
/// quotes, so text broken inside a value (a bad escape, `NaN`, a truncated
/// tail) still shows the keys around it. An id is taken only when it is
/// complete: a number followed by a delimiter, a closed string.
pub fn envelope(text: &[u8]) -> Envelope {
    let mut scan = Scan { text, at: 0 };
    let mut found = Envelope::default();
    scan.space();
    if !scan.eat(b'{') {
        return found;
    }
    loop {
        scan.space();
        let Some(key) = scan.string() else {
            return found;
        };
        let key = key_text(key);
        scan.space();
        if !scan.eat(b':') {
            return found;
        }
        scan.space();
        match key.as_deref() {
            Some("id") if found.id.is_none() => {
                found.id = scan.id();
                if found.id.is_none() && !scan.value() {
                    return found;
                }
            }
            other => {
                match other {
                    Some("method") => found.method = true,
                    Some("result" | "error") => found.answer = true,
                    _ => {}
                }
                if !scan.value() {
                    return found;
                }
            }
        }
        scan.space();
        if !scan.eat(b',') {
            return found;
        }
    }
}

/// A key's text (its quotes included), decoded.
fn key_text(raw: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if memchr::memchr(b'\\', raw).is_none() {
        let inner = &raw[1..raw.len() - 1];
        return std::str::from_utf8(inner).ok().map(Into::into);
    }
    from_slice::<String>(raw).ok().map(Into::into)
}

/// A cursor over text being read leniently.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        self.at += usize::from(hit);
        hit
    }

    /// A whole string at the cursor, quotes included.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        if self.peek() != Some(b'"') {
            return None;
        }
        let mut i = start + 1;
        loop {
            let found = memchr::memchr2(b'"', b'\\', self.text.get(i..)?)?;
            i += found;
            if self.text[i] == b'\\' {
                i += 2;
            } else {
                self.at = i + 1;
                return Some(&self.text[start..=i]);
            }
        }
    }

    /// An id at the cursor: a closed string or a number followed by a
    /// delimiter. The cursor moves past it only when one is read.
    fn id(&mut self) -> Option<Value> {
        let start = self.at;
        if self.peek() == Some(b'"') {
            let raw = self.string()?;
            return match from_slice::<String>(raw) {
                Ok(id) => Some(Value::String(id)),
                Err(_) => {
                    self.at = start;
                    None
                }
            };
        }
        let len = self.text[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
            .count();
        let end = start + len;
        let delimited = self
            .text
            .get(end)
            .is_some_and(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace());
        if len == 0 || !delimited {
            return None;
        }
        match serde_json::from_slice::<Value>(&self.text[start..end]) {
            Ok(number @ Value::Number(_)) => {
                self.at = end;
                Some(number)
            }
            _ => None,
        }
    }

    /// Skips one value, whatever is inside it; `false` when the text ends
    /// first.
    fn value(&mut self) -> bool {
        match self.peek() {
            None => false,
            Some(b'"') => self.string().is_some(),
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    match self.peek() {
                        None => return false,
                        Some(b'"') => {
                            if self.string().is_none() {
                                return false;
                            }
                            continue;
                        }
                        Some(b'{' | b'[') => depth += 1,
                        Some(b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return true;
                            }
                        }
                        Some(_) => {}
                    }
                    self.at += 1;
                }
            }
            Some(_) => {
                // A bare word or number (valid or not): up to a delimiter.
                while let Some(b) = self.peek() {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        return true;
                    }
                    self.at += 1;
                }
                false
            }
        }
    }
}

#[cfg(any(test, feature = "__fuzz"))]
#[doc(hidden)]
pub mod fuzz;
#[cfg(test)]
mod tests;
