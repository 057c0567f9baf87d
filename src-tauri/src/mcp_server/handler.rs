//! The server's tools, for one MCP session: each runs in the session's kernel, entered once
//! through [`IpyboxMcpServer::enter`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    InitializeRequestParams, InitializeResult, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::params::{
    ExecuteParams, InstallParams, ListToolsParams, RegisterParams, SaveCodeActionParams,
};
use super::pool::{Busy, Pool, Session, Slot, Workspace};
use super::{ActivityListener, AgentActivity, McpServerConfig};
use crate::error::{Error, Result};
use crate::executor::CodeExecutor;
use crate::mcp::ServerParams;

/// The tools of ipybox's MCP server (the Python ipybox's four, and two for code actions),
/// for one MCP session.
#[derive(Debug, Clone)]
pub struct IpyboxMcpServer {
    pub(super) workspace: Arc<Workspace>,
    pub(super) slot: Arc<Slot>,
    pub(super) tool_router: ToolRouter<Self>,
}

/// What a tool needs of its session's kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kernel {
    /// Started (the tool runs code).
    Started,
    /// As it is: the tool runs no code of its own in it.
    AsItIs,
}

/// What `list_tools` says: every registered server's tools with their interfaces, then every
/// saved code action's `api.py`; `only` narrows it to one server or category.
pub(super) fn tool_listing(workspace: &std::path::Path, only: Option<&str>) -> Result<String> {
    use std::fmt::Write as _;
    let registry = crate::registry::Registry::load(&crate::home::ipybox_home()?, workspace)?;
    let mut out = String::new();
    let mut servers = 0;
    for (server, tools) in &registry.tools {
        if only.is_some_and(|o| o != server) {
            continue;
        }
        servers += 1;
        let _ = writeln!(
            out,
            "## MCP server {server}: mcptools.{server}
"
        );
        for t in tools {
            let _ = writeln!(
                out,
                "### mcptools.{server}.{module} (tool \"{tool}\")\n",
                module = t.module,
                tool = t.tool
            );
            match (&t.interface, &t.description) {
                (Some(interface), _) => {
                    let _ = writeln!(out, "```python\n{}\n```\n", interface.trim_end());
                }
                (None, Some(d)) => {
                    let _ = writeln!(
                        out,
                        "{d}\n(read mcptools/{server}/{}.py for its parameters)\n",
                        t.module
                    );
                }
                (None, None) => {
                    let _ = writeln!(out, "(read mcptools/{server}/{}.py)\n", t.module);
                }
            }
        }
    }
    let actions = crate::apigen::codeaction::interfaces(workspace, only);
    for (module, api) in &actions {
        let _ = writeln!(
            out,
            "## saved code action {module}\n\n```python\n{}\n```\n",
            api.trim_end()
        );
    }
    if servers == 0 && actions.is_empty() {
        return Ok(match only {
            Some(o) => format!(
                "no registered MCP server and no category of saved code actions is called {o:?}"
            ),
            None => "no MCP server is registered and no code action is saved yet: register a server with register_mcp_server, or save working code with save_code_action".into(),
        });
    }
    Ok(out.trim_end().to_owned())
}

/// A failed tool call, worded as the Python ipybox's (FastMCP's) are: a program that reads
/// `Error executing tool <name>: ` finds it here too.
pub(super) fn failure(tool: &str, message: impl std::fmt::Display) -> CallToolResult {
    failure_with(tool, message, Vec::new())
}

/// A failed tool call with `more` content after the first block.
pub(super) fn failure_with(
    tool: &str,
    message: impl std::fmt::Display,
    more: Vec<ContentBlock>,
) -> CallToolResult {
    let mut content = vec![ContentBlock::text(format!(
        "Error executing tool {tool}: {message}"
    ))];
    content.extend(more);
    CallToolResult::error(content)
}

