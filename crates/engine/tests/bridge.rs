//! The bridged transport end to end through the public engine API: a bridged pool asks for a
//! socket (BRIDGE_OPEN), JS's side is played by the test (attach / fail / feed bytes), and the
//! request's events come out as they would over TCP.
use ferro_engine::error::ErrorCode;
use ferro_engine::events;
use ferro_engine::transport::TlsOptions;
use ferro_engine::{Batch, Engine, EventSink, PoolOptions, StreamLength, Target};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

/// The batch as one buffer of events, each DATA_OWN turned back into DATA with its payload.
fn packed(batch: &Batch) -> Vec<u8> {
    let (bytes, mut own) = (&batch.bytes, batch.own().iter());
    let (mut out, mut at) = (Vec::new(), 0);
    while at + 9 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 5..at + 9].try_into().unwrap()) as usize;
        match (bytes[at] == events::DATA_OWN).then(|| own.next()).flatten() {
            Some(payload) => {
                out.push(events::DATA);
                out.extend_from_slice(&bytes[at + 1..at + 5]);
                out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
                out.extend_from_slice(payload);
            }
            None => out.extend_from_slice(&bytes[at..at + 9 + len]),
        }
        at += 9 + len;
    }
    out
}

#[derive(Default)]
struct Sink {
    buf: Mutex<Vec<u8>>,
    /// Decoded, not yet returned by `until`.
    seen: Mutex<Vec<Event>>,
    cv: Condvar,
}

impl EventSink for Sink {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        let mut batch = Batch::default();
        write(&mut batch);
        let mut g = self.buf.lock();
        let was_empty = g.is_empty();
        g.extend(packed(&batch));
        self.cv.notify_all();
        was_empty && !g.is_empty()
    }
    fn signal(&self) {}
    fn congested(&self, _waker: &Waker) -> bool {
        false
    }
}

#[derive(Debug, Clone)]
struct Event {
    kind: u8,
    id: u32,
    payload: Vec<u8>,
}

impl Sink {
    /// Takes events up to and including the first that matches `want` (waiting at most 5 s);
    /// later ones stay for the next call.
    fn until(&self, want: impl Fn(&Event) -> bool) -> Vec<Event> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut g = self.buf.lock();
        loop {
            let mut o = 0;
            let mut parsed = Vec::new();
            while o + 9 <= g.len() {
                let kind = g[o];
                let id = u32::from_le_bytes(g[o + 1..o + 5].try_into().unwrap());
                let len = u32::from_le_bytes(g[o + 5..o + 9].try_into().unwrap()) as usize;
                parsed.push(Event { kind, id, payload: g[o + 9..o + 9 + len].to_vec() });
                o += 9 + len;
            }
            g.drain(..o);
            let mut seen = self.seen.lock();
            seen.extend(parsed);
            if let Some(at) = seen.iter().position(&want) {
                return seen.drain(..=at).collect();
            }
            drop(seen);
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                panic!("timed out; events so far: {:?}", self.seen.lock());
            }
        }
    }
}

fn error_code(payload: &[u8]) -> u16 {
    u16::from_le_bytes([payload[0], payload[1]])
}

/// The message after the errno and socket fields (see `events.rs`).
fn error_message(payload: &[u8]) -> String {
    let el = u16::from_le_bytes([payload[2], payload[3]]) as usize;
    let sl = u16::from_le_bytes([payload[4 + el], payload[5 + el]]) as usize;
    String::from_utf8_lossy(&payload[6 + el + sl..]).into_owned()
}

fn setup(connect_timeout: Option<Duration>) -> (Engine, Arc<Sink>, Arc<ferro_engine::Pool>) {
    setup_tls(connect_timeout, None)
}

/// With `tls` (trusted CA PEM), the engine runs TLS for "localhost" over the bridged socket.
fn setup_tls(
    connect_timeout: Option<Duration>,
    tls: Option<&str>,
) -> (Engine, Arc<Sink>, Arc<ferro_engine::Pool>) {
    let sink = Arc::new(Sink::default());
    let engine = Engine::new(1, sink.clone()).unwrap();
    let tls = tls.map(|ca| {
        let opts = TlsOptions { ca: vec![ca.to_string()], ..TlsOptions::default() };
        engine.tls_connector(&opts, "localhost").unwrap()
    });
    let pool = engine.create_pool(
        7,
        PoolOptions {
            tls,
            connect_timeout,
            bridged: true,
            ..PoolOptions::basic(Target::Tcp { host: "example.test".into(), port: 80 })
        },
    );
    (engine, sink, pool)
}

