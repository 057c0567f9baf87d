//! MCP server connection parameters, shaped as in the Python ipybox: stdio
//! `{command, args, env, cwd}` or HTTP `{url, headers}`, with an optional `type`
//! (`stdio` | `streamable_http` | `sse`). `${VAR}` placeholders anywhere are replaced from
//! ipybox's environment and the workspace's `.env` file at connect time, so the values never
//! reach generated code or the registry.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ServerParams {
    /// `stdio`, `streamable_http` or `sse`; inferred when absent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub kind: Option<TransportKind>,
    /// Program to run (stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub command: Option<String>,
    /// Its arguments (stdio).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment variables of the server process (stdio).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Working directory of the server process (stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub cwd: Option<String>,
    /// Server URL (HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub url: Option<String>,
    /// HTTP headers sent with every request (HTTP).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// The transport of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio,
    /// MCP Streamable HTTP.
    StreamableHttp,
    /// The legacy HTTP+SSE transport (protocol 2024-11-05).
    Sse,
}

impl ServerParams {
    /// A stdio server: `command` with `args`, `env`, in `cwd`.
    pub fn program(
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    ) -> ServerParams {
        ServerParams {
            kind: None,
            command: Some(command),
            args,
            env,
            cwd,
            url: None,
            headers: BTreeMap::new(),
        }
    }

    /// Parse parameters from JSON, with a message that says what is wrong.
    pub fn from_json(value: &serde_json::Value) -> Result<Self> {
        let params: ServerParams = serde_json::from_value(value.clone())
            .map_err(|e| Error::config("invalid MCP server parameters").because(e))?;
        params.transport()?;
        Ok(params)
    }

    /// The transport, checked against the fields present: explicit `type`, else `command` →
    /// stdio, else a URL containing `/sse` → SSE, else Streamable HTTP.
    pub fn transport(&self) -> Result<TransportKind> {
        let kind = match (self.kind, &self.command, &self.url) {
            (Some(k), _, _) => k,
            (None, Some(_), None) => TransportKind::Stdio,
            (None, None, Some(url)) if url.contains("/sse") => TransportKind::Sse,
            (None, None, Some(_)) => TransportKind::StreamableHttp,
            (None, Some(_), Some(_)) => {
                return Err(Error::config(
                    "MCP server parameters have both `command` and `url`; give one (or set `type`)",
                ));
            }
            (None, None, None) => {
                return Err(Error::config(
                    "MCP server parameters need `command` (stdio) or `url` (HTTP)",
                ));
            }
        };
        match kind {
            TransportKind::Stdio if self.command.is_none() => {
                Err(Error::config("a stdio MCP server needs `command`"))
            }
            TransportKind::StreamableHttp | TransportKind::Sse if self.url.is_none() => {
                Err(Error::config("an HTTP MCP server needs `url`"))
            }
            k => Ok(k),
        }
    }

    /// A one-line description for approval prompts and logs: the command line or the URL,
    /// with placeholders left unresolved (no secrets).
    pub fn summary(&self) -> String {
        match (&self.command, &self.url) {
            (Some(cmd), _) => {
                let mut s = cmd.clone();
                for a in &self.args {
                    s.push(' ');
                    s.push_str(a);
                }
                s
            }
            (None, Some(url)) => url.clone(),
            (None, None) => String::from("(no command or URL)"),
        }
    }

    /// What will run, with every `${VAR}` resolved, for an approval request: a person must
    /// see where a call goes, also when `.env` decides it. Secrets are masked: values of
    /// variables and environment entries whose names say they are secret (`*_KEY`,
    /// `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, …) and the values of authentication headers.
    /// Unknown variables stay as written.
    pub fn describe(&self, vars: &Variables) -> String {
        let show = |s: &str| vars.substitute_masked(s);
        let mut out = match (&self.command, &self.url) {
            (Some(cmd), _) => {
                let mut s = show(cmd);
                for a in &self.args {
                    s.push(' ');
                    s.push_str(&show(a));
                }
                s
            }
            (None, Some(url)) => show(url),
            (None, None) => String::from("(no command or URL)"),
        };
        for (k, v) in &self.env {
            let v = if is_secret_name(k) {
                MASK.to_owned()
            } else {
                show(v)
            };
            out.push_str(&format!(" [env {k}={v}]"));
        }
        for (k, v) in &self.headers {
            let v = if is_secret_header(k) {
                MASK.to_owned()
            } else {
                show(v)
            };
            out.push_str(&format!(" [header {k}: {v}]"));
        }
        if let Some(cwd) = &self.cwd {
            out.push_str(&format!(" [in {}]", show(cwd)));
        }
        out
    }

