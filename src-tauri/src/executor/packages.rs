//! Installing packages in the kernels' environment: with pip on the host, or in the kernel
//! itself when its environment is on a remote server.

use super::{CodeExecutor, Event, Output, StreamOptions};
use crate::error::{Error, Result};
use crate::events::SessionEvent;
use crate::pyenv::{self};

/// Installs a package from inside a kernel (`@@SPEC@@`: the spec as a Python literal).
const KERNEL_PIP: &str = include_str!("../../python/kernel_pip.py");

impl CodeExecutor {
    /// `pip install spec` into the kernels' Python environment; the next import in the
    /// kernel finds it. pip runs on the host, isolated from the workspace; with the sandbox
    /// on it installs wheels from an index or URL only (no build script, no local path).
    /// Returns pip's output; its lines arrive as [`SessionEvent::PackageInstall`] meanwhile.
    /// With a [remote gateway](CodeExecutorBuilder::remote_gateway) the kernel's environment
    /// is on the server: pip runs there, in the kernel (as `%pip install` would).
    pub async fn install_package(&self, spec: &str) -> Result<String> {
        let c = &self.shared.config;
        if c.external_gateway.is_some() {
            return self.install_in_kernel(spec).await;
        }
        let python = c.python.clone();
        let progress = c.progress.clone();
        let env = tokio::task::spawn_blocking(move || pyenv::resolve(python.as_deref(), progress))
            .await
            .map_err(|e| Error::python_env("provisioning failed").because(e))??;
        let events = c.events.clone();
        let package = spec.trim().to_owned();
        // Into the environment the kernels run.
        let target = c.kernel_python.as_deref().unwrap_or(env.python());
        pyenv::pip_install(target, spec, c.sandbox.is_some(), move |line| {
            events.send(SessionEvent::PackageInstall {
                spec: package.clone(),
                line: line.to_owned(),
            })
        })
        .await
    }

    /// `pip install spec` run by the kernel itself, in its own environment; stdout lines
    /// become [`SessionEvent::PackageInstall`] events. The spec reaches pip as one argument,
    /// never through a shell.
    async fn install_in_kernel(&self, spec: &str) -> Result<String> {
        use futures_util::StreamExt;
        let spec = spec.trim().to_owned();
        if spec.is_empty() {
            return Err(Error::config("name a package to install"));
        }
        let literal = serde_json::to_string(&spec)
            .map_err(|e| Error::config("the package to install").because(e))?;
        let code = KERNEL_PIP.replace("@@SPEC@@", &literal);
        let options = StreamOptions {
            outputs: true,
            ..StreamOptions::default()
        };
        let mut stream = self.spawn_execution(&code, options, true);
        let (events, mut text, mut line) = (
            self.shared.config.events.clone(),
            String::new(),
            String::new(),
        );
        let mut failed = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Output(Output::Stream { text: part, .. })) => {
                    text.push_str(&part);
                    line.push_str(&part);
                    while let Some(end) = line.find('\n') {
                        let done: String = line.drain(..=end).collect();
                        events.send(SessionEvent::PackageInstall {
                            spec: spec.clone(),
                            line: done.trim_end().to_owned(),
                        });
                    }
                }
                Ok(Event::Result(_)) => break,
                Ok(_) => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match failed {
            None => Ok(text),
            Some(Error::CodeExecution { error, .. }) => {
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                let said = if tail.is_empty() {
                    error.value
                } else {
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                };
                Err(Error::python_env(format!(
                    "pip could not install {spec} in the remote kernel's environment: {said}"
                )))
            }
            Some(other) => Err(other),
        }
    }
}
