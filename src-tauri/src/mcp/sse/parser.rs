//! The `text/event-stream` format read incrementally: bytes in, events out.

use std::collections::VecDeque;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Event {
    pub(super) kind: String,
    pub(super) data: String,
}

/// Incremental parser for `text/event-stream`, following
/// <https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>.
///
/// Written here rather than taken from `sse-stream` because that crate rejects the whole stream
/// on an unknown field, a line without a colon, or a repeated `event:` line, all of which the
/// spec says to tolerate, and SSE-only servers come from many hands.
#[derive(Debug, Default)]
pub(super) struct EventParser {
    /// Bytes of a line whose end has not arrived yet.
    line: Vec<u8>,
    /// The last chunk ended in `\r`, so a `\n` starting the next one belongs to that line end.
    after_cr: bool,
    seen_first_line: bool,
    kind: String,
    data: String,
    ready: VecDeque<Event>,
}

impl EventParser {
    pub(super) fn feed(&mut self, mut chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
            chunk = &chunk[1..];
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(&chunk[..end]);
            self.process_line(&line);
            line.clear();
            self.line = line;

            let was_cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if was_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(chunk);
    }

    fn process_line(&mut self, line: &[u8]) {
        let line = if std::mem::replace(&mut self.seen_first_line, true) {
            line
        } else {
            line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
        };
        if line.is_empty() {
            self.dispatch();
            return;
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            // A comment; servers send these as keep-alives.
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.kind),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            // `id` and `retry` only serve reconnection, which this protocol cannot use: the
            // server's session ends with the stream. Unknown fields are ignored by the spec.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let kind = std::mem::take(&mut self.kind);
        let mut data = std::mem::take(&mut self.data);
        if data.is_empty() {
            return;
        }
        data.pop();
        let kind = if kind.is_empty() {
            "message".to_owned()
        } else {
            kind
        };
        self.ready.push_back(Event { kind, data });
    }

    pub(super) fn next(&mut self) -> Option<Event> {
        self.ready.pop_front()
    }

    /// Remove and return the first queued event of `kind`, leaving the others in order.
    pub(super) fn take(&mut self, kind: &str) -> Option<Event> {
        let index = self.ready.iter().position(|event| event.kind == kind)?;
        self.ready.remove(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = EventParser::default();
        for chunk in chunks {
            parser.feed(chunk);
        }
        std::iter::from_fn(|| parser.next()).collect()
    }

    fn event(kind: &str, data: &str) -> Event {
        Event {
            kind: kind.to_owned(),
            data: data.to_owned(),
        }
    }

    #[test]
    fn parser_joins_multi_line_data_and_defaults_to_message() {
        let events = parse_chunks(&[b"data: {\ndata:  \"a\": 1\ndata: }\n\n"]);
        assert_eq!(
            events,
            vec![event("message", "{\n \"a\": 1\n}")],
            "data lines join with LF, only one leading space is stripped"
        );
    }

    #[test]
    fn parser_handles_crlf_and_cr_split_anywhere() {
        let stream = b"event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: x\rdata: y\r\r";
        let expected = vec![event("endpoint", "/m?s=1"), event("message", "x\ny")];
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(
                parse_chunks(&[a, b]),
                expected,
                "split at byte {split} must not change the events"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(
            parse_chunks(&bytes),
            expected,
            "one byte per chunk parses the same"
        );
    }

    #[test]
    fn parser_skips_comments_and_tolerates_odd_lines() {
        let events = parse_chunks(&[
            "\u{feff}: keep-alive\n\n".as_bytes(),
            b"id: 7\nretry: 100\nfoo: bar\nevent: x\nevent: endpoint\n: ping\ndata\ndata: /e\n\n",
            b"event: empty\n\n",
            b"data: unfinished",
        ]);
        assert_eq!(
            events,
            vec![event("endpoint", "\n/e")],
            "BOM, comments, id/retry/unknown fields are ignored; the last event line wins; a bare \
             `data` line adds an empty line; events without data and unterminated events are dropped"
        );
    }
}
