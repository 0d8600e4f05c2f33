//! Bounded line reading: a peer that never sends a newline cannot make the relay buffer forever.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

pub enum ReadLine {
    /// A line without its terminator (`\n`, and a `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the limit was skipped; this many bytes were discarded.
    TooLong(usize),
    Eof,
}

pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader { inner: BufReader::with_capacity(64 * 1024, inner), max }
    }

    pub async fn next_line(&mut self) -> std::io::Result<ReadLine> {
        let mut line = Vec::new();
        let mut discarded = 0usize;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(match (discarded, line.is_empty()) {
                    (0, true) => ReadLine::Eof,
                    (0, false) => ReadLine::Line(trim(line)),
                    (n, _) => ReadLine::TooLong(n),
                });
            }
            let (chunk, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if discarded > 0 || line.len() + chunk.len() > self.max {
                discarded += line.len() + chunk.len();
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
            let used = found.unwrap_or(buf.len());
            self.inner.consume(used);
            if found.is_some() {
                return Ok(if discarded > 0 {
                    ReadLine::TooLong(discarded)
                } else {
                    ReadLine::Line(trim(line))
                });
            }
        }
    }
}

fn trim(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_lines_and_skips_oversized_ones_whole() {
        let input: &[u8] = b"one\r\ntwo\n0123456789abcdef\nthree";
        let mut r = LineReader::new(input, 8);
        let mut got = Vec::new();
        loop {
            match r.next_line().await.unwrap() {
                ReadLine::Line(l) => got.push(String::from_utf8(l).unwrap()),
                ReadLine::TooLong(n) => got.push(format!("<{n}>")),
                ReadLine::Eof => break,
            }
        }
        assert_eq!(got, ["one", "two", "<16>", "three"]);
    }
}
