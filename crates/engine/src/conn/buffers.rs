//! A connection's I/O buffers: what was read and not yet decoded, and what is encoded and not
//! yet written, with the two socket operations that move bytes between them and the transport.
use bytes::BytesMut;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const READ_CHUNK: usize = 64 * 1024;

pub(super) struct Buffers {
    /// Read from the socket, not yet decoded.
    pub rbuf: BytesMut,
    /// Encoded for the socket; `wbuf[wpos..]` is still to go out.
    pub wbuf: Vec<u8>,
    wpos: usize,
}

impl Buffers {
    pub fn new() -> Buffers {
        Buffers { rbuf: BytesMut::with_capacity(READ_CHUNK), wbuf: Vec::with_capacity(4096), wpos: 0 }
    }

    /// Reads what the socket has into `rbuf`: the number of bytes (0 at EOF), or Pending.
    pub fn read<T: AsyncRead + Unpin>(&mut self, io: &mut T, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK / 4 {
            self.rbuf.reserve(READ_CHUNK);
        }
        let n = {
            let mut rb = ReadBuf::uninit(self.rbuf.spare_capacity_mut());
            match Pin::new(io).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => rb.filled().len(),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        };
        // SAFETY: poll_read initialised and filled exactly `n` bytes of the spare capacity.
        unsafe { self.rbuf.set_len(self.rbuf.len() + n) };
        Poll::Ready(Ok(n))
    }

    /// Writes as much of `wbuf` as the socket takes. `Ok((progress, all_out))`: whether any byte
    /// went, and whether the buffer just emptied (it is then cleared).
    pub fn write<T: AsyncWrite + Unpin>(&mut self, io: &mut T, cx: &mut Context<'_>) -> io::Result<(bool, bool)> {
        let mut progress = false;
        while self.wpos < self.wbuf.len() {
            match Pin::new(&mut *io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => {
                    self.wpos += n;
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
