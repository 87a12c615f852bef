//! The cap on a tool result: it covers the whole result, whatever its
//! parts.
//!
//! **How size is counted.** In characters (Unicode scalar values), the unit
//! of [`max_result_chars`](super::ServerBuilder::max_result_chars), of the
//! Claude Code CLI's own limits and of what the model reads: a text block
//! counts the characters of its text; every other part counts the
//! characters of its compact JSON — other content blocks whole (images,
//! audio, embedded resources, resource links, unknown blocks),
//! `structuredContent`, `_meta` and any other member. The result's own
//! envelope (`{"content":[…],"isError":…}`, a text block's `type`) is not
//! counted. What leaves the server is then at most the cap plus the
//! envelope and a note of under 400 characters; in bytes, at most four
//! times that for text outside ASCII (more only for text full of control
//! characters, which JSON escapes).
//!
//! **What is cut.** Parts are taken in this order until the cap is reached:
//! `structuredContent` (whole or not at all: it is what the CLI shows the
//! model), the content blocks in order (text cut at a character boundary,
//! other blocks whole or not at all), `_meta`, then other members. What
//! does not fit is removed, and a note at the end of the text says how much
//! was cut and names what was removed. A tool that declares an output
//! schema and loses its `structuredContent` this way returns an error
//! result: its declared output could not be delivered.

use std::io;

use serde::Serialize;
use serde_json::Value;

use crate::types::{CallToolResult, Content};

/// A size in bytes and in characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Size {
    bytes: usize,
    chars: usize,
}

impl Size {
    /// A text's size; its characters are counted only when `chars` (its
    /// bytes bound them).
    fn of_text(text: &str, chars: bool) -> Self {
        Self {
            bytes: text.len(),
            chars: if chars {
                text.chars().count()
            } else {
                text.len()
            },
        }
    }

    /// The size of `value`'s compact JSON, without building it.
    fn of_json(value: &impl Serialize) -> Self {
        let mut size = Self::default();
        // Serializing a `Value` or `Content` into a counter cannot fail.
        let _ = serde_json::to_writer(&mut size, value);
        size
    }

    fn add(self, other: Self) -> Self {
        Self {
            bytes: self.bytes + other.bytes,
            chars: self.chars + other.chars,
        }
    }
}