    /// A copy with every `${VAR}` replaced from `vars`. An unknown variable is an error
    /// naming it.
    pub fn resolve(&self, vars: &Variables) -> Result<ServerParams> {
        let sub = |s: &str| vars.substitute(s);
        Ok(ServerParams {
            kind: self.kind,
            command: self.command.as_deref().map(sub).transpose()?,
            args: self.args.iter().map(|a| sub(a)).collect::<Result<_>>()?,
            env: self
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), sub(v)?)))
                .collect::<Result<_>>()?,
            cwd: self.cwd.as_deref().map(sub).transpose()?,
            url: self.url.as_deref().map(sub).transpose()?,
            headers: self
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), sub(v)?)))
                .collect::<Result<_>>()?,
        })
    }
}

/// What a masked secret shows.
const MASK: &str = "••••••";

/// Does a variable or environment entry of this name hold a secret?
pub(crate) fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n.ends_with("KEY")
        || n.ends_with("_PAT")
        || [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "PRIVATE",
            "AUTH",
            "COOKIE",
            "SESSION",
        ]
        .iter()
        .any(|s| n.contains(s))
}

/// Does an HTTP header of this name carry credentials?
pub(crate) fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization" || n == "proxy-authorization" || n == "cookie" || is_secret_name(name)
}

/// The variable that names the workspace in server parameters (`"args": ["${WORKSPACE}"]`).
pub const WORKSPACE_VAR: &str = "WORKSPACE";

/// Where a `${VAR}` gets its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum VariableSource {
    /// `${WORKSPACE}`: the workspace's path.
    Workspace,
    /// The workspace's `.env` file.
    DotEnv,
    /// ipybox's environment.
    Environment,
}

/// Values for `${VAR}` substitution: the workspace's `.env` file over ipybox's environment,
/// and `${WORKSPACE}`, the workspace's path.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    vars: BTreeMap<String, String>,
}

impl Variables {
    /// ipybox's environment plus `workspace/.env` (which wins), if it exists.
    pub fn load(workspace: Option<&Path>) -> Result<Variables> {
        let mut vars: BTreeMap<String, String> = std::env::vars().collect();
        if let Some(ws) = workspace {
            let path = ws.join(".env");
            if path.exists() {
                let iter = dotenvy::from_path_iter(&path).map_err(|e| {
                    Error::config(format!("cannot read {}", path.display())).because(e)
                })?;
                for item in iter {
                    let (k, v) = item.map_err(|e| {
                        Error::config(format!("invalid line in {}", path.display())).because(e)
                    })?;
                    vars.insert(k, v);
                }
            }
            vars.insert(WORKSPACE_VAR.to_owned(), ws.to_string_lossy().into_owned());
        }
        Ok(Variables { vars })
    }

    /// Variables from an explicit map (tests, embedders).
    pub fn from_map(vars: BTreeMap<String, String>) -> Variables {
        Variables { vars }
    }

