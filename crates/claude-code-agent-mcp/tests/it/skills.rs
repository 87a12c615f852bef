//! Skills (SEP-2640) served by our server ([`ServerBuilder::skill`]) and
//! read back by our client: the extension declared, `skills/list` and
//! `skills/get`, every file verified against its entry, a skill's
//! directories listed (`resources/directory/read`), at both kinds of
//! revision.
//!
//! [`ServerBuilder::skill`]: claude_code_agent_mcp::server::ServerBuilder::skill

use claude_code_agent_mcp::Server;
use claude_code_agent_mcp::client::{ClientOptions, HandshakeMode, InProcessTransport, McpClient};
use claude_code_agent_mcp::server::Skill;
use claude_code_agent_mcp::types::SKILLS_EXTENSION;
use claude_code_agent_mcp::types::skills::{SKILL_MD, digest};
use serde_json::json;

const FORMS: &str = "# Forms\n\nFill each field.\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00];

fn server() -> Server {
    let from_text = "---\nname: commit-messages\ndescription: Write commit messages\nlicense: MIT\n---\n\nSay why.\n";
    Server::builder("skills", "1")
        .skill(
            Skill::new(
                "pdf-processing",
                "Extract, fill: and assemble \"PDF\" documents",
                "For forms, read references/FORMS.md.\n",
            )
            .file("references/FORMS.md", FORMS)
            .file("assets/logo.png", LOGO),
        )
        .skill(Skill::from_skill_md(from_text).unwrap())
        .build()
}

async fn check(handshake: HandshakeMode) {
    let options = ClientOptions::new("host", "1")
        .handshake(handshake)
        .extension(SKILLS_EXTENSION, json!({}));
    let client = McpClient::connect(InProcessTransport::new(server()), options)
        .await
        .unwrap();
    assert!(client.server_extensions().get(SKILLS_EXTENSION).is_some());

    let skills = client.list_skills().await.unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://commit-messages/SKILL.md"
        ]
    );
    let pdf = &skills[0];
    assert_eq!(pdf.name(), Some("pdf-processing"));
    assert_eq!(
        pdf.description(),
        Some("Extract, fill: and assemble \"PDF\" documents")
    );
    let forms = pdf
        .file("skill://pdf-processing/references/FORMS.md")
        .unwrap();
    assert_eq!(
        (forms.size, forms.digest.as_str()),
        (FORMS.len() as u64, digest(FORMS.as_bytes()).as_str())
    );
    assert_eq!(skills[1].frontmatter["license"], "MIT");

    // skills/get gives the listed entry; an unknown URI is -32602.
    let got = client.get_skill(&pdf.uri).await.unwrap();
    assert_eq!(&got, pdf);
    let unknown = client
        .get_skill("skill://nothing/SKILL.md")
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some(-32602), "{unknown}");

    // Every file reads back as its entry lists it (SKILL.md's frontmatter
    // included), text and bytes alike.
    for skill in &skills {
        for file in skill.resources.as_ref().unwrap() {
            let bytes = client.read_skill_file(skill, &file.uri).await.unwrap();
            assert_eq!(bytes.len() as u64, file.size, "{}", file.uri);
        }
    }
    let logo = client
        .read_skill_file(pdf, "skill://pdf-processing/assets/logo.png")
        .await
        .unwrap();
    assert_eq!(logo, LOGO);

    // The extension declares `directoryRead`: a skill's directories list
    // their direct children, a subdirectory as `inode/directory`; a file
    // is not a directory (-32602).
    let settings = client.server_extensions().get(SKILLS_EXTENSION).cloned();
    assert_eq!(settings.unwrap().get("directoryRead"), Some(&json!(true)));
    let read_dir =
        |uri: &str| client.send_request("resources/directory/read", Some(json!({"uri": uri})));
    let root = read_dir("skill://pdf-processing").await.unwrap();
    let children: Vec<(&str, Option<&str>)> = root["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str()))
        .collect();
    assert_eq!(
        children,
        [
            ("skill://pdf-processing/SKILL.md", Some("text/markdown")),
            ("skill://pdf-processing/references", Some("inode/directory")),
            ("skill://pdf-processing/assets", Some("inode/directory")),
        ]
    );
    let references = read_dir("skill://pdf-processing/references/")
        .await
        .unwrap();
    assert_eq!(
        references["resources"][0]["uri"],
        "skill://pdf-processing/references/FORMS.md"
    );
    let not_a_directory = read_dir(&pdf.uri).await.unwrap_err();
    assert_eq!(not_a_directory.code(), Some(-32602), "{not_a_directory}");

    // SKILL.md is a resource named and described as its skill.
    let resources = client.list_resources().await.unwrap();
    let skill_md = resources.iter().find(|r| r.uri == pdf.uri).unwrap();
    assert_eq!(skill_md.name, "pdf-processing");
    assert_eq!(skill_md.mime_type.as_deref(), Some("text/markdown"));
    assert!(pdf.uri.ends_with(SKILL_MD));
}

#[tokio::test]
async fn skills_are_listed_got_and_read_verified_with_initialize() {
    check(HandshakeMode::Initialize).await;
}

#[tokio::test]
async fn skills_are_listed_got_and_read_verified_with_discover() {
    check(HandshakeMode::Discover).await;
}

#[test]
#[should_panic(expected = "not a skill name")]
fn a_skill_name_outside_the_rules_is_refused() {
    let _ = Skill::new("PDF", "d", "");
}
