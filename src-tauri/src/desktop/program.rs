//! An agent asks to register a server that starts a program on this computer: the person
//! answers in a native dialog (the same deliberate one as every security question), one
//! such question at a time; the agent's other calls go on meanwhile.

use tauri::{AppHandle, Runtime};

use super::confirm::{Question, confirm_unprompted, fits};
use crate::approval::{ProgramRequest, ProgramVerdict};
use crate::events::DecidedBy;

/// The dialog's title (no untrusted text in it).
pub const TITLE: &str = "Let an agent start a program?";

/// One question about a program at a time: an agent asking for ten gets ten dialogs, one
/// after the other, never ten at once.
static ASKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Ask the person whether the program of `request` may start.
pub async fn ask<R: Runtime>(app: &AppHandle<R>, request: ProgramRequest) -> ProgramVerdict {
    let _one = ASKING.lock().await;
    // Everything it would run, as a link's question shows it, in the folder it runs in.
    let detail = crate::server_link::ServerLink {
        name: request.name.clone(),
        params: crate::mcp::ServerParams::program(
            request.command.clone(),
            request.args.clone(),
            request.env.clone(),
            Some(request.folder().display().to_string()),
        ),
    }
    .describe();
    if !fits(&detail) {
        return Err(format!(
            "the configuration of \"{}\" is too large to show a person on one screen; a person can register it with `ipybox register`",
            request.name
        ));
    }
    let question = Question {
        title: TITLE.into(),
        message: request.explain(),
        detail,
        warnings: request.risks(),
        yes: "Add and run it".into(),
        no: "Cancel".into(),
    };
    if confirm_unprompted(app, question).await {
        Ok(DecidedBy::Person)
    } else {
        Err(format!(
            "the person did not let \"{}\" start a program on this computer",
            request.name
        ))
    }
}
