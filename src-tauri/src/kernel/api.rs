//! The Kernel Gateway's REST and WebSocket API, as spoken to a gateway ipybox started or to
//! an already running Kernel Gateway or Jupyter Server.
//!
//! API: <https://jupyter-kernel-gateway.readthedocs.io/en/latest/websocket-mode.html> (a
//! superset of Jupyter Server's `/api/kernels`). Connections come from a [`Connector`], so
//! the sandbox can route them into its network namespace.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{
    AUTHORIZATION, CONTENT_TYPE, HOST, HeaderName, HeaderValue, SEC_WEBSOCKET_PROTOCOL,
};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{Error as WsError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::connector::{self, GatewayStream, SharedConnector};
use super::messages::{V1_SUBPROTOCOL, Wire};
use crate::error::{Error, Result};

/// Where a gateway listens and how to authenticate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Base path without a trailing slash (`""` for the root).
    pub base_path: String,
    /// Token sent as `Authorization: token …`, if any.
    pub token: Option<String>,
    /// `https://` / `wss://`: TLS, verified as the operating system verifies certificates.
    pub tls: bool,
    /// Headers sent with every request (an authenticating proxy's, say).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Endpoint {
    /// Parse `http://host[:port][/base]` (or `https://`, `ws://`, `wss://`).
    pub fn parse(url: &str, token: Option<String>) -> Result<Self> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| Error::config(format!("invalid gateway URL {url:?}")).because(e))?;
        let tls = match uri.scheme_str() {
            Some("http") | Some("ws") => false,
            Some("https") | Some("wss") => true,
            Some(other) => {
                return Err(Error::config(format!(
                    "gateway URL {url:?} uses {other}://; ipybox connects to gateways over http(s):// or ws(s)://"
                )));
            }
            None => {
                return Err(Error::config(format!(
                    "gateway URL {url:?} needs http:// or https://"
                )));
            }
        };
        let host = uri
            .host()
            .ok_or_else(|| Error::config(format!("gateway URL {url:?} has no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let base_path = uri.path().trim_end_matches('/').to_owned();
        Ok(Endpoint {
            host,
            port: uri.port_u16().unwrap_or(if tls { 443 } else { 80 }),
            base_path,
            token,
            tls,
            headers: Vec::new(),
        })
    }

    /// `url` with `token`, sending each of `headers` (`Name: value`) with every request: a
    /// gateway someone else runs, checked whole.
    pub fn remote(url: &str, token: Option<String>, headers: &[String]) -> Result<Self> {
        headers
            .iter()
            .try_fold(Self::parse(url, token)?, |endpoint, header| {
                endpoint.with_header(header)
            })
    }

    /// Send `Name: value` with every request (`--gateway-header`).
    pub fn with_header(mut self, header: &str) -> Result<Self> {
        let (name, value) = header.split_once(':').ok_or_else(|| {
            Error::config(format!(
                "gateway header {header:?} is not of the form 'Name: value'"
            ))
        })?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| Error::config(format!("{:?} is not a valid header name", name.trim())))?;
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
            Error::config(format!(
                "the value of gateway header {name} contains characters a header cannot carry"
            ))
        })?;
        value.set_sensitive(true);
        self.headers.push((name, value));
        Ok(self)
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A kernel as the REST API describes it.
#[derive(Debug, Clone, Deserialize)]
pub struct KernelModel {
    /// Kernel id.
    pub id: String,
}

#[derive(Debug, Serialize)]
struct CreateKernel<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    env: &'a BTreeMap<String, String>,
}

/// A channels WebSocket to one kernel.
pub type KernelSocket = WebSocketStream<GatewayStream>;

/// Client for one gateway.
#[derive(Debug, Clone)]
pub struct GatewayApi {
    endpoint: Endpoint,
    connector: SharedConnector,
    reconnect: Duration,
}

