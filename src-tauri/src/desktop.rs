//! The desktop app (Tauri): the notebook window over the engine. Commands are a few lines
//! each (`commands`), the window's state is one session (`session`), tool calls ask the
//! person in a native dialog (`approval`), the app's own settings live in ipybox's data
//! directory (`settings`), and what the window receives is in `dto`.
//! Closing the window stops the kernel, the gateway and the MCP servers.

mod agents;
mod approval;
mod arrival;
#[cfg(test)]
mod bindings;
mod blocks;
mod commands;
mod confirm;
pub mod dto;
mod endpoint;
mod export;
mod frames;
mod panel;
#[cfg(target_os = "linux")]
pub mod pdf;
mod place;
mod policy;
mod policy_commands;
mod program;
mod python;
mod python_commands;
mod remote;
mod remote_commands;
mod servers;
mod session;
mod settings;
mod status;
mod trash;
mod trust;

pub use arrival::Arrivals;
pub use place::Launch;

use tauri::{Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};

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
///
/// Nor does the app's own process draw with OpenGL then: the window is painted from the web
/// process's shared-memory bitmaps. Yet two things there load Mesa's software GL driver,
/// which brings `libLLVM` and ≈ 20 MiB of relocated pages with it: GTK probing GLX for its
/// visuals (`GDK_GL=disable` skips the probe), and WebKit asking EGL which GPU render node
/// to hand the web process. There is none to find; `WEBKIT_WEB_RENDER_DEVICE_FILE` says so
/// up front (WebKit matches the name against the DRM devices, `/dev/null` matches none, and
/// the web process gets no render node — what the EGL query would have answered). The web
/// process still opens EGL itself (it cannot run without it). Measured: the app's process
/// 95 → 71 MiB; the whole app 17 MiB less with a notebook opened, 19 MiB after Run all.
pub fn prepare_environment() {
    let has_gpu = std::fs::read_dir("/dev/dri")
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
        })
        .unwrap_or(false);
    let settings = environment_defaults(has_gpu, |var| std::env::var(var).ok());
    for (var, value) in settings {
        // SAFETY: called from `main` before the runtime or any other thread exists, so
        // nothing reads the environment concurrently.
        unsafe { std::env::set_var(var, value) };
    }
    // glibc gives each thread that finds the heap busy an arena of its own (up to eight per
    // core) and keeps what was freed in each. The app's threads (Tokio's, GTK's, the asset
    // server's, WebKit's IPC) left ≈ 2 MiB there after a notebook's Run all; two arenas
    // serve them as fast.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets one of glibc's allocator settings; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// The variables [`prepare_environment`] sets, given whether a GPU render node exists and
/// the environment as it is (`current`). A variable already set is never in the list.
fn environment_defaults(
    has_gpu: bool,
    current: impl Fn(&str) -> Option<String>,
) -> Vec<(&'static str, &'static str)> {
    let mut settings = vec![
        ("JSC_useDFGJIT", "false"),
        ("JSC_thresholdForJITAfterWarmUp", "5000"),
        ("JSC_thresholdForJITSoon", "5000"),
    ];
    if !has_gpu {
        settings.extend([
            ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
            ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
        ]);
        // WebKit reads these as "off" when set to anything but "0".
        let off = |var: &str| current(var).is_none_or(|value| value != "0");
        if off("WEBKIT_DISABLE_COMPOSITING_MODE") && off("WEBKIT_DISABLE_DMABUF_RENDERER") {
            settings.extend([
                ("GDK_GL", "disable"),
                ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
            ]);
        }
    }
    settings.retain(|(var, _)| current(var).is_none());
    settings
}

