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

/// A connection to a gateway: plain TCP, or TLS over it (`https://`, `wss://`).
#[derive(Debug)]
pub enum GatewayStream {
    /// `http://`, `ws://`.
    Plain(QuickAck),
    /// `https://`, `wss://`.
    Tls(Box<tokio_rustls::client::TlsStream<QuickAck>>),
}

/// The TLS client configuration: the operating system's verification (its trusted roots,
/// `SSL_CERT_FILE`/`SSL_CERT_DIR` on Linux), made once.
fn tls_config() -> io::Result<Arc<tokio_rustls::rustls::ClientConfig>> {
    use rustls_platform_verifier::BuilderVerifierExt;
    static CONFIG: std::sync::OnceLock<Result<Arc<tokio_rustls::rustls::ClientConfig>, String>> =
        std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(tokio_rustls::rustls::crypto::aws_lc_rs::default_provider());
            tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_platform_verifier()
                .map(|b| Arc::new(b.with_no_client_auth()))
                .map_err(|e| format!("the system's certificate verifier is unavailable: {e}"))
        })
        .clone()
        .map_err(io::Error::other)
}

/// Connect to `host:port` with `connector`, then, when `tls`, shake hands for `host`.
pub async fn open(
    connector: &dyn Connector,
    host: &str,
    port: u16,
    tls: bool,
) -> io::Result<GatewayStream> {
    let tcp = connect(connector, host, port).await?;
    if !tls {
        return Ok(GatewayStream::Plain(tcp));
    }
    let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let stream = tokio_rustls::TlsConnector::from(tls_config()?)
        .connect(name, tcp)
        .await?;
    Ok(GatewayStream::Tls(Box::new(stream)))
}

impl AsyncRead for GatewayStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            GatewayStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            GatewayStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for GatewayStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            GatewayStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            GatewayStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            GatewayStream::Plain(s) => Pin::new(s).poll_flush(cx),
            GatewayStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            GatewayStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            GatewayStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            GatewayStream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            GatewayStream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            GatewayStream::Plain(s) => s.is_write_vectored(),
            GatewayStream::Tls(s) => s.is_write_vectored(),
        }
    }
}