const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Ask for [`Wire::V1`] frames: the server passes them through without parsing and signing
/// each message again (measured: −0.4 ms per tool call, −0.4 ms per execution). A server
/// that fails the v1 handshake or stalls in it is asked again in JSON frames: jupyter_server 2
/// holds the handshake until a new kernel answers kernel_info (a lost reply: up to its
/// `kernel_info_timeout`, a minute), and answered a 500 once our side had given up. That
/// timeout cannot be shortened: jupyter_server also bounds its post-connect "nudge" with it,
/// which takes seconds under load.
const PREFER_V1: bool = true;

/// How long the v1 handshake may take before it is given up for JSON frames.
const V1_HANDSHAKE: Duration = Duration::from_secs(20);

impl GatewayApi {
    /// A client for `endpoint` whose connections come from `connector`.
    pub fn new(endpoint: Endpoint, connector: SharedConnector) -> Self {
        GatewayApi {
            endpoint,
            connector,
            reconnect: Duration::ZERO,
        }
    }

    /// Keep trying for `window` to connect a kernel's channels again when the connection
    /// drops (a server across a network). Without it, one attempt is made: a gateway on
    /// this machine whose connection ended has usually died.
    pub fn reconnecting_for(mut self, window: Duration) -> Self {
        self.reconnect = window;
        self
    }

    /// How long a dropped channels connection is retried.
    pub fn reconnect_window(&self) -> Duration {
        self.reconnect
    }

