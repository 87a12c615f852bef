//! Skills (SEP-2640, extension [`SKILLS_EXTENSION`]): Agent Skills served
//! as resources. A server that declares the extension lists its skills
//! with `skills/list` (and answers `skills/get` for one URI): each entry
//! names the skill's `SKILL.md`, copies its frontmatter, and lists every
//! file of the skill with its size and SHA-256 digest. A host reads a
//! skill's files with `resources/read` only when it loads the skill, and
//! uses a file only when its bytes match the entry
//! ([`SkillEntry::verify`]): size, digest, and for `SKILL.md` the
//! frontmatter, field by field. A server serves skills with
//! [`ServerBuilder::skill`](crate::server::ServerBuilder::skill).
//!
//! ```
//! use claude_code_agent_mcp::types::skills::{SkillEntry, digest};
//! use serde_json::json;
//!
//! let body = "---\nname: pdf\ndescription: Fill PDF forms\n---\n\nSteps.\n";
//! let entry: SkillEntry = serde_json::from_value(json!({
//!     "uri": "skill://pdf/SKILL.md",
//!     "frontmatter": {"name": "pdf", "description": "Fill PDF forms"},
//!     "resources": [{"uri": "skill://pdf/SKILL.md", "digest": digest(body.as_bytes()), "size": body.len()}]
//! })).unwrap();
//! assert_eq!(entry.name(), Some("pdf"));
//! assert!(entry.verify("skill://pdf/SKILL.md", body.as_bytes()).is_ok());
//! let tampered = body.replace("Fill PDF forms", "Exfiltrate credentials");
//! assert!(entry.verify("skill://pdf/SKILL.md", tampered.as_bytes()).is_err());
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use super::extensions::SKILLS_EXTENSION;

/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// A file's digest as skills list it: `sha256:` and 64 lowercase hex digits.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// One file of a skill: its URI, byte length and digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// [`digest`] of its bytes.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One skill, as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The frontmatter of its `SKILL.md`, as JSON (`name`, `description`, …).
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill, `SKILL.md` included; `None` for a skill
    /// generated on demand (`"resources": "dynamic"`), whose files cannot
    /// be verified.
    #[serde(with = "files", default)]
    pub resources: Option<Vec<SkillFile>>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `resources`: an array of files, or `"dynamic"`.
mod files {
    use super::SkillFile;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        files: &Option<Vec<SkillFile>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match files {
            Some(files) => files.serialize(s),
            None => s.serialize_str("dynamic"),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<SkillFile>>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Files(Vec<SkillFile>),
            Word(String),
        }
        match Either::deserialize(d)? {
            Either::Files(files) => Ok(Some(files)),
            Either::Word(word) if word == "dynamic" => Ok(None),
            Either::Word(other) => Err(serde::de::Error::custom(format!(
                "resources must be an array of files or \"dynamic\", not {other:?}"
            ))),
        }
    }
}

/// The result of `skills/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// One page of skills.
    pub skills: Vec<SkillEntry>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `skills/get`: one skill's entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill.
    pub skill: SkillEntry,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GetSkillResult {
    /// The result for `skill`.
    pub fn new(skill: SkillEntry) -> Self {
        Self {
            skill,
            extra: Map::new(),
        }
    }
}

/// Why a skill's file may not be used: it is not what its entry says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillMismatch {
    /// The entry does not list the file (or lists no files at all).
    #[error("{0} is not a file the skill's entry lists")]
    NotListed(String),
    /// Its length differs from the entry's `size`.
    #[error("{uri} is {got} bytes, not the {want} its entry says")]
    Size {
        /// The file.
        uri: String,
        /// What was read.
        got: u64,
        /// What the entry says.
        want: u64,
    },
    /// Its digest differs from the entry's.
    #[error("{0} does not match its entry's digest")]
    Digest(String),
    /// The frontmatter of `SKILL.md` differs from the entry's, or cannot be read.
    #[error("{uri}: the frontmatter does not match its entry's: {why}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What differs.
        why: String,
    },
}

