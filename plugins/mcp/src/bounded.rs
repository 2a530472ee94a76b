//! The stdout of a stdio server, read through a guard: a line longer than the size bound, or a
//! line that does not start as a JSON-RPC message, ends the stream there (the connection
//! closes at once, never waits for a timeout) and is recorded, so the error can say why.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use hookpoint_extensions::lock::lock;
use tokio::io::{AsyncRead, ReadBuf};

/// What ended a server's stdout early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamProblem {
    /// A line over the bound, in bytes.
    TooLarge(usize),
    /// A line that is not JSON; its start.
    NotJson(String),
}

/// The problem a guarded stream met, shared with the connection that reports it.
pub(crate) type ProblemSlot = Arc<Mutex<Option<StreamProblem>>>;

/// `inner`, cut at the first line over `max` bytes or not starting with `{` or `[`.
pub(crate) struct BoundedLines<R> {
    inner: R,
    max: usize,
    line_len: usize,
    /// Whether the current line has had a byte other than whitespace yet.
    started: bool,
    problem: ProblemSlot,
}

impl<R> BoundedLines<R> {
    pub(crate) fn new(inner: R, max: usize, problem: ProblemSlot) -> Self {
        BoundedLines {
            inner,
            max,
            line_len: 0,
            started: false,
            problem,
        }
    }

    /// How many bytes of `data` may pass; records the problem at that point, if any.
    fn scan(&mut self, data: &[u8]) -> usize {
        for (i, &b) in data.iter().enumerate() {
            if b == b'\n' {
                self.line_len = 0;
                self.started = false;
                continue;
            }
            self.line_len += 1;
            if self.line_len > self.max {
                *lock(&self.problem) = Some(StreamProblem::TooLarge(self.max));
                return i;
            }
            if !self.started && !b.is_ascii_whitespace() {
                self.started = true;
                if b != b'{' && b != b'[' {
                    let rest = &data[i..];
                    let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                    let sample = String::from_utf8_lossy(&rest[..end.min(120)]).into_owned();
                    *lock(&self.problem) = Some(StreamProblem::NotJson(sample));
                    return i;
                }
            }
        }
        data.len()
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if lock(&this.problem).is_some() {
            return Poll::Ready(Ok(())); // the end of the stream
        }
        // Read straight into `buf` (no zeroing, no copy), then keep what may pass.
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let pass = this.scan(&buf.filled()[before..]);
                buf.set_filled(before + pass);
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn read_all(input: &[u8], max: usize) -> (Vec<u8>, Option<StreamProblem>) {
        let slot = ProblemSlot::default();
        let mut r = BoundedLines::new(input, max, slot.clone());
        let mut out = Vec::new();
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(r.read_to_end(&mut out))
            .unwrap();
        let p = lock(&slot).clone();
        (out, p)
    }

    #[test]
    fn json_lines_pass_whole() {
        let input = b"{\"a\":1}\n  {\"b\":2}\n";
        assert_eq!(read_all(input, 64), (input.to_vec(), None));
    }

    #[test]
    fn a_line_over_the_bound_ends_the_stream_before_it() {
        let (out, p) = read_all(b"{\"a\":1}\n{\"long\":\"xxxxxxxxxxxxxxxxxxxx\"}\n", 10);
        assert_eq!(out, b"{\"a\":1}\n{\"long\":\"x");
        assert_eq!(p, Some(StreamProblem::TooLarge(10)));
    }

    #[test]
    fn a_line_that_is_not_json_ends_the_stream_before_it() {
        let (out, p) = read_all(b"{\"a\":1}\nStarting server...\n{\"b\":2}\n", 64);
        assert_eq!(out, b"{\"a\":1}\n");
        assert_eq!(p, Some(StreamProblem::NotJson("Starting server...".into())));
    }
}
