//! Asking srt whether it accepts a policy before a session is started under it: srt checks
//! its settings file more strictly than [`SandboxPolicy::validate`](super::SandboxPolicy)
//! (it refuses `*` and `*.com`, for one), and a session whose srt refuses its policy never
//! starts. So the new policy is tried on a command that does nothing (`srt --settings FILE
//! true`, about half a second) and the old session is replaced only when srt ran it.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{SandboxOptions, check_tools, locate_srt, policy};
use crate::error::{Error, Result};

/// How long srt may take to run `true` (Node.js start, proxy, bubblewrap).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// Run `true` under srt with `options`' policy, made absolute for `workspace` as a session
/// would; the rendered file is written to `scratch` (a directory of ipybox's). `Err`: srt is
/// missing, or refused the policy, with srt's own words.
pub fn check_with_srt(
    options: &SandboxOptions,
    home: &Path,
    workspace: &Path,
    scratch: &Path,
) -> Result<()> {
    let srt = locate_srt(options.srt.as_deref(), home)?;
    check_tools(&srt)?;
    let user_home = dirs::home_dir()
        .ok_or_else(|| Error::sandbox("cannot find the home directory for `~` paths"))?;
    let rendered = policy::render(
        policy::load(options.policy.as_deref())?,
        workspace,
        &user_home,
        policy::Additions::default(),
    )?;
    std::fs::create_dir_all(scratch)
        .map_err(|e| Error::io(format!("creating {}", scratch.display()), e))?;
    let file = scratch.join("srt-check.json");
    let text = serde_json::to_string_pretty(&rendered).unwrap_or_default();
    crate::fsutil::save_atomic(&file, text.as_bytes())?;
    let mut command = srt.command();
    let program = command.remove(0);
    let mut child = crate::process::host_command(program)
        .args(command)
        .arg("--settings")
        .arg(&file)
        .arg("true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| Error::sandbox("cannot run the sandbox runtime srt").because(e))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < CHECK_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Error::sandbox(format!(
                    "srt did not finish trying the policy within {} s",
                    CHECK_TIMEOUT.as_secs()
                )));
            }
            Err(e) => return Err(Error::sandbox("waiting for srt").because(e)),
        }
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    let _ = std::fs::remove_file(&file);
    if status.success() {
        return Ok(());
    }
    Err(Error::sandbox(format!(
        "srt refused this policy: {}",
        srt_words(&stderr, &file)
    )))
}

/// srt's complaint without its file name and its own advice about a file the person never
/// saw: "network.allowedDomains.0: Invalid domain pattern …".
fn srt_words(stderr: &str, file: &Path) -> String {
    let file = file.display().to_string();
    let first = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("it exited without saying why");
    let first = first.strip_prefix("Error: ").unwrap_or(first);
    let first = match first.split_once(" — ") {
        Some((head, rest)) if head.contains(&file) => rest,
        _ => first,
    };
    first.replace(&file, "the policy")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srt_words_keep_the_reason_and_drop_the_file() {
        let file = Path::new("/data/ws/srt-check.json");
        let stderr = "Error: /data/ws/srt-check.json does not hold a valid config — network.allowedDomains.0: Invalid domain pattern.\nRefusing to run with the built-in defaults.\n";
        assert_eq!(
            srt_words(stderr, file),
            "network.allowedDomains.0: Invalid domain pattern.",
            "the field and the reason are what the person needs"
        );
        assert_eq!(srt_words("", file), "it exited without saying why");
    }
}