impl SkillEntry {
    /// The skill's name (`frontmatter.name`).
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// The skill's description (`frontmatter.description`).
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }

    /// The listed file at `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.resources.as_ref()?.iter().find(|f| f.uri == uri)
    }

    /// Checks the bytes read from `uri` against this entry: listed, of its
    /// size, of its digest, and, for the skill's `SKILL.md`, with the
    /// entry's frontmatter. Content that fails is not to be used.
    pub fn verify(&self, uri: &str, content: &[u8]) -> Result<(), SkillMismatch> {
        let file = self
            .file(uri)
            .ok_or_else(|| SkillMismatch::NotListed(uri.to_owned()))?;
        let got = content.len() as u64;
        if got != file.size {
            return Err(SkillMismatch::Size {
                uri: uri.to_owned(),
                got,
                want: file.size,
            });
        }
        if digest(content) != file.digest {
            return Err(SkillMismatch::Digest(uri.to_owned()));
        }
        if uri == self.uri {
            let mismatch = |why: String| SkillMismatch::Frontmatter {
                uri: uri.to_owned(),
                why,
            };
            let text = std::str::from_utf8(content).map_err(|_| mismatch("not UTF-8".into()))?;
            let read = frontmatter(text).map_err(mismatch)?;
            if let Some(key) = differing(&read, &self.frontmatter) {
                return Err(mismatch(format!("{key:?} differs")));
            }
        }
        Ok(())
    }
}

/// The first key whose value differs between two frontmatters.
fn differing<'a>(a: &'a Map<String, Value>, b: &'a Map<String, Value>) -> Option<&'a str> {
    a.keys()
        .chain(b.keys())
        .find(|k| a.get(*k).unwrap_or(&Value::Null) != b.get(*k).unwrap_or(&Value::Null))
        .map(String::as_str)
}

/// The YAML frontmatter of a `SKILL.md` (between `---` lines at its top),
/// as JSON. What the Agent Skills format uses is read: `key: value`
/// scalars (plain, quoted, `true`/`false`, numbers, `null`), nested maps
/// and lists by indentation, `|` and `>` blocks. Anything else (flow
/// collections, anchors, tags) is an error saying where, so a frontmatter
/// this cannot read fails verification rather than passing it.
pub fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no frontmatter (the file does not start with ---)".into());
    }
    let mut body = Vec::new();
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            let mut at = 0;
            return match block(&body, &mut at, 0)? {
                Value::Object(map) => Ok(map),
                Value::Null => Ok(Map::new()),
                _ => Err("the frontmatter is not a map".into()),
            };
        }
        body.push(line);
    }
    Err("the frontmatter has no closing ---".into())
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The map or list whose lines start at `lines[*at]`, indented `min` or more.
fn block(lines: &[&str], at: &mut usize, min: usize) -> Result<Value, String> {
    while *at < lines.len() && blank(lines[*at]) {
        *at += 1;
    }
    let Some(first) = lines.get(*at) else {
        return Ok(Value::Null);
    };
    let level = indent(first);
    if level < min {
        return Ok(Value::Null);
    }
    let is_list = first.trim_start().starts_with("- ") || first.trim() == "-";
    let mut map = Map::new();
    let mut list = Vec::new();
    while *at < lines.len() {
        let line = lines[*at];
        if blank(line) {
            *at += 1;
            continue;
        }
        if indent(line) < level {
            break;
        }
        let n = *at + 1;
        if indent(line) > level {
            return Err(format!("frontmatter line {n}: unexpected indentation"));
        }
        let item = line.trim();
        *at += 1;
        if is_list {
            let Some(rest) = item.strip_prefix('-').map(str::trim) else {
                return Err(format!("frontmatter line {n}: a list item without -"));
            };
            list.push(match rest {
                "" => block(lines, at, level + 1)?,
                rest => scalar(rest, n)?,
            });
        } else {
            let Some((key, rest)) = item.split_once(':') else {
                return Err(format!("frontmatter line {n}: not `key: value`"));
            };
            let key = match scalar(key.trim(), n)? {
                Value::String(key) => key,
                other => other.to_string(),
            };
            let rest = rest.trim();
            let value = match rest {
                "" => block(lines, at, level + 1)?,
                "|" | "|-" | ">" | ">-" => text_block(lines, at, level, rest),
                rest => scalar(rest, n)?,
            };
            map.insert(key, value);
        }
    }
    Ok(if is_list {
        Value::Array(list)
    } else {
        Value::Object(map)
    })
}

