//! The desktop app (Tauri): the notebook window over the engine. Commands are a few lines
//! each (`commands`), the window's state is one session (`session`), tool calls ask the
//! person in a native dialog (`approval`), the app's own settings live in ipybox's data
//! directory (`settings`), and what the window receives is in `dto`.
//! Closing the window stops the kernel, the gateway and the MCP servers.

mod approval;
mod commands;
pub mod dto;
mod endpoint;
mod policy;
mod remote;
mod servers;
mod session;
mod settings;

pub use session::Launch;

use tauri::{Manager, RunEvent, WebviewUrl, WebviewWindowBuilder};

use crate::workspace::Target;
use session::Desktop;

/// Settle how WebKit draws and runs scripts, before any thread starts (it reads the
/// environment once). A value the person set is kept.
///
/// JavaScriptCore keeps its baseline JIT but not its optimizing tiers (DFG, FTL), and
/// compiles only code that runs often: the 50-cell benchmark's web process took 16 MiB less
/// (281 → 265 MiB in all), with keypress-to-paint, launch and the 100,000-line stream as fast
/// as before. Scripts in outputs still run compiled, only without the optimizing tiers.
///
/// Without a GPU render node (a VM, a remote desktop, Xvfb) WebKitGTK's accelerated
/// compositing runs in software and costs more than it gives: measured here, a 50-cell
/// notebook with 10 plots took 576 MiB in WebKit with it and 184 MiB without, and a cell
/// printing 100,000 lines stalled frames for 329 ms with it and 41 ms without. Its DMA-BUF
/// renderer has no GPU buffers to share there either, and switching it off saves 5 MiB in
/// the app's own process.
pub fn prepare_environment() {
    let mut settings = vec![
        ("JSC_useDFGJIT", "false"),
        ("JSC_thresholdForJITAfterWarmUp", "5000"),
        ("JSC_thresholdForJITSoon", "5000"),
    ];
    let has_gpu = std::fs::read_dir("/dev/dri")
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
        })
        .unwrap_or(false);
    if !has_gpu {
        settings.extend([
            ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
            ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
        ]);
    }
    for (var, value) in settings {
        if std::env::var_os(var).is_none() {
            // SAFETY: called from `main` before the runtime or any other thread exists, so
            // nothing reads the environment concurrently.
            unsafe { std::env::set_var(var, value) };
        }
    }
}

/// Open the window on `target` and run until it closes. Call on the main thread, inside
/// the Tokio runtime given as `runtime` (the engine's tasks and Tauri's share it).
pub fn run(
    target: Target,
    launch: Launch,
    runtime: tokio::runtime::Handle,
) -> Result<(), tauri::Error> {
    tauri::async_runtime::set(runtime);
    let title = target.title();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(Desktop::new(launch))
        .manage(policy::PolicyWatch::default())
        .invoke_handler(tauri::generate_handler![
            commands::app_state,
            commands::execute,
            commands::cancel_execution,
            commands::reply_input,
            commands::interrupt,
            commands::restart_kernel,
            commands::save_notebook,
            commands::read_notebook,
            commands::list_notebooks,
            commands::open_workspace,
            commands::open_notebook,
            commands::choose_workspace,
            commands::install_package,
            commands::set_title,
            commands::approvals_pending,
            commands::decide_approval,
            commands::decide_all_pending,
            commands::approval_rules,
            commands::set_approval_rules,
            commands::add_approval_rule,
            commands::audit_log,
            commands::export_audit_log,
            commands::app_settings,
            commands::set_app_settings,
            commands::mcp_endpoint,
            commands::set_mcp_endpoint,
            commands::preview_code_action,
            commands::save_code_action,
            commands::code_actions,
            servers::mcp_servers,
            servers::preview_mcp_server,
            servers::register_mcp_server,
            servers::regenerate_mcp_server,
            servers::unregister_mcp_server,
            servers::mcp_placeholders,
            policy::sandbox_state,
            policy::read_policy,
            policy::check_policy,
            policy::save_policy,
            policy::apply_sandbox,
            policy::watch_policy,
            remote::remote_state,
            remote::probe_remote,
            remote::apply_remote,
        ])
        .setup(move |app| {
            // The kernel starts first; the window draws while it does.
            app.state::<Desktop>().begin(app.handle(), target);
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                .title(title)
                .inner_size(1280.0, 800.0)
                .min_inner_size(900.0, 600.0)
                .build()?;
            Ok(())
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            // Nothing outlives the app: kernels, gateway, MCP servers stop here.
            tauri::async_runtime::block_on(app.state::<Desktop>().shutdown());
        }
    });
    Ok(())
}