/// Cut `text` to at most `max` characters, marked as the Python ipybox marks it.
pub(super) fn truncate_output(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}\n\n[Output truncated: exceeded {max} character limit]",
            &text[..cut]
        ),
    }
}

/// Run `code`, collecting its text as the Python ipybox does: what it printed and the
/// `text/plain` of what it displayed (images' too), in order, stripped. The engine's own
/// text leaves an image's `text/plain` out.
pub(super) async fn run_cell(
    session: &Session,
    code: &str,
    timeout: Option<Duration>,
    activity: Option<&ActivityListener>,
) -> (String, Result<crate::executor::CodeExecutionResult>) {
    use crate::executor::{Event, Output, StreamOptions};
    use futures_util::StreamExt;
    let origin = session.origin();
    let mut stream = session.executor.stream(
        code,
        StreamOptions {
            timeout,
            outputs: true,
            input: false,
            origin: Some(origin.clone()),
            ..Default::default()
        },
    );
    let execution_id = stream.id().to_owned();
    let tell = |what: AgentActivity| {
        if let Some(listener) = activity {
            listener.tell(what);
        }
    };
    tell(AgentActivity::CellQueued {
        session: session.serial,
        name: origin,
        execution_id: execution_id.clone(),
        code: code.to_owned(),
    });
    let mut text = String::new();
    let mut outcome = Err(Error::KernelDied {
        reason: "the execution ended without a result".into(),
        output: Box::default(),
    });
    while let Some(event) = stream.next().await {
        match &event {
            Ok(Event::Started { execution_count }) => tell(AgentActivity::CellStarted {
                session: session.serial,
                execution_id: execution_id.clone(),
                execution_count: *execution_count,
            }),
            Ok(Event::Output(output)) => tell(AgentActivity::CellOutput {
                session: session.serial,
                execution_id: execution_id.clone(),
                output: output.clone(),
            }),
            _ => {}
        }
        match event {
            Ok(Event::Output(Output::Stream { text: t, .. })) => text.push_str(&t),
            Ok(Event::Output(
                Output::DisplayData { data, .. } | Output::ExecuteResult { data, .. },
            )) => match data.get("text/plain") {
                Some(serde_json::Value::String(plain)) => text.push_str(plain),
                Some(serde_json::Value::Array(lines)) => {
                    text.extend(lines.iter().filter_map(serde_json::Value::as_str));
                }
                _ => {}
            },
            Ok(Event::Result(result)) => {
                outcome = Ok(result);
                break;
            }
            Ok(_) => {}
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    tell(AgentActivity::CellFinished {
        session: session.serial,
        execution_id,
        error: match &outcome {
            Ok(_) | Err(Error::CodeExecution { .. }) => None,
            Err(e) => Some(e.to_string()),
        },
    });
    // Python's str.strip(): Unicode whitespace, and the separators \x1c-\x1f.
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c));
    (trimmed.to_owned(), outcome)
}

#[tool_router(vis = "pub(super)")]
impl IpyboxMcpServer {
    /// A server with one session (as over stdio); its kernel starts in the background right
    /// away.
    pub fn new(config: McpServerConfig) -> Result<Self> {
        let workspace = Workspace::open(config)?;
        let session = Session::start(workspace.executor(true)?);
        let slot = Slot::default();
        let _ = slot.session.set(session);
        Ok(IpyboxMcpServer {
            tool_router: workspace.tool_router.clone(),
            workspace,
            slot: Arc::new(slot),
        })
    }

    /// A server whose session comes from `pool` on `initialize`. Cheap: rmcp also makes
    /// these for requests that are no session's (to look a tool's schema up).
    pub(super) fn pooled(pool: &Arc<Pool>) -> Self {
        IpyboxMcpServer {
            workspace: pool.workspace.clone(),
            slot: Arc::new(Slot {
                session: OnceLock::new(),
                pool: Some(pool.clone()),
            }),
            tool_router: pool.workspace.tool_router.clone(),
        }
    }