    /// All variables.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Where `${name}` would come from (`None`: it is not defined), never its value.
    pub fn source(&self, name: &str) -> Option<VariableSource> {
        let value = self.vars.get(name)?;
        Some(if name == WORKSPACE_VAR {
            VariableSource::Workspace
        } else if std::env::var(name).is_ok_and(|v| v == *value) {
            VariableSource::Environment
        } else {
            VariableSource::DotEnv
        })
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// `s` with known `${NAME}`s replaced, secret ones masked, unknown or malformed ones
    /// kept as written.
    fn substitute_masked(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                break;
            };
            let name = &after[..end];
            match self.vars.get(name) {
                Some(_) if is_secret_name(name) => out.push_str(MASK),
                Some(value) => out.push_str(value),
                None => out.push_str(&rest[start..start + 3 + end]),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Replace every `${NAME}` in `s`. `$` not followed by `{` is kept.
    pub fn substitute(&self, s: &str) -> Result<String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| {
                Error::config(format!("unterminated ${{…}} placeholder in {s:?}"))
            })?;
            let name = &after[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(Error::config(format!(
                    "invalid placeholder ${{{name}}} in MCP server parameters"
                )));
            }
            let value = self.vars.get(name).ok_or_else(|| {
                Error::config(format!(
                    "the MCP server parameters use ${{{name}}}, but {name} is set neither in the environment nor in the workspace's .env file"
                ))
            })?;
            out.push_str(value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Variables {
        Variables::from_map(BTreeMap::from([
            ("TOKEN".into(), "s3cret".into()),
            ("HOST".into(), "h".into()),
        ]))
    }

    #[test]
    fn infers_the_transport() {
        let p = |v: serde_json::Value| {
            ServerParams::from_json(&v)
                .expect("valid")
                .transport()
                .expect("kind")
        };
        assert_eq!(
            p(serde_json::json!({"command": "npx", "args": ["x"]})),
            TransportKind::Stdio
        );
        assert_eq!(
            p(serde_json::json!({"url": "http://h/mcp"})),
            TransportKind::StreamableHttp
        );
        assert_eq!(
            p(serde_json::json!({"url": "http://h/sse"})),
            TransportKind::Sse
        );
        assert_eq!(
            p(serde_json::json!({"url": "http://h/sse", "type": "streamable_http"})),
            TransportKind::StreamableHttp
        );
    }

    #[test]
    fn rejects_incomplete_and_unknown_parameters() {
        for bad in [
            serde_json::json!({}),
            serde_json::json!({"command": "x", "url": "http://h"}),
            serde_json::json!({"type": "sse", "command": "x"}),
            serde_json::json!({"command": "x", "shell": true}),
        ] {
            assert!(ServerParams::from_json(&bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn substitutes_placeholders_everywhere_and_names_unknown_ones() {
        let p = ServerParams::from_json(&serde_json::json!({
            "url": "http://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}
        }))
        .expect("valid");
        let r = p.resolve(&vars()).expect("resolves");
        assert_eq!(r.url.as_deref(), Some("http://h/mcp"));
        assert_eq!(r.headers["Authorization"], "Bearer s3cret");
        assert_eq!(
            p.summary(),
            "http://${HOST}/mcp",
            "summaries keep placeholders"
        );
        let err = vars()
            .substitute("a ${MISSING} b")
            .expect_err("unknown variable");
        assert!(err.to_string().contains("MISSING"), "{err}");
        assert_eq!(
            vars().substitute("$HOME and $$").expect("ok"),
            "$HOME and $$",
            "bare $ is kept"
        );
    }

    #[test]
    fn descriptions_resolve_placeholders_and_mask_secrets() {
        let p = ServerParams::from_json(&serde_json::json!({
            "url": "https://${HOST}/mcp?k=${TOKEN}",
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Mode": "${HOST}"}
        }))
        .expect("valid");
        let d = p.describe(&vars());
        assert!(d.starts_with("https://h/mcp?k=••••••"), "{d}");
        assert!(d.contains("[header Authorization: ••••••]"), "{d}");
        assert!(d.contains("[header X-Mode: h]"), "{d}");
        assert!(!d.contains("s3cret"), "{d}");
        let p = ServerParams::from_json(&serde_json::json!({
            "command": "npx", "args": ["${UNKNOWN}", "${HOST}"], "env": {"API_KEY": "literal", "MODE": "${HOST}"}
        }))
        .expect("valid");
        assert_eq!(
            p.describe(&vars()),
            "npx ${UNKNOWN} h [env API_KEY=••••••] [env MODE=h]"
        );
    }

    #[test]
    fn the_workspace_is_a_variable_env_cannot_override() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(".env"), "WORKSPACE=/elsewhere\n").expect("write");
        let v = Variables::load(Some(dir.path())).expect("loads");
        assert_eq!(v.get("WORKSPACE"), dir.path().to_str());
    }

    #[test]
    fn dotenv_file_overrides_the_environment() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(".env"),
            "# comment\nIPYBOX_DOTENV_TEST=\"from file\"\nPATH=overridden\n",
        )
        .expect("write");
        let v = Variables::load(Some(dir.path())).expect("loads");
        assert_eq!(v.get("IPYBOX_DOTENV_TEST"), Some("from file"));
        assert_eq!(
            v.get("PATH"),
            Some("overridden"),
            ".env wins over the environment"
        );
    }
}