    async fn request(
        &self,
        method: &'static str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes)> {
        let full_path = format!("{}{}", self.endpoint.base_path, path);
        let send = async {
            let stream = connector::open(
                self.connector.as_ref(),
                &self.endpoint.host,
                self.endpoint.port,
                self.endpoint.tls,
            )
            .await
            .map_err(|e| {
                Error::gateway(format!(
                    "cannot connect to the Kernel Gateway at {}: {e}",
                    self.endpoint.authority()
                ))
            })?;
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| Error::gateway("HTTP handshake with the gateway failed").because(e))?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            let mut req = Request::builder()
                .method(method)
                .uri(&full_path)
                .header(HOST, self.endpoint.authority());
            for (name, value) in &self.endpoint.headers {
                req = req.header(name, value);
            }
            if let Some(token) = &self.endpoint.token {
                req = req.header(AUTHORIZATION, format!("token {token}"));
            }
            if body.is_some() {
                req = req.header(CONTENT_TYPE, "application/json");
            }
            let req = req
                .body(Full::new(Bytes::from(body.unwrap_or_default())))
                .map_err(|e| Error::gateway("invalid request to the gateway").because(e))?;
            let resp = sender
                .send_request(req)
                .await
                .map_err(|e| Error::gateway(format!("{method} {full_path} failed")).because(e))?;
            let status = resp.status().as_u16();
            let bytes = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| Error::gateway("reading the gateway's answer failed").because(e))?
                .to_bytes();
            Ok((status, bytes))
        };
        tokio::time::timeout(REQUEST_TIMEOUT, send)
            .await
            .map_err(|_| {
                Error::gateway(format!(
                    "{method} {full_path}: the gateway did not answer within {} s",
                    REQUEST_TIMEOUT.as_secs()
                ))
            })?
    }

    fn check(
        method: &'static str,
        path: &str,
        status: u16,
        body: &Bytes,
        ok: &[u16],
    ) -> Result<()> {
        if ok.contains(&status) {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(body).into_owned();
        text.truncate(500);
        Err(Error::GatewayHttp {
            method,
            path: path.to_owned(),
            status,
            body: text,
        })
    }

    /// `GET /api`: answers once the server is up.
    pub async fn info(&self) -> Result<serde_json::Value> {
        let (status, body) = self.request("GET", "/api", None).await?;
        Self::check("GET", "/api", status, &body, &[200])?;
        serde_json::from_slice(&body)
            .map_err(|e| Error::gateway("the gateway's /api answer is not JSON").because(e))
    }

    /// `GET /api/kernelspecs`: the server's default kernel and the names it can start.
    pub async fn kernelspecs(&self) -> Result<(Option<String>, Vec<String>)> {
        #[derive(Deserialize)]
        struct Specs {
            default: Option<String>,
            #[serde(default)]
            kernelspecs: BTreeMap<String, serde_json::Value>,
        }
        let (status, body) = self.request("GET", "/api/kernelspecs", None).await?;
        Self::check("GET", "/api/kernelspecs", status, &body, &[200])?;
        let specs: Specs = serde_json::from_slice(&body).map_err(|e| {
            Error::gateway("the gateway's /api/kernelspecs answer is not a list of kernels")
                .because(e)
        })?;
        Ok((specs.default, specs.kernelspecs.into_keys().collect()))
    }

    /// `POST /api/kernels`: start a kernel of spec `name` (the server's default when `None`)
    /// with `env` (a Kernel Gateway passes `KERNEL_*` and whitelisted names).
    pub async fn create_kernel(
        &self,
        name: Option<&str>,
        env: &BTreeMap<String, String>,
    ) -> Result<KernelModel> {
        let body = serde_json::to_vec(&CreateKernel { name, env }).unwrap_or_default();
        let (status, bytes) = self.request("POST", "/api/kernels", Some(body)).await?;
        Self::check("POST", "/api/kernels", status, &bytes, &[200, 201])?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::kernel_start("unexpected answer to POST /api/kernels").because(e))
    }

    /// `DELETE /api/kernels/{id}`. A kernel that is already gone is not an error.
    pub async fn delete_kernel(&self, id: &str) -> Result<()> {
        let path = format!("/api/kernels/{id}");
        let (status, bytes) = self.request("DELETE", &path, None).await?;
        Self::check("DELETE", &path, status, &bytes, &[200, 204, 404])
    }

    /// `POST /api/kernels/{id}/interrupt`: SIGINT to the kernel.
    pub async fn interrupt_kernel(&self, id: &str) -> Result<()> {
        let path = format!("/api/kernels/{id}/interrupt");
        let (status, bytes) = self.request("POST", &path, Some(b"{}".to_vec())).await?;
        Self::check("POST", &path, status, &bytes, &[200, 204])
    }

    /// Open `/api/kernels/{id}/channels`, in [`Wire::V1`] frames when the server speaks
    /// them, else in JSON frames.
    pub async fn connect_channels(
        &self,
        id: &str,
        session_id: &str,
    ) -> Result<(KernelSocket, Wire)> {
        let token = match &self.endpoint.token {
            Some(token) => Some(
                HeaderValue::from_str(&format!("token {token}"))
                    .map_err(|_| Error::config("the gateway token contains invalid characters"))?,
            ),
            None => None,
        };
        let token = token.as_ref();
        if !PREFER_V1 {
            let socket = self
                .open_channels(id, session_id, token, false, REQUEST_TIMEOUT)
                .await
                .map_err(|e| channels_error(e, &self.endpoint))?;
            return Ok((socket, Wire::Json));
        }
        match self
            .open_channels(id, session_id, token, true, V1_HANDSHAKE)
            .await
        {
            Ok(socket) => Ok((socket, Wire::V1)),
            // A server without the subprotocol answers without one, which the WebSocket
            // handshake takes as a failure; one whose v1 handshake failed or stalls may still
            // speak JSON frames: ask again in the older protocol.
            Err(
                e @ (WsError::Protocol(ProtocolError::SecWebSocketSubProtocolError(_))
                | WsError::Http(_)
                | WsError::Io(_)),
            ) => {
                if !matches!(e, WsError::Protocol(_)) {
                    tracing::info!("the v1 channels handshake failed ({e}); using JSON frames");
                }
                let socket = self
                    .open_channels(id, session_id, token, false, REQUEST_TIMEOUT)
                    .await
                    .map_err(|e| channels_error(e, &self.endpoint))?;
                Ok((socket, Wire::Json))
            }
            Err(e) => Err(channels_error(e, &self.endpoint)),
        }
    }

    /// Connect a kernel's channels again in the framing the session already speaks. A
    /// reconnection never negotiates: a v1 handshake that fails transiently (the network is
    /// still coming back) must not turn a v1 session into a JSON one.
    pub async fn reconnect_channels(
        &self,
        id: &str,
        session_id: &str,
        wire: Wire,
    ) -> Result<KernelSocket> {
        let token = match &self.endpoint.token {
            Some(token) => Some(
                HeaderValue::from_str(&format!("token {token}"))
                    .map_err(|_| Error::config("the gateway token contains invalid characters"))?,
            ),
            None => None,
        };
        let (v1, within) = match wire {
            Wire::V1 => (true, V1_HANDSHAKE),
            Wire::Json => (false, REQUEST_TIMEOUT),
        };
        self.open_channels(id, session_id, token.as_ref(), v1, within)
            .await
            .map_err(|e| channels_error(e, &self.endpoint))
    }

    async fn open_channels(
        &self,
        id: &str,
        session_id: &str,
        token: Option<&HeaderValue>,
        v1: bool,
        within: Duration,
    ) -> std::result::Result<KernelSocket, WsError> {
        let url = format!(
            "{}://{}{}/api/kernels/{id}/channels?session_id={session_id}",
            if self.endpoint.tls { "wss" } else { "ws" },
            self.endpoint.authority(),
            self.endpoint.base_path
        );
        let mut request = url.as_str().into_client_request()?;
        let headers = request.headers_mut();
        if let Some(token) = token {
            headers.insert(AUTHORIZATION, token.clone());
        }
        for (name, value) in &self.endpoint.headers {
            headers.append(name, value.clone());
        }
        if v1 {
            headers.insert(
                SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(V1_SUBPROTOCOL),
            );
        }
        let stream = connector::open(
            self.connector.as_ref(),
            &self.endpoint.host,
            self.endpoint.port,
            self.endpoint.tls,
        )
        .await
        .map_err(WsError::Io)?;
        // Images and large outputs arrive as single frames: no practical size limit.
        let config = WebSocketConfig::default()
            .max_message_size(Some(1 << 30))
            .max_frame_size(Some(1 << 30));
        let (socket, _) = tokio::time::timeout(
            within,
            tokio_tungstenite::client_async_with_config(request, stream, Some(config)),
        )
        .await
        .map_err(|_| {
            WsError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the kernel's channels WebSocket did not open in time",
            ))
        })??;
        Ok(socket)
    }
}