    /// The executor of this server's session, once it has one.
    pub fn executor(&self) -> Option<&CodeExecutor> {
        self.slot.session.get().map(|s| &s.executor)
    }

    /// The session a tool runs in, kept from idling out while the guard lives, with its
    /// kernel started first when `kernel` says so; a failure is the tool's result. Every
    /// tool of a session enters it here.
    pub(super) async fn enter(
        &self,
        tool: &str,
        kernel: Kernel,
    ) -> std::result::Result<(&Arc<Session>, Busy<'_>), CallToolResult> {
        let session = self.session().map_err(|why| failure(tool, why))?;
        let busy = session.busy();
        if kernel == Kernel::Started {
            session
                .ready(&self.workspace)
                .await
                .map_err(|e| failure(tool, e))?;
        }
        Ok((session, busy))
    }

    /// This server's session, or why there is none to run a tool call in.
    pub(super) fn session(&self) -> std::result::Result<&Arc<Session>, String> {
        let Some(session) = self.slot.session.get() else {
            return Err("this request belongs to no MCP session, and ipybox keeps a kernel per session: connect with a client that starts one (`initialize`)".into());
        };
        match session.ended() {
            Some(why) => Err(format!(
                "this MCP session has ended because {why}, and its kernel was stopped; start a new session"
            )),
            None => Ok(session),
        }
    }

