//! What a gateway can run inside.
//!
//! The kernel layer knows an isolation layer (srt's sandbox) only through these two traits:
//! an [`Enclosure`] says what to put in front of the gateway command and waits, once the
//! command runs, until the enclosure is up; the [`Enclosed`] it returns is the live
//! enclosure — how to connect to the gateway inside it and how to take it down.

use std::ffi::OsString;
use std::future::Future;
use std::pin::Pin;
use std::process::Child;
use std::sync::Arc;
use std::time::Duration;

use super::connector::SharedConnector;
use crate::error::Result;

/// A boxed future that waits for an enclosure to come up.
pub type AttachFuture<'a> = Pin<Box<dyn Future<Output = Result<Arc<dyn Enclosed>>> + Send + 'a>>;

/// An isolation layer a gateway command runs under.
pub trait Enclosure: Send + Sync + std::fmt::Debug {
    /// The program and arguments put in front of the gateway command.
    fn wrapper(&self) -> Vec<OsString>;

    /// The port the gateway binds inside (the enclosure has a network of its own, so a
    /// fixed port cannot collide with the host's).
    fn port(&self) -> u16;

    /// The signal the wrapper gets when ipybox dies (it must be able to tear itself down).
    fn death_signal(&self) -> i32;

    /// A descriptor the wrapper inherits, and the number it gets it as: a private channel
    /// from the enclosure back to ipybox (given once; `None` after, or without one).
    fn passed_fd(&self) -> Option<(std::os::fd::OwnedFd, std::os::fd::RawFd)> {
        None
    }

    /// Wait until the enclosure started by `child` is up. `log` reads the command's output
    /// for error messages.
    fn attach<'a>(
        &'a self,
        child: &'a mut Child,
        timeout: Duration,
        log: &'a (dyn Fn() -> String + Send + Sync),
    ) -> AttachFuture<'a>;
}

/// A running enclosure.
pub trait Enclosed: Send + Sync + std::fmt::Debug {
    /// Where connections to the gateway inside come from.
    fn connector(&self) -> SharedConnector;

    /// Take the enclosure down once its processes are stopped; wait up to `timeout`.
    fn close_and_wait(&self, timeout: Duration);
}
