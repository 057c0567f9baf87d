//! The MCP servers of the session's workspace: registering them (as an agent, a person on
//! the command line, or the server panel does it: register or regenerate and learn what
//! changed), listing, previewing and unregistering them, the code actions saved beside
//! them, and where each `${VAR}` of a form comes from without its value.

use std::time::Duration;

use serde::Serialize;

use super::{CodeExecutor, Registrant};
use crate::apigen::generate::{Generated, generate};
use crate::error::{Error, Result};
use crate::mcp::ServerParams;
use crate::mcp::params::{VariableSource, Variables};
use crate::registry::{Registry, ToolChanges, ToolSummary};

/// What registering (or regenerating) a server did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Registration {
    /// The server as registered now, with its tools.
    pub server: RegisteredServer,
    /// Tools that could not be generated, and why (the others were).
    pub skipped: Vec<SkippedTool>,
    /// What changed against the tools registered before (all added for a new server).
    pub changes: ToolChanges,
}

/// A tool the generator could not turn into a module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SkippedTool {
    /// The tool's name on the server.
    pub tool: String,
    /// Why, in words.
    pub reason: String,
}

/// Why an agent cannot register `name` again with another configuration.
fn agent_cannot_change(name: &str) -> Error {
    Error::config(format!(
        "\"{name}\" is registered in this workspace already, with another configuration; \
         an agent cannot change it. Register it under another name, or ask the person to \
         change it in the ipybox app's MCP servers panel or with `ipybox register {name}`"
    ))
}

/// A `${NAME}` of server parameters, and where its value would come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Placeholder {
    /// The variable.
    pub name: String,
    /// `None`: set neither in the workspace's `.env` nor in ipybox's environment.
    pub source: Option<VariableSource>,
}

impl CodeExecutor {
    /// Register `name` with `params` (`None`: again with the parameters it is registered
    /// with, to pick up a changed server), and say which tools were added, removed or
    /// changed their signature.
    pub async fn update_mcp_server(
        &self,
        name: &str,
        params: Option<&ServerParams>,
    ) -> Result<Registration> {
        let registry = self.registry()?;
        let before = registry.tools.get(name).cloned().unwrap_or_default();
        let params = match params {
            Some(p) => p.clone(),
            None => registry.params_to_regenerate(name).ok_or_else(|| {
                Error::config(format!("no MCP server \"{name}\" is registered here"))
            })?,
        };
        let generated = self.register_mcp_server(name, &params).await?;
        let server = self
            .servers()?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| Error::config(format!("\"{name}\" was not kept in the registry")))?;
        Ok(Registration {
            changes: ToolChanges::between(&before, &server.tools),
            server,
            skipped: generated
                .skipped
                .into_iter()
                .map(|(tool, reason)| SkippedTool { tool, reason })
                .collect(),
        })
    }

    /// Where each of `names` would get its value when a server starts: the workspace's
    /// `.env`, ipybox's environment, or nowhere. Values are never returned.
    pub fn placeholders(&self, names: &[String]) -> Result<Vec<Placeholder>> {
        let vars = self.variables(&self.registry()?)?;
        Ok(names
            .iter()
            .map(|name| Placeholder {
                name: name.clone(),
                source: vars.source(name),
            })
            .collect())
    }

    /// The `${VAR}` values a server of this session starts with: a running session's
    /// (a sandboxed one took them at its start, never from a `.env` its kernel may have
    /// written since), else the environment and the workspace's `.env` now.
    pub(super) fn variables(&self, registry: &Registry) -> Result<Variables> {
        match self.snapshot().tools {
            Some(state) => state.variables(),
            None => Variables::load(Some(&registry.workspace)),
        }
    }
}

impl CodeExecutor {
    /// Generate the Python API of an MCP server into `<working dir>/mcptools/<name>/` and
    /// register the server for this workspace, so kernel code can call its tools (now, if
    /// the executor runs, and in later sessions on the same workspace).
    pub async fn register_mcp_server(
        &self,
        name: &str,
        params: &ServerParams,
    ) -> Result<Generated> {
        self.register(name, params, Registrant::Person).await
    }

