//! Skills a server serves (SEP-2640, see [`types::skills`](crate::types::skills)):
//! [`Skill`], added with [`ServerBuilder::skill`](super::ServerBuilder::skill).
//! Each file of a skill is a resource (`skill://<name>/<path>`); `skills/list`
//! and `skills/get` describe the skills, every file with its size and digest;
//! `resources/directory/read` lists a skill's directory (`skill://<name>`,
//! `skill://<name>/references`): its files, and its subdirectories as
//! resources of type `inode/directory`.

use serde_json::{Map, Value};

use super::resource::{Resource, ResourceRequest};
use crate::jsonrpc::ErrorObject;
use crate::types::ResourceContents;
use crate::types::skills::{self, GetSkillResult, SKILL_MD, SkillEntry, SkillFile};

/// The URI scheme of skills.
const SKILL_SCHEME: &str = "skill://";

/// The MIME type `SKILL.md` is served with.
const MARKDOWN: &str = "text/markdown";

/// The MIME type of a subdirectory in `resources/directory/read`.
const DIRECTORY: &str = "inode/directory";

/// A skill a server serves: its `SKILL.md` (YAML frontmatter with at least
/// `name` and `description`, then the instructions) and other files. The
/// server lists every file with its size and SHA-256 digest, computed
/// here.
///
/// ```
/// use claude_code_agent_mcp::Server;
/// use claude_code_agent_mcp::server::Skill;
///
/// let pdf = Skill::new("pdf-processing", "Fill PDF forms", "Read references/FORMS.md first.\n")
///     .file("references/FORMS.md", "# Forms\n");
/// assert_eq!(pdf.entry().uri, "skill://pdf-processing/SKILL.md");
/// assert_eq!(pdf.entry().resources.as_ref().unwrap().len(), 2);
/// let server = Server::builder("skills", "1").skill(pdf).build();
/// # drop(server);
/// ```
#[derive(Debug, Clone)]
pub struct Skill {
    name: String,
    description: String,
    frontmatter: Map<String, Value>,
    /// `(path within the skill, bytes)`, `SKILL.md` first.
    files: Vec<(String, Vec<u8>)>,
}

impl Skill {
    /// A skill named `name` (1 to 64 lowercase letters, digits and single
    /// hyphens, as Agent Skills names are) whose `SKILL.md` has `name` and
    /// `description` as its frontmatter and `instructions` after it.
    ///
    /// # Panics
    ///
    /// When `name` is not a valid skill name.
    pub fn new(name: &str, description: &str, instructions: &str) -> Self {
        let quoted = serde_json::to_string(description).unwrap_or_default();
        let text = format!("---\nname: {name}\ndescription: {quoted}\n---\n\n{instructions}");
        Self::from_skill_md(text).unwrap_or_else(|why| panic!("{why}"))
    }

    /// A skill from the text of its `SKILL.md`: its frontmatter (read by
    /// [`skills::frontmatter`]) must have a valid `name` and a
    /// `description`; an error says what is wrong.
    pub fn from_skill_md(text: impl Into<String>) -> Result<Self, String> {
        let text = text.into();
        let frontmatter = skills::frontmatter(&text)?;
        let field = |key: &str| {
            frontmatter
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| format!("the frontmatter of SKILL.md has no {key}"))
        };
        let (name, description) = (field("name")?, field("description")?);
        if !valid_name(&name) {
            return Err(format!(
                "{name:?} is not a skill name (1 to 64 of a-z, 0-9 and single inner hyphens)"
            ));
        }
        Ok(Self {
            name,
            description,
            frontmatter,
            files: vec![(SKILL_MD.to_owned(), text.into_bytes())],
        })
    }

    /// Adds a file at `path` within the skill (`references/FORMS.md`),
    /// served as a resource: text when it is UTF-8, else a blob. A file
    /// at a path already added replaces it.
    ///
    /// # Panics
    ///
    /// When `path` is empty, absolute, has an empty, `.` or `..` segment,
    /// or is `SKILL.md`.
    pub fn file(mut self, path: &str, content: impl Into<Vec<u8>>) -> Self {
        assert!(
            path != SKILL_MD
                && !path
                    .split('/')
                    .any(|s| s.is_empty() || s == "." || s == ".."),
            "{path:?} is not a path for a file within a skill"
        );
        let content = content.into();
        match self.files.iter_mut().find(|(p, _)| p == path) {
            Some(file) => file.1 = content,
            None => self.files.push((path.to_owned(), content)),
        }
        self
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The skill as `skills/list` describes it.
    pub fn entry(&self) -> SkillEntry {
        let resources = (self.files.iter())
            .map(|(path, bytes)| SkillFile {
                uri: self.uri(path),
                digest: skills::digest(bytes),
                size: bytes.len() as u64,
                extra: Map::new(),
            })
            .collect();
        SkillEntry {
            uri: self.uri(SKILL_MD),
            frontmatter: self.frontmatter.clone(),
            resources: Some(resources),
            extra: Map::new(),
        }
    }

    fn uri(&self, path: &str) -> String {
        format!("{SKILL_SCHEME}{}/{path}", self.name)
    }

    /// The resources serving its files: `SKILL.md` named and described
    /// as the skill is, of type `text/markdown`.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        (self.files.iter())
            .map(|(path, bytes)| {
                let uri = self.uri(path);
                let contents = match std::str::from_utf8(bytes) {
                    Ok(text) => ResourceContents::text(&uri, text),
                    Err(_) => {
                        ResourceContents::blob(&uri, crate::transport::mcp_headers::base64(bytes))
                    }
                };
                let read = move |_: ResourceRequest| std::future::ready(contents.clone());
                let skill_md = path == SKILL_MD;
                let name = if skill_md { &self.name } else { path };
                let resource = Resource::new(uri, name, read).size(bytes.len() as u64);
                match skill_md {
                    true => resource.description(&self.description).mime_type(MARKDOWN),
                    false => resource,
                }
            })
            .collect()
    }
}