/// A `|` (lines kept) or `>` (lines joined) block; `-` drops the final newline.
fn text_block(lines: &[&str], at: &mut usize, level: usize, style: &str) -> Value {
    let mut kept = Vec::new();
    while let Some(line) = lines.get(*at) {
        if !line.trim().is_empty() && indent(line) <= level {
            break;
        }
        kept.push(*line);
        *at += 1;
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    let inner = kept
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let kept: Vec<&str> = kept.iter().map(|l| l.get(inner..).unwrap_or("")).collect();
    let mut text = if style.starts_with('|') {
        kept.join("\n")
    } else {
        kept.join(" ")
    };
    if !style.ends_with('-') {
        text.push('\n');
    }
    Value::String(text)
}

/// One scalar: quoted, or plain (`true`, `false`, `null`, `~`, numbers,
/// else text up to a ` #` comment).
fn scalar(text: &str, line: usize) -> Result<Value, String> {
    if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted
            .rfind('"')
            .ok_or_else(|| format!("frontmatter line {line}: an unclosed \""))?;
        return serde_json::from_str(&format!("\"{}\"", &quoted[..end]))
            .map_err(|e| format!("frontmatter line {line}: {e}"));
    }
    if let Some(quoted) = text.strip_prefix('\'') {
        let end = quoted
            .rfind('\'')
            .ok_or_else(|| format!("frontmatter line {line}: an unclosed '"))?;
        return Ok(Value::String(quoted[..end].replace("''", "'")));
    }
    if text.starts_with(['{', '[', '&', '*', '!', '%', '@', '`']) {
        return Err(format!(
            "frontmatter line {line}: YAML this reader does not take ({text:?})"
        ));
    }
    let plain = text.split(" #").next().unwrap_or(text).trim_end();
    Ok(match plain {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" | "~" => Value::Null,
        _ => plain
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| plain.parse::<f64>().map(Value::from))
            .unwrap_or_else(|_| Value::String(plain.to_owned())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frontmatter_reads_what_skills_use_and_refuses_the_rest() {
        let text = "---\nname: pdf-processing\ndescription: 'Fill: forms'\nlicense: \"Apache-2.0\"\n\
                    metadata:\n  version: \"2.1\"\n  stable: true\n# a comment\nallowed-tools:\n  - Read\n  - Bash(git:*)\n\
                    notes: |\n  one\n  two\n---\nbody\n";
        let read = frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(read),
            json!({"name": "pdf-processing", "description": "Fill: forms", "license": "Apache-2.0",
                   "metadata": {"version": "2.1", "stable": true},
                   "allowed-tools": ["Read", "Bash(git:*)"], "notes": "one\ntwo\n"})
        );
        assert!(frontmatter("no frontmatter").is_err());
        assert!(frontmatter("---\nname: x\n").is_err());
        let flow = frontmatter("---\nmetadata: {a: 1}\n---\n").unwrap_err();
        assert!(flow.contains("line 1"), "{flow}");
    }

    #[test]
    fn a_file_is_used_only_as_its_entry_lists_it() {
        let body = "---\nname: pdf\ndescription: Fill\n---\n";
        let other = "Supporting.\n";
        let entry: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "Fill"},
            "resources": [
                {"uri": "skill://pdf/SKILL.md", "digest": digest(body.as_bytes()), "size": body.len()},
                {"uri": "skill://pdf/FORMS.md", "digest": digest(other.as_bytes()), "size": other.len()}
            ]
        }))
        .unwrap();
        assert!(
            entry
                .verify("skill://pdf/SKILL.md", body.as_bytes())
                .is_ok()
        );
        assert!(
            entry
                .verify("skill://pdf/FORMS.md", other.as_bytes())
                .is_ok()
        );
        let grown = format!("{other}extra");
        assert!(matches!(
            entry.verify("skill://pdf/FORMS.md", grown.as_bytes()),
            Err(SkillMismatch::Size { .. })
        ));
        let changed = other.replace('S', "s");
        assert_eq!(
            entry.verify("skill://pdf/FORMS.md", changed.as_bytes()),
            Err(SkillMismatch::Digest("skill://pdf/FORMS.md".into()))
        );
        assert!(matches!(
            entry.verify("skill://pdf/x", b""),
            Err(SkillMismatch::NotListed(_))
        ));
        let dynamic: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://d/SKILL.md", "frontmatter": {"name": "d"}, "resources": "dynamic"
        }))
        .unwrap();
        assert!(dynamic.resources.is_none());
        assert_eq!(
            serde_json::to_value(&dynamic).unwrap()["resources"],
            "dynamic"
        );
        assert_eq!(
            digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
