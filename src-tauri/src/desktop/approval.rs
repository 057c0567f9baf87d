//! A tool call from a cell waits for the person: a native Approve/Reject dialog per call.
//! Nothing is approved without it (a closed dialog rejects).

use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use crate::tools::ApprovalRequest;

/// How much of the arguments the dialog shows.
const ARGS_SHOWN: usize = 1500;

/// The dialog's title: `Approve tool call — SERVER.TOOL`.
pub fn title(request: &ApprovalRequest) -> String {
    format!(
        "Approve tool call — {}.{}",
        request.server_name(),
        request.tool_name()
    )
}

/// What the dialog says: which tool of which server, where the call goes, with what.
pub fn message(request: &ApprovalRequest) -> String {
    let mut args =
        serde_json::to_string_pretty(request.tool_args()).unwrap_or_else(|_| "{}".into());
    if args.chars().count() > ARGS_SHOWN {
        args = args.chars().take(ARGS_SHOWN).collect::<String>() + "\n… (shortened)";
    }
    format!(
        "Code in this notebook wants to call the tool \"{tool}\" of the MCP server \"{server}\".\n\n\
         Server: {description}\n\nArguments:\n{args}\n\nNothing runs until you decide.",
        tool = request.tool_name(),
        server = request.server_name(),
        description = request.server(),
    )
}

/// Ask the person; accept or reject `request` with the answer.
pub fn ask<R: Runtime>(app: &AppHandle<R>, request: ApprovalRequest) {
    let mut dialog = app
        .dialog()
        .message(message(&request))
        .title(title(&request))
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            "Approve".into(),
            "Reject".into(),
        ));
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.parent(&window);
    }
    dialog.show(move |approved| {
        if approved {
            request.accept();
        } else {
            request.reject_with("the person rejected it in the approval dialog");
        }
    });
}
