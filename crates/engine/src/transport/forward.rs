//! Forwards the tokio I/O traits of an enum of streams to whichever stream a variant holds.
macro_rules! forward_io {
    ($ty:ident { $($variant:ident $(#[$attr:meta])?),* }) => {
        impl AsyncRead for $ty {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_read(cx, buf),)*
                }
            }
        }
        impl AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_write(cx, data),)*
                }
            }
            fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_write_vectored(cx, bufs),)*
                }
            }
            fn is_write_vectored(&self) -> bool {
                match self {
                    $($(#[$attr])? $ty::$variant(s) => s.is_write_vectored(),)*
                }
            }
            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_flush(cx),)*
                }
            }
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                match self.get_mut() {
                    $($(#[$attr])? $ty::$variant(s) => Pin::new(s).poll_shutdown(cx),)*
                }
            }
        }
    };
}
pub(crate) use forward_io;