    /// [`register_mcp_server`](Self::register_mcp_server) as an agent asks for it (`ipybox
    /// mcp`'s `register_mcp_server` tool): it may add a server, or generate one again with
    /// the configuration it has, but not change the configuration of one registered here,
    /// and the tools a person accepted stay pinned — a changed tool stays held for a person.
    ///
    /// A server that starts a program on this computer (stdio) and is not registered here
    /// with these very parameters starts only once the session's approval handler says yes
    /// ([`ApprovalHandler::start_program`]: a person natively, or a rule written for it);
    /// `agent` names who asks. The wait holds up nothing else of the session.
    ///
    /// [`ApprovalHandler::start_program`]: crate::approval::ApprovalHandler::start_program
    pub async fn register_mcp_server_for_agent(
        &self,
        name: &str,
        params: &ServerParams,
        agent: &str,
    ) -> Result<Generated> {
        let registry = self.registry()?;
        let known = registry.servers.get(name) == Some(params)
            || registry.params_to_regenerate(name).as_ref() == Some(params);
        if !known && registry.servers.contains_key(name) {
            // Refused before anyone is asked: a yes could not change it.
            return Err(agent_cannot_change(name));
        }
        if let Some(command) = params.command.clone()
            && !known
        {
            let request = crate::approval::ProgramRequest {
                agent: agent.to_owned(),
                name: name.to_owned(),
                command,
                args: params.args.clone(),
                env: params.env.clone(),
                cwd: params.cwd.clone(),
                sandboxed: crate::registry::srt_policy(params).is_some(),
                workspace: registry.workspace.clone(),
            };
            if let Err(why) = self.decide_program(request).await {
                return Err(Error::config(format!(
                    "\"{name}\" was not registered: {why}"
                )));
            }
        }
        self.register(name, params, Registrant::Agent).await
    }

    /// Whether an agent may start the program `request` names: this session's approval
    /// handler decides (none: nobody can be asked, so no).
    pub async fn decide_program(
        &self,
        request: crate::approval::ProgramRequest,
    ) -> crate::approval::ProgramVerdict {
        let handler = self.shared.config.approval_handler.clone();
        let (name, agent) = (request.name.clone(), request.agent.clone());
        let verdict = match handler {
            Some(handler) => handler.start_program(request).await,
            None => Err("no approval handler can be asked in this session".into()),
        };
        match &verdict {
            Ok(by) => {
                tracing::info!(server = %name, %agent, ?by, "an agent may start a server's program")
            }
            Err(why) => {
                tracing::info!(server = %name, %agent, %why, "an agent may not start a server's program")
            }
        }
        verdict
    }

    async fn register(
        &self,
        name: &str,
        params: &ServerParams,
        by: Registrant,
    ) -> Result<Generated> {
        let c = &self.shared.config;
        let mut registry = self.registry()?;
        if by == Registrant::Agent
            && let Some(registered) = registry.servers.get(name)
            && registered != params
            && registry.params_to_regenerate(name).as_ref() != Some(params)
        {
            return Err(agent_cannot_change(name));
        }
        let working_dir = registry.workspace.clone();
        // Registered again with its own pinned copy: the policy it was first given stays its
        // name.
        let policy = match crate::registry::srt_policy(params) {
            Some(p) if registry.is_pinned(&p) => registry.policies.get(name).cloned(),
            other => other,
        };
        let params = registry.pin_srt_policy(name, params, &working_dir)?;
        // A running session resolves ${VAR}s the way its tool server does: a sandboxed one
        // from the snapshot taken at its start, never from a .env its kernel may have written.
        let tools = self.snapshot().tools;
        let vars = match &tools {
            Some(state) => state.variables()?,
            None => Variables::load(Some(&working_dir))?,
        };
        let generated = generate(
            name,
            &params,
            &working_dir.join("mcptools"),
            &vars,
            c.mcp_connect_timeout,
        )
        .await?;
        match policy {
            Some(policy) => registry.policies.insert(name.to_owned(), policy),
            None => registry.policies.remove(name),
        };
        registry.insert(name, params.clone())?;
        registry.set_tools(name, summaries(&generated))?;
        // What a person registered is what they accepted: each tool's definition is pinned,
        // and a call to a tool that differs later is held for a person.
        let pins = crate::definition::pins::Pins::in_dir(registry.dir());
        match by {
            Registrant::Person => pins.pin_server(name, &generated.definitions)?,
            Registrant::Agent => pins.pin_new(name, &generated.definitions)?,
        }
        // Asked again now that the registry holds it: a session that started while this
        // generated has read the registry before, and is told here (one still starting reads
        // it once it has started).
        if let Some(state) = self.snapshot().tools {
            state.set_tools(name, generated.tools.clone());
            if state.set_server(name, params) {
                // Re-registered with other parameters: the old connection goes.
                state.restart(name).await;
            }
        }
        Ok(generated)
    }

    /// The MCP servers registered for this workspace, with their tools as generated.
    pub fn servers(&self) -> Result<Vec<RegisteredServer>> {
        let registry = self.registry()?;
        Ok(registry
            .servers
            .iter()
            .map(|(name, params)| RegisteredServer {
                name: name.clone(),
                params: params.clone(),
                policy: registry.policies.get(name).cloned(),
                tools: registry.tools.get(name).cloned().unwrap_or_default(),
            })
            .collect())
    }