fn channels_error(e: WsError, endpoint: &Endpoint) -> Error {
    match e {
        WsError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            Error::kernel_start(io.to_string())
        }
        WsError::Io(io) => Error::gateway(format!(
            "cannot connect to the Kernel Gateway at {}",
            endpoint.authority()
        ))
        .because(io),
        other => Error::kernel_start("cannot open the kernel's channels WebSocket").because(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gateway_urls() {
        let e = Endpoint::parse("http://127.0.0.1:8888/", Some("t".into())).expect("valid");
        assert_eq!(
            (e.host.as_str(), e.port, e.base_path.as_str()),
            ("127.0.0.1", 8888, "")
        );
        let e = Endpoint::parse("http://localhost:9000/jupyter/", None).expect("valid");
        assert_eq!(
            e.base_path, "/jupyter",
            "base path is kept without trailing slash"
        );
        let e = Endpoint::parse("https://eg.example.org/gateway", None).expect("valid");
        assert_eq!(
            (e.port, e.tls, e.base_path.as_str()),
            (443, true, "/gateway")
        );
        let e = Endpoint::parse("wss://eg.example.org:8443", None).expect("valid");
        assert_eq!((e.port, e.tls), (8443, true));
        let err = Endpoint::parse("ftp://example.org", None).expect_err("ftp is refused");
        assert!(err.to_string().contains("ftp"), "{err}");

        let e = e
            .with_header("X-Auth-Request-User: ada")
            .expect("a header")
            .with_header("Cookie:  a=b; c=d ")
            .expect("another");
        assert_eq!(e.headers[0].0.as_str(), "x-auth-request-user");
        assert_eq!(e.headers[1].1.to_str().unwrap_or_default(), "a=b; c=d");
        for bad in ["no colon", "bad name: x", "X-Ok: line\nbreak"] {
            let err = Endpoint::parse("http://h", None)
                .and_then(|e| e.with_header(bad))
                .expect_err(bad);
            assert!(err.to_string().contains("header"), "{bad}: {err}");
        }
    }
}
