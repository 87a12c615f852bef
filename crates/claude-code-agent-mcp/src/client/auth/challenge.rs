//! The `Bearer` and `DPoP` challenges of a `WWW-Authenticate` header (RFC
//! 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1): `error`, `scope`,
//! `resource_metadata`.

/// What a server's `Bearer` challenge says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) error: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) resource_metadata: Option<String>,
    /// A `DPoP` challenge with `error="use_dpop_nonce"`.
    pub(crate) use_dpop_nonce: bool,
}

impl Challenge {
    /// What the `Bearer` and `DPoP` challenges among those of `header` (the
    /// values of every `WWW-Authenticate` header, joined with `, `) say,
    /// the first to give a parameter winning; the default when there is
    /// none or it does not parse.
    pub(crate) fn parse(header: &str) -> Self {
        let mut out = Self::default();
        let mut scheme = Scheme::Other;
        let mut rest = header.trim_start();
        while !rest.is_empty() {
            let (token, after) = take_token(rest);
            let after = after.trim_start();
            if token.is_empty() {
                // A stray separator (or garbage): skip one character.
                let mut chars = rest.chars();
                chars.next();
                rest = chars.as_str().trim_start();
                continue;
            }
            if let Some(value_part) = after.strip_prefix('=') {
                let (value, after_value) = take_value(value_part.trim_start());
                if scheme != Scheme::Other {
                    let name = token.to_ascii_lowercase();
                    if scheme == Scheme::Dpop && name == "error" && value == "use_dpop_nonce" {
                        out.use_dpop_nonce = true;
                    } else {
                        let mut ignored = None;
                        let slot = match name.as_str() {
                            "error" => &mut out.error,
                            "scope" => &mut out.scope,
                            "resource_metadata" => &mut out.resource_metadata,
                            _ => &mut ignored,
                        };
                        slot.get_or_insert(value);
                    }
                }
                rest = after_value.trim_start();
            } else {
                // A token without `=`: an auth scheme begins.
                scheme = if token.eq_ignore_ascii_case("bearer") {
                    Scheme::Bearer
                } else if token.eq_ignore_ascii_case("dpop") {
                    Scheme::Dpop
                } else {
                    Scheme::Other
                };
                rest = after;
            }
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        out
    }

    /// The scopes the challenge names.
    pub(crate) fn scopes(&self) -> Vec<String> {
        self.scope
            .as_deref()
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

#[derive(PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
    Other,
}

fn take_token(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| c.is_whitespace() || c == '=' || c == ',' || c == '"')
        .unwrap_or(s.len());
    s.split_at(end)
}

/// A quoted string (with `\` escapes) or a token; what follows it.
fn take_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = s
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(s.len());
        (s[..end].to_owned(), &s[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_parameters_are_read() {
        let c = Challenge::parse(
            r#"Bearer error="invalid_token", error_description="Missing \"Authorization\" header", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scopes(), ["a", "b"]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn only_the_bearer_and_dpop_challenges_count() {
        let c = Challenge::parse(
            r#"Basic realm="x", scope="no", Bearer scope=yes, DPoP scope="later", error="use_dpop_nonce""#,
        );
        assert_eq!(c.scope.as_deref(), Some("yes"));
        assert!(c.use_dpop_nonce);
        assert_eq!(c.error, None);
        let c = Challenge::parse(r#"DPoP error="invalid_token", resource_metadata="m""#);
        assert!(!c.use_dpop_nonce);
        assert_eq!(
            (c.error.as_deref(), c.resource_metadata.as_deref()),
            (Some("invalid_token"), Some("m"))
        );
        assert_eq!(Challenge::parse("Basic realm=x"), Challenge::default());
        assert_eq!(Challenge::parse(""), Challenge::default());
        assert_eq!(
            Challenge::parse(r#"Bearer scope="unterminated"#)
                .scope
                .as_deref(),
            Some("unterminated")
        );
        assert_eq!(Challenge::parse("bearer").error, None);
        assert_eq!(Challenge::parse(",,= =\"").error, None);
    }
}