impl io::Write for Size {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len();
        // Every byte that does not continue a UTF-8 sequence starts a character.
        self.chars += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A block's size: a text block's text (its characters counted when
/// `chars`) plus its annotations and `_meta`; any other block's JSON.
fn block_size(block: &Content, chars: bool) -> Size {
    match block {
        Content::Text {
            text,
            annotations,
            meta,
        } => Size::of_text(text, chars).add(text_extras(annotations, meta)),
        _ => Size::of_json(block),
    }
}

/// The size of a text block's annotations and `_meta`.
fn text_extras(
    annotations: &Option<crate::types::Annotations>,
    meta: &Option<serde_json::Map<String, Value>>,
) -> Size {
    let a = annotations.as_ref().map(Size::of_json).unwrap_or_default();
    a.add(meta.as_ref().map(Size::of_json).unwrap_or_default())
}

/// Takes `size` out of `budget` if it fits; says whether it did.
fn take(budget: &mut usize, size: Size) -> bool {
    let fits = size.chars <= *budget;
    if fits {
        *budget -= size.chars;
    }
    fits
}

/// How the note names a removed content block.
fn describe(block: &Content) -> String {
    let kind = match block {
        Content::Image { mime_type, .. } => format!("an image block ({mime_type}"),
        Content::Audio { mime_type, .. } => format!("an audio block ({mime_type}"),
        Content::Resource { resource, .. } => format!("an embedded resource ({}", resource.uri),
        Content::ResourceLink { uri, .. } => format!("a resource link ({uri}"),
        Content::Unknown(v) => {
            let ty = v.get("type").and_then(Value::as_str).unwrap_or("untyped");
            format!("a {ty:?} block (")
        }
        Content::Text { .. } => "a text block (".to_owned(),
    };
    let sep = if kind.ends_with('(') { "" } else { ", " };
    format!("{kind}{sep}{} characters)", block_size(block, true).chars)
}

/// Whether `value`'s compact JSON has at most `limit` bytes, and so any
/// result it holds is under a cap of `limit` characters.
#[cfg(feature = "rmcp")]
pub(crate) fn json_fits(value: &Value, limit: usize) -> bool {
    Size::of_json(value).bytes <= limit
}

/// Caps `result` at `limit` characters as the [module docs](self) say;
/// `structured` when the tool declares an output schema. Returns how many
/// characters were cut.
pub(crate) fn cap_result(
    result: &mut CallToolResult,
    limit: usize,
    tool: &str,
    structured: bool,
) -> usize {
    let structured_size = result.structured_content.as_ref().map(Size::of_json);
    let meta_size = result.meta.as_ref().map(Size::of_json);
    let extra_size = (!result.extra.is_empty()).then(|| Size::of_json(&result.extra));
    let measure = |chars: bool| {
        result
            .content
            .iter()
            .map(|block| block_size(block, chars))
            .chain(structured_size)
            .chain(meta_size)
            .chain(extra_size)
            .fold(Size::default(), Size::add)
    };
    // Fast path: no more bytes than the limit means no more characters.
    if measure(false).bytes <= limit {
        return 0;
    }
    let total = measure(true);
    if total.chars <= limit {
        return 0;
    }

    let mut budget = limit;
    let mut removed = Vec::new();

    let mut lost_structure = false;
    if let Some(size) = structured_size
        && !take(&mut budget, size)
    {
        result.structured_content = None;
        removed.push(format!("structuredContent ({} characters)", size.chars));
        lost_structure = structured && !result.is_error;
    }

    let mut last_text = None;
    let mut kept = Vec::with_capacity(result.content.len());
    for mut block in std::mem::take(&mut result.content) {
        if let Content::Text {
            text,
            annotations,
            meta,
        } = &mut block
        {
            if budget == 0 {
                continue;
            }
            let extras = text_extras(annotations, meta);
            if !take(&mut budget, extras) {
                *annotations = None;
                *meta = None;
                removed.push(format!(
                    "a text block's annotations and _meta ({} characters)",
                    extras.chars
                ));
            }
            match text.char_indices().nth(budget) {
                // Longer than what is left: cut at the boundary.
                Some((byte, _)) => {
                    // What was cut is given back, not kept behind the text.
                    text.truncate(byte);
                    text.shrink_to_fit();
                    budget = 0;
                }
                None => budget -= text.chars().count(),
            }
            last_text = Some(kept.len());
            kept.push(block);
        } else if take(&mut budget, block_size(&block, true)) {
            kept.push(block);
        } else {
            removed.push(describe(&block));
        }
    }
    result.content = kept;

    if let Some(size) = meta_size
        && !take(&mut budget, size)
    {
        result.meta = None;
        removed.push(format!("_meta ({} characters)", size.chars));
    }
    let extra = std::mem::take(&mut result.extra);
    for (key, value) in extra.into_map() {
        let size = Size::of_json(&value);
        if take(&mut budget, size) {
            result.extra.insert(key, value);
        } else {
            removed.push(format!("{key:?} ({} characters)", size.chars));
        }
    }

    let cut = total.chars - (limit - budget);
    let mut note = format!(
        "\n\n[Output truncated: {cut} of {} characters were cut to stay within the limit of \
         {limit} characters",
        total.chars
    );
    if !removed.is_empty() {
        note.push_str("; removed: ");
        note.push_str(&removed.join(", "));
    }
    if lost_structure {
        result.is_error = true;
        note.push_str(
            "; the tool declares an output schema, so without its structuredContent this \
             is an error result",
        );
    }
    note.push_str(".]");
    match last_text.and_then(|i| result.content.get_mut(i)) {
        Some(Content::Text { text, .. }) => text.push_str(&note),
        _ => result.content.push(Content::text(note.trim_start())),
    }
    tracing::warn!(
        tool,
        limit,
        total = total.chars,
        cut,
        removed = removed.len(),
        "tool result exceeded the size limit and was truncated"
    );
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cap_cuts_text_at_char_boundaries_across_blocks() {
        let mut r = CallToolResult::success(vec![
            Content::text("ééé"),
            Content::text("ààà"),
            Content::text("zzz"),
        ]);
        let cut = cap_result(&mut r, 4, "t", false);
        assert_eq!(cut, 5);
        assert_eq!(r.content.len(), 2, "{:?}", r.content);
        assert_eq!(r.content[0].as_text(), Some("ééé"));
        let second = r.content[1].as_text().unwrap();
        assert!(
            second.starts_with("à\n\n[Output truncated: 5 of 9"),
            "{second}"
        );
    }

    #[test]
    fn cap_leaves_short_results_alone() {
        let mut r = CallToolResult::text("ééé");
        // 6 bytes but 3 characters.
        assert_eq!(cap_result(&mut r, 3, "t", false), 0);
        assert_eq!(r.content[0].as_text(), Some("ééé"));
    }

    #[test]
    fn sizes_count_json_characters() {
        let s = Size::of_json(&json!({"k": "é"}));
        assert_eq!((s.bytes, s.chars), (10, 9));
        let image = Content::image("AAAA", "image/png");
        assert_eq!(
            describe(&image),
            format!(
                "an image block (image/png, {} characters)",
                block_size(&image, true).chars
            )
        );
    }

    #[test]
    fn parts_that_do_not_fit_are_removed_and_named() {
        let mut r = CallToolResult::success(vec![
            Content::text("abc"),
            Content::audio("A".repeat(100), "audio/wav"),
            Content::text("def"),
        ])
        .with_structured_content(json!({"x": "y".repeat(100)}));
        let cut = cap_result(&mut r, 10, "t", true);
        assert!(r.structured_content.is_none());
        assert!(r.is_error, "its declared output is gone");
        assert_eq!(r.content.len(), 2);
        let note = r.content[1].as_text().unwrap();
        assert!(note.starts_with("def\n\n[Output truncated: "), "{note}");
        assert!(
            note.contains("structuredContent (108 characters)"),
            "{note}"
        );
        assert!(note.contains("an audio block (audio/wav"), "{note}");
        assert!(cut > 200, "{cut}");
    }
}