/// Whether `name` follows the Agent Skills naming rules.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is `params.uri`;
/// `-32602` for one the server does not serve.
pub(crate) fn get(
    skills: &[SkillEntry],
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params("skills/get needs a string \"uri\""))?;
    let skill = (skills.iter().find(|s| s.uri == uri)).ok_or_else(|| {
        ErrorObject::invalid_params(format!("no skill at {uri}"))
            .with_data(serde_json::json!({"uri": uri}))
    })?;
    serde_json::to_value(GetSkillResult::new(skill.clone()))
        .map_err(|e| ErrorObject::internal(e.to_string()))
}

/// An entry of a skill's directory: a file (its URI) or a subdirectory
/// (its URI and name).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Child {
    File(String),
    Directory(String, String),
}

impl Child {
    /// The entry as a resource: a file as `resources/list` describes it
    /// (`describe` gives that, when it is a resource), a subdirectory
    /// with its name and the type `inode/directory`.
    pub(crate) fn resource(&self, describe: impl Fn(&str) -> Option<Value>) -> Value {
        match self {
            Child::File(uri) => describe(uri).unwrap_or_else(|| {
                let name = uri.rsplit('/').next().unwrap_or(uri);
                serde_json::json!({"uri": uri, "name": name})
            }),
            Child::Directory(uri, name) => {
                serde_json::json!({"uri": uri, "name": name, "mimeType": DIRECTORY})
            }
        }
    }
}

/// The direct children of the directory `uri` (a skill's root,
/// `skill://<name>`, or a directory within it, with or without a trailing
/// `/`), files and subdirectories in the order of the skill's files; `None`
/// when `uri` is not a directory of a skill served.
pub(crate) fn children(skills: &[SkillEntry], uri: &str) -> Option<Vec<Child>> {
    let dir = uri.strip_suffix('/').unwrap_or(uri);
    let skill = skills.iter().find(|s| {
        let root = s.uri.strip_suffix(SKILL_MD).unwrap_or(&s.uri);
        let root = root.strip_suffix('/').unwrap_or(root);
        dir == root || dir.strip_prefix(root).is_some_and(|r| r.starts_with('/'))
    })?;
    let mut children = Vec::new();
    for file in skill.resources.iter().flatten() {
        let Some(rest) = file.uri.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        let child = match rest.split_once('/') {
            None => Child::File(file.uri.clone()),
            Some((name, _)) => Child::Directory(format!("{dir}/{name}"), name.to_owned()),
        };
        if !children.contains(&child) {
            children.push(child);
        }
    }
    (!children.is_empty()).then_some(children)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        assert!(valid_name("pdf-processing") && valid_name("a") && valid_name("x1"));
        for bad in ["", "-a", "a-", "a--b", "Pdf", "a_b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(Skill::from_skill_md("---\nname: Bad\ndescription: d\n---\n").is_err());
        assert!(Skill::from_skill_md("---\nname: ok\n---\n").is_err());
    }

    #[test]
    fn the_entry_lists_every_file_and_skill_md_reads_back_as_the_frontmatter() {
        let skill =
            Skill::new("s", "Quotes \"and\": colons", "Body.\n").file("a/b.bin", vec![0xff, 0]);
        let entry = skill.entry();
        assert_eq!(entry.description(), Some("Quotes \"and\": colons"));
        let text = &skill.files[0].1;
        assert!(entry.verify("skill://s/SKILL.md", text).is_ok());
        assert!(entry.verify("skill://s/a/b.bin", &[0xff, 0]).is_ok());
        let resources = skill.resources();
        assert_eq!(resources[0].info().name, "s");
        assert_eq!(resources[0].info().mime_type.as_deref(), Some(MARKDOWN));
        assert_eq!(resources[1].info().uri, "skill://s/a/b.bin");
    }

    #[test]
    fn a_directory_lists_its_files_and_subdirectories() {
        let skill = Skill::new("s", "d", "")
            .file("a/b.md", "b")
            .file("a/c/d.md", "d")
            .file("e.md", "e");
        let skills = [skill.entry()];
        let file = |u: &str| Child::File(u.to_owned());
        let dir = |u: &str, n: &str| Child::Directory(u.to_owned(), n.to_owned());
        let root = [
            file("skill://s/SKILL.md"),
            dir("skill://s/a", "a"),
            file("skill://s/e.md"),
        ];
        assert_eq!(children(&skills, "skill://s").unwrap(), root);
        assert_eq!(children(&skills, "skill://s/").unwrap(), root);
        assert_eq!(
            children(&skills, "skill://s/a").unwrap(),
            [file("skill://s/a/b.md"), dir("skill://s/a/c", "c")]
        );
        for not_a_directory in ["skill://s/e.md", "skill://s/x", "skill://t", "skill://sa"] {
            assert_eq!(
                children(&skills, not_a_directory),
                None,
                "{not_a_directory}"
            );
        }
    }
}
