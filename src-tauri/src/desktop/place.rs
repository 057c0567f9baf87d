//! Where a session's kernels run: on this computer (sandboxed or not) or on a server, as
//! the command line or the workspace's choice says; and where its agents' kernels run.

use std::path::Path;

use super::policy::{agents_sandbox, sandbox_for};
use super::remote::remote_for;
use crate::audit::WorkspaceState;
use crate::error::Error;
use crate::executor::RemoteGateway;
use crate::sandbox::SandboxOptions;

/// How the app was asked to run.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Run kernels in the sandbox, with this policy.
    pub sandbox: Option<SandboxOptions>,
    /// Run kernels on this server (`--gateway-url`).
    pub remote: Option<RemoteGateway>,
}

/// Where a session's kernels run: on this computer (sandboxed or not) or on a server.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The sandbox, for kernels on this computer.
    pub sandbox: Option<SandboxOptions>,
    /// The server, for kernels elsewhere.
    pub remote: Option<RemoteGateway>,
}

/// Where the notebook's kernel and the agents' kernels of a session run.
#[derive(Debug)]
pub struct Places {
    /// The notebook's kernel.
    pub notebook: Place,
    /// Agents' kernels: on the same server, or sandboxed here whenever the sandbox works,
    /// even when the notebook's kernel is not.
    pub agents: Place,
    /// Why the chosen server cannot be used (its token cannot be read): the session shows
    /// it rather than start a kernel elsewhere than chosen.
    pub problem: Option<Error>,
}

/// The command line's server or sandbox, else the workspace's choice (kept out of its
/// reach in `state`).
pub fn places(launch: &Launch, workspace: &Path, state: Option<&WorkspaceState>) -> Places {
    let (remote, problem) = match remote_for(launch.remote.as_ref(), state) {
        Ok(remote) => (remote, None),
        Err(e) => (None, Some(e)),
    };
    let sandbox = if remote.is_some() || problem.is_some() {
        None
    } else {
        sandbox_for(launch.sandbox.as_ref(), workspace, state)
    };
    let agents = Place {
        sandbox: match &remote {
            Some(_) => None,
            None => agents_sandbox(sandbox.as_ref(), workspace, state),
        },
        remote: remote.clone(),
    };
    Places {
        notebook: Place { sandbox, remote },
        agents,
        problem,
    }
}
