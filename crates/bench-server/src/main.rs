//! A minimal HTTP/1.1 server for `node bench/run.mjs --server=rust`.
//!
//! On two shared cores the node:http bench server saturates before the client does, so req/s ratios
//! measure the server. This one answers the bench routes for a few µs of CPU per request (responses
//! are prebuilt, every complete request in a read is answered in one write), so the client becomes
//! the bottleneck. A connection that opens with the HTTP/2 preface is served as h2c (prior
//! knowledge) with the same routes.
//!
//! Usage: `ferro-bench-server [--port N] [--threads N]`
//!   --port     TCP port on 127.0.0.1 (default 0: any free port)
//!   --threads  1 (default): one thread (tokio current-thread runtime); N > 1: N worker threads
//!
//! Prints `{"port":N}` and a newline on stdout once it listens, then serves until killed.

use ferro_bench_server::{conn, h2c};
use std::io::Write;
use std::net::SocketAddr;

struct Options {
    port: u16,
    threads: usize,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options { port: 0, threads: 1 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--port" => {
                let v = value()?;
                opts.port = v.parse().map_err(|_| format!("--port: not a port: {v}"))?;
            }
            "--threads" => {
                let v = value()?;
                opts.threads = match v.parse::<usize>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(format!("--threads: not a positive integer: {v}")),
                };
            }
            _ => return Err(format!("unknown argument: {arg}")),
        }
    }
    Ok(opts)
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("ferro-bench-server: {msg}");
            std::process::exit(2);
        }
    };
    let runtime = if opts.threads == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(opts.threads)
            .enable_all()
            .build()
    };
    let runtime = runtime.unwrap_or_else(|err| {
        eprintln!("ferro-bench-server: cannot start the runtime: {err}");
        std::process::exit(1);
    });
    if let Err(err) = runtime.block_on(serve(opts.port)) {
        eprintln!("ferro-bench-server: {err}");
        std::process::exit(1);
    }
}

async fn serve(port: u16) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    let port = listener.local_addr()?.port();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{{\"port\":{port}}}")?;
    stdout.flush()?;
    drop(stdout);
    loop {
        let (socket, _) = listener.accept().await?;
        // A connection's failure (a reset, a malformed request) ends that connection only.
        tokio::spawn(async move {
            // Small responses go out at once (Nagle would hold a write behind an unacked one).
            if socket.set_nodelay(true).is_err() {
                return;
            }
            if opens_with_preface(&socket).await {
                let _ = h2c::serve(socket).await;
            } else {
                let _ = conn::serve(socket).await;
            }
        });
    }
}

/// Whether the client's first bytes are the HTTP/2 preface (peeked: they stay for the parser).
async fn opens_with_preface(socket: &tokio::net::TcpStream) -> bool {
    let want = h2c::PREFACE_START;
    let mut buf = [0u8; 4];
    loop {
        match socket.peek(&mut buf).await {
            Ok(n) if n >= want.len() => return buf == want,
            Ok(0) | Err(_) => return false,
            Ok(n) if buf[..n] != want[..n] => return false,
            // A prefix of the preface so far (never seen in practice): wait for more.
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(1)).await,
        }
    }
}
