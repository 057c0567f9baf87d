//! Where ipybox's TCP connections to the Kernel Gateway come from.
//!
//! By default a plain `connect()` on the host. The sandbox supplies its own [`Connector`]
//! that hands out sockets living inside the sandbox's network namespace. Every connection
//! gets `TCP_NODELAY`, and on Linux `TCP_QUICKACK` after each read and write: the gateway's
//! WebSocket side leaves Nagle on, and without immediate ACKs from us each Jupyter message
//! stalls ≈40 ms (see `research/gateway-latency.md`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A boxed connect future.
pub type ConnectFuture = Pin<Box<dyn Future<Output = io::Result<TcpStream>> + Send>>;

/// Opens TCP connections to `host:port`.
pub trait Connector: Send + Sync + std::fmt::Debug {
    /// Connect to `host:port`.
    fn connect(&self, host: &str, port: u16) -> ConnectFuture;
}

/// Plain host networking.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostConnector;

impl Connector for HostConnector {
    fn connect(&self, host: &str, port: u16) -> ConnectFuture {
        let addr = format!("{host}:{port}");
        Box::pin(async move { TcpStream::connect(addr).await })
    }
}

/// A shared connector.
pub type SharedConnector = Arc<dyn Connector>;

/// Connect with `connector` and tune the socket for request/response latency.
pub async fn connect(connector: &dyn Connector, host: &str, port: u16) -> io::Result<QuickAck> {
    let stream = connector.connect(host, port).await?;
    stream.set_nodelay(true)?;
    let s = QuickAck(stream);
    s.quickack();
    Ok(s)
}

/// A TCP stream that keeps ACKs immediate (Linux `TCP_QUICKACK`, which the kernel clears
/// again on its own, so it is re-armed after every read and write).
#[derive(Debug)]
pub struct QuickAck(TcpStream);

impl QuickAck {
    fn quickack(&self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let one: libc::c_int = 1;
            // SAFETY: setsockopt on a socket we own, with a valid pointer and length.
            unsafe {
                libc::setsockopt(
                    self.0.as_raw_fd(),
                    libc::IPPROTO_TCP,
                    libc::TCP_QUICKACK,
                    (&one as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                );
            }
        }
    }
}

impl AsyncRead for QuickAck {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.0).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.quickack();
        }
        r
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.0).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.quickack();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.0).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.quickack();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}
