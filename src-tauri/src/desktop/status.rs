//! The kernel as the window shows it: followed from the session's events (which reach the
//! window as `session` events) and kept for a window that loads after they were sent.

use std::sync::{Arc, Mutex};

use tauri::{AppHandle, Emitter, Runtime};

use super::approval::Asker;
use super::dto::{DesktopError, KernelStatus, Provisioning, SessionNotice};
use crate::error::Error;
use crate::events::SessionEvent;
use crate::sync::lock;
use crate::tools::grants::Grants;

/// The kernel as last seen.
#[derive(Debug, Clone)]
pub struct Status {
    /// Starting, idle, busy or dead.
    pub kernel: KernelStatus,
    /// The step of the Python environment's provisioning, while it runs.
    pub provisioning: Option<Provisioning>,
    /// Why the session could not start.
    pub startup_error: Option<DesktopError>,
}

/// A status shared by the session and what follows its events.
pub type Shared = Arc<Mutex<Status>>;

/// A session's status before its kernel started.
pub fn starting() -> Shared {
    Arc::new(Mutex::new(Status {
        kernel: KernelStatus::Starting,
        provisioning: None,
        startup_error: None,
    }))
}

/// A copy of the status as it is now.
pub fn now(status: &Shared) -> Status {
    lock(status).clone()
}

/// Follow `events` until the session stops: each one updates `status` and goes to the
/// window; a decided or withdrawn approval closes its dialog (`asker`), and a kernel that
/// ends ends the grants given for it.
pub fn follow<R: Runtime>(
    app: &AppHandle<R>,
    mut events: tokio::sync::broadcast::Receiver<SessionEvent>,
    status: Shared,
    asker: Arc<Asker<R>>,
    grants: Arc<Grants>,
) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match events.recv().await {
                Ok(event) => {
                    seen(&mut lock(&status), &event);
                    if let SessionEvent::ApprovalDecided { id, .. }
                    | SessionEvent::ApprovalWithdrawn { id, .. } = &event
                    {
                        asker.settled(*id);
                    }
                    // A grant for the notebook lasts as long as its kernel.
                    if matches!(
                        event,
                        SessionEvent::KernelReplaced { .. } | SessionEvent::Stopped
                    ) {
                        grants.kernel_ended();
                    }
                    let _ = app.emit("session", &event);
                    if matches!(event, SessionEvent::Stopped) {
                        break;
                    }
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// The session could not start: the kernel is dead, and the window hears why.
pub fn failed<R: Runtime>(app: &AppHandle<R>, status: &Shared, error: Error) {
    let error = DesktopError::from(error);
    {
        let mut status = lock(status);
        status.kernel = KernelStatus::Dead;
        status.provisioning = None;
        status.startup_error = Some(error.clone());
    }
    let _ = app.emit("session", SessionNotice::StartupFailed(error));
}

/// What `event` changes of the status.
fn seen(status: &mut Status, event: &SessionEvent) {
    let now = match event {
        SessionEvent::Started | SessionEvent::KernelIdle | SessionEvent::KernelReplaced { .. } => {
            Some(KernelStatus::Idle)
        }
        SessionEvent::KernelBusy { .. } => Some(KernelStatus::Busy),
        SessionEvent::Stopped => Some(KernelStatus::Dead),
        _ => None,
    };
    if let Some(now) = now {
        status.kernel = now;
    }
    status.provisioning = match event {
        SessionEvent::Provisioning {
            step,
            steps,
            message,
        } => Some(Provisioning {
            step: *step,
            steps: *steps,
            message: message.clone(),
        }),
        _ => None,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_move_the_status_and_provisioning_shows_only_while_it_runs() {
        let shared = starting();
        let mut status = lock(&shared);
        seen(
            &mut status,
            &SessionEvent::Provisioning {
                step: 1,
                steps: 3,
                message: "uv".into(),
            },
        );
        assert_eq!(status.kernel, KernelStatus::Starting);
        assert_eq!(status.provisioning.as_ref().map(|p| p.step), Some(1));
        seen(&mut status, &SessionEvent::Started);
        assert_eq!(status.kernel, KernelStatus::Idle);
        assert!(status.provisioning.is_none());
        seen(&mut status, &SessionEvent::Stopped);
        assert_eq!(status.kernel, KernelStatus::Dead);
    }

    #[test]
    fn a_failed_start_reaches_the_window_as_a_typed_notice() {
        let notice = SessionNotice::StartupFailed(DesktopError::from(Error::config("no python")));
        let json = serde_json::to_value(&notice).expect("a notice is JSON");
        assert_eq!(json["type"], "startup_failed");
        assert_eq!(json["code"], "InvalidConfig");
        assert!(
            json["message"]
                .as_str()
                .is_some_and(|m| m.contains("no python"))
        );
    }
}
