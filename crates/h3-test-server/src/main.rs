//! An HTTP/3 server for ferro's tests (`__test__/fixtures/h3.ts` starts it): quinn + h3 on one
//! UDP port of 127.0.0.1, with the certificate and key the test gives.
//!
//! `h3-test-server --cert FILE --key FILE [--port N] [--max-streams N]` prints `port N` once
//! listening. Lines on stdin steer it: `goaway` sends every connection a graceful GOAWAY, `quit`
//! exits (as does the end of stdin). `--reject-0rtt`: no TLS session is resumed, so early data
//! is always rejected; `--accept-delay MS`: each handshake starts MS late, so that a client's
//! early data is all there by then (`zero_rtt.rs`).
//!
//! With `--bench`, the same TCP port serves HTTP/1.1 and HTTP/2 over TLS (by ALPN; crates/bench-server's
//! code) and both sides answer the bench's `/small` and `/64k` (bench/run.mjs, scenarios h3 / h3-64k).
//!
//! Routes (by path, the query ignored unless said):
//! - `/echo` and anything unknown: 200, a JSON body with the method, path, headers and the
//!   request body's length; response headers `x-conn` (the connection's number) and `x-open`
//!   (requests open on it when this one started). Every response says `x-early-data: 1` when its
//!   request came in 0-RTT early data (the handshake still going on), else `0`.
//! - `/body`: 200, the request body sent back as it arrives.
//! - `/big?N`: 200, N bytes (byte i is `i % 251`), in 16 KiB writes.
//! - `/slow-read?MS`: reads the request body, pausing MS milliseconds after each 256 KiB, then
//!   200 with the body's length.
//! - `/delay?MS`: 200 `late` after MS milliseconds.
//! - `/trailers`: 200 `ok` then trailers `x-trailer: done`.
//! - `/reset`: 200, 1000 bytes, then the stream is reset (H3_INTERNAL_ERROR).
//! - `/hang`: 200, 1000 bytes, then nothing (the client must abort or time out).
//! - `/goaway`: 200 `bye`, then the connection sends GOAWAY.
//! - `/reject`: unless it is its connection's first request, the connection sends GOAWAY and
//!   then resets the request's stream both ways with H3_REQUEST_REJECTED, as a server does with
//!   a request that crossed its GOAWAY (RFC 9114 §5.2); a first request is answered as `/echo`.
//! - `/early`: a 103 (Early Hints, `link`), then 200 `after hints`.
//! - `/continue`: a 100 when the request expects one, then 200 with the body's length.
//! - `/status?N`: status N, empty body.
//! - `/too-early`: 425 (Too Early) to a request that came in early data, else 200 `ok`; header
//!   `x-425s`: how many 425s the server sent before.
//! - `/resumed`: JSON `{ resumed, refused }`: TLS sessions resumed so far, and offered by a client
//!   but not resumed (`--reject-0rtt`).
//! - `/small`, `/64k`: crates/bench-server's prebuilt bodies (12 B and 64 KiB).
//! - `/stats`: JSON `{ connections, maxOpen, bigSent }` (connections accepted, most requests open
//!   at once on one connection, bytes of `/big` bodies handed to QUIC so far).
use bytes::{Bytes, BytesMut};
use h3::server::RequestStream;
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;

mod zero_rtt;

type Stream = RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

#[derive(Default)]
struct Stats {
    connections: AtomicUsize,
    max_open: AtomicUsize,
    big_sent: AtomicUsize,
}

struct Args {
    port: u16,
    cert: String,
    key: String,
    max_streams: u32,
    bench: bool,
    reject_0rtt: bool,
}