/// Open the window on `target` and run until it closes, taking what other `ipybox open`s
/// send through `arrivals`. Call on the main thread, inside the Tokio runtime given as
/// `runtime` (the engine's tasks and Tauri's share it).
pub fn run(
    target: Target,
    launch: Launch,
    arrivals: Arrivals,
    runtime: tokio::runtime::Handle,
) -> Result<(), tauri::Error> {
    tauri::async_runtime::set(runtime);
    let title = target.title();
    let Arrivals {
        owner,
        sender,
        receiver,
        first,
    } = arrivals;
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(Desktop::new(launch, owner, sender))
        .manage(policy::PolicyWatch::default())
        .manage(servers::SignIns::default())
        .invoke_handler(tauri::generate_handler![
            commands::app_state,
            commands::execute,
            commands::cancel_execution,
            commands::reply_input,
            commands::answer_elicitation,
            commands::waiting_questions,
            commands::interrupt,
            commands::restart_kernel,
            commands::save_notebook,
            commands::notebook_trusted,
            commands::trust_notebook,
            commands::read_notebook,
            commands::list_notebooks,
            commands::open_workspace,
            commands::open_notebook,
            commands::choose_workspace,
            commands::install_package,
            python_commands::python_options,
            python_commands::check_python,
            python_commands::set_python,
            python_commands::install_ipykernel,
            python_commands::create_project_env,
            python_commands::choose_python,
            commands::complete,
            commands::inspect,
            commands::kernel_variables,
            commands::frame_page,
            commands::rename_notebook,
            commands::save_notebook_as,
            commands::duplicate_notebook,
            commands::trash_notebook,
            commands::set_title,
            commands::approvals_pending,
            commands::decide_approval,
            commands::decide_all_pending,
            commands::approval_rules,
            commands::set_approval_rules,
            commands::add_approval_rule,
            commands::approval_grants,
            commands::revoke_grant,
            commands::audit_log,
            commands::export_audit_log,
            export::export_notebook,
            commands::app_settings,
            commands::set_app_settings,
            commands::mcp_endpoint,
            commands::set_mcp_endpoint,
            panel::end_agent_session,
            panel::rule_matches,
            commands::preview_code_action,
            commands::save_code_action,
            commands::code_actions,
            servers::mcp_servers,
            servers::mcp_catalog,
            servers::install_mcp_package,
            servers::preview_mcp_server,
            servers::register_mcp_server,
            servers::regenerate_mcp_server,
            servers::unregister_mcp_server,
            servers::mcp_placeholders,
            servers::sign_in_mcp_server,
            servers::cancel_mcp_sign_in,
            servers::sign_out_mcp_server,
            policy_commands::sandbox_state,
            policy_commands::read_policy,
            policy_commands::check_policy,
            policy_commands::check_sandbox_access,
            policy_commands::save_policy,
            policy_commands::apply_sandbox,
            policy_commands::watch_policy,
            blocks::allow_blocked,
            remote_commands::remote_state,
            remote_commands::probe_remote,
            remote_commands::apply_remote,
        ])
        .on_window_event(|window, event| {
            // `ipybox://` links go to the app used last.
            if let WindowEvent::Focused(true) = event {
                window.state::<Desktop>().mark_used();
            }
        })
        .setup(move |app| {
            // The kernel starts first; the window draws while it does.
            tracing::debug!("the app is set up");
            app.state::<Desktop>().begin(app.handle(), target);
            tracing::debug!("the session has begun");
            arrival::listen(app.handle(), receiver, first);
            // SIGTERM and SIGINT end the app as closing it does: kernels stop, and the
            // agents' link socket and its secret are removed.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let (Ok(mut term), Ok(mut int)) = (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                ) else {
                    return;
                };
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                handle.exit(0);
            });
            let start = app.state::<Desktop>().start_script();
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                .initialization_script(&start)
                .title(title)
                .inner_size(1280.0, 800.0)
                .min_inner_size(900.0, 600.0)
                .build()?;
            tracing::debug!("the window is built");
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

#[cfg(test)]
mod tests {
    use super::environment_defaults;

    fn names(has_gpu: bool, set: &[(&str, &str)]) -> Vec<&'static str> {
        environment_defaults(has_gpu, |var| {
            set.iter()
                .find(|(name, _)| *name == var)
                .map(|(_, value)| value.to_string())
        })
        .into_iter()
        .map(|(var, _)| var)
        .collect()
    }

    #[test]
    fn without_a_gpu_webkit_draws_in_software_and_nothing_loads_gl_for_the_window() {
        let set = names(false, &[]);
        for var in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_DISABLE_DMABUF_RENDERER",
            "GDK_GL",
            "WEBKIT_WEB_RENDER_DEVICE_FILE",
            "JSC_useDFGJIT",
        ] {
            assert!(set.contains(&var), "{var} missing from {set:?}");
        }
    }

    #[test]
    fn with_a_gpu_only_javascriptcore_is_tuned() {
        assert_eq!(
            names(true, &[]),
            [
                "JSC_useDFGJIT",
                "JSC_thresholdForJITAfterWarmUp",
                "JSC_thresholdForJITSoon"
            ]
        );
    }

    #[test]
    fn a_value_the_person_set_is_kept() {
        let set = names(false, &[("JSC_useDFGJIT", "true"), ("GDK_GL", "always")]);
        assert!(!set.contains(&"JSC_useDFGJIT"));
        assert!(!set.contains(&"GDK_GL"));
        assert!(set.contains(&"WEBKIT_WEB_RENDER_DEVICE_FILE"));
    }

    #[test]
    fn compositing_turned_back_on_keeps_gl_for_the_window() {
        for var in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_DISABLE_DMABUF_RENDERER",
        ] {
            let set = names(false, &[(var, "0")]);
            assert!(!set.contains(&"GDK_GL"), "{var}=0: {set:?}");
            assert!(
                !set.contains(&"WEBKIT_WEB_RENDER_DEVICE_FILE"),
                "{var}=0: {set:?}"
            );
        }
    }
}