fn get(pool: &Arc<ferro_engine::Pool>, id: u32) {
    pool.dispatch(
        id,
        "GET\0/x\0host\0example.test\0".into(),
        None,
        1,
        StreamLength::Chunked,
        None,
        None,
    )
    .unwrap();
    pool.flush();
}

fn bridge_id(events: &[Event]) -> u32 {
    let open = events.iter().find(|e| e.kind == events::BRIDGE_OPEN).unwrap();
    assert_eq!(open.id, 7);
    u32::from_le_bytes(open.payload[..4].try_into().unwrap())
}

#[test]
fn runs_http_over_a_bridged_socket() {
    let (engine, sink, pool) = setup(Some(Duration::from_secs(5)));
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    assert!(engine.bridge_attach(bid, "1.2.3.4|5|6.7.8.9|80".into()));
    // Answered once only.
    assert!(!engine.bridge_attach(bid, String::new()));
    let evs = sink.until(|e| e.kind == events::BRIDGE_WRITE);
    assert!(evs.iter().any(|e| e.kind == events::CONNECTED && e.id == 7));
    let written: Vec<u8> = evs
        .iter()
        .filter(|e| e.kind == events::BRIDGE_WRITE)
        .flat_map(|e| e.payload.clone())
        .collect();
    assert!(written.starts_with(b"GET /x HTTP/1.1\r\n"), "{}", String::from_utf8_lossy(&written));
    // The response in two pieces.
    assert!(engine.bridge_data(bid, b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhe".to_vec()));
    assert!(engine.bridge_data(bid, b"llo".to_vec()));
    let evs = sink.until(|e| e.kind == events::END);
    let body: Vec<u8> = evs
        .iter()
        .filter(|e| e.kind == events::DATA && e.id == 1)
        .flat_map(|e| e.payload.clone())
        .collect();
    assert_eq!(body, b"hello");
    assert!(evs.iter().any(|e| e.kind == events::HEAD && e.id == 1));

    // Keep-alive: the next request reuses the socket.
    get(&pool, 2);
    let evs = sink.until(|e| e.kind == events::BRIDGE_WRITE);
    assert!(!evs.iter().any(|e| e.kind == events::BRIDGE_OPEN));
    engine.bridge_data(bid, b"HTTP/1.1 204 No Content\r\n\r\n".to_vec());
    sink.until(|e| e.kind == events::END && e.id == 2);

    // The socket ends: the connection goes, and JS is told to destroy the socket.
    engine.bridge_end(bid);
    let evs = sink.until(|e| e.kind == events::BRIDGE_CLOSE);
    assert!(evs.iter().any(|e| e.kind == events::DISCONNECTED && e.id == 7));
    assert!(evs.iter().any(|e| e.kind == events::BRIDGE_CLOSE && e.id == bid));
    // Calls about a forgotten bridge are harmless.
    assert!(engine.bridge_data(bid, b"late".to_vec()));
    engine.bridge_end(bid);
    engine.bridge_error(bid, "ECONNRESET", "x");
    engine.bridge_writable(bid, true);
    assert!(!engine.bridge_attach(bid, String::new()));
}

#[test]
fn a_failed_connect_fails_queued_requests_with_its_code() {
    let (engine, sink, pool) = setup(Some(Duration::from_secs(5)));
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    assert!(engine.bridge_fail(bid, ErrorCode::User, String::new(), "key-1".into()));
    let evs = sink.until(|e| e.kind == events::ERROR);
    let failed = evs.iter().find(|e| e.kind == events::CONNECT_FAILED).unwrap();
    assert_eq!(error_code(&failed.payload), ErrorCode::User as u16);
    assert_eq!(error_message(&failed.payload), "key-1");
    let err = evs.iter().find(|e| e.kind == events::ERROR).unwrap();
    assert_eq!(err.id, 1);
    assert_eq!(error_message(&err.payload), "key-1");
    assert!(evs.iter().any(|e| e.kind == events::BRIDGE_CLOSE && e.id == bid));
}

#[test]
fn connect_timeout_when_js_never_answers() {
    let (engine, sink, pool) = setup(Some(Duration::from_millis(100)));
    get(&pool, 1);
    let evs = sink.until(|e| e.kind == events::ERROR);
    let bid = bridge_id(&evs);
    let failed = evs.iter().find(|e| e.kind == events::CONNECT_FAILED).unwrap();
    assert_eq!(error_code(&failed.payload), ErrorCode::ConnectTimeout as u16);
    assert!(evs.iter().any(|e| e.kind == events::BRIDGE_CLOSE && e.id == bid));
    // A late answer finds nobody: JS destroys its socket.
    assert!(!engine.bridge_attach(bid, String::new()));
}

#[test]
fn socket_errors_and_backpressure() {
    let (engine, sink, pool) = setup(None);
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    // Writes wait while JS's socket is full.
    engine.bridge_writable(bid, false);
    assert!(engine.bridge_attach(bid, "|||".into()));
    sink.until(|e| e.kind == events::CONNECTED);
    std::thread::sleep(Duration::from_millis(50));
    assert!(sink.buf.lock().is_empty(), "nothing written while blocked");
    engine.bridge_writable(bid, true);
    sink.until(|e| e.kind == events::BRIDGE_WRITE);
    // A big head in one go: over the high-water mark, then a drain once the engine took it.
    let mut big = b"HTTP/1.1 200 OK\r\ncontent-length: 300000\r\n\r\n".to_vec();
    big.extend(std::iter::repeat_n(b'x', 300_000));
    assert!(!engine.bridge_data(bid, big));
    sink.until(|e| e.kind == events::BRIDGE_DRAIN && e.id == bid);
    sink.until(|e| e.kind == events::END && e.id == 1);
    // A reset under a request on a reused socket: the request goes back to the queue, and the
    // next connection is asked for.
    get(&pool, 2);
    sink.until(|e| e.kind == events::BRIDGE_WRITE);
    engine.bridge_error(bid, "ECONNRESET", "read ECONNRESET");
    let evs = sink.until(|e| e.kind == events::BRIDGE_OPEN);
    assert!(evs.iter().any(|e| e.kind == events::RETRY && e.id == 2));
    let disconnected = evs.iter().find(|e| e.kind == events::DISCONNECTED).unwrap();
    assert_eq!(error_code(&disconnected.payload), ErrorCode::Socket as u16);
    assert_eq!(error_message(&disconnected.payload), "read ECONNRESET");
    let bid = bridge_id(&evs);
    assert!(engine.bridge_attach(bid, "|||".into()));
    sink.until(|e| e.kind == events::BRIDGE_WRITE);
    // On a fresh socket it fails the request, with Node's code.
    engine.bridge_error(bid, "ECONNRESET", "read ECONNRESET");
    let evs = sink.until(|e| e.kind == events::ERROR);
    let err = evs.iter().find(|e| e.kind == events::ERROR).unwrap();
    assert_eq!(err.id, 2);
    assert_eq!(error_code(&err.payload), ErrorCode::Socket as u16);
    assert_eq!(error_message(&err.payload), "read ECONNRESET");
    let el = u16::from_le_bytes([err.payload[2], err.payload[3]]) as usize;
    assert_eq!(&err.payload[4..4 + el], b"ECONNRESET");
}

#[test]
fn destroying_the_pool_closes_its_bridges() {
    let (engine, sink, pool) = setup(None);
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    pool.destroy();
    sink.until(|e| e.kind == events::BRIDGE_CLOSE && e.id == bid);
    assert!(!engine.bridge_attach(bid, String::new()));
}

#[test]
fn reports_connecting_connected_version_and_sent_for_observed_requests() {
    let (engine, sink, pool) = setup(Some(Duration::from_secs(5)));
    // IDEMPOTENT | OBSERVE
    pool.dispatch(
        1,
        "GET\0/x\0host\0example.test\0".into(),
        None,
        1 | 32,
        StreamLength::Chunked,
        None,
        None,
    )
    .unwrap();
    pool.flush();
    let evs = sink.until(|e| e.kind == events::BRIDGE_OPEN);
    assert_eq!(
        evs.iter().map(|e| (e.kind, e.id)).collect::<Vec<_>>(),
        [(events::CONNECTING, 7), (events::BRIDGE_OPEN, 7)]
    );
    assert!(engine.bridge_attach(bridge_id(&evs), "1.2.3.4|5|6.7.8.9|80".into()));
    let evs = sink.until(|e| e.kind == events::BRIDGE_WRITE);
    let connected = evs.iter().position(|e| e.kind == events::CONNECTED).unwrap();
    assert_eq!(evs[connected].payload, b"h1|1.2.3.4|5|6.7.8.9|80");
    let sent = evs.iter().position(|e| e.kind == events::SENT).unwrap();
    assert!(sent > connected);
    assert_eq!(
        (evs[sent].id, evs[sent].payload.as_slice()),
        (1, b"1.2.3.4|5|6.7.8.9|80".as_slice())
    );
}

#[test]
fn sends_no_sent_event_for_unobserved_requests() {
    let (engine, sink, pool) = setup(Some(Duration::from_secs(5)));
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    assert!(engine.bridge_attach(bid, "1.2.3.4|5|6.7.8.9|80".into()));
    let evs = sink.until(|e| e.kind == events::BRIDGE_WRITE);
    assert!(evs.iter().any(|e| e.kind == events::CONNECTED));
    assert!(!evs.iter().any(|e| e.kind == events::SENT));
}

/// The bytes of the engine's next write(s) to bridge `bid`; later events wait for the next call.
fn written(sink: &Sink, bid: u32) -> Vec<u8> {
    let evs = sink.until(|e| e.kind == events::BRIDGE_WRITE && e.id == bid);
    evs.iter().filter(|e| e.kind == events::BRIDGE_WRITE).flat_map(|e| e.payload.clone()).collect()
}

#[test]
fn runs_the_engines_tls_over_a_bridged_socket() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::{Read, Write};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../__test__/fixtures/tls/");
    let read = |name: &str| std::fs::read_to_string(format!("{dir}{name}")).unwrap();
    let ca = read("ca.pem");
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(read("localhost.pem").as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(read("localhost.key").as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    // The far end of the tunnel: a sans-IO TLS server fed with what the engine writes.
    let mut server = rustls::ServerConnection::new(Arc::new(config)).unwrap();

    let (engine, sink, pool) = setup_tls(Some(Duration::from_secs(5)), Some(&ca));
    get(&pool, 1);
    let bid = bridge_id(&sink.until(|e| e.kind == events::BRIDGE_OPEN));
    assert!(engine.bridge_attach(bid, "|||".into()));
    let mut plain = Vec::new();
    let mut first = true;
    while !plain.ends_with(b"\r\n\r\n") {
        let bytes = written(&sink, bid);
        if first {
            // A TLS handshake record, not HTTP.
            assert_eq!(bytes[0], 0x16, "{:?}", String::from_utf8_lossy(&bytes));
            first = false;
        }
        server.read_tls(&mut &bytes[..]).unwrap();
        server.process_new_packets().unwrap();
        let mut buf = [0u8; 4096];
        while let Ok(n) = server.reader().read(&mut buf) {
            if n == 0 {
                break;
            }
            plain.extend_from_slice(&buf[..n]);
        }
        let mut out = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut out).unwrap();
        }
        if !out.is_empty() {
            engine.bridge_data(bid, out);
        }
    }
    assert!(plain.starts_with(b"GET /x HTTP/1.1\r\n"), "{}", String::from_utf8_lossy(&plain));
    server.writer().write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello").unwrap();
    let mut out = Vec::new();
    while server.wants_write() {
        server.write_tls(&mut out).unwrap();
    }
    engine.bridge_data(bid, out);
    let evs = sink.until(|e| e.kind == events::END && e.id == 1);
    let body: Vec<u8> = evs
        .iter()
        .filter(|e| e.kind == events::DATA && e.id == 1)
        .flat_map(|e| e.payload.clone())
        .collect();
    assert_eq!(body, b"hello");
}