fn args() -> Args {
    let mut a = Args {
        port: 0,
        cert: String::new(),
        key: String::new(),
        max_streams: 100,
        bench: false,
        reject_0rtt: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--bench" {
            a.bench = true;
            continue;
        }
        if flag == "--reject-0rtt" {
            a.reject_0rtt = true;
            continue;
        }
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => a.port = value.parse().expect("--port"),
            "--cert" => a.cert = value,
            "--key" => a.key = value,
            "--max-streams" => a.max_streams = value.parse().expect("--max-streams"),
            "--accept-delay" => zero_rtt::delay_accepts(value.parse().expect("--accept-delay")),
            other => panic!("unknown option {other}"),
        }
    }
    a
}

fn server_config(a: &Args) -> quinn::ServerConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(&a.cert)
        .expect("cert file")
        .collect::<Result<Vec<_>, _>>()
        .expect("cert PEM");
    let key = PrivateKeyDer::from_pem_file(&a.key).expect("key PEM");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("certificate and key");
    tls.alpn_protocols = vec![b"h3".to_vec()];
    tls.max_early_data_size = u32::MAX;
    tls.session_storage = zero_rtt::Sessions::new(a.reject_0rtt);
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).expect("QUIC TLS");
    let mut cfg = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(a.max_streams.into());
    cfg.transport_config(Arc::new(transport));
    cfg
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let a = args();
    let addr: SocketAddr = ([127, 0, 0, 1], a.port).into();
    let endpoint = quinn::Endpoint::server(server_config(&a), addr).expect("bind UDP");
    if a.bench {
        let port = endpoint.local_addr().expect("bound").port();
        let tcp = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind TCP");
        let tls = ferro_bench_server::tls::config(&a.cert, &a.key).expect("TLS config");
        tokio::spawn(ferro_bench_server::tls::serve(tcp, tls));
    }
    println!("port {}", endpoint.local_addr().expect("bound").port());
    let stats = Arc::new(Stats::default());
    let (goaway, _) = watch::channel(false);
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        tokio::select! {
            incoming = endpoint.accept() => {
                let Some(incoming) = incoming else { break };
                let n = stats.connections.fetch_add(1, Ordering::Relaxed) + 1;
                tokio::spawn(connection(incoming, n, stats.clone(), goaway.subscribe()));
            }
            line = lines.next_line() => match line {
                Ok(Some(l)) if l.trim() == "goaway" => { let _ = goaway.send(true); }
                Ok(Some(l)) if l.trim() != "quit" => {}
                _ => break,
            },
        }
    }
    endpoint.close(0u32.into(), b"bye");
}

