//! The app's settings (the approval timeout), kept in ipybox's data directory as
//! `settings.json` and in force from the moment they are saved. Never in a workspace: its code
//! is untrusted, and a setting it could write would decide how long the host waits before
//! rejecting the code's own tool calls.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The approval timeout when none is set, as in the Python ipybox.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u64 = 60;

/// The longest approval timeout (a day). The engine has no "never": a call nobody decides is
/// always rejected in the end.
pub const MAX_APPROVAL_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// What the person set. Fields missing from the file take their defaults, and fields a later
/// ipybox added are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Reject a tool call nobody decided within this many seconds.
    pub approval_timeout_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            approval_timeout_secs: DEFAULT_APPROVAL_TIMEOUT_SECS,
        }
    }
}

impl Settings {
    /// The approval timeout, for [`CodeExecutorBuilder::approval_timeout`](crate::CodeExecutorBuilder::approval_timeout)
    /// and [`CodeExecutor::set_approval_timeout`](crate::CodeExecutor::set_approval_timeout).
    pub fn approval_timeout(&self) -> Duration {
        Duration::from_secs(self.approval_timeout_secs)
    }

    /// Are these settings ipybox can run with? The error says what is accepted.
    pub fn check(&self) -> Result<(), Error> {
        if !(1..=MAX_APPROVAL_TIMEOUT_SECS).contains(&self.approval_timeout_secs) {
            return Err(Error::config(format!(
                "the approval timeout must be from 1 to {MAX_APPROVAL_TIMEOUT_SECS} seconds, got {}",
                self.approval_timeout_secs
            )));
        }
        Ok(())
    }
}

/// The settings in force, shared by the app and the parts of a running session that say them
/// (the approval dialog tells how long it waits).
#[derive(Debug, Clone, Default)]
pub struct LiveSettings(Arc<Mutex<Settings>>);

impl LiveSettings {
    /// In force from the start: `settings`.
    pub fn new(settings: Settings) -> LiveSettings {
        LiveSettings(Arc::new(Mutex::new(settings)))
    }

    /// The settings in force now.
    pub fn get(&self) -> Settings {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Put `settings` in force.
    pub fn set(&self, settings: Settings) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = settings;
    }
}

/// A timeout in words, as the window says it: "45 s", "90 s", "2 min 30 s", "1 h 30 min".
pub fn describe_secs(secs: u64) -> String {
    if secs < 120 {
        return format!("{secs} s");
    }
    let parts = [
        (secs / 3600, "h"),
        (secs % 3600 / 60, "min"),
        (secs % 60, "s"),
    ];
    parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n} {unit}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The settings file in ipybox's data directory.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    file: PathBuf,
}

impl SettingsFile {
    /// The file kept in `home` (ipybox's data directory).
    pub fn new(home: &Path) -> SettingsFile {
        SettingsFile {
            file: home.join("settings.json"),
        }
    }

    /// The saved settings: the defaults when there is no file, and for a file that cannot be
    /// read or holds values ipybox cannot run with (logged, and left as it is).
    pub fn load(&self) -> Settings {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::default(),
            Err(e) => {
                tracing::warn!("{}: {e}; using the default settings", self.file.display());
                return Settings::default();
            }
        };
        match serde_json::from_str::<Settings>(&text)
            .map_err(|e| Error::config("not valid settings").because(e))
            .and_then(|s| s.check().map(|()| s))
        {
            Ok(settings) => settings,
            Err(e) => {
                tracing::warn!("{}: {e}; using the default settings", self.file.display());
                Settings::default()
            }
        }
    }

    /// Check `settings` and save them (atomically); nothing changes when they are not valid.
    pub fn save(&self, settings: &Settings) -> Result<(), Error> {
        settings.check()?;
        let mut text = serde_json::to_vec_pretty(settings)
            .map_err(|e| Error::config("the settings").because(e))?;
        text.push(b'\n');
        crate::fsutil::write_private(&self.file, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_settings_come_back_and_bad_ones_are_refused() {
        let home = tempfile::tempdir().expect("tempdir");
        let file = SettingsFile::new(home.path());
        assert_eq!(
            file.load(),
            Settings::default(),
            "no file: the defaults (60 s, as in the Python ipybox)"
        );
        assert_eq!(
            Settings::default().approval_timeout(),
            Duration::from_secs(60)
        );
        let two_minutes = Settings {
            approval_timeout_secs: 120,
        };
        file.save(&two_minutes).expect("saved");
        assert_eq!(file.load(), two_minutes, "what was saved is read back");
        assert!(
            home.path().join("settings.json").is_file(),
            "kept in ipybox's data directory"
        );
        for bad in [0, MAX_APPROVAL_TIMEOUT_SECS + 1] {
            let e = file
                .save(&Settings {
                    approval_timeout_secs: bad,
                })
                .expect_err("out of range");
            assert!(e.to_string().contains("approval timeout"), "{e}");
        }
        assert_eq!(file.load(), two_minutes, "a refused value changes nothing");
    }

    #[test]
    fn settings_put_in_force_reach_every_holder() {
        let app = LiveSettings::new(Settings::default());
        let dialog = app.clone();
        app.set(Settings {
            approval_timeout_secs: 2,
        });
        assert_eq!(
            dialog.get().approval_timeout(),
            Duration::from_secs(2),
            "the approval dialog of a running session says the new timeout"
        );
    }

    #[test]
    fn timeouts_in_the_words_of_the_window() {
        for (secs, words) in [
            (60, "60 s"),
            (90, "90 s"),
            (120, "2 min"),
            (150, "2 min 30 s"),
            (5400, "1 h 30 min"),
            (86_400, "24 h"),
        ] {
            assert_eq!(
                describe_secs(secs),
                words,
                "as ui/src/model/settings.ts says it"
            );
        }
    }

    #[test]
    fn a_damaged_file_falls_back_to_the_defaults() {
        let home = tempfile::tempdir().expect("tempdir");
        let file = SettingsFile::new(home.path());
        let path = home.path().join("settings.json");
        std::fs::write(&path, "{ not json").expect("write");
        assert_eq!(file.load(), Settings::default(), "not JSON");
        std::fs::write(&path, r#"{"approval_timeout_secs": 0}"#).expect("write");
        assert_eq!(
            file.load(),
            Settings::default(),
            "a value ipybox cannot run with"
        );
        std::fs::write(&path, r#"{"approval_timeout_secs": 5, "theme": "dark"}"#).expect("write");
        assert_eq!(
            file.load().approval_timeout_secs,
            5,
            "fields of a later ipybox are ignored"
        );
        std::fs::write(&path, "{}").expect("write");
        assert_eq!(
            file.load(),
            Settings::default(),
            "missing fields take defaults"
        );
    }
}