    /// Connect to a server and list its tools without registering it or writing anything
    /// (a form's "Test connection"). A server that fails to start is an error with its
    /// stderr.
    pub async fn preview_mcp_server(&self, params: &ServerParams) -> Result<Vec<ToolSummary>> {
        let registry = self.registry()?;
        let vars = self.variables(&registry)?;
        let (params, _policy) = registry.preview_srt_policy(params, &registry.workspace)?;
        let tools = crate::apigen::generate::list_tools(
            "preview",
            &params,
            &registry.workspace,
            &vars,
            self.shared.config.mcp_connect_timeout,
        )
        .await?;
        let modules = crate::apigen::module_names(&tools);
        Ok(tools
            .into_iter()
            .zip(modules)
            .map(|(t, module)| ToolSummary {
                interface: crate::apigen::render_tool_interface(&t).ok(),
                tool: t.name,
                module,
                description: t.description,
            })
            .collect())
    }

    /// Close the running session of server `name`, if any: its next call connects afresh
    /// (after a sign-in or a sign-out, with the sign-in kept now).
    pub async fn reconnect_mcp_server(&self, name: &str) {
        if let Some(state) = self.snapshot().tools {
            state.restart(name).await;
        }
    }

    /// Unregister a server: forget it for this workspace, remove `mcptools/<name>/`, and stop
    /// its running session. `false` when it was not registered.
    pub async fn unregister_mcp_server(&self, name: &str) -> Result<bool> {
        let mut registry = self.registry()?;
        let had = registry.remove(name)?;
        crate::definition::pins::Pins::in_dir(registry.dir()).remove_server(name)?;
        crate::apigen::generate::remove_package(name, &registry.workspace.join("mcptools"))?;
        if let Some(state) = self.snapshot().tools {
            state.remove_server(name).await;
        }
        Ok(had)
    }

    /// Save working code as a tool of its own, `gentools/<category>/<name>/` in the working
    /// directory: checked, written (never through a link), then imported afresh in the
    /// kernel; code that does not import is removed again (an earlier version comes back)
    /// and the error says why. Starts the kernel if needed.
    pub async fn save_code_action(
        &self,
        action: &crate::apigen::codeaction::CodeAction,
    ) -> Result<crate::apigen::codeaction::Saved> {
        action.validate()?;
        self.start().await?;
        let workspace = self.registry()?.workspace;
        let to_write = action.clone();
        let written = tokio::task::spawn_blocking(move || {
            crate::apigen::codeaction::write(&workspace, &to_write)
        })
        .await
        .map_err(|e| Error::config("saving the code action").because(e))??;
        let check = crate::apigen::codeaction::import_check(&action.category, &action.name);
        match self.execute(&check, Some(Duration::from_secs(60))).await {
            Ok(_) => {
                let saved = written.saved.clone();
                written.keep();
                Ok(saved)
            }
            Err(e) => {
                written.undo();
                let why = match &e {
                    Error::CodeExecution { error, .. } => {
                        format!("{}: {}\n{}", error.name, error.value, error.traceback)
                    }
                    other => other.to_string(),
                };
                Err(Error::config(format!(
                    "the code action does not import, so it was not saved: {why}"
                )))
            }
        }
    }

    /// The saved code actions of the working directory: `gentools.<category>.<name>` with
    /// its `api.py`, sorted (`only`: one category).
    pub fn code_actions(&self, only: Option<&str>) -> Result<Vec<(String, String)>> {
        let workspace = self.registry()?.workspace;
        Ok(crate::apigen::codeaction::interfaces(&workspace, only))
    }

    fn registry(&self) -> Result<Registry> {
        let working_dir = self.shared.config.working_dir()?;
        Registry::load(&crate::home::ipybox_home()?, &working_dir)
    }

    /// Let the running kernels call every server registered for the workspace, including
    /// those registered since the executor started (by another executor on the same
    /// workspace, or `ipybox register`); nothing is generated. Does nothing while stopped:
    /// a start reads the registry anyway.
    pub fn reload_registry(&self) -> Result<()> {
        let Some(tools) = self.snapshot().tools else {
            return Ok(());
        };
        let registry = self.registry()?;
        for (name, listed) in &registry.tools {
            tools.set_tools(name, listed.iter().map(|t| t.tool.clone()).collect());
        }
        for (name, params) in registry.servers {
            if tools.set_server(&name, params) {
                let tools = tools.clone();
                tokio::spawn(async move { tools.restart(&name).await });
            }
        }
        Ok(())
    }
}

/// A registered MCP server, as [`CodeExecutor::servers`] lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RegisteredServer {
    /// Its name (`mcptools.<name>`).
    pub name: String,
    /// How to reach it (`${VAR}`s unresolved).
    pub params: ServerParams,
    /// Run under srt: the policy as given at registration (`ipybox:mcp-server` or a file);
    /// `params` name the copy ipybox pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub policy: Option<String>,
    /// Its tools, as generated.
    pub tools: Vec<ToolSummary>,
}

fn summaries(generated: &Generated) -> Vec<ToolSummary> {
    generated
        .modules
        .iter()
        .zip(&generated.tools)
        .zip(&generated.descriptions)
        .zip(&generated.interfaces)
        .map(|(((module, tool), description), interface)| ToolSummary {
            tool: tool.clone(),
            module: module.clone(),
            description: description.clone(),
            interface: Some(interface.clone()),
        })
        .collect()
}