async fn connection(
    incoming: quinn::Incoming,
    n: usize,
    stats: Arc<Stats>,
    mut goaway: watch::Receiver<bool>,
) {
    zero_rtt::accept_delay().await;
    // 0.5-RTT: requests that came in early data are served before the handshake completes.
    let Ok(connecting) = incoming.accept() else { return };
    let conn = match connecting.into_0rtt() {
        Ok((conn, _)) => conn,
        Err(connecting) => {
            let Ok(conn) = connecting.await else { return };
            conn
        }
    };
    let quic = conn.clone();
    let Ok(mut h3) = h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn)).await
    else {
        return;
    };
    let open = Arc::new(AtomicUsize::new(0));
    // A request asking for GOAWAY tells the loop through this channel; the loop answers once
    // the GOAWAY is written.
    let (bye_tx, mut bye_rx) = tokio::sync::mpsc::unbounded_channel::<Bye>();
    let mut shutting = false;
    let mut accepted_before = 0usize;
    loop {
        tokio::select! {
            accepted = h3.accept() => match accepted {
                Ok(Some(resolver)) => {
                    let early = zero_rtt::handshaking(&quic);
                    let (open, stats, bye) = (open.clone(), stats.clone(), bye_tx.clone());
                    let first = accepted_before == 0;
                    accepted_before += 1;
                    tokio::spawn(async move {
                        let Ok((req, mut stream)) = resolver.resolve_request().await else { return };
                        if req.uri().path() == "/reject" && !first {
                            return reject(&mut stream, &bye).await;
                        }
                        let now = open.fetch_add(1, Ordering::Relaxed) + 1;
                        stats.max_open.fetch_max(now, Ordering::Relaxed);
                        let _ = handle(req, stream, (n, early), now, &stats, &bye).await;
                        open.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                _ => break,
            },
            Some(done) = bye_rx.recv() => {
                if !std::mem::replace(&mut shutting, true) {
                    let _ = h3.shutdown(0).await;
                    tokio::spawn(close_when_idle(quic.clone(), open.clone()));
                }
                let _ = done.send(());
            }
            _ = goaway.changed(), if !shutting => {
                shutting = true;
                let _ = h3.shutdown(0).await;
                tokio::spawn(close_when_idle(quic.clone(), open.clone()));
            }
        }
    }
}

/// Asks the connection for a GOAWAY; answered once it is written.
type Bye = tokio::sync::oneshot::Sender<()>;

/// `/reject` on a connection's later request: GOAWAY first, then the stream reset both ways with
/// H3_REQUEST_REJECTED (the request was not processed, the client may send it again).
async fn reject(s: &mut Stream, bye: &tokio::sync::mpsc::UnboundedSender<Bye>) {
    let (done, written) = tokio::sync::oneshot::channel();
    if bye.send(done).is_ok() {
        let _ = written.await;
    }
    s.stop_sending(h3::error::Code::H3_REQUEST_REJECTED);
    s.stop_stream(h3::error::Code::H3_REQUEST_REJECTED);
}

/// After a GOAWAY: once the requests under way are answered, the connection closes (H3_NO_ERROR),
/// as servers do. A handler is done when its last bytes are handed to QUIC, not when the client
/// has them (a paused reader may be megabytes behind): the client, which closes the connection
/// itself once its streams are done, gets a grace period to do so first.
async fn close_when_idle(conn: quinn::Connection, open: Arc<AtomicUsize>) {
    while open.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.closed()).await;
    conn.close(0x100u32.into(), b"");
}

fn query(req: &Request<()>) -> u64 {
    req.uri().query().and_then(|q| q.parse().ok()).unwrap_or(0)
}

async fn handle(
    req: Request<()>,
    mut s: Stream,
    (conn, early): (usize, bool),
    open: usize,
    stats: &Stats,
    bye: &tokio::sync::mpsc::UnboundedSender<Bye>,
) -> Result<(), h3::error::StreamError> {
    let mut head = Response::builder()
        .status(200)
        .header("x-conn", conn.to_string())
        .header("x-open", open.to_string())
        .header("x-early-data", if early { "1" } else { "0" });
    match req.uri().path() {
        "/body" => {
            s.send_response(head.body(()).unwrap()).await?;
            while let Some(mut chunk) = s.recv_data().await? {
                use bytes::Buf;
                let b = chunk.copy_to_bytes(chunk.remaining());
                s.send_data(b).await?;
            }
        }
        "/big" => {
            let size = query(&req);
            s.send_response(head.header("content-length", size).body(()).unwrap()).await?;
            let mut sent = 0u64;
            while sent < size {
                let n = (size - sent).min(16384);
                let chunk: BytesMut = (sent..sent + n).map(|i| (i % 251) as u8).collect();
                s.send_data(chunk.freeze()).await?;
                sent += n;
                stats.big_sent.fetch_add(n as usize, Ordering::Relaxed);
            }
        }
        "/slow-read" => {
            let (pause, mut length, mut since) = (query(&req), 0usize, 0usize);
            while let Some(chunk) = s.recv_data().await? {
                use bytes::Buf;
                length += chunk.remaining();
                since += chunk.remaining();
                if since >= 256 * 1024 {
                    since = 0;
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
            }
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from(length.to_string())).await?;
        }
        "/delay" => {
            tokio::time::sleep(Duration::from_millis(query(&req))).await;
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(b"late")).await?;
        }
        "/trailers" => {
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(b"ok")).await?;
            let mut t = HeaderMap::new();
            t.insert("x-trailer", HeaderValue::from_static("done"));
            s.send_trailers(t).await?;
        }
        "/reset" | "/hang" => {
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from(vec![b'x'; 1000])).await?;
            if req.uri().path() == "/reset" {
                // Let the data leave before the reset discards what is unsent.
                tokio::time::sleep(Duration::from_millis(50)).await;
                s.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return Ok(());
            }
            // Until the client gives up (its STOP_SENDING / reset ends the read with an error).
            while s.recv_data().await?.is_some() {}
            std::future::pending::<()>().await;
        }
        "/goaway" => {
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(b"bye")).await?;
            s.finish().await?;
            let (done, _) = tokio::sync::oneshot::channel();
            let _ = bye.send(done);
            return Ok(());
        }
        "/early" => {
            let hint = Response::builder().status(103).header("link", "</style.css>; rel=preload");
            s.send_response(hint.body(()).unwrap()).await?;
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(b"after hints")).await?;
        }
        "/continue" => {
            // 100 when asked for it, then the body's length; without the body: 417 at once.
            if req.headers().get("expect").is_some_and(|v| v == "100-continue") {
                let go = Response::builder().status(100);
                s.send_response(go.body(()).unwrap()).await?;
            }
            let mut length = 0usize;
            while let Some(chunk) = s.recv_data().await? {
                use bytes::Buf;
                length += chunk.remaining();
            }
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from(length.to_string())).await?;
        }
        "/too-early" => {
            // RFC 8470: the server will not act on early data; the client should try again.
            let sent = zero_rtt::TOO_EARLY.fetch_add(early as usize, Ordering::Relaxed);
            head = head.status(if early { 425 } else { 200 }).header("x-425s", sent.to_string());
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(if early { b"too early" } else { b"ok" })).await?;
        }
        "/resumed" => {
            s.send_response(head.body(()).unwrap()).await?;
            let body = format!(
                "{{\"resumed\":{},\"refused\":{}}}",
                zero_rtt::RESUMED.load(Ordering::Relaxed),
                zero_rtt::REFUSED.load(Ordering::Relaxed)
            );
            s.send_data(Bytes::from(body)).await?;
        }
        "/status" => {
            let status = StatusCode::from_u16(query(&req) as u16).unwrap_or(StatusCode::OK);
            head = head.status(status);
            s.send_response(head.body(()).unwrap()).await?;
        }
        "/small" | "/64k" => {
            let route = ferro_bench_server::routes::find(req.uri().path());
            let mut head = Response::builder().status(route.status);
            for (name, value) in route.headers {
                head = head.header(*name, *value);
            }
            let head = head.header("content-length", route.body.len());
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from_static(route.body)).await?;
        }
        "/stats" => {
            let body = format!(
                "{{\"connections\":{},\"maxOpen\":{},\"bigSent\":{}}}",
                stats.connections.load(Ordering::Relaxed),
                stats.max_open.load(Ordering::Relaxed),
                stats.big_sent.load(Ordering::Relaxed)
            );
            s.send_response(head.body(()).unwrap()).await?;
            s.send_data(Bytes::from(body)).await?;
        }
        _ => {
            let mut length = 0usize;
            while let Some(chunk) = s.recv_data().await? {
                use bytes::Buf;
                length += chunk.remaining();
            }
            let headers: Vec<String> = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    format!(
                        "[{},{}]",
                        json(k.as_str()),
                        json(&String::from_utf8_lossy(v.as_bytes()))
                    )
                })
                .collect();
            let body = format!(
                "{{\"method\":{},\"path\":{},\"headers\":[{}],\"length\":{}}}",
                json(req.method().as_str()),
                json(&req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default()),
                headers.join(","),
                length
            );
            s.send_response(head.header("content-type", "application/json").body(()).unwrap())
                .await?;
            s.send_data(Bytes::from(body)).await?;
        }
    }
    s.finish().await
}

/// A JSON string literal.
fn json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
