//! A connection's I/O buffers: what was read and not yet decoded, and what is encoded and not
//! yet written, with the two socket operations that move bytes between them and the transport.
use bytes::BytesMut;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const READ_CHUNK: usize = 64 * 1024;
/// Most bytes one `read` takes before the decoder gets them (other connections get a turn).
const MAX_BURST: usize = 1024 * 1024;

pub(crate) struct Buffers {
    /// Read from the socket, not yet decoded.
    pub rbuf: BytesMut,
    /// Encoded for the socket; `wbuf[wpos..]` is still to go out.
    pub wbuf: Vec<u8>,
    wpos: usize,
    /// What the last `read` took: the next one starts with at least this much room, so a
    /// connection that keeps receiving 64 KiB responses takes each in one read, into one chunk.
    last_burst: usize,
    /// An end or error met after some bytes were read, reported by the next `read`.
    deferred: Option<io::Result<usize>>,
    /// Every byte that went out on the socket (`SocketError.socket.bytesWritten`).
    sent: u64,
}

impl Buffers {
    pub(crate) fn new() -> Buffers {
        Buffers {
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            last_burst: 0,
            deferred: None,
            sent: 0,
        }
    }

    /// Reads what the socket has into `rbuf`: the number of bytes (0 at EOF), or Pending. A read
    /// that fills the room it had is followed by another, so a response that arrived whole is
    /// decoded whole: a 64 KiB body is then one chunk for JS, not two (and `arrayBuffer()` can
    /// take it without joining pieces).
    pub(crate) fn read<T: AsyncRead + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<usize>> {
        if let Some(r) = self.deferred.take() {
            return Poll::Ready(r);
        }
        let mut total = 0;
        loop {
            if self.rbuf.capacity() - self.rbuf.len() < self.last_burst.max(READ_CHUNK / 4) {
                self.rbuf.reserve(READ_CHUNK.max(self.last_burst + READ_CHUNK / 4).min(MAX_BURST));
            }
            let room = self.rbuf.capacity() - self.rbuf.len();
            let n = {
                let mut rb = ReadBuf::uninit(self.rbuf.spare_capacity_mut());
                match Pin::new(&mut *io).poll_read(cx, &mut rb) {
                    Poll::Ready(Ok(())) => rb.filled().len(),
                    Poll::Ready(Err(e)) if total == 0 => return Poll::Ready(Err(e)),
                    Poll::Ready(Err(e)) => {
                        self.deferred = Some(Err(e));
                        break;
                    }
                    Poll::Pending if total == 0 => return Poll::Pending,
                    Poll::Pending => break,
                }
            };
            // SAFETY: poll_read initialised and filled exactly `n` bytes of the spare capacity.
            unsafe { self.rbuf.set_len(self.rbuf.len() + n) };
            if n == 0 {
                if total > 0 {
                    self.deferred = Some(Ok(0));
                }
                break;
            }
            total += n;
            if n < room || total >= MAX_BURST {
                break;
            }
        }
        self.last_burst = total;
        Poll::Ready(Ok(total))
    }

    /// How much of `wbuf` already went out (until it empties and starts over).
    pub(crate) fn written(&self) -> usize {
        self.wpos
    }

    /// Every byte written to the socket so far.
    pub(crate) fn sent(&self) -> u64 {
        self.sent
    }

    /// Writes as much of `wbuf` as the socket takes. `Ok((progress, all_out))`: whether any byte
    /// went, and whether the buffer just emptied (it is then cleared).
    pub(crate) fn write<T: AsyncWrite + Unpin>(
        &mut self,
        io: &mut T,
        cx: &mut Context<'_>,
    ) -> io::Result<(bool, bool)> {
        let mut progress = false;
        while self.wpos < self.wbuf.len() {
            match Pin::new(&mut *io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => {
                    self.wpos += n;
                    self.sent += n as u64;
                    progress = true;
                }
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => break,
            }
        }
        let all_out = !self.wbuf.is_empty() && self.wpos == self.wbuf.len();
        if all_out {
            self.wbuf.clear();
            self.wpos = 0;
        }
        Ok((progress, all_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::task::Waker;

    /// A socket with scripted read results: bytes it has (handed out as far as the buffer takes
    /// them, like a kernel socket buffer), then an end or an error, then Pending.
    struct Script(VecDeque<io::Result<Vec<u8>>>, usize);

    impl AsyncRead for Script {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            self.1 += 1;
            match self.0.pop_front() {
                None => Poll::Pending,
                Some(Err(e)) => Poll::Ready(Err(e)),
                Some(Ok(mut bytes)) => {
                    let n = bytes.len().min(buf.remaining());
                    buf.put_slice(&bytes[..n]);
                    if n < bytes.len() {
                        self.0.push_front(Ok(bytes.split_off(n)));
                    }
                    Poll::Ready(Ok(()))
                }
            }
        }
    }

    fn read(b: &mut Buffers, s: &mut Script) -> Poll<io::Result<usize>> {
        b.read(s, &mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn what_arrived_together_is_read_together() {
        let mut b = Buffers::new();
        let whole = vec![7u8; 65_536 + 600];
        let mut s = Script(VecDeque::from([Ok(whole.clone())]), 0);
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(n)) if n == whole.len()));
        assert_eq!(&b.rbuf[..], &whole[..]);
        assert_eq!(s.1, 2, "the first read filled the buffer, a second took the rest");
        assert!(read(&mut b, &mut s).is_pending());
        // The next response of that size finds room for all of it: one read.
        let _ = b.rbuf.split();
        s.0.push_back(Ok(whole.clone()));
        s.1 = 0;
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(n)) if n == whole.len()));
        assert_eq!(s.1, 1);
    }

    #[test]
    fn an_end_or_error_after_bytes_comes_with_the_next_read() {
        let mut b = Buffers::new();
        let mut s = Script(VecDeque::from([Ok(vec![1u8; 65_536]), Ok(Vec::new())]), 0);
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(65_536))));
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(0))), "the end is not lost");

        let mut b = Buffers::new();
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        let mut s = Script(VecDeque::from([Ok(vec![1u8; 65_536]), Err(reset)]), 0);
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(65_536))));
        assert!(
            matches!(read(&mut b, &mut s), Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::ConnectionReset)
        );
        assert_eq!(b.rbuf.len(), 65_536, "the bytes before the error stay for the decoder");
    }

    #[test]
    fn small_reads_stop_at_what_the_socket_had() {
        let mut b = Buffers::new();
        let mut s = Script(VecDeque::from([Ok(vec![1u8; 100])]), 0);
        assert!(matches!(read(&mut b, &mut s), Poll::Ready(Ok(100))));
        assert!(read(&mut b, &mut s).is_pending());
    }
}