    #[tool(
        description = "Register an MCP server and generate importable Python tool functions for it: a package mcptools/<server_name>/ with a typed module per tool, used in execute_ipython_cell as `from mcptools.<server_name> import <tool>` then `<tool>.run(<tool>.Params(...))` (read a module's source to see its parameters). `${VAR}` placeholders in server_params are replaced from the environment and the workspace's .env. Registering again overwrites the package (call reset to re-import it); mcptools/ persists across reset. A server already registered in this workspace cannot be given another configuration here, and a tool whose definition changed since a person accepted it stays held for that person. Every tool call the code makes is subject to approval. Returns the names of the generated tool modules, importable from mcptools.<server_name>."
    )]
    pub(super) async fn register_mcp_server(
        &self,
        Parameters(p): Parameters<RegisterParams>,
    ) -> CallToolResult {
        const TOOL: &str = "register_mcp_server";
        let (session, _busy) = match self.enter(TOOL, Kernel::AsItIs).await {
            Ok(entered) => entered,
            Err(failed) => return failed,
        };
        if let Err(e) = crate::apigen::check_server_name(&p.server_name) {
            return failure(TOOL, e);
        }
        let params = match ServerParams::from_json(&serde_json::Value::Object(p.server_params)) {
            Ok(params) => params,
            Err(e) => return failure(TOOL, e),
        };
        match session
            .executor
            .register_mcp_server_for_agent(&p.server_name, &params, &session.who())
            .await
        {
            Ok(generated) => {
                self.workspace.registrations.fetch_add(1, Ordering::AcqRel);
                for (tool, reason) in &generated.skipped {
                    tracing::warn!(server = %p.server_name, %tool, %reason, "no module generated for a tool");
                }
                CallToolResult::success(
                    generated
                        .modules
                        .into_iter()
                        .map(ContentBlock::text)
                        .collect(),
                )
            }
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Execute Python code in a stateful IPython kernel. State (variables, imports, definitions) persists across calls; executions are sequential. For async code, use `await` directly (the kernel runs an event loop). The working directory is the workspace; registered MCP servers' tools are called through the generated mcptools package. Returns the output (stdout, stderr, the value of the last expression) plus generated images as markdown links to their files, followed by the images themselves; an empty string when there is no output. An exception (with its traceback), a failed MCP tool call or a timeout is an error result."
    )]
    pub(super) async fn execute_ipython_cell(
        &self,
        Parameters(p): Parameters<ExecuteParams>,
    ) -> CallToolResult {
        const TOOL: &str = "execute_ipython_cell";
        let (session, _busy) = match self.enter(TOOL, Kernel::Started).await {
            Ok(entered) => entered,
            Err(failed) => return failed,
        };
        let timeout = (p.timeout > 0.0).then(|| Duration::from_secs_f64(p.timeout.min(1e9)));
        let (text, outcome) = run_cell(
            session,
            &p.code,
            timeout,
            self.workspace.config.activity.as_ref(),
        )
        .await;
        match outcome {
            Ok(result) => {
                let mut output = text;
                let mut images = Vec::new();
                if !result.image_data.is_empty() {
                    output.push_str("\n\nGenerated images:\n\n");
                }
                // The bytes ipybox saved, not the file re-read: kernel code can replace the
                // file with a link to anything the host may read.
                for image in &result.image_data {
                    let stem = image
                        .path
                        .file_stem()
                        .map(|s| s.to_string_lossy())
                        .unwrap_or_default();
                    output.push_str(&format!("- [{stem}]({})\n", image.path.display()));
                    images.push(ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(&image.data),
                        image.mime.clone(),
                    ));
                }
                let mut content = vec![ContentBlock::text(truncate_output(
                    &output,
                    p.max_output_chars,
                ))];
                content.extend(images);
                CallToolResult::success(content)
            }
            Err(e) => {
                let message = match &e {
                    // The Python ipybox's ExecutionError text: name, value, traceback.
                    Error::CodeExecution { error, .. } => {
                        format!("{}: {}\n{}", error.name, error.value, error.traceback)
                    }
                    other => other.to_string(),
                };
                let before = (!text.is_empty()).then(|| {
                    ContentBlock::text(truncate_output(
                        &format!("Output before the error:\n{text}"),
                        p.max_output_chars,
                    ))
                });
                failure_with(TOOL, message, before.into_iter().collect())
            }
        }
    }

    #[tool(
        description = "List the Python APIs the kernel's code can use, compactly: each registered MCP server's tools as mcptools.<server>.<module> with their interface (Params, Result and run() with its docstring), then each saved code action gentools.<category>.<name> with its api.py. Read this instead of opening the files one by one; import only what the task needs."
    )]
    pub(super) async fn list_tools(
        &self,
        Parameters(p): Parameters<ListToolsParams>,
    ) -> CallToolResult {
        const TOOL: &str = "list_tools";
        let workspace = self.workspace.config.workspace.clone();
        let only = p.server;
        match tokio::task::spawn_blocking(move || tool_listing(&workspace, only.as_deref())).await {
            Ok(Ok(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Ok(Err(e)) => failure(TOOL, e),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Save code that worked as a tool of its own: gentools/<category>/<name>/api.py (the interface: the models, then run(<parameters>) -> <returns> with a docstring made from the descriptions) and impl.py (the code, as the body of the implementation). The tool is then imported in any cell as `from gentools.<category>.<name>.api import run` and listed by list_tools; the MCP tools it calls still ask for approval. The saved modules are imported in the kernel, and every module the code imports is looked for, before this answers: code that does not import, or imports a module the kernel cannot find, is not saved (an earlier version stays). Saving again under the same name replaces the tool."
    )]
    pub(super) async fn save_code_action(
        &self,
        Parameters(p): Parameters<SaveCodeActionParams>,
    ) -> CallToolResult {
        const TOOL: &str = "save_code_action";
        let action = crate::apigen::codeaction::CodeAction::from(p);
        if let Err(e) = action.validate() {
            return failure(TOOL, e);
        }
        let (session, _busy) = match self.enter(TOOL, Kernel::Started).await {
            Ok(entered) => entered,
            Err(failed) => return failed,
        };
        match session.executor.save_code_action(&action).await {
            Ok(saved) => CallToolResult::success(vec![ContentBlock::text(format!(
                "saved {module}: use it as `from {module}.api import run`\n\n{api}",
                module = saved.module,
                api = saved.api
            ))]),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Install a Python package with pip into the kernel's environment. Installed packages persist across reset and are importable at once. Supports version specifiers (e.g. `numpy>=1.20.0`) and git URLs (`git+https://...`). Returns pip's output."
    )]
    pub(super) async fn install_package(
        &self,
        Parameters(p): Parameters<InstallParams>,
    ) -> CallToolResult {
        const TOOL: &str = "install_package";
        let (session, _busy) = match self.enter(TOOL, Kernel::AsItIs).await {
            Ok(entered) => entered,
            Err(failed) => return failed,
        };
        match session
            .executor
            .install_package(p.package_name.trim())
            .await
        {
            Ok(pip_output) => CallToolResult::success(vec![ContentBlock::text(pip_output)]),
            Err(e) => failure(TOOL, e),
        }
    }

    #[tool(
        description = "Reset the IPython kernel to a clean state: a new kernel, without the variables, imports and definitions of the old one. MCP server connections restart on their next use; installed packages, files and mcptools/ persist. Returns nothing."
    )]
    pub(super) async fn reset(&self) -> CallToolResult {
        const TOOL: &str = "reset";
        let (session, _busy) = match self.enter(TOOL, Kernel::Started).await {
            Ok(entered) => entered,
            Err(failed) => return failed,
        };
        match session.executor.reset().await {
            Ok(()) => {
                if let Some(activity) = &self.workspace.config.activity {
                    activity.tell(AgentActivity::KernelReset {
                        session: session.serial,
                    });
                }
                CallToolResult::success(Vec::new())
            }
            Err(e) => failure(TOOL, e),
        }
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "ipybox",
    instructions = "Run Python in a stateful IPython kernel with execute_ipython_cell. Register MCP servers with register_mcp_server to call their tools from that code through a typed API (mcptools.<server>.<tool>); list_tools shows the interfaces of those tools and of saved code actions. Save code that worked as a tool of its own with save_code_action (gentools.<category>.<name>). Install packages with install_package; reset gives a fresh kernel."
)]
impl ServerHandler for IpyboxMcpServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let tool = request.name.clone();
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(call).await?;
        // Arguments that do not fit the schema (rmcp answers a tool error) read as the
        // Python ipybox's do.
        if let CallToolResponse::Complete(result) = &mut response
            && result.is_error == Some(true)
            && let Some(ContentBlock::Text(first)) = result.content.first_mut()
            && first.text.starts_with("failed to deserialize parameters")
        {
            first.text = format!("Error executing tool {tool}: {}", first.text);
        }
        Ok(response)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<InitializeResult, ErrorData> {
        if let Some(pool) = &self.slot.pool
            && self.slot.session.get().is_none()
        {
            let _ = self.slot.session.set(pool.open()?);
        }
        context.peer.set_peer_info(request.clone());
        if let Some(session) = self.slot.session.get() {
            session.set_client(Some(&request.client_info));
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let id = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(SessionId::from);
        if let (Some(session), Some(id)) = (self.slot.session.get(), id) {
            if let Ok(mut known) = session.mcp_id.lock() {
                *known = Some(id);
            }
            session.set_client(None);
        }
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        // Over HTTP a kernel belongs to a session: the revisions after 2025-11-25 have none.
        if self.slot.pool.is_some() {
            std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(
                &ProtocolVersion::LATEST_WITH_INITIALIZE,
            ))
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::truncate_output;

    #[test]
    fn truncation_is_the_python_ipyboxs() {
        assert_eq!(truncate_output("abc", 3), "abc", "at the limit: untouched");
        assert_eq!(
            truncate_output("abcd", 3),
            "abc\n\n[Output truncated: exceeded 3 character limit]"
        );
        assert_eq!(
            truncate_output("äöüß", 2),
            "äö\n\n[Output truncated: exceeded 2 character limit]",
            "characters, not bytes, as Python's len() and slicing count"
        );
        assert_eq!(
            truncate_output("x", 0),
            "\n\n[Output truncated: exceeded 0 character limit]"
        );
    }
}
